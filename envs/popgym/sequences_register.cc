// POPGym's card and sequence tasks at Easy, Medium and Hard (popgym/envs/__init__.py registers
// them without a time limit; MultiarmedBandit truncates itself after episode_length steps, which
// recur registers as its time limit). Reward thresholds are set where POPGym's optimum is the
// constant 1 (every answer right); HigherLower's and MultiarmedBandit's optimum depends on the
// deal, so they have none.
#include <memory>
#include <optional>

#include "envs/popgym/autoencode.h"
#include "envs/popgym/count_recall.h"
#include "envs/popgym/higher_lower.h"
#include "envs/popgym/multiarmed_bandit.h"
#include "envs/popgym/register.h"
#include "envs/popgym/repeat_first.h"

namespace recur::envs {
namespace {

constexpr const char* kFamily = "popgym";

// An id whose factory reads Config with the difficulty's defaults and builds Env from it.
template <typename E, typename Config>
EnvSpec spec(const char* id, Config defaults, int max_episode_steps,
             std::optional<double> reward_threshold, const char* summary) {
  return {id,
          kFamily,
          max_episode_steps,
          reward_threshold,
          summary,
          [defaults](OptionReader& options) -> std::unique_ptr<Env> {
            return std::make_unique<E>(Config::read(options, defaults));
          }};
}

}  // namespace

void register_popgym_sequences(Registry& r) {
  using popgym::sequences::CardField;
  r.add(spec<Autoencode>("AutoencodeEasy-v0", AutoencodeConfig{1}, 0, 1.0,
                         "watch 52 suits, then recite them in reverse; optimal return 1"));
  r.add(spec<Autoencode>("AutoencodeMedium-v0", AutoencodeConfig{2}, 0, 1.0,
                         "watch 104 suits, then recite them in reverse; optimal return 1"));
  r.add(spec<Autoencode>("AutoencodeHard-v0", AutoencodeConfig{3}, 0, 1.0,
                         "watch 156 suits, then recite them in reverse; optimal return 1"));

  r.add(spec<CountRecall>("CountRecallEasy-v0", CountRecallConfig{1, CardField::kColor}, 0, 1.0,
                          "count the colours dealt from 1 deck; optimal return 1"));
  r.add(spec<CountRecall>("CountRecallMedium-v0", CountRecallConfig{2, CardField::kSuit}, 0, 1.0,
                          "count the suits dealt from 2 decks; optimal return 1"));
  r.add(spec<CountRecall>("CountRecallHard-v0", CountRecallConfig{4, CardField::kRank}, 0, 1.0,
                          "count the ranks dealt from 4 decks; optimal return 1"));

  r.add(spec<HigherLower>("HigherLowerEasy-v0", HigherLowerConfig{1}, 0, std::nullopt,
                          "guess higher or lower through 1 deck"));
  r.add(spec<HigherLower>("HigherLowerMedium-v0", HigherLowerConfig{2}, 0, std::nullopt,
                          "guess higher or lower through 2 decks"));
  r.add(spec<HigherLower>("HigherLowerHard-v0", HigherLowerConfig{3}, 0, std::nullopt,
                          "guess higher or lower through 3 decks"));

  r.add(spec<MultiarmedBandit>("MultiarmedBanditEasy-v0", MultiarmedBanditConfig{10, 200}, 200,
                               std::nullopt, "10 arms redrawn every episode, 200 pulls"));
  r.add(spec<MultiarmedBandit>("MultiarmedBanditMedium-v0", MultiarmedBanditConfig{20, 400}, 400,
                               std::nullopt, "20 arms redrawn every episode, 400 pulls"));
  r.add(spec<MultiarmedBandit>("MultiarmedBanditHard-v0", MultiarmedBanditConfig{30, 600}, 600,
                               std::nullopt, "30 arms redrawn every episode, 600 pulls"));

  r.add(spec<RepeatFirst>("RepeatFirstEasy-v0", RepeatFirstConfig{1}, 0, 1.0,
                          "name the first suit of a 1-deck episode; optimal return 1"));
  r.add(spec<RepeatFirst>("RepeatFirstMedium-v0", RepeatFirstConfig{8}, 0, 1.0,
                          "name the first suit of an 8-deck episode; optimal return 1"));
  r.add(spec<RepeatFirst>("RepeatFirstHard-v0", RepeatFirstConfig{16}, 0, 1.0,
                          "name the first suit of a 16-deck episode; optimal return 1"));
}

}  // namespace recur::envs
