// Host <-> device copies for GPU tests (CUDA builds only): a vector to a new DeviceBuffer, and a
// DeviceBuffer back to a vector after the device has finished.
#pragma once

#include <vector>

#include "kernels/cuda_memory.h"

namespace recur::test {

template <typename T>
kernels::DeviceBuffer<T> to_device(const std::vector<T>& host) {
  kernels::DeviceBuffer<T> d(host.size());
  d.upload(host, nullptr);
  return d;
}

template <typename T>
std::vector<T> to_host(const kernels::DeviceBuffer<T>& d) {
  std::vector<T> host(d.size());
  d.download(host, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return host;
}

}  // namespace recur::test
