// NCCL for the GPU learners' gradients, bootstrapped over MPI (NCCL's guide: one rank makes the
// unique id, MPI broadcasts it, every rank calls ncclCommInitRank on its own GPU). Host
// collectives stay on MPI; only all_reduce_mean_device runs on NCCL, in place, with ncclAvg.
//
// Faults: the all-reduce is enqueued on the learner's stream and completion is polled
// (cudaEventQuery, ncclCommGetAsyncError) against dist.timeout_s, the pattern PyTorch's watchdog
// and XLA use. On an error or a timeout the communicator is aborted (ncclCommAbort frees it and
// the work still on the device) and MPI_Abort ends the job. Built only in CUDA builds that find
// nccl.h (cmake/RecurDist.cmake); its GPU test skips without a device.
#include "agent/dist/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace recur::agent::dist {
namespace {

using Clock = std::chrono::steady_clock;

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(std::unique_ptr<Communicator> host, int cuda_device,
                   std::chrono::duration<double> timeout)
      : host_(std::move(host)),
        device_(cuda_device),
        timeout_(std::chrono::duration_cast<Clock::duration>(timeout)) {
    ncclUniqueId id{};
    if (host_->rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    host_->broadcast(std::as_writable_bytes(std::span(&id, 1)), 0, "NCCL bootstrap (unique id)");
    CUDA_CHECK(cudaSetDevice(device_));
    nccl_check(ncclCommInitRank(&comm_, host_->size(), id, host_->rank()), "ncclCommInitRank");
    CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  }
  ~NcclCommunicator() override {
    // ncclCommDestroy can block on a peer that never arrives; abort cannot, and the job is over.
    if (comm_ != nullptr) ncclCommAbort(comm_);
    if (done_ != nullptr) cudaEventDestroy(done_);
  }

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  int local_rank() const override { return host_->local_rank(); }
  int local_size() const override { return host_->local_size(); }
  std::string backend() const override { return host_->backend() + "+nccl"; }

  void all_reduce_mean(std::span<float> data, std::string_view what) override {
    host_->all_reduce_mean(data, what);
  }
  void all_reduce_sum(std::span<double> data, std::string_view what) override {
    host_->all_reduce_sum(data, what);
  }
  void all_reduce_max(std::span<int64_t> data, std::string_view what) override {
    host_->all_reduce_max(data, what);
  }
  void broadcast(std::span<std::byte> data, int root, std::string_view what) override {
    host_->broadcast(data, root, what);
  }
  std::vector<std::string> all_gather(const std::string& mine, std::string_view what) override {
    return host_->all_gather(mine, what);
  }
  void barrier(std::string_view what) override { host_->barrier(what); }
  void announce_done(int64_t round) override { host_->announce_done(round); }
  int peers_done(int64_t round) override { return host_->peers_done(round); }
  void end_round(int64_t round, std::string_view what) override { host_->end_round(round, what); }
  [[noreturn]] void abort(int code) override {
    if (comm_ != nullptr) ncclCommAbort(comm_), comm_ = nullptr;
    host_->abort(code);
    std::_Exit(code);  // not reached: keeps [[noreturn]] visible to the compiler
  }

  bool all_reduce_mean_device(float* data, size_t n, void* cuda_stream,
                              std::string_view what) override {
    const auto stream = static_cast<cudaStream_t>(cuda_stream);
    nccl_check(ncclAllReduce(data, data, n, ncclFloat, ncclAvg, comm_, stream), what);
    CUDA_CHECK(cudaEventRecord(done_, stream));
    const auto start = Clock::now();
    for (;;) {
      const cudaError_t state = cudaEventQuery(done_);
      if (state == cudaSuccess) return true;
      if (state != cudaErrorNotReady) CUDA_CHECK(state);
      ncclResult_t async = ncclSuccess;
      nccl_check(ncclCommGetAsyncError(comm_, &async), what);
      nccl_check(async, what);
      if (Clock::now() - start > timeout_) {
        spdlog::error(
            "rank {} of {}: the NCCL all-reduce in {} did not finish in {:.0f} s "
            "(dist.timeout_s): a peer rank hangs or died; ending the job",
            rank(), size(), what, std::chrono::duration<double>(timeout_).count());
        abort(3);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

 private:
  void nccl_check(ncclResult_t result, std::string_view what) {
    if (result == ncclSuccess || result == ncclInProgress) return;
    spdlog::error("rank {} of {}: NCCL failed in {}: {} ({}); ending the job", host_->rank(),
                  host_->size(), what, ncclGetErrorString(result), ncclGetLastError(comm_));
    abort(3);
  }

  std::unique_ptr<Communicator> host_;
  int device_;
  Clock::duration timeout_;
  ncclComm_t comm_ = nullptr;
  cudaEvent_t done_ = nullptr;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<Communicator> host,
                                                     int cuda_device,
                                                     std::chrono::duration<double> timeout) {
  return std::make_unique<NcclCommunicator>(std::move(host), cuda_device, timeout);
}

}  // namespace recur::agent::dist
