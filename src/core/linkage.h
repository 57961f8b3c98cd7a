// Whether this binary contains secret-key code, decided by the linker rather than asserted.
//
// Each secret-key translation unit (CKKS key generation and decryption, the Paillier private key,
// hintless PIR query generation)
// defines one marker function. Here they are declared weak: a weak reference does not pull an
// object file out of a static library, so a marker's address is non-null exactly when its object
// file was linked for some other reason, i.e. when the binary can generate keys or decrypt.
// The provider reports the answer in ServerInfo; ctest `provider_binary_symbols` checks the same
// property with nm.
#pragma once

namespace privsearch {

bool secret_key_code_linked();

}  // namespace privsearch

extern "C" {
void privsearch_linked_ckks_keygen();
void privsearch_linked_ckks_decryptor();
void privsearch_linked_paillier_private();
void privsearch_linked_hintless_client();
}
