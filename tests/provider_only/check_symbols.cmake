# Fails if the provider-side binary contains any client (secret-key) symbol.
# Usage: cmake -DNM=<nm> -DBINARY=<path> [-DREQUIRE_SCORING=ON] -P check_symbols.cmake
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
# PIR: the provider holds only Paillier public keys and the ZipPIR server.
# Access-private scoring: the provider multiplies; secrets, masks and decoding are the client's.
foreach(name "PaillierPrivateKey" "paillier_keygen" "ZipPirClient" "LweSecret::sample"
        "Lwe64Secret::sample" "Lwe64Mask" "lwe64_decode" "hintless::HintlessClient"
        "hintless::HintlessSecret")
  string(FIND "${symbols}" "privsearch::pir::${name}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "provider binary contains client symbol privsearch::pir::${name}")
  endif()
endforeach()
# The linker markers of core/linkage.h may be referenced (weakly), never defined.
string(REGEX MATCH " [TW] privsearch_linked_[a-z_]+" marker "${symbols}")
if(marker)
  message(FATAL_ERROR "provider binary defines the secret-key marker${marker}")
endif()
string(FIND "${symbols}" "privsearch::scoring::PrivateScorer" pos)
if(NOT pos EQUAL -1)
  message(FATAL_ERROR "provider binary contains client symbol privsearch::scoring::PrivateScorer")
endif()
# Index signing: the operator signs on the build machine; the provider never holds the key.
string(FIND "${symbols}" "privsearch::index::Ed25519SigningKey" pos)
if(NOT pos EQUAL -1)
  message(FATAL_ERROR "provider binary contains the manifest signing key (index::Ed25519SigningKey)")
endif()
if(REQUIRE_SCORING)  # the real provider serves access-private scoring
  string(FIND "${symbols}" "privsearch::pir::lwe64_answer" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "sanity: provider binary lacks lwe64_answer; the scoring check is vacuous")
  endif()
  string(FIND "${symbols}" "privsearch::pir::hintless::HintlessServer::answer" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "sanity: provider binary lacks HintlessServer::answer; the hintless check is vacuous")
  endif()
endif()
string(FIND "${symbols}" "privsearch::ckks::Evaluator::rotate" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "sanity: provider binary lacks Evaluator::rotate; the check is vacuous")
endif()
message(STATUS "provider binary has no client symbols")
