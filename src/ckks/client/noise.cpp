#include "ckks/client/noise.h"

#include "ckks/internal/poly_util.h"
#include "ring/sampler.h"

namespace privsearch::ckks {

namespace {
constexpr int kCbdEta = 21;  // sigma = sqrt(21/2) = 3.24, as SEAL (paper Table 3)

ring::RnsPoly small_to_ntt(const Params& params, const std::vector<std::size_t>& rows,
                           const SecureVector<std::int64_t>& small) {
  ring::RnsPoly out(params.n(), rows.size(), false);
  const auto moduli = moduli_for_rows(params, rows);
  ring::small_to_rns(small.span(), moduli, out);
  to_ntt(params, rows, out);
  return out;
}
}  // namespace

ring::RnsPoly sample_error_ntt(const Params& params, const std::vector<std::size_t>& rows,
                               Prng& prng) {
  SecureVector<std::int64_t> e(params.n());
  ring::sample_cbd(prng, kCbdEta, e);
  return small_to_ntt(params, rows, e);
}

ring::RnsPoly sample_ternary_ntt(const Params& params, const std::vector<std::size_t>& rows,
                                 Prng& prng) {
  SecureVector<std::int64_t> u(params.n());
  ring::sample_ternary(prng, u);
  return small_to_ntt(params, rows, u);
}

}  // namespace privsearch::ckks
