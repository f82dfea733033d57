# ASan + UBSan for CI (scripts/sanitize.sh builds build-asan/ with them): any report aborts the test. libFuzzer
# targets under fuzz/ (clang only; scripts/sanitize_build.sh builds them in the same tree).
option(PIPESIM_SANITIZE "build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(PIPESIM_FUZZ "build the libFuzzer targets in fuzz/ (needs clang)" OFF)
if(PIPESIM_SANITIZE OR PIPESIM_FUZZ)
  set(PIPESIM_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(${PIPESIM_SANITIZERS})  # every executable links the runtimes
endif()

# Instruments the project's own code, target by target: the test drivers are left plain (their code is not
# what is under test, and instrumenting it doubled the sanitizer build's time); the runtimes still watch every
# allocation they make. COVERAGE adds libFuzzer's coverage to the libraries the fuzz targets exercise.
function(pipesim_instrument target)
  cmake_parse_arguments(ARG "COVERAGE" "" "" ${ARGN})
  if(PIPESIM_SANITIZE OR PIPESIM_FUZZ)
    target_compile_options(${target} PRIVATE ${PIPESIM_SANITIZERS})
  endif()
  if(PIPESIM_FUZZ AND ARG_COVERAGE)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()
