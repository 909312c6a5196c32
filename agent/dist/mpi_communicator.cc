// Collectives on MPI_COMM_WORLD. Each is started non-blocking (MPI_Iallreduce, ...) and completed
// by polling MPI_Test against dist.timeout_s: a blocking MPI_Allreduce cannot time out, and
// Debian's Open MPI measurably leaves a survivor hanging in it when a peer stops responding
// without dying (docs/ARCHITECTURE.md). Polling also lets a waiting rank sleep instead of
// spinning on a core that rank 0's evaluation wants (ranks share cores on small machines).
//
// Errors: MPI_ERRORS_RETURN, and any error code ends the job with MPI_Abort after logging the
// call and MPI's own text: the MPI standard does not promise that a program can continue after
// an error, so nothing here tries to.
#include "agent/dist/mpi_communicator.h"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace recur::agent::dist {
namespace {

using Clock = std::chrono::steady_clock;

// MPI_Init_thread once per process, MPI_Finalize when the process exits normally.
class MpiRuntime {
 public:
  static void ensure_initialized() {
    static MpiRuntime runtime;
    (void)runtime;
  }

 private:
  MpiRuntime() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      RECUR_CHECK(provided >= MPI_THREAD_FUNNELED,
                  "this MPI library provides thread level {} and recur needs "
                  "MPI_THREAD_FUNNELED (its actor threads never call MPI); use an MPI built with "
                  "thread support (Debian's openmpi-bin is)",
                  provided);
      owned_ = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~MpiRuntime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && !finalized) MPI_Finalize();
  }
  bool owned_ = false;
};

// Whether a launcher started this process (mpirun/mpiexec of Open MPI or MPICH, srun with PMIx or
// PMI2): without one, MPI_Init makes a lone rank 0 of 1 that trains alone, silently.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("code {}", code);
  return std::string(text, static_cast<size_t>(length));
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(std::chrono::duration<double> timeout)
      : timeout_(std::chrono::duration_cast<Clock::duration>(timeout)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_),
          "MPI_Comm_split_type (ranks on this host)");
    MPI_Comm_set_errhandler(local_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(local_, &local_rank_);
    MPI_Comm_size(local_, &local_size_);
  }
  ~MpiCommunicator() override { MPI_Comm_free(&local_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string backend() const override { return "mpi"; }

  void all_reduce_mean(std::span<float> data, std::string_view what) override {
    all_reduce(data.data(), data.size(), MPI_FLOAT, MPI_SUM, what);
    const float inv = 1.0f / static_cast<float>(size_);
    for (float& x : data) x *= inv;
  }
  void all_reduce_sum(std::span<double> data, std::string_view what) override {
    all_reduce(data.data(), data.size(), MPI_DOUBLE, MPI_SUM, what);
  }
  void all_reduce_max(std::span<int64_t> data, std::string_view what) override {
    all_reduce(data.data(), data.size(), MPI_INT64_T, MPI_MAX, what);
  }

  void broadcast(std::span<std::byte> data, int root, std::string_view what) override {
    RECUR_ASSERT(data.size() <= static_cast<size_t>(INT32_MAX));
    MPI_Request request;
    check(MPI_Ibcast(data.data(), static_cast<int>(data.size()), MPI_BYTE, root, MPI_COMM_WORLD,
                     &request),
          what);
    wait(request, what);
  }

  std::vector<std::string> all_gather(const std::string& mine, std::string_view what) override {
    const auto n = static_cast<size_t>(size_);
    std::vector<int64_t> lengths(n);
    const auto own = static_cast<int64_t>(mine.size());
    MPI_Request request;
    check(MPI_Iallgather(&own, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T, MPI_COMM_WORLD,
                         &request),
          what);
    wait(request, what);
    std::vector<int> counts(n), offsets(n);
    int64_t total = 0;
    for (size_t r = 0; r < n; ++r) {
      RECUR_ASSERT(total + lengths[r] <= INT32_MAX);
      counts[r] = static_cast<int>(lengths[r]);
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Iallgatherv(mine.data(), static_cast<int>(own), MPI_CHAR, all.data(), counts.data(),
                          offsets.data(), MPI_CHAR, MPI_COMM_WORLD, &request),
          what);
    wait(request, what);
    std::vector<std::string> out(n);
    for (size_t r = 0; r < n; ++r)
      out[r] = all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(counts[r]));
    return out;
  }

  void barrier(std::string_view what) override {
    MPI_Request request;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &request), what);
    wait(request, what);
  }

  // One empty message per peer and round, tagged with the round; a round's messages are all
  // received by end_round, which every rank reaches (the collection's all-reduce follows).
  void announce_done(int64_t round) override {
    const int tag = round_tag(round);
    sends_.assign(static_cast<size_t>(size_), MPI_REQUEST_NULL);
    for (int r = 0; r < size_; ++r)
      if (r != rank_)
        check(MPI_Isend(nullptr, 0, MPI_BYTE, r, tag, MPI_COMM_WORLD,
                        &sends_[static_cast<size_t>(r)]),
              "the preemption announcement");
  }
  int peers_done(int64_t round) override {
    const int tag = round_tag(round);
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      check(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &arrived, &status),
            "the preemption count");
      if (!arrived) return received_;
      check(
          MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "the preemption count");
      ++received_;
    }
  }
  void end_round(int64_t round, std::string_view what) override {
    poll_until([&] { return peers_done(round) >= size_ - 1; }, what);
    for (auto& request : sends_)
      if (request != MPI_REQUEST_NULL) wait(request, what);
    received_ = 0;
  }

  [[noreturn]] void abort(int code) override {
    spdlog::default_logger()->flush();
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
  }

 private:
  void all_reduce(void* data, size_t count, MPI_Datatype type, MPI_Op op, std::string_view what) {
    RECUR_ASSERT(count <= static_cast<size_t>(INT32_MAX));
    MPI_Request request;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), type, op, MPI_COMM_WORLD,
                         &request),
          what);
    wait(request, what);
  }

  void wait(MPI_Request& request, std::string_view what) {
    poll_until(
        [&] {
          int done = 0;
          check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
          return done != 0;
        },
        what);
  }

  // Polls done() (each call lets MPI progress) until it holds: spins (yielding) for the first 200
  // microseconds, which is what an all-reduce on one host takes, then sleeps 100 microseconds
  // between polls. Past dist.timeout_s it ends the job.
  template <typename Done>
  void poll_until(Done&& done, std::string_view what) {
    const auto start = Clock::now();
    const auto spin_until = start + std::chrono::microseconds(200);
    while (!done()) {
      const auto now = Clock::now();
      if (now - start > timeout_) {
        spdlog::error(
            "rank {} of {}: waited {:.0f} s in {} without every rank arriving (dist.timeout_s): "
            "a peer rank hangs, or died without MPI noticing; ending the job. The run's latest "
            "checkpoint is intact: continue it with `recur train --resume RUN_DIR` under the "
            "same launcher",
            rank_, size_, std::chrono::duration<double>(now - start).count(), what);
        abort(3);
      }
      if (now < spin_until)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  void check(int code, std::string_view what) {
    if (code == MPI_SUCCESS) return;
    spdlog::error("rank {} of {}: MPI failed in {}: {}; ending the job", rank_, size_, what,
                  mpi_error_text(code));
    abort(3);
  }

  // Tags 1..30000 for preemption rounds (0 stays free), cycling: a round's messages are all
  // received before the next round starts.
  static int round_tag(int64_t round) { return 1 + static_cast<int>(round % 30000); }

  Clock::duration timeout_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::vector<MPI_Request> sends_;  // announce_done's, completed by end_round
  int received_ = 0;                // peers_done's count in this round
  MPI_Comm local_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(std::chrono::duration<double> timeout) {
  RECUR_CHECK(launched_by_mpi(),
              "dist.backend = mpi, but this process was not started by an MPI launcher: start "
              "every rank with it, e.g. `mpirun -np 2 recur train CONFIG --set dist.backend=mpi` "
              "(as root add --allow-run-as-root), or under Slurm `srun --mpi=pmix -n 2 recur "
              "train ...`; for one process, set dist.backend: none");
  MpiRuntime::ensure_initialized();
  auto comm = std::make_unique<MpiCommunicator>(timeout);
  // srun without a PMI plugin starts N processes that each see a world of 1: N unrelated runs
  // writing the same directory. Slurm says how many tasks it started.
  if (const char* tasks = std::getenv("SLURM_NTASKS"); tasks != nullptr && comm->size() == 1) {
    RECUR_CHECK(std::atoi(tasks) <= 1,
                "Slurm started {} tasks, but MPI sees a world of 1 rank: srun needs the PMIx "
                "plugin to connect them (srun --mpi=pmix ...), or run mpirun inside the "
                "allocation (salloc -n N mpirun recur train ...)",
                tasks);
  }
  return comm;
}

}  // namespace recur::agent::dist
