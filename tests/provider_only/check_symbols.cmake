# Fails if the provider-side binary contains any client (secret-key) symbol.
# Usage: cmake -DNM=<nm> -DBINARY=<path> -P check_symbols.cmake
execute_process(COMMAND ${NM} -C ${BINARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${BINARY}")
endif()
set(forbidden "SecretKey" "KeyGenerator" "Encryptor" "Decryptor" "CompactDecryptor"
    "sample_error_ntt" "sample_ternary_ntt")
foreach(name ${forbidden})
  string(FIND "${symbols}" "privsearch::ckks::${name}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "provider binary contains client symbol privsearch::ckks::${name}")
  endif()
endforeach()
string(FIND "${symbols}" "privsearch::ckks::Evaluator::rotate" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "sanity: provider binary lacks Evaluator::rotate; the check is vacuous")
endif()
message(STATUS "provider binary has no client symbols")
