// The exact merge of normalizer statistics across ranks (agent/dist/moments.h) against hand
// computed values and against the statistics of the concatenated data; and what
// make_communicator says for each dist.backend in this build (no launcher here).
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#include "agent/config/config.h"
#include "agent/dist/communicator.h"
#include "agent/dist/moments.h"
#include "core/error.h"
#include "tests/support/temp_dir.h"

using namespace recur;
namespace dist = recur::agent::dist;

namespace {
dist::Moments of(std::vector<float> xs) {
  dist::Moments m(1);
  m.add(static_cast<int>(xs.size()), xs);
  return m;
}
}  // namespace

TEST_CASE("dist: moments of three partitions combine to those of the whole, by hand") {
  // {1, 2, 3}, {4, 5} and {}: the whole {1..5} has mean 3 and M2 = 4 + 1 + 0 + 1 + 4 = 10.
  const std::vector<dist::Moments> parts = {of({1, 2, 3}), of({4, 5}), of({})};
  CHECK(parts[0].mean[0] == doctest::Approx(2.0));
  CHECK(parts[0].m2[0] == doctest::Approx(2.0));
  CHECK(parts[1].m2[0] == doctest::Approx(0.5));
  const dist::Moments all = dist::combine(parts);
  CHECK(all.count == 5.0);
  CHECK(all.mean[0] == doctest::Approx(3.0).epsilon(1e-15));
  CHECK(all.m2[0] == doctest::Approx(10.0).epsilon(1e-15));
  CHECK(all.variance()[0] == doctest::Approx(2.0).epsilon(1e-15));
}

TEST_CASE("dist: merging the ranks' deltas into agreed statistics equals one stream of all") {
  // The normalizer's prior (count 1e-4, mean 0, var 1), then three ranks' batches of 2-d
  // observations with large offsets (catastrophic cancellation would show here).
  dist::Moments agreed(2);
  agreed.count = 1e-4;
  agreed.m2 = {1e-4, 1e-4};
  dist::Moments reference = agreed;
  std::vector<dist::Moments> deltas(3, dist::Moments(2));
  uint64_t s = 7;
  for (int step = 0; step < 50; ++step)
    for (int r = 0; r < 3; ++r) {
      std::vector<float> batch(8);
      for (size_t k = 0; k < batch.size(); ++k) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        batch[k] = 1e4f * static_cast<float>(r + 1) + static_cast<float>(s >> 40) * 1e-6f;
      }
      deltas[static_cast<size_t>(r)].add(4, batch);
      reference.add(4, batch);
    }
  agreed.add(dist::combine(deltas));
  CHECK(agreed.count == doctest::Approx(reference.count).epsilon(1e-15));
  for (size_t j = 0; j < 2; ++j) {
    CHECK(agreed.mean[j] == doctest::Approx(reference.mean[j]).epsilon(1e-13));
    CHECK(agreed.m2[j] == doctest::Approx(reference.m2[j]).epsilon(1e-10));
  }
}

TEST_CASE("dist: make_communicator per backend, outside any launcher") {
  agent::DistConfig config;
  CHECK(dist::make_communicator(config) == nullptr);  // none: one process, no MPI at all
  config.backend = "mpi";
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    REQUIRE_MESSAGE(std::getenv(v) == nullptr, "run this test outside mpirun");
  const std::string message = test::error_of([&] { dist::make_communicator(config); });
  if (dist::mpi_available())
    CHECK(message.find("not started by an MPI launcher") != std::string::npos);
  else
    CHECK(message.find("built without MPI") != std::string::npos);
  config.backend = "gloo";
  CHECK(test::error_of([&] { dist::make_communicator(config); }).find("expected none or mpi") !=
        std::string::npos);
}
