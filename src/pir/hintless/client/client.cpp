#include "pir/hintless/client/client.h"

#include <string>

#include "core/linkage.h"
#include "pir/hintless/crs.h"
#include "pir/hintless/modswitch.h"
#include "pir/lwe/lwe.h"

namespace privsearch::pir::hintless {
namespace {

// Small signed samples as a Poly2 in coefficient form.
void to_poly2(const HintlessRing& ring, std::span<const std::int64_t> small, u64* out) {
  const std::size_t d = ring.d();
  for (int p = 0; p < 2; ++p) {
    for (std::size_t i = 0; i < d; ++i) out[p * d + i] = ring.modulus(p).from_signed(small[i]);
  }
}

void sample_gaussian(const GaussianSampler& g, Prng& prng, SecureVector<std::int64_t>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = g.sample(prng);
}

}  // namespace

Result<HintlessClient> HintlessClient::create(const HintlessParams& params,
                                              const HintlessShape& shape) {
  PRIVSEARCH_ASSIGN_OR_RETURN(HintlessRing ring, HintlessRing::create(params));
  if (shape.columns == 0 || shape.columns > kMaxColumns || shape.outputs == 0 ||
      shape.records_per_column == 0 || shape.record_bytes == 0 ||
      shape.records_per_column * shape.record_bytes > shape.column_bytes(params)) {
    return invalid_argument_error("hintless PIR shape is not valid for its params");
  }
  HintlessClient client(std::move(ring), shape);
  for (std::size_t k = 0; k < crs_query_polys(client.ring_, shape.columns); ++k) {
    client.a_.push_back(crs_query_poly(client.ring_, k));
  }
  client.key_a_ = crs_key_polys(client.ring_);
  return client;
}

Result<std::pair<HintlessQuery, HintlessSecret>> HintlessClient::make_query(std::size_t record,
                                                                            Prng& prng) const {
  if (record >= shape_.records) {
    return out_of_range_error("record " + std::to_string(record) + " is past the " +
                              std::to_string(shape_.records) + " records of the database");
  }
  const std::size_t d = ring_.d();
  const GaussianSampler gauss(params().sigma);
  SecureVector<std::int64_t> small(d);
  sample_gaussian(gauss, prng, small);
  SecureVector<u64> s(2 * d);
  to_poly2(ring_, small.span(), s.data());
  ring_.forward(s.data());

  HintlessQuery query;
  query.params_id = params().id;
  query.columns = shape_.columns;
  encrypt_columns(s.span(), shape_.column_of(record), prng, query);
  make_packing_key(s.span(), prng, query);

  HintlessSecret secret;
  secret.s_ntt_a_ = SecureVector<u64>(d);
  for (std::size_t i = 0; i < d; ++i) secret.s_ntt_a_[i] = s[i];
  secret.record_ = record;
  return std::make_pair(std::move(query), std::move(secret));
}

void HintlessClient::encrypt_columns(std::span<const u64> s, std::size_t column, Prng& prng,
                                     HintlessQuery& query) const {
  const std::size_t d = ring_.d(), n = shape_.columns;
  const GaussianSampler gauss(params().sigma);
  SecureVector<std::int64_t> e(d);
  SecureVector<u64> poly(2 * d), err(2 * d);
  query.c1.assign(2 * n, 0);
  for (std::size_t k = 0; k < a_.size(); ++k) {
    for (int p = 0; p < 2; ++p) {
      const u64 q = ring_.prime(p), ratio = ring_.ratio(p);
      for (std::size_t i = 0; i < d; ++i) {
        poly[p * d + i] = HintlessRing::reduce(s[p * d + i] * a_[k][p * d + i], q, ratio);
      }
    }
    ring_.inverse(poly.data());
    sample_gaussian(gauss, prng, e);
    to_poly2(ring_, e.span(), err.data());
    for (std::size_t i = 0; i < d && k * d + i < n; ++i) {
      const std::size_t c = k * d + i;
      const u64 hit = u64{0} - static_cast<u64>(c == column);  // all ones at c*, branch-free
      for (int p = 0; p < 2; ++p) {
        const ring::Modulus& m = ring_.modulus(p);
        const u64 v = m.add(m.add(poly[p * d + i], err[p * d + i]), ring_.delta(p) & hit);
        query.c1[p * n + c] = static_cast<std::uint32_t>(v);
      }
    }
  }
}

void HintlessClient::make_packing_key(std::span<const u64> s, Prng& prng,
                                      HintlessQuery& query) const {
  const std::size_t d = ring_.d(), n = 2 * d;
  const int t = params().gadget_digits;
  const GaussianSampler gauss(params().sigma);
  SecureVector<std::int64_t> e(d);
  SecureVector<u64> err(n), tau_s(n);
  query.key_b.assign(static_cast<std::size_t>(ring_.log_d()) * t * n, 0);
  for (int l = 1; l <= ring_.log_d(); ++l) {
    for (int p = 0; p < 2; ++p) {
      ring_.level_automorphism(l).apply(s.data() + p * d, tau_s.data() + p * d);
    }
    for (int j = 0; j < t; ++j) {
      const std::size_t at = ((l - 1) * t + j) * n;
      sample_gaussian(gauss, prng, e);
      to_poly2(ring_, e.span(), err.data());
      ring_.forward(err.data());
      for (int p = 0; p < 2; ++p) {
        const ring::Modulus& m = ring_.modulus(p);
        const u64 zj = m.reduce(u64{1} << (params().gadget_log_base * j));
        for (std::size_t i = 0; i < d; ++i) {
          const std::size_t x = p * d + i;
          const u64 sa = HintlessRing::reduce(s[x] * key_a_[at + x], m.value(), ring_.ratio(p));
          const u64 v = m.sub(m.add(sa, err[x]), m.mul(tau_s[x], zj));
          query.key_b[at + x] = static_cast<std::uint32_t>(v);
        }
      }
    }
  }
}

Result<std::vector<std::uint8_t>> HintlessClient::decode(const HintlessSecret& secret,
                                                         const HintlessResponse& response) const {
  const std::size_t d = ring_.d(), outputs = shape_.outputs;
  if (response.outputs != outputs || response.a.size() != outputs * d ||
      response.b.size() != outputs * d) {
    return data_loss_error("hintless PIR response has " + std::to_string(response.outputs) +
                           " outputs, the database " + std::to_string(outputs));
  }
  const ring::Modulus& m = ring_.modulus(0);
  // The decoded column holds the record and its neighbours: wiped buffers (SecureVector).
  SecureVector<std::uint16_t> entries(outputs * d);
  SecureVector<u64> prod(d);
  for (std::size_t o = 0; o < outputs; ++o) {
    for (std::size_t i = 0; i < d; ++i) prod[i] = response.a[o * d + i];
    ring_.ntt(0).forward(prod.data());
    for (std::size_t i = 0; i < d; ++i) prod[i] = m.mul(prod[i], secret.s_ntt_a()[i]);
    ring_.ntt(0).inverse(prod.data());
    for (std::size_t i = 0; i < d; ++i) {
      entries[o * d + i] = decode_entry(params(), response.b[o * d + i], prod[i]);
    }
  }
  SecureVector<std::uint8_t> column(shape_.column_bytes(params()));
  entries_to_bytes(entries.span(), params().p_bits, column.span());
  const std::size_t at = shape_.offset_of(secret.record());
  return std::vector<std::uint8_t>(column.data() + at, column.data() + at + shape_.record_bytes);
}

}  // namespace privsearch::pir::hintless

// Linker marker (core/linkage.h): present exactly when hintless query generation is linked.
extern "C" void privsearch_linked_hintless_client() {}
