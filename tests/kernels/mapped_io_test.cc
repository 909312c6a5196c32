// The zero-copy step I/O (kernels/mapped_io.h). The host side runs everywhere: wait_for_flag
// returns at once for a flag already set and, for a flag that never comes, throws instead of
// hanging (without a GPU the stream query itself fails; with one the idle stream reveals that
// no emit ran). The kernels run on a GPU: fetch copies bytes, emit delivers data and then the
// flag across several blocks, and a replayed emit (its block counter reset) delivers again.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "kernels/cuda_memory.h"
#include "kernels/mapped_io.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"

namespace {

using recur::kernels::DeviceBuffer;
using recur::kernels::MappedBuffer;

}  // namespace

TEST_CASE("wait_for_flag returns for a set flag and throws for one that never comes") {
  uint32_t flag = 7;
  recur::kernels::wait_for_flag(&flag, 7, nullptr);  // no CUDA call is needed for this
  // Never written: an error (no driver here, or an idle default stream on a GPU), never a hang.
  CHECK_THROWS_AS(recur::kernels::wait_for_flag(&flag, 8, nullptr), recur::DeviceError);
}

TEST_CASE("fetch and emit move data through mapped memory and set the flag last") {
  if (!recur::test::gpu_or_skip("fetch and emit move data through mapped memory and set the flag "
                                "last"))
    return;
  // fetch: 16-byte words from a mapped block into device memory.
  MappedBuffer<unsigned char> in(4096);
  for (size_t i = 0; i < in.size(); ++i) in.data()[i] = static_cast<unsigned char>(i * 7 + 1);
  DeviceBuffer<unsigned char> in_dev(in.size());
  recur::kernels::launch_fetch(in.device(), in_dev.data(), in.bytes(), nullptr);
  const std::vector<unsigned char> fetched = recur::test::to_host(in_dev);
  CHECK(std::equal(fetched.begin(), fetched.end(), in.data()));

  // emit: 70000 floats (many blocks), then the sequence number; twice, as a graph replays it.
  const size_t n = 70000;
  std::vector<float> src(n);
  std::iota(src.begin(), src.end(), 0.5f);
  auto d_src = recur::test::to_device(src);
  MappedBuffer<float> out(n);
  MappedBuffer<uint32_t> flag(1);
  DeviceBuffer<unsigned int> counter(1);
  counter.zero(nullptr);
  for (uint32_t seq : {1u, 2u}) {
    CAPTURE(seq);
    auto d_seq = recur::test::to_device(std::vector<uint32_t>{seq});
    std::fill_n(out.data(), n, -1.0f);
    recur::kernels::EmitArgs e;
    e.src = d_src.data();
    e.dst = out.device();
    e.n = n;
    e.seq = d_seq.data();
    e.flag = flag.device();
    e.counter = counter.data();
    recur::kernels::launch_emit(e, nullptr);
    recur::kernels::wait_for_flag(flag.data(), seq, nullptr);
    CHECK(std::equal(src.begin(), src.end(), out.data()));  // all there once the flag is
    CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(recur::test::to_host(counter)[0] == 0u);  // ready for the next replay
  }
}

#endif  // RECUR_WITH_CUDA
