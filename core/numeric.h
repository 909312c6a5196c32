// Numeric helpers shared by envs and executors.
#pragma once

namespace recur {

// x rounded to float32 precision, as a double: what numpy's .astype(np.float32) does to a
// float64 value that is then used in float64 arithmetic again.
//
// Why not just static_cast<double>(static_cast<float>(x)): GCC 12 at -O3 with -march=native
// (AVX-512, seen on znver4 detected as znver3) vectorizes such a loop and drops the
// double->float->double round trip, so the value keeps float64 precision. The volatile store
// forces the rounding; callers are reset paths and one store per step, never inner loops.
inline double round_to_float(double x) {
  volatile float f = static_cast<float>(x);
  return static_cast<double>(f);
}

}  // namespace recur
