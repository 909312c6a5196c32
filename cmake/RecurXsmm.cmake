# Decides whether the CPU paths multiply matrices through LIBXSMM (RECUR_WITH_XSMM) from
# RECUR_XSMM:
#   AUTO  use it when Debian's libxsmm-dev (1.17: static libraries, no CMake package) is found
#   ON    require it; fail at configure time when it is missing
#   OFF   leave it out: policy/gemm.cc then runs every product through Eigen
# Why: LIBXSMM generates a kernel per GEMM shape at run time and multiplies without packing the
# operands, where Eigen's GEMM packs both panels on every call. recur's products are small or thin
# (a step's (B, H) x (H, 4H) at B 1-64, a minibatch's T*B rows against 8-128 inputs), and there
# LIBXSMM was 1.4-3.5x Eigen on this project's CPU (docs/PERFORMANCE.md, "Small products through
# LIBXSMM"). Debian builds it position-independent, so the Python extension may link it.
string(TOUPPER "${RECUR_XSMM}" _recur_xsmm)
if(NOT _recur_xsmm MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RECUR_XSMM='${RECUR_XSMM}': expected AUTO, ON or OFF")
endif()

set(RECUR_WITH_XSMM OFF)
if(NOT _recur_xsmm STREQUAL "OFF")
  find_path(RECUR_XSMM_INCLUDE_DIR libxsmm.h)
  find_library(RECUR_XSMM_LIBRARY NAMES libxsmm.a xsmm)
  # The BLAS stand-in: libxsmm.a refers to sgemm_/dgemm_ for its own fallback, which recur never
  # takes (it calls the JIT dispatch only); libxsmmnoblas defines them so that no BLAS is needed.
  find_library(RECUR_XSMM_NOBLAS_LIBRARY NAMES libxsmmnoblas.a xsmmnoblas)
  if(RECUR_XSMM_INCLUDE_DIR AND RECUR_XSMM_LIBRARY AND RECUR_XSMM_NOBLAS_LIBRARY)
    find_package(Threads REQUIRED)
    add_library(recur_xsmm INTERFACE)
    target_include_directories(recur_xsmm SYSTEM INTERFACE
                               $<BUILD_INTERFACE:${RECUR_XSMM_INCLUDE_DIR}>)
    # Order matters for static archives: libxsmm before the stand-in that satisfies it.
    target_link_libraries(recur_xsmm INTERFACE ${RECUR_XSMM_LIBRARY} ${RECUR_XSMM_NOBLAS_LIBRARY}
                                               Threads::Threads ${CMAKE_DL_LIBS} rt m)
    set(RECUR_WITH_XSMM ON)
  elseif(_recur_xsmm STREQUAL "ON")
    message(FATAL_ERROR "RECUR_XSMM=ON but LIBXSMM was not found (libxsmm.h, libxsmm.a, "
                        "libxsmmnoblas.a). Debian: apt-get install libxsmm-dev, or run "
                        "tools/install-deps.sh; or configure with -DRECUR_XSMM=OFF")
  else()
    message(STATUS "recur: no LIBXSMM (Debian: libxsmm-dev); CPU products run through Eigen")
  endif()
endif()
