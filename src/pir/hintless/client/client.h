// The client side of the hintless backend: a fresh secret per query, the query (first-layer
// vector and packing key), and the decoding of the response into the record's bytes.
//
// Query (YPIR Construction 3.1 step 2 with Remark 3.3, and Construction 2.8's keys):
//   s <- chi^d (rounded Gaussian, sigma 6.4: YPIR Def. 2.2; fresh per query: with the fixed CRS
//   a reused s would reveal the difference of two indices, c1 - c1' = e - e' + Delta (u - u')),
//   c1 = first d0 coefficients of  Coeffs(s a_k + e_k) + Delta [c = c*]   over k < ceil(d0/d),
//   key b-rows  b_{l,j} = s a_{l,j} + e_{l,j} - tau_{2^l+1}(s) z^j       (l = 1 .. log d, j < t).
// The one-hot Delta is added to every coefficient under a mask, so timing does not depend on c*.
// Decoding: every output o gives d entries (modswitch.h's decode_entry), entry i of output o is
// row o d + i of column c*, and the record is its byte range of the column.
// Thread safety: HintlessClient is immutable after create(); HintlessSecret is move-only, wiped
// on destruction, and belongs to the one query that drew it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/csprng.h"
#include "core/secure_buffer.h"
#include "pir/hintless/database.h"
#include "pir/hintless/messages.h"
#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless {

class HintlessSecret {
 public:
  // The record index is secret too: a moved-from or destroyed secret holds none.
  HintlessSecret(HintlessSecret&& o) noexcept
      : s_ntt_a_(std::move(o.s_ntt_a_)), record_(std::exchange(o.record_, 0)) {}
  HintlessSecret& operator=(HintlessSecret&& o) noexcept {
    s_ntt_a_ = std::move(o.s_ntt_a_);
    record_ = std::exchange(o.record_, 0);
    return *this;
  }
  ~HintlessSecret() { secure_zero(&record_, sizeof(record_)); }
  HintlessSecret(const HintlessSecret&) = delete;
  HintlessSecret& operator=(const HintlessSecret&) = delete;
  // s mod q_a in NTT form (all decoding needs), and the record the query asked for.
  std::span<const u64> s_ntt_a() const { return s_ntt_a_.span(); }
  std::size_t record() const { return record_; }

 private:
  friend class HintlessClient;
  HintlessSecret() = default;
  SecureVector<u64> s_ntt_a_;
  std::size_t record_ = 0;
};

class HintlessClient {
 public:
  static Result<HintlessClient> create(const HintlessParams& params, const HintlessShape& shape);

  const HintlessParams& params() const { return ring_.params(); }
  const HintlessShape& shape() const { return shape_; }

  // kOutOfRange for a record past the database.
  Result<std::pair<HintlessQuery, HintlessSecret>> make_query(std::size_t record, Prng& prng) const;
  // The record's R bytes (zero-padded as stored). kDataLoss when the response is not the
  // database's shape.
  Result<std::vector<std::uint8_t>> decode(const HintlessSecret& secret,
                                           const HintlessResponse& response) const;

 private:
  HintlessClient(HintlessRing ring, HintlessShape shape) : ring_(std::move(ring)), shape_(shape) {}
  void encrypt_columns(std::span<const u64> s_ntt, std::size_t column, Prng& prng,
                       HintlessQuery& query) const;
  void make_packing_key(std::span<const u64> s_ntt, Prng& prng, HintlessQuery& query) const;

  HintlessRing ring_;
  HintlessShape shape_;
  std::vector<std::vector<u64>> a_;  // a_k, NTT form
  std::vector<u64> key_a_;           // key a-rows
};

}  // namespace privsearch::pir::hintless
