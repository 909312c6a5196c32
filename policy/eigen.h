// Eigen for recur's code (policy/ and the benchmarks): include this instead of <Eigen/Core>.
// Installed, because policy/aligned.h includes it.
//
// GCC 12 reports -Wmaybe-uninitialized and -Wuninitialized inside its own AVX-512 intrinsics
// headers (the deliberately undefined _mm512_undefined_* / _mm256_undefined_* values, `__Y = __Y`,
// that Eigen's packet code passes through) once -march enables AVX-512:
// a false positive of the compiler, not of Eigen or recur, which -Werror would turn into a failed
// build. The warning is located in the intrinsics header, so silencing it while the header is
// first read silences exactly those reports and nothing in recur's own code.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <Eigen/Core>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
