# Third-party dependencies, found through CMake's own modules or the packages' config files.
# A package missing here stops configuration with the Debian package that provides it.
include_guard(GLOBAL)

function(ovb_require found what debian)
  if(NOT ${found})
    message(FATAL_ERROR "OverlapBench needs ${what}: on Debian/Ubuntu install '${debian}' "
                        "(or run ci/setup.sh), elsewhere point CMAKE_PREFIX_PATH at it.")
  endif()
endfunction()

find_package(MPI REQUIRED COMPONENTS C)
find_package(Threads REQUIRED)

find_package(nlohmann_json 3.10 QUIET)
ovb_require(nlohmann_json_FOUND "nlohmann-json >= 3.10" nlohmann-json3-dev)

find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND)
  # Debian's libcli11-dev 2.1 ships the header without a config package in some layouts.
  find_path(OVB_CLI11_INCLUDE CLI/CLI.hpp)
  if(OVB_CLI11_INCLUDE)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE ${OVB_CLI11_INCLUDE})
    set(CLI11_FOUND TRUE)
  endif()
endif()
ovb_require(CLI11_FOUND "CLI11" libcli11-dev)

set(BLA_VENDOR OpenBLAS)
find_package(BLAS QUIET)
find_path(OVB_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread)
if(NOT BLAS_FOUND OR NOT OVB_CBLAS_INCLUDE)
  set(BLAS_FOUND FALSE)
endif()
ovb_require(BLAS_FOUND "OpenBLAS (library and cblas.h)" libopenblas-dev)
add_library(ovb_blas INTERFACE)
target_link_libraries(ovb_blas INTERFACE ${BLAS_LIBRARIES})
target_include_directories(ovb_blas INTERFACE ${OVB_CBLAS_INCLUDE})

find_package(benchmark QUIET)
if(OVB_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND AND EXISTS /usr/src/googletest/CMakeLists.txt)
    # Debian's googletest ships sources only on some releases: build them here.
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/_googletest EXCLUDE_FROM_ALL)
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
    set(GTest_FOUND TRUE)
  endif()
  ovb_require(GTest_FOUND "GoogleTest" libgtest-dev)
endif()
