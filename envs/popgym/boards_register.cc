// POPGym's board and grid tasks at POPGym's three difficulties (popgym/envs/__init__.py registers
// them without a time limit; each env ends its own episodes, which recur registers as the id's
// time limit: see envs/popgym/boards_checks.h). No reward threshold: no optimum is a constant
// that a policy can reach in expectation (the board is hidden).
#include <memory>
#include <string>

#include "envs/popgym/battleship.h"
#include "envs/popgym/boards_checks.h"
#include "envs/popgym/concentration.h"
#include "envs/popgym/labyrinth_escape.h"
#include "envs/popgym/labyrinth_explore.h"
#include "envs/popgym/minesweeper.h"
#include "envs/popgym/register.h"

namespace recur::envs {
namespace {

// A spec whose registered limit is `limit(defaults)` and whose factory checks that the options
// keep POPGym's episode length consistent with it.
template <typename E, typename Config, typename Read, typename Limit>
EnvSpec board_spec(const std::string& id, Config defaults, Read read, Limit limit,
                   const std::string& summary) {
  const int registered = limit(defaults);
  return {id,
          "popgym",
          registered,
          std::nullopt,
          summary,
          [=](OptionReader& options) -> std::unique_ptr<Env> {
            const Config config = read(options, defaults);
            boards::check_time_limit(options, id, registered, limit(config));
            return std::make_unique<E>(config);
          }};
}

void add_battleship(Registry& r, const char* id, int board_size) {
  r.add(board_spec<Battleship>(
      id, BattleshipConfig{board_size}, BattleshipConfig::read,
      [](const BattleshipConfig& c) { return c.max_episode_length(); },
      "sink hidden ships on a " + std::to_string(board_size) + "x" + std::to_string(board_size) +
          " board seeing only hit or miss; all hits score 1"));
}

void add_concentration(Registry& r, const char* id, int decks, ConcentrationConfig::DeckType type) {
  r.add(board_spec<Concentration>(
      id, ConcentrationConfig{decks, type}, ConcentrationConfig::read,
      [](const ConcentrationConfig& c) { return c.episode_length(); },
      "match face-down cards two at a time (" + std::to_string(decks) + " deck(s), by " +
          (type == ConcentrationConfig::kColors ? "colour)" : "rank)")));
}

void add_minesweeper(Registry& r, const char* id, int side, int mines) {
  r.add(board_spec<MineSweeper>(
      id, MineSweeperConfig{side, side, mines}, MineSweeperConfig::read,
      [](const MineSweeperConfig& c) { return c.max_episode_length(); },
      "click every clear tile of a hidden " + std::to_string(side) + "x" + std::to_string(side) +
          " board with " + std::to_string(mines) + " mines, seeing one number per click"));
}

template <typename E>
void add_labyrinth(Registry& r, const char* id, const char* name, int side, const char* goal) {
  const auto read = [name](OptionReader& o, LabyrinthConfig d) {
    return LabyrinthConfig::read(o, d, name);
  };
  r.add(board_spec<E>(
      id, LabyrinthConfig{side, side, 1024}, read,
      [](const LabyrinthConfig& c) { return c.max_episode_steps(); },
      std::string(goal) + " a random " + std::to_string(side) + "x" + std::to_string(side) +
          " maze seeing the 3x3 cells around"));
}

}  // namespace

void register_popgym_boards(Registry& r) {
  add_battleship(r, "BattleshipEasy-v0", 8);
  add_battleship(r, "BattleshipMedium-v0", 10);
  add_battleship(r, "BattleshipHard-v0", 12);
  add_concentration(r, "ConcentrationEasy-v0", 1, ConcentrationConfig::kColors);
  add_concentration(r, "ConcentrationMedium-v0", 2, ConcentrationConfig::kColors);
  add_concentration(r, "ConcentrationHard-v0", 1, ConcentrationConfig::kRanks);
  add_minesweeper(r, "MineSweeperEasy-v0", 4, 2);
  add_minesweeper(r, "MineSweeperMedium-v0", 6, 6);
  add_minesweeper(r, "MineSweeperHard-v0", 8, 10);
  for (auto [id, side] :
       {std::pair{"LabyrinthEscapeEasy-v0", 10}, std::pair{"LabyrinthEscapeMedium-v0", 14},
        std::pair{"LabyrinthEscapeHard-v0", 18}})
    add_labyrinth<LabyrinthEscape>(r, id, "LabyrinthEscape", side, "escape");
  for (auto [id, side] :
       {std::pair{"LabyrinthExploreEasy-v0", 10}, std::pair{"LabyrinthExploreMedium-v0", 14},
        std::pair{"LabyrinthExploreHard-v0", 18}})
    add_labyrinth<LabyrinthExplore>(r, id, "LabyrinthExplore", side, "visit every cell of");
}

}  // namespace recur::envs
