#include "ring/rns_poly.h"

#include "ring/ntt.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ring {

void add_row(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  add_mod_row(a, b, out, n, q);
}

void sub_row(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  sub_mod_row(a, b, out, n, q);
}

void neg_row(const u64* a, u64* out, std::size_t n, const Modulus& q) {
  const u64 qv = q.value();
  for (std::size_t i = 0; i < n; ++i) out[i] = reduce_once(qv - a[i], qv);
}

namespace {
bool use_ifma_mul(std::size_t n, const Modulus& q) {
  static const bool available = detail::mul_ifma_compiled() && cpu_has_ifma() && cpu_has_avx512dq();
  return available && n % 8 == 0 && q.value() < (u64{1} << 50);
}
}  // namespace

void mul_row_scalar(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  for (std::size_t i = 0; i < n; ++i) out[i] = q.mul(a[i], b[i]);
}

void mul_row(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  if (use_ifma_mul(n, q)) return detail::mul_row_ifma(a, b, out, n, q.value());
  mul_row_scalar(a, b, out, n, q);
}

void mul_add_row(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  if (use_ifma_mul(n, q)) return detail::mul_add_row_ifma(a, b, out, n, q.value());
  for (std::size_t i = 0; i < n; ++i) out[i] = q.add(out[i], q.mul(a[i], b[i]));
}

void mul_scalar_row(const u64* a, u64 s, u64* out, std::size_t n, const Modulus& q) {
  const u64 ss = q.shoup(s);
  for (std::size_t i = 0; i < n; ++i) out[i] = q.mul_shoup(a[i], s, ss);
}

namespace {
void check_shapes(const RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli) {
  PRIVSEARCH_CHECK(a.n() == b.n() && a.num_moduli() >= moduli.size() &&
                       b.num_moduli() >= moduli.size() && a.is_ntt() == b.is_ntt(),
                   "RNS polynomial shapes do not match");
}
}  // namespace

void add_inplace(RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli) {
  check_shapes(a, b, moduli);
  for (std::size_t i = 0; i < moduli.size(); ++i)
    add_row(a.row(i), b.row(i), a.row(i), a.n(), moduli[i]);
}

void sub_inplace(RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli) {
  check_shapes(a, b, moduli);
  for (std::size_t i = 0; i < moduli.size(); ++i)
    sub_row(a.row(i), b.row(i), a.row(i), a.n(), moduli[i]);
}

void negate_inplace(RnsPoly& a, std::span<const Modulus> moduli) {
  PRIVSEARCH_CHECK(a.num_moduli() >= moduli.size(), "too few RNS rows");
  for (std::size_t i = 0; i < moduli.size(); ++i) neg_row(a.row(i), a.row(i), a.n(), moduli[i]);
}

void multiply_inplace(RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli) {
  check_shapes(a, b, moduli);
  PRIVSEARCH_CHECK(a.is_ntt(), "pointwise product needs NTT form");
  for (std::size_t i = 0; i < moduli.size(); ++i)
    mul_row(a.row(i), b.row(i), a.row(i), a.n(), moduli[i]);
}

void multiply_add(const RnsPoly& a, const RnsPoly& b, RnsPoly& acc,
                  std::span<const Modulus> moduli) {
  check_shapes(a, b, moduli);
  check_shapes(a, acc, moduli);
  PRIVSEARCH_CHECK(a.is_ntt(), "pointwise product needs NTT form");
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    mul_add_row(a.row(i), b.row(i), acc.row(i), a.n(), moduli[i]);
  }
}

}  // namespace privsearch::ring
