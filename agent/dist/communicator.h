// The ranks of a data-parallel training job (DD-PPO, docs/ARCHITECTURE.md "Scaling out"): who
// this process is, and the few collectives the trainer needs. It knows nothing of PPO: the
// learner hands it one flat buffer per minibatch.
//
// Implementations: MPI (mpi_communicator.cc, Debian's Open MPI; launched by mpirun or srun) and,
// for GPU learners, NCCL on device buffers bootstrapped over MPI (nccl_communicator.cc). A job
// without dist.backend has no communicator at all (the trainer takes a null pointer).
//
// Every collective must be entered by every rank, in the same order. Each one waits at most
// dist.timeout_s; a rank that waits longer (a peer that hangs) logs which collective it was in and
// ends the whole job (MPI_Abort), so that no rank is left behind forever. `what` names the
// collective in that message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace recur::agent {
struct DistConfig;
}

namespace recur::agent::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's index among the ranks on its host (which GPU it takes).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // "mpi", or "mpi+nccl" when device buffers travel by NCCL.
  virtual std::string backend() const = 0;

  // In place: every element becomes the mean (float) or the sum (double, int64) over the ranks.
  // Every rank receives the same bits.
  virtual void all_reduce_mean(std::span<float> data, std::string_view what) = 0;
  virtual void all_reduce_sum(std::span<double> data, std::string_view what) = 0;
  virtual void all_reduce_max(std::span<int64_t> data, std::string_view what) = 0;
  // A device (CUDA) buffer of n floats, averaged in place on `cuda_stream` (a cudaStream_t).
  // Returns false, doing nothing, when this communicator has no device path: the caller then
  // stages the buffer through the host (Debian's Open MPI is not CUDA-aware).
  virtual bool all_reduce_mean_device(float* /*data*/, size_t /*n*/, void* /*cuda_stream*/,
                                      std::string_view /*what*/) {
    return false;
  }
  // Root's bytes to every rank; `data` has the same size everywhere.
  virtual void broadcast(std::span<std::byte> data, int root, std::string_view what) = 0;
  // Every rank's `mine` (any length), in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine, std::string_view what) = 0;
  virtual void barrier(std::string_view what) = 0;

  // DD-PPO's preemption (dist.sync_frac): who has finished collecting rollout `round`.
  // announce_done tells every other rank that this one has (once per round); peers_done counts
  // the other ranks that have, without waiting; end_round waits until all have (so the next
  // round's count starts clean). Point-to-point messages, polled from the thread that collects.
  virtual void announce_done(int64_t round) = 0;
  virtual int peers_done(int64_t round) = 0;
  virtual void end_round(int64_t round, std::string_view what) = 0;

  // Ends every rank of the job now, with exit status `code` (after the caller logged why).
  [[noreturn]] virtual void abort(int code) = 0;
};

// The communicator of dist.backend (nullptr for "none"). Throws recur::Error when the backend is
// missing from this build, or the process was not started by mpirun/srun, saying what to do.
std::unique_ptr<Communicator> make_communicator(const DistConfig& config);
// For a learner on CUDA device `cuda_device`: `host` with NCCL carrying device buffers where this
// build has NCCL and there is more than one rank; else `host` as it is (device buffers are then
// staged through the host).
std::unique_ptr<Communicator> with_device_path(std::unique_ptr<Communicator> host, int cuda_device,
                                               const DistConfig& config);

// Whether this build has MPI (cmake -DRECUR_MPI=...).
bool mpi_available();

}  // namespace recur::agent::dist
