// dist.backend -> a communicator, with what each build lacks said plainly.
#include "agent/config/config.h"
#include "agent/dist/communicator.h"
#include "core/error.h"
#ifdef RECUR_WITH_MPI
#include "agent/dist/mpi_communicator.h"
#endif
#ifdef RECUR_WITH_NCCL
#include "agent/dist/nccl_communicator.h"
#endif

namespace recur::agent::dist {

bool mpi_available() {
#ifdef RECUR_WITH_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_communicator(const DistConfig& config) {
  if (config.backend == "none") return nullptr;
  RECUR_CHECK(config.backend == "mpi", "dist.backend = '{}': expected none or mpi", config.backend);
#ifdef RECUR_WITH_MPI
  return make_mpi_communicator(std::chrono::duration<double>(config.timeout_s));
#else
  throw Error(
      "dist.backend = mpi, but this recur was built without MPI (RECUR_MPI=OFF, or no MPI "
      "found at configure time): install Debian's libopenmpi-dev and openmpi-bin "
      "(tools/install-deps.sh does) and rebuild, or set dist.backend: none");
#endif
}

std::unique_ptr<Communicator> with_device_path(std::unique_ptr<Communicator> host,
                                               [[maybe_unused]] int cuda_device,
                                               [[maybe_unused]] const DistConfig& config) {
#ifdef RECUR_WITH_NCCL
  if (host && host->size() > 1)
    return make_nccl_communicator(std::move(host), cuda_device,
                                  std::chrono::duration<double>(config.timeout_s));
#endif
  return host;
}

}  // namespace recur::agent::dist
