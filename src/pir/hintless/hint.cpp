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

void HintBuilder::add_block_delta(std::size_t k, std::span<const std::int32_t> delta, u64* leaf,
                                  u64* scratch) const {
  const std::size_t d = ring_->d();
  for (int p = 0; p < 2; ++p) {
    for (std::size_t i = 0; i < d; ++i)
      scratch[p * d + i] = ring_->modulus(p).from_signed(delta[i]);
  }
  ring_->forward(scratch);
  std::vector<u64> term(d);
  for (int p = 0; p < 2; ++p) {
    const ring::Modulus& m = ring_->modulus(p);
    const u64 w = m.mul(ring_->d_inverse(p), 1), w_shoup = m.shoup(w);
    for (std::size_t i = 0; i < d; ++i) {
      const u64 prod = HintlessRing::reduce(conj_a_[k][p * d + i] * scratch[p * d + i], m.value(),
                                            ring_->ratio(p));
      scratch[p * d + i] = m.mul_shoup(prod, w, w_shoup);
    }
    ring_->conjugation().apply(scratch + p * d, term.data());
    for (std::size_t i = 0; i < d; ++i) leaf[p * d + i] = m.add(leaf[p * d + i], term[i]);
  }
}

}  // namespace privsearch::pir::hintless
