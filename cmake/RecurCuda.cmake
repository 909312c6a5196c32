# Decides whether the CUDA/cuDNN parts of recur are built (RECUR_WITH_CUDA) from RECUR_CUDA:
#   AUTO  build them when nvcc is found (CI has the toolkit but no GPU: it still compiles them)
#   ON    require them; fail at configure time when the toolkit or cuDNN is missing
#   OFF   CPU-only build
string(TOUPPER "${RECUR_CUDA}" _recur_cuda)
if(NOT _recur_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RECUR_CUDA='${RECUR_CUDA}': expected AUTO, ON or OFF")
endif()

set(RECUR_WITH_CUDA OFF)
if(NOT _recur_cuda STREQUAL "OFF")
  # The toolkit lives in /usr/local/cuda on recur's machines, which is not always on PATH.
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper (sm_90) is the target of the GPU work; add more with -DCMAKE_CUDA_ARCHITECTURES="80;90".
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know the C++20 flag for nvcc 13; kernels need no C++20.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
      add_library(recur_cudnn INTERFACE)
      target_include_directories(recur_cudnn INTERFACE ${CUDNN_INCLUDE_DIR})
      target_link_libraries(recur_cudnn INTERFACE ${CUDNN_LIBRARY})
      set(RECUR_WITH_CUDA ON)
    elseif(_recur_cuda STREQUAL "ON")
      message(FATAL_ERROR "RECUR_CUDA=ON but cuDNN was not found (looked for cudnn.h and libcudnn "
                          "next to the CUDA toolkit in ${CUDAToolkit_LIBRARY_DIR}); install cuDNN 9 "
                          "or configure with -DRECUR_CUDA=OFF")
    else()
      message(STATUS "recur: nvcc found but no cuDNN; building the CPU-only product")
    endif()
  elseif(_recur_cuda STREQUAL "ON")
    message(FATAL_ERROR "RECUR_CUDA=ON but no CUDA compiler was found; install the CUDA toolkit in "
                        "/usr/local/cuda, set CUDACXX, or configure with -DRECUR_CUDA=OFF")
  endif()
endif()
