// recur._recur: the compiled half of the `recur` Python package. Errors keep recur's messages:
// recur::Error (bad input: an unknown env id, a bad config key) is raised as recur.Error, a
// subclass of ValueError; std::invalid_argument (a wrong buffer size, an action outside the space)
// as ValueError; everything else as RuntimeError.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "buffers.h"
#include "core/error.h"

#ifndef RECUR_VERSION
#define RECUR_VERSION "0.0.0"
#endif

PYBIND11_MODULE(_recur, m) {
  namespace py = pybind11;
  m.doc() = "recur's C++ core: envs, vector envs, policies, training jobs.";
  m.attr("__version__") = RECUR_VERSION;
#ifdef RECUR_WITH_CUDA
  m.attr("cuda_built") = true;
#else
  m.attr("cuda_built") = false;
#endif
#ifdef RECUR_PYTHON_NO_RECORDING
  m.attr("can_render") = false;
#else
  m.attr("can_render") = true;
#endif
  py::register_exception<recur::Error>(m, "Error", PyExc_ValueError);
  recur::python::bind_buffers(m);
  recur::python::bind_envs(m);
  recur::python::bind_policy(m);
  recur::python::bind_train(m);
  recur::python::bind_record(m);
  recur::python::bind_plugins(m);
}
