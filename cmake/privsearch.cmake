# Shared compile settings for every privsearch target.
# Baseline ISA: x86-64-v2 (SSE4.2, POPCNT; every x86-64 server since 2009). Wider paths (AVX-512
# NTT kernels, vectorized FFT loops) are compiled separately and chosen at run time from CPUID.
set(PRIVSEARCH_ARCH "x86-64-v2" CACHE STRING "Baseline -march for all code")
add_compile_options(-march=${PRIVSEARCH_ARCH})
# Debug information: line tables (-g1: function names and lines in backtraces, profiles and
# sanitizer reports) unless asked for full (-g: locals and types for gdb). Full debug info costs
# about 30% more compile time on 2 cores (measured on three of the heaviest files: 12.1 -> 8.7 s,
# 13.9 -> 10.1 s), which every fresh `make test` pays.
set(PRIVSEARCH_DEBUG_INFO "lines" CACHE STRING "Debug information: lines (-g1) or full (-g)")
set_property(CACHE PRIVSEARCH_DEBUG_INFO PROPERTY STRINGS lines full)
if(PRIVSEARCH_DEBUG_INFO STREQUAL "lines")
  string(REPLACE "-g" "-g1" CMAKE_CXX_FLAGS_RELWITHDEBINFO "${CMAKE_CXX_FLAGS_RELWITHDEBINFO}")
  string(REPLACE "-g" "-g1" CMAKE_CXX_FLAGS_DEBUG "${CMAKE_CXX_FLAGS_DEBUG}")
endif()
add_library(privsearch_warnings INTERFACE)
target_compile_options(privsearch_warnings INTERFACE -Wall -Wextra -Wconversion -Wshadow
                       -Wno-sign-conversion)
if(PRIVSEARCH_WERROR)
  target_compile_options(privsearch_warnings INTERFACE -Werror)
endif()
if(PRIVSEARCH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Unity batches: a module's files compiled a few at a time as one translation unit, so the
# headers they share (the standard library, fmt, gRPC, protobuf) are parsed once per batch. Files
# with their own compile options (the AVX-512 / IFMA kernels) are left out of the batches by
# CMake and keep their flags. Names private to a file must be unique within its module.
option(PRIVSEARCH_UNITY_SRC "Compile each library's files in unity batches (faster cold builds)" ON)

# privsearch_module(<name> SOURCES ... [SECRET_SOURCES ...] DEPS ...): one static library per
# module, includes rooted at src/. SECRET_SOURCES hold secret-key code, or code that signs or
# decrypts with a secret key, which a provider binary linking the module must leave out: a static library is linked one object at a time, so they
# are compiled on their own, never in a unity batch with public code
# (tests/provider_only/check_symbols.cmake checks the provider binaries).
function(privsearch_module name)
  cmake_parse_arguments(M "" "" "SOURCES;SECRET_SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${M_SOURCES} ${M_SECRET_SOURCES})
  if(M_SECRET_SOURCES)
    set_source_files_properties(${M_SECRET_SOURCES} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${M_DEPS} PRIVATE privsearch_warnings)
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${PRIVSEARCH_UNITY_SRC}
                                           UNITY_BUILD_BATCH_SIZE 6)
endfunction()
if(PRIVSEARCH_BUILD_FUZZ)
  # Instrument every library for coverage and sanitizers; only fuzz targets link libFuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# The environment of every test. ctest runs two tests at once on a 2-core machine; a test whose
# OpenBLAS or OpenMP pool spins waiting for work beside another busy test crawls (the SciFact
# index build: 14 s alone, 71 s beside two busy processes with the default spinning pools,
# 20 s with these two settings). The code paths stay the same: OpenMP still runs its threads.
set(PRIVSEARCH_TEST_ENVIRONMENT "OPENBLAS_NUM_THREADS=1;OMP_WAIT_POLICY=passive")

# Adds PRIVSEARCH_TEST_ENVIRONMENT to the tests add_test() registered in this directory.
function(privsearch_set_test_environment)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ${PRIVSEARCH_TEST_ENVIRONMENT})
  endforeach()
endfunction()
