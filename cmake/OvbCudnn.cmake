# Decides whether gpt4d's fused attention through cuDNN is built (OVB_ENABLE_CUDNN = AUTO | ON |
# OFF; needs the CUDA backend) and finds its parts:
#   libcudnn + cudnn.h (cuDNN 9): CUDNN_ROOT, the CUDA toolkit, /usr/lib/x86_64-linux-gnu with the
#     headers in /usr/include/x86_64-linux-gnu (Debian/Ubuntu packages), /usr;
#   NVIDIA's header-only cudnn-frontend (cudnn_frontend.h): the cache variable
#     OVB_CUDNN_FRONTEND_INCLUDE, else the environment variable of the same name, else the .venv's
#     site-packages/include where ci/setup.sh installs the pinned wheel (ci/requirements-build.txt).
# Sets OVB_HAVE_CUDNN and the target ovb_cudnn (headers as system includes, libcudnn, NVRTC).
# With ON a missing part is an error; with AUTO it turns the cuDNN attention off (gpt4d then runs
# its own CUDA-core attention and says so).
include_guard(GLOBAL)
set(OVB_ENABLE_CUDNN AUTO CACHE STRING
    "Build gpt4d's cuDNN fused attention: AUTO (when cuDNN and cudnn-frontend are found), ON, OFF")
set_property(CACHE OVB_ENABLE_CUDNN PROPERTY STRINGS AUTO ON OFF)
set(OVB_HAVE_CUDNN OFF)
string(TOUPPER "${OVB_ENABLE_CUDNN}" _ovb_cudnn_mode)
if(NOT _ovb_cudnn_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "OVB_ENABLE_CUDNN must be AUTO, ON or OFF, not '${OVB_ENABLE_CUDNN}'")
endif()

if(NOT _ovb_cudnn_mode STREQUAL "OFF")
  set(_ovb_missing "")
  if(NOT OVB_HAVE_CUDA)
    list(APPEND _ovb_missing "the CUDA backend")
  else()
    set(_ovb_cudnn_hints $ENV{CUDNN_ROOT} ${CUDNN_ROOT} ${CUDAToolkit_LIBRARY_ROOT}
                         ${CUDAToolkit_TARGET_DIR})
    find_path(OVB_CUDNN_INCLUDE cudnn_graph.h
              HINTS ${_ovb_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
              PATH_SUFFIXES include include/x86_64-linux-gnu
              PATHS /usr/include/x86_64-linux-gnu /usr/include)
    # libcudnn.so.9 too: a machine with the runtime package only has no unversioned link.
    find_library(OVB_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
                 HINTS ${_ovb_cudnn_hints} ${CUDAToolkit_LIBRARY_DIR}
                 PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu
                 PATHS /usr/lib/x86_64-linux-gnu /usr/lib)
    if(NOT OVB_CUDNN_INCLUDE OR NOT OVB_CUDNN_LIBRARY)
      list(APPEND _ovb_missing "cuDNN 9 (cudnn_graph.h, libcudnn)")
    endif()
    if(NOT TARGET CUDA::nvrtc)
      list(APPEND _ovb_missing "NVRTC (CUDA toolkit)")
    endif()

    if(NOT OVB_CUDNN_FRONTEND_INCLUDE AND DEFINED ENV{OVB_CUDNN_FRONTEND_INCLUDE})
      set(OVB_CUDNN_FRONTEND_INCLUDE "$ENV{OVB_CUDNN_FRONTEND_INCLUDE}")
    endif()
    if(NOT OVB_CUDNN_FRONTEND_INCLUDE)
      file(GLOB _ovb_fe_candidates
           ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/include/cudnn_frontend.h)
      if(_ovb_fe_candidates)
        list(GET _ovb_fe_candidates 0 _ovb_fe_header)
        get_filename_component(_ovb_fe_dir ${_ovb_fe_header} DIRECTORY)
        set(OVB_CUDNN_FRONTEND_INCLUDE ${_ovb_fe_dir})
      endif()
    endif()
    set(OVB_CUDNN_FRONTEND_INCLUDE "${OVB_CUDNN_FRONTEND_INCLUDE}" CACHE PATH
        "Folder holding cudnn_frontend.h (default: .venv/lib/python3*/site-packages/include)")
    if(NOT EXISTS "${OVB_CUDNN_FRONTEND_INCLUDE}/cudnn_frontend.h")
      list(APPEND _ovb_missing "cudnn-frontend headers (run ci/setup.sh, or set "
                               "OVB_CUDNN_FRONTEND_INCLUDE)")
    endif()
  endif()

  if(_ovb_missing)
    string(REPLACE ";" "" _ovb_missing_text "${_ovb_missing}")
    if(_ovb_cudnn_mode STREQUAL "ON")
      message(FATAL_ERROR "OVB_ENABLE_CUDNN=ON but not found: ${_ovb_missing_text}")
    endif()
    message(STATUS "cuDNN attention off (OVB_ENABLE_CUDNN=AUTO), not found: ${_ovb_missing_text}")
  else()
    # cudnn_version.h, or the versioned name some packages install (cudnn_version_v9.h).
    set(_ovb_cudnn_major 9)
    set(_ovb_cudnn_minor "?")
    foreach(_h cudnn_version.h cudnn_version_v9.h)
      if(EXISTS "${OVB_CUDNN_INCLUDE}/${_h}")
        file(STRINGS "${OVB_CUDNN_INCLUDE}/${_h}" _ovb_v REGEX "define CUDNN_(MAJOR|MINOR) ")
        string(REGEX REPLACE ".*CUDNN_MAJOR ([0-9]+).*" "\\1" _ovb_cudnn_major "${_ovb_v}")
        string(REGEX REPLACE ".*CUDNN_MINOR ([0-9]+).*" "\\1" _ovb_cudnn_minor "${_ovb_v}")
        break()
      endif()
    endforeach()
    if(_ovb_cudnn_major LESS 9)
      if(_ovb_cudnn_mode STREQUAL "ON")
        message(FATAL_ERROR "OVB_ENABLE_CUDNN=ON needs cuDNN 9, found ${_ovb_cudnn_major}")
      endif()
      message(STATUS "cuDNN attention off: cuDNN ${_ovb_cudnn_major} found, 9 needed")
    else()
      set(OVB_HAVE_CUDNN ON)
      add_library(ovb_cudnn INTERFACE)
      # System includes: the frontend's headers are not written for -Wall -Wextra -Wpedantic.
      target_include_directories(ovb_cudnn SYSTEM INTERFACE ${OVB_CUDNN_FRONTEND_INCLUDE}
                                                            ${OVB_CUDNN_INCLUDE})
      # NVRTC: cudnn-frontend compiles some of its own (Blackwell) engines at run time.
      target_link_libraries(ovb_cudnn INTERFACE ${OVB_CUDNN_LIBRARY} CUDA::nvrtc CUDA::cudart)
      message(STATUS "cuDNN attention on: cuDNN ${_ovb_cudnn_major}.${_ovb_cudnn_minor} "
                     "(${OVB_CUDNN_LIBRARY}), cudnn-frontend in ${OVB_CUDNN_FRONTEND_INCLUDE}")
    endif()
  endif()
endif()
