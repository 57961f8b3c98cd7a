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

# privsearch_module(<name> SOURCES ... DEPS ...): one static library per module, includes
# rooted at src/.
function(privsearch_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${M_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${M_DEPS} PRIVATE privsearch_warnings)
endfunction()
if(PRIVSEARCH_BUILD_FUZZ)
  # Instrument every library for coverage and sanitizers; only fuzz targets link libFuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
