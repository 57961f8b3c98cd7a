// The secret half of an encrypted-rerank conversation, without protobuf or any transport: the
// secret key, its CSPRNG, the key sets it makes, the query it encrypts and the scores it
// decrypts. RerankSession (client/rerank_session.h) wraps it in the protocol's messages; the
// WebAssembly client (web/wasm) uses it directly, since protobuf is the page's JavaScript job.
//
//   crypto = RerankCrypto::create(params, d')         a secret key (CSPRNG), never leaves here
//   keys   = crypto.make_key_set(K, with_pk)         one key epoch's public keys, serialized
//   query  = crypto.encrypt_query(z, K)               the serialized rerank request
//   scores = crypto.decrypt_scores(query.layout, provider's payload)
//
// Thread safety: every method holds the object's OwnerLock (core/owner_lock.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ckks/params.h"
#include "core/csprng.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::client {

// The query's half of a request, made before the candidates are known (it depends only on the
// query and K): a search encrypts while its candidates are being fetched and scanned.
struct EncryptedQuery {
  std::size_t k = 0;
  rerank::KernelLayout layout;
  std::string query;  // the serialized rerank request message (seeded ciphertext)
};

// One key epoch's upload, serialized (the fields of UploadKeysRequest).
struct KeySet {
  std::string params_id;    // SHA-256 of the parameters
  std::string galois_keys;  // ckks serialize_galois_keys (seeded)
  std::string public_key;   // ckks serialize_public_key, or empty when not asked for
};

class RerankCrypto {
 public:
  // A fresh secret key for `params` and queries of `dim` = d' values, from `prng`.
  // kInvalidArgument when no layout exists for dim (0 or above the slot count).
  static Result<RerankCrypto> create(const ckks::Params& params, std::size_t dim, Prng prng);
  ~RerankCrypto();
  RerankCrypto(RerankCrypto&&) noexcept;
  RerankCrypto& operator=(RerankCrypto&&) noexcept;
  RerankCrypto(const RerankCrypto&) = delete;
  RerankCrypto& operator=(const RerankCrypto&) = delete;

  const ckks::Params& params() const;
  std::size_t dim() const;

  // The kernel's layout for K candidates under these parameters.
  Result<rerank::KernelLayout> layout_for(std::size_t k) const;
  // Fresh rotation keys for K (a new key epoch), and the public key (made once per secret key)
  // when `with_public_key`.
  Result<KeySet> make_key_set(std::size_t k, bool with_public_key);
  // The encryption of a unit query (|z|^2 = 1 within rounding; kInvalidArgument otherwise, or
  // for K = 0 or a dimension other than d').
  Result<EncryptedQuery> encrypt_query(std::span<const double> unit_query, std::size_t k);
  // The scores of a provider's rerank payload (rerank serialize_response) that must answer
  // `layout`, in the order the candidates were sent; kDataLoss / kInvalidArgument from the
  // decoders when it does not.
  Result<std::vector<double>> decrypt_scores(const rerank::KernelLayout& layout,
                                             std::span<const std::uint8_t> payload) const;

  struct State;

 private:
  explicit RerankCrypto(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace privsearch::client
