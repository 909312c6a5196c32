// The MPI communicator (communicator.h) over MPI_COMM_WORLD. Only make_communicator.cc and the
// NCCL communicator (which bootstraps over it) see this header; both are built with MPI only.
#pragma once

#include <chrono>
#include <memory>

#include "agent/dist/communicator.h"

namespace recur::agent::dist {

// Initializes MPI once per process (MPI_THREAD_FUNNELED: only the learner's thread, which calls
// this, makes MPI calls) and finalizes it at exit. Throws recur::Error when the process was not
// started by a launcher that MPI can see, saying how to start it.
std::unique_ptr<Communicator> make_mpi_communicator(std::chrono::duration<double> timeout);

}  // namespace recur::agent::dist
