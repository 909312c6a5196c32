// The parts of the recur._recur module, one function per source file. The module is a thin layer
// over recur's libraries: the Python package recur/ builds the Gymnasium-facing API on top of it.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <vector>

#include "agent/policy_target.h"
#include "core/options.h"

namespace recur::python {

namespace py = pybind11;

void bind_envs(py::module_& m);     // envs.cc: Env, VectorEnv, env_ids, env_spec
void bind_policy(py::module_& m);   // policy.cc: Policy, evaluate
void bind_train(py::module_& m);    // train.cc: train, set_log_level
void bind_record(py::module_& m);   // record.cc: record_dataset, record_dataset_gym
void bind_plugins(py::module_& m);  // plugins.cc: load_plugin, loaded_plugins

// The env plugins a policy target needs (plugins.cc): `plugins` when given (as --plugin: they
// replace the record), else those its checkpoint recorded, hash-checked
// (agent::load_recorded_plugins).
void load_target_plugins(const agent::PolicyTarget& target,
                         const std::vector<std::string>& plugins);

// Env options as the registry takes them; `source` names them in error messages.
Options to_options(const std::map<std::string, std::string>& values, const std::string& source);

}  // namespace recur::python
