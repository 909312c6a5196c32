#include "core/text.h"

#include <doctest/doctest.h>

TEST_CASE("edit distance and closest matches") {
  CHECK(recur::edit_distance("kitten", "sitting") == 3);
  CHECK(recur::edit_distance("CartPole", "cartpole") == 0);
  const std::vector<std::string> ids = {"CartPole-v1", "CartPoleNoVel-v1", "Pendulum-v1",
                                        "Acrobot-v1"};
  const auto near = recur::closest_matches("CartPol-v1", ids);
  REQUIRE_FALSE(near.empty());
  CHECK(near.front() == "CartPole-v1");
  CHECK(recur::closest_matches("zzzzzzzzzzzz", ids).empty());
  CHECK(recur::join(ids, "|") == "CartPole-v1|CartPoleNoVel-v1|Pendulum-v1|Acrobot-v1");
}
