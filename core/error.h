// The one error header of recur.
//
//   RECUR_CHECK(cond, fmt, args...)      a user error (bad config, bad file, bad CLI value): throws
//                                        recur::Error whose message names what was wrong and what
//                                        to do.
//   RECUR_CHECK_ARG(cond, fmt, args...)  a bad argument to a library call (an action outside the
//                                        space, a wrong buffer size): throws std::invalid_argument.
//   RECUR_ASSERT(cond)                   an invariant of recur itself: throws
//                                        recur::InternalError with file:line, because reaching it
//                                        is a bug in recur, not in the input.
//   CUDA_CHECK / CUDNN_CHECK / CUBLAS_CHECK(expr)
//                                        wrap every call into those libraries; they throw
//                                        recur::DeviceError with file:line and the library's own
//                                        error string. The macros name the libraries' functions
//                                        only when expanded, so this header stays free of CUDA
//                                        includes; the file that uses them includes the API.
//
// Library code never calls exit(): only main() turns exceptions into messages and exit codes.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace recur {

// A problem with what the user gave recur (input, config, files, command line).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant inside recur: a bug to report.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// A failure reported by the CUDA runtime, cuDNN or cuBLAS.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void throw_internal(const char* file, int line, const char* what);
[[noreturn]] void throw_device(const char* file, int line, const char* call, const char* library,
                               int code, const char* message);
}  // namespace detail

}  // namespace recur

#define RECUR_CHECK(cond, ...)                                   \
  do {                                                           \
    if (!(cond)) throw ::recur::Error(fmt::format(__VA_ARGS__)); \
  } while (0)

#define RECUR_CHECK_ARG(cond, ...)                                      \
  do {                                                                  \
    if (!(cond)) throw std::invalid_argument(fmt::format(__VA_ARGS__)); \
  } while (0)

#define RECUR_ASSERT(cond)                                                   \
  do {                                                                       \
    if (!(cond)) ::recur::detail::throw_internal(__FILE__, __LINE__, #cond); \
  } while (0)

#define CUDA_CHECK(expr)                                                \
  do {                                                                  \
    const auto recur_status_ = (expr);                                  \
    if (recur_status_ != cudaSuccess)                                   \
      ::recur::detail::throw_device(__FILE__, __LINE__, #expr, "CUDA",  \
                                    static_cast<int>(recur_status_),    \
                                    cudaGetErrorString(recur_status_)); \
  } while (0)

#define CUDNN_CHECK(expr)                                                \
  do {                                                                   \
    const auto recur_status_ = (expr);                                   \
    if (recur_status_ != CUDNN_STATUS_SUCCESS)                           \
      ::recur::detail::throw_device(__FILE__, __LINE__, #expr, "cuDNN",  \
                                    static_cast<int>(recur_status_),     \
                                    cudnnGetErrorString(recur_status_)); \
  } while (0)

#define CUBLAS_CHECK(expr)                                                 \
  do {                                                                     \
    const auto recur_status_ = (expr);                                     \
    if (recur_status_ != CUBLAS_STATUS_SUCCESS)                            \
      ::recur::detail::throw_device(__FILE__, __LINE__, #expr, "cuBLAS",   \
                                    static_cast<int>(recur_status_),       \
                                    cublasGetStatusString(recur_status_)); \
  } while (0)
