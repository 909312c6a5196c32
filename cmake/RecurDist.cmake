# Decides whether data-parallel training (agent/dist/) is built:
#   RECUR_MPI  AUTO  MPI when found (Debian: libopenmpi-dev), ON require it, OFF none
# gives RECUR_WITH_MPI, and RECUR_WITH_NCCL (GPU learners' all-reduce) when the CUDA build also
# finds NCCL beside cuDNN (/usr/local/cuda). A build without MPI trains on one process, and
# dist.backend: mpi then says how to get it.
set(RECUR_MPI AUTO CACHE STRING "Data-parallel training over MPI: AUTO (when found), ON, OFF")
set_property(CACHE RECUR_MPI PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${RECUR_MPI}" _recur_mpi)
if(NOT _recur_mpi MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RECUR_MPI='${RECUR_MPI}': expected AUTO, ON or OFF")
endif()

set(RECUR_WITH_MPI OFF)
set(RECUR_WITH_NCCL OFF)
if(NOT _recur_mpi STREQUAL "OFF")
  # The C API only: recur needs none of the deprecated C++ bindings. FindMPI probes C with the C
  # compiler, a language recur's project() does not otherwise enable.
  enable_language(C)
  if(_recur_mpi STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(RECUR_WITH_MPI ON)
    # mpiexec for the multi-rank tests (tests/agent/dist/ranks).
    set(RECUR_MPIEXEC "${MPIEXEC_EXECUTABLE}")
  endif()
endif()

if(RECUR_WITH_MPI AND RECUR_WITH_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    add_library(recur_nccl INTERFACE)
    target_include_directories(recur_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(recur_nccl INTERFACE ${NCCL_LIBRARY})
    set(RECUR_WITH_NCCL ON)
  else()
    message(STATUS "recur: NCCL not found: CUDA learners of a multi-rank job stage gradients "
                   "through host MPI")
  endif()
endif()
