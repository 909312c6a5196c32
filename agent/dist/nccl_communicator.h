// The NCCL communicator (communicator.h): MPI's collectives for host buffers, NCCL's all-reduce
// for the GPU learner's flat gradient. Built in CUDA builds with MPI and NCCL only
// (cmake/RecurDist.cmake); make_communicator.cc is its one caller.
#pragma once

#include <chrono>
#include <memory>

#include "agent/dist/communicator.h"

namespace recur::agent::dist {

// Bootstraps NCCL over `host` (an MPI communicator) on CUDA device `cuda_device` (one rank per
// GPU: NCCL refuses two ranks on one device).
std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<Communicator> host,
                                                     int cuda_device,
                                                     std::chrono::duration<double> timeout);

}  // namespace recur::agent::dist
