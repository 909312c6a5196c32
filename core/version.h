// recur's version, for `recur --version`, checkpoints and the env-plugin check (envs/plugin.h).
// CMakeLists.txt's project(VERSION) must say the same: the configure step compares them.
#pragma once

#define RECUR_VERSION_MAJOR 0
#define RECUR_VERSION_MINOR 1
#define RECUR_VERSION_PATCH 0
#define RECUR_VERSION_STRING "0.1.0"
