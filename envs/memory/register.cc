// Memory tasks with POPGym's difficulty levels (popgym/envs/__init__.py registers them without a
// time limit).
#include <memory>

#include "envs/memory/repeat_previous.h"
#include "envs/registry.h"

namespace recur::envs {
namespace {

EnvSpec repeat_previous(const char* id, RepeatPreviousConfig defaults, const char* summary) {
  return {id,
          "memory",
          0,
          RepeatPrevious::kOptimalReturn,
          summary,
          [defaults](OptionReader& options) -> std::unique_ptr<Env> {
            return std::make_unique<RepeatPrevious>(RepeatPreviousConfig::read(options, defaults));
          }};
}

}  // namespace

void register_memory(Registry& r) {
  r.add(repeat_previous("RepeatPreviousEasy-v0", {1, 4},
                        "name the suit seen 3 cards ago (1 deck, k=4); optimal return 1"));
  r.add(repeat_previous("RepeatPreviousMedium-v0", {2, 32},
                        "name the suit seen 31 cards ago (2 decks, k=32); optimal return 1"));
  r.add(repeat_previous("RepeatPreviousHard-v0", {3, 64},
                        "name the suit seen 63 cards ago (3 decks, k=64); optimal return 1"));
}

}  // namespace recur::envs
