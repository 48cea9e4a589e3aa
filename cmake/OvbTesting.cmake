# Test registration helpers: every test goes through these, so labels and MPI launch are uniform.
#   ovb_add_test(NAME n COMMAND exe args... [LABELS l...] [GPU])
#   ovb_add_mpi_test(NAME n RANKS k COMMAND exe args... [LABELS l...] [GPU])
# Labels in use: unit, mpi, smoke, gpu. With GPU, the test gets the label gpu and first runs
# ovb-gpu-probe, which runs the test in place when a GPU is usable and otherwise exits 77, which
# ctest reports as "Skipped" (visible in the summary, never counted as passed). Run only them with
# `ctest -L gpu`, none with `ctest -LE gpu`. backend-neutral: the test runs only programs built by
# the same commands with and without CUDA (the model, ovb-trace, Python and tree checks), so
# ci/test.sh runs it in the host pass alone; ctest tree.backend_neutral proves it in a CUDA build.
include_guard(GLOBAL)
if(OVB_BUILD_TESTS)
  enable_testing()
endif()

execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _ovb_mpiexec_version
                ERROR_QUIET)
set(OVB_MPIEXEC_PREFLAGS ${MPIEXEC_PREFLAGS})
if(_ovb_mpiexec_version MATCHES "Open MPI|OpenRTE")
  # More ranks than cores on small machines and CI; ranks bind to nothing.
  list(APPEND OVB_MPIEXEC_PREFLAGS --oversubscribe --bind-to none)
endif()

# Prefixes a command with the GPU probe (`ovb-gpu-probe cmd args...` execs cmd when a GPU is usable).
function(_ovb_gpu_wrap out_var)
  set(${out_var} $<TARGET_FILE:ovb-gpu-probe> ${ARGN} PARENT_SCOPE)
endfunction()

function(ovb_add_test)
  cmake_parse_arguments(T "GPU" "NAME" "COMMAND;LABELS" ${ARGN})
  if(T_GPU)
    _ovb_gpu_wrap(T_COMMAND ${T_COMMAND})
    list(APPEND T_LABELS gpu)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" SKIP_RETURN_CODE 77 TIMEOUT 600)
endfunction()

function(ovb_add_mpi_test)
  cmake_parse_arguments(T "GPU" "NAME;RANKS" "COMMAND;LABELS" ${ARGN})
  set(_cmd ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${OVB_MPIEXEC_PREFLAGS}
           ${T_COMMAND})
  if(T_GPU)
    _ovb_gpu_wrap(_cmd ${_cmd})
    list(APPEND T_LABELS gpu)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${_cmd})
  set_tests_properties(${T_NAME} PROPERTIES
    LABELS "mpi;${T_LABELS}" SKIP_RETURN_CODE 77 TIMEOUT 900 PROCESSORS ${T_RANKS}
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
endfunction()
