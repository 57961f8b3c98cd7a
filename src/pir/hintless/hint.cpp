#include "pir/hintless/hint.h"

#include <algorithm>

#include "pir/hintless/crs.h"

namespace privsearch::pir::hintless {

HintBuilder::HintBuilder(const HintlessRing& ring, std::size_t columns)
    : ring_(&ring), columns_(columns) {
  const std::size_t d = ring.d();
  for (std::size_t k = 0; k < crs_query_polys(ring, columns); ++k) {
    const std::vector<u64> a = crs_query_poly(ring, k);
    std::vector<u64> conj(2 * d);
    ring.conjugation().apply(a.data(), conj.data());
    ring.conjugation().apply(a.data() + d, conj.data() + d);
    conj_a_.push_back(std::move(conj));
  }
}

void HintBuilder::leaf_a_part(const HintlessDatabase& db, std::size_t row, u64* out,
                              u64* scratch) const {
  const std::size_t d = ring_->d();
  const std::uint16_t* entries = db.row(row);
  std::vector<u64> acc(2 * d, 0);
  for (std::size_t k = 0; k < conj_a_.size(); ++k) {
    const std::size_t first = k * d;
    const std::size_t count = std::min(d, columns_ - first);
    for (std::size_t i = 0; i < d; ++i) {
      const u64 v = i < count ? entries[first + i] : 0;
      scratch[i] = v;
      scratch[d + i] = v;
    }
    ring_->forward(scratch);
    for (int p = 0; p < 2; ++p) {
      const u64 q = ring_->prime(p), ratio = ring_->ratio(p);
      const u64* a = conj_a_[k].data() + p * d;
      u64* acc_p = acc.data() + p * d;
      const u64* x = scratch + p * d;
      for (std::size_t i = 0; i < d; ++i) {
        acc_p[i] = HintlessRing::reduce(acc_p[i] + a[i] * x[i], q, ratio);
      }
    }
  }
  for (int p = 0; p < 2; ++p) {
    const ring::Modulus& m = ring_->modulus(p);
    const u64 w = ring_->d_inverse(p), w_shoup = m.shoup(w);
    for (std::size_t i = 0; i < d; ++i)
      scratch[p * d + i] = m.mul_shoup(acc[p * d + i], w, w_shoup);
    ring_->conjugation().apply(scratch + p * d, out + p * d);
  }
}

std::vector<u64> HintBuilder::leaf_a_parts(const HintlessDatabase& db, std::size_t output) const {
  const std::size_t d = ring_->d();
  std::vector<u64> out(d * 2 * d);
  std::vector<u64> scratch(2 * d);
  for (std::size_t i = 0; i < d; ++i) {
    leaf_a_part(db, output * d + i, out.data() + i * 2 * d, scratch.data());
  }
  return out;
}

}  // namespace privsearch::pir::hintless
