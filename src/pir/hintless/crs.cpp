#include "pir/hintless/crs.h"

#include <cstring>
#include <string_view>

#include "core/sha256.h"

namespace privsearch::pir::hintless {
namespace {

constexpr std::uint64_t kQueryStream = 0x4850510000000000ull;  // "HPQ": a_k
constexpr std::uint64_t kKeyStream = 0x48504b0000000000ull;    // "HPK": key a-rows

std::vector<u64> uniform_poly(const HintlessRing& ring, std::uint64_t stream) {
  Prng prng = Prng::from_seed(hintless_crs_seed(ring.params()), stream);
  const std::size_t d = ring.d();
  std::vector<u64> poly(2 * d);
  for (int i = 0; i < 2; ++i) {
    for (std::size_t j = 0; j < d; ++j) poly[i * d + j] = prng.uniform_below(ring.prime(i));
  }
  return poly;
}

}  // namespace

Seed hintless_crs_seed(const HintlessParams& params) {
  Sha256 h;
  h.update(std::string_view("privsearch-hintless-v1"));
  std::uint8_t id[4];
  for (int i = 0; i < 4; ++i) id[i] = static_cast<std::uint8_t>(params.id >> (8 * i));
  h.update(std::span<const std::uint8_t>(id, 4));
  return h.finish();
}

std::vector<u64> crs_query_poly(const HintlessRing& ring, std::size_t k) {
  return uniform_poly(ring, kQueryStream + k);
}

std::vector<u64> crs_key_poly(const HintlessRing& ring, int level, int digit) {
  return uniform_poly(ring, kKeyStream + static_cast<std::uint64_t>(level) * 64 +
                                static_cast<std::uint64_t>(digit));
}

std::vector<u64> crs_key_polys(const HintlessRing& ring) {
  const std::size_t n = 2 * ring.d();
  const int t = ring.params().gadget_digits;
  std::vector<u64> all(static_cast<std::size_t>(ring.log_d()) * t * n);
  for (int l = 1; l <= ring.log_d(); ++l) {
    for (int j = 0; j < t; ++j) {
      const std::vector<u64> p = crs_key_poly(ring, l, j);
      std::memcpy(all.data() + ((l - 1) * t + j) * n, p.data(), n * sizeof(u64));
    }
  }
  return all;
}

}  // namespace privsearch::pir::hintless
