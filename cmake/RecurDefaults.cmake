# Compile settings every recur target shares: warnings, -Werror in CI, -march=native, sanitizers.
add_library(recur_defaults INTERFACE)
target_compile_options(recur_defaults INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                            -Wnon-virtual-dtor -Wold-style-cast -Wimplicit-fallthrough
                            # GCC 12 reports false positives inside its own AVX-512
                            # intrinsics when Eigen's kernels are inlined with -march=native.
                            -Wno-maybe-uninitialized>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# No FMA contraction: GCC fuses a*b+c by default in C++ once -march allows FMA, which changes
# results between machines and breaks bit-for-bit parity with Gymnasium's float64 dynamics and
# between executors. Kernels that want FMA ask for it explicitly (std::fma, Eigen, __fmaf_rn).
target_compile_options(recur_defaults INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffp-contract=off>)
if(RECUR_WERROR)
  target_compile_options(recur_defaults INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()
if(RECUR_NATIVE)
  # Host code only: GPU machines have other CPUs, so bundles for them are built with RECUR_NATIVE=OFF.
  target_compile_options(recur_defaults INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-march=native> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-march=native>)
endif()
if(RECUR_SANITIZE)
  target_compile_options(recur_defaults INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${RECUR_SANITIZE} -fno-sanitize-recover=all
                              -fno-omit-frame-pointer>)
  target_link_options(recur_defaults INTERFACE -fsanitize=${RECUR_SANITIZE})
endif()
if(RECUR_WITH_CUDA)
  target_compile_definitions(recur_defaults INTERFACE RECUR_WITH_CUDA=1)
endif()
