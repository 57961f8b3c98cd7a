#include "core/linkage.h"

extern "C" {
__attribute__((weak)) void privsearch_linked_ckks_keygen();
__attribute__((weak)) void privsearch_linked_ckks_decryptor();
__attribute__((weak)) void privsearch_linked_paillier_private();
__attribute__((weak)) void privsearch_linked_hintless_client();
}

namespace privsearch {

bool secret_key_code_linked() {
  return privsearch_linked_ckks_keygen != nullptr || privsearch_linked_ckks_decryptor != nullptr ||
         privsearch_linked_paillier_private != nullptr ||
         privsearch_linked_hintless_client != nullptr;
}

}  // namespace privsearch
