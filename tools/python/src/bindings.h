// The parts of the recur._recur module, one function per source file. The module is a thin layer
// over recur's libraries: the Python package recur/ builds the Gymnasium-facing API on top of it.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "core/options.h"

namespace recur::python {

namespace py = pybind11;

void bind_envs(py::module_& m);    // envs.cc: Env, VectorEnv, env_ids, env_spec
void bind_policy(py::module_& m);  // policy.cc: Policy, evaluate
void bind_train(py::module_& m);   // train.cc: train, set_log_level

// Env options as the registry takes them; `source` names them in error messages.
Options to_options(const std::map<std::string, std::string>& values, const std::string& source);

}  // namespace recur::python
