// Memory between numpy and recur's spans, through Python's buffer protocol only (no numpy C API,
// so the module works with numpy 1.x and 2.x and any pybind11 >= 2.10).
//
//   Out of C++:  BufferView exposes memory that a C++ object owns (a VectorEnv's obs buffer):
//                numpy.asarray(view) is an array over it without a copy, and the array keeps the
//                owner alive through the view.
//   Into C++:    Input<T> / Output<T> take a C-contiguous buffer of T (a numpy array of the right
//                dtype; the Python layer converts with numpy.ascontiguousarray first) and give a
//                span over it; anything else is std::invalid_argument (ValueError) naming `what`.
#pragma once

#include <pybind11/pybind11.h>

#include <span>
#include <string>
#include <vector>

namespace recur::python {

namespace py = pybind11;

struct BufferView {
  py::object owner;  // keeps the memory alive
  void* data = nullptr;
  py::ssize_t itemsize = 0;
  std::string format;  // struct-module format: "f" float32, "d" float64, "B" uint8, "i" int32
  std::vector<py::ssize_t> shape;
  bool readonly = true;
};

template <typename T>
BufferView view_of(py::object owner, std::span<const T> data, std::vector<py::ssize_t> shape) {
  BufferView v;
  v.owner = std::move(owner);
  v.data = const_cast<T*>(data.data());  // exported read-only
  v.itemsize = static_cast<py::ssize_t>(sizeof(T));
  v.format = py::format_descriptor<T>::format();
  v.shape = std::move(shape);
  return v;
}

// A buffer request checked for element type T, C-contiguity and (when given) element count.
class BufferArg {
 public:
  BufferArg(const py::handle& obj, const char* what, const std::string& format, size_t itemsize,
            bool writable);
  size_t size() const { return size_; }

 protected:
  py::buffer_info info_;
  size_t size_ = 0;
};

template <typename T>
class Input : public BufferArg {
 public:
  Input(const py::handle& obj, const char* what)
      : BufferArg(obj, what, py::format_descriptor<T>::format(), sizeof(T), false) {}
  std::span<const T> span() const { return {static_cast<const T*>(info_.ptr), size_}; }
};

template <typename T>
class Output : public BufferArg {
 public:
  Output(const py::handle& obj, const char* what)
      : BufferArg(obj, what, py::format_descriptor<T>::format(), sizeof(T), true) {}
  std::span<T> span() const { return {static_cast<T*>(info_.ptr), size_}; }
};

// Registers BufferView as recur._recur._Buffer.
void bind_buffers(py::module_& m);

}  // namespace recur::python
