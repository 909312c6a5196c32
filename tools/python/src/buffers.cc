#include "buffers.h"

#include <fmt/format.h>

#include <stdexcept>

namespace recur::python {

BufferArg::BufferArg(const py::handle& obj, const char* what, const std::string& format,
                     size_t itemsize, bool writable) {
  if (!PyObject_CheckBuffer(obj.ptr()))
    throw std::invalid_argument(fmt::format("{}: expected a numpy array, got {}", what,
                                            std::string(py::str(py::type::handle_of(obj)))));
  info_ = py::reinterpret_borrow<py::buffer>(obj).request(writable);
  // numpy writes native-order formats as "f", some exporters as "=f" or "<f" (little endian).
  std::string f = info_.format;
  if (!f.empty() && (f[0] == '=' || f[0] == '<' || f[0] == '@')) f.erase(0, 1);
  if (f != format || static_cast<size_t>(info_.itemsize) != itemsize)
    throw std::invalid_argument(
        fmt::format("{}: elements of format '{}', expected '{}'", what, info_.format, format));
  py::ssize_t expected_stride = info_.itemsize;
  size_t count = 1;
  for (auto d = info_.ndim - 1; d >= 0; --d) {
    const auto i = static_cast<size_t>(d);
    if (info_.shape[i] != 1 && info_.strides[i] != expected_stride)
      throw std::invalid_argument(fmt::format("{}: the array is not C-contiguous", what));
    expected_stride *= info_.shape[i];
    count *= static_cast<size_t>(info_.shape[i]);
  }
  size_ = count;
}

void bind_buffers(py::module_& m) {
  py::class_<BufferView>(m, "_Buffer", py::buffer_protocol(),
                         "Memory owned by a recur object; numpy.asarray(buffer) views it.")
      .def_buffer([](BufferView& v) {
        std::vector<py::ssize_t> strides(v.shape.size());
        py::ssize_t stride = v.itemsize;
        for (size_t d = v.shape.size(); d-- > 0;) {
          strides[d] = stride;
          stride *= v.shape[d];
        }
        return py::buffer_info(v.data, v.itemsize, v.format,
                               static_cast<py::ssize_t>(v.shape.size()), v.shape, strides,
                               v.readonly);
      });
}

}  // namespace recur::python
