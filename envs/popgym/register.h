// POPGym (Morad et al., ICLR 2023; popgym 1.0.7 on PyPI): the partially observable suite, every
// env at Easy, Medium and Hard. recur's id of POPGym's `popgym-<Name><Difficulty>-v0` is
// `<Name><Difficulty>-v0` (e.g. popgym-RepeatFirstMedium-v0 -> RepeatFirstMedium-v0). Each group
// file registers its ids; envs/popgym/register.cc calls them from register_popgym().
#pragma once

#include "envs/registry.h"

namespace recur::envs {

// Card and sequence tasks: Autoencode, CountRecall, HigherLower, MultiarmedBandit, RepeatFirst
// (RepeatPrevious is in envs/memory/).
void register_popgym_sequences(Registry& registry);  // envs/popgym/sequences_register.cc
// Board and grid tasks: Battleship, Concentration, MineSweeper, LabyrinthEscape, LabyrinthExplore.
void register_popgym_boards(Registry& registry);  // envs/popgym/boards_register.cc
// Control tasks: Position/Velocity-only and noisy CartPole, Position-only and noisy Pendulum.
void register_popgym_control(Registry& registry);  // envs/popgym/control_register.cc

}  // namespace recur::envs
