# Decides whether the CUDA backend is built (OVB_ENABLE_CUDA = AUTO | ON | OFF) and finds its parts:
# nvcc, cuBLASLt, CUPTI, NVTX3 (CUDAToolkit) and NCCL (FindNCCL.cmake).
# Sets OVB_HAVE_CUDA and the interface target ovb_cuda. With ON, a missing part is an error; with AUTO, it turns the backend off.
include_guard(GLOBAL)
set(OVB_HAVE_CUDA OFF)
string(TOUPPER "${OVB_ENABLE_CUDA}" _ovb_cuda_mode)
if(NOT _ovb_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "OVB_ENABLE_CUDA must be AUTO, ON or OFF, not '${OVB_ENABLE_CUDA}'")
endif()

if(NOT _ovb_cuda_mode STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  set(_ovb_missing "")
  if(NOT CMAKE_CUDA_COMPILER)
    list(APPEND _ovb_missing "nvcc")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere (A100) and Hopper (H100/H200); override with -DCMAKE_CUDA_ARCHITECTURES=...
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    # CUDA C++20, as the C++ code: nvcc has -std=c++20 since CUDA 12, but CMake before 3.25.2
    # does not know it for nvcc (fixed in 3.25.2) and refuses CUDA_STANDARD 20 without this.
    if(CMAKE_VERSION VERSION_LESS 3.25.2 AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION
       AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit)
    if(NOT TARGET CUDA::cublasLt)
      list(APPEND _ovb_missing "cuBLASLt")
    endif()
    if(NOT TARGET CUDA::cupti)
      list(APPEND _ovb_missing "CUPTI")
    endif()
    if(NOT TARGET CUDA::nvtx3)
      list(APPEND _ovb_missing "NVTX3")
    endif()
    find_package(NCCL)
    if(NOT NCCL_FOUND)
      list(APPEND _ovb_missing "NCCL")
    endif()
  endif()
  if(_ovb_missing)
    if(_ovb_cuda_mode STREQUAL "ON")
      message(FATAL_ERROR "OVB_ENABLE_CUDA=ON but not found: ${_ovb_missing}")
    endif()
    message(STATUS "CUDA backend off (OVB_ENABLE_CUDA=AUTO), not found: ${_ovb_missing}")
  else()
    set(OVB_HAVE_CUDA ON)
    # What CUDA code of the suite compiles and links against; linked only by targets that compile
    # CUDA code (others get the libraries link-only, so their objects match a host build's).
    add_library(ovb_cuda INTERFACE)
    target_link_libraries(ovb_cuda INTERFACE CUDA::cudart CUDA::cublas CUDA::cublasLt CUDA::cupti
                                             CUDA::nvtx3 NCCL::nccl)
    message(STATUS "CUDA backend on: CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_VERSION}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES}")
  endif()
endif()
