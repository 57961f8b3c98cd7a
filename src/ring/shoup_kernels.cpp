#include "ring/shoup_kernels.h"

#include "ring/ntt.h"

namespace privsearch::ring {

namespace {
bool use_avx512(std::size_t n) { return n % 8 == 0 && cpu_has_avx512dq(); }
}  // namespace

void mul_scalar_shoup_row(const u64* in, u64 w, u64* out, std::size_t n, const Modulus& q) {
  const u64 ws = q.shoup(w);
  if (use_avx512(n)) return detail::mul_scalar_shoup_row_avx512(in, w, ws, out, n, q.value());
  for (std::size_t t = 0; t < n; ++t) out[t] = q.mul_shoup(in[t], w, ws);
}

void mul_scalar_shoup_acc_lazy_row(const u64* in, u64 w, u64* acc, std::size_t n,
                                   const Modulus& q) {
  const u64 ws = q.shoup(w);
  if (use_avx512(n)) {
    return detail::mul_scalar_shoup_acc_lazy_row_avx512(in, w, ws, acc, n, q.value());
  }
  const u64 two_q = 2 * q.value();
  for (std::size_t t = 0; t < n; ++t)
    acc[t] = reduce_once(acc[t] + q.mul_shoup_lazy(in[t], w, ws), two_q);
}

void sub_add_mul_scalar_row(const u64* x, const u64* y, u64 c_add, u64 w, u64* out, std::size_t n,
                            const Modulus& q) {
  const u64 ws = q.shoup(w);
  if (use_avx512(n)) {
    return detail::sub_add_mul_scalar_row_avx512(x, y, c_add, w, ws, out, n, q.value());
  }
  for (std::size_t t = 0; t < n; ++t) out[t] = q.mul_shoup(x[t] + c_add - y[t], w, ws);
}

void add_constant_row(u64* a, u64 c, std::size_t n, const Modulus& q) {
  if (use_avx512(n)) return detail::add_constant_row_avx512(a, c, n, q.value());
  for (std::size_t t = 0; t < n; ++t) a[t] = reduce_once(a[t] + c, q.value());
}

void add_mod_row(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  if (use_avx512(n)) return detail::add_mod_row_avx512(a, b, out, n, q.value());
  for (std::size_t t = 0; t < n; ++t) out[t] = reduce_once(a[t] + b[t], q.value());
}

void sub_mod_row(const u64* a, const u64* b, u64* out, std::size_t n, const Modulus& q) {
  if (use_avx512(n)) return detail::sub_mod_row_avx512(a, b, out, n, q.value());
  for (std::size_t t = 0; t < n; ++t) out[t] = reduce_once(a[t] + q.value() - b[t], q.value());
}

void lift_centered_row(const u64* x, u64 p, u64* out, std::size_t n, const Modulus& q) {
  const u64 pq = q.reduce(p);
  if (use_avx512(n)) {
    return detail::lift_centered_row_avx512(x, p, out, n, q.value(), q.shoup(1), pq);
  }
  const u64 half = p >> 1;
  for (std::size_t t = 0; t < n; ++t) {
    const u64 negative = (half - x[t]) >> 63;
    out[t] = q.sub(q.reduce(x[t]), pq & (u64{0} - negative));
  }
}

void signed_doubles_to_residues(const double* c, std::size_t n, u64 q, u64* out) {
  if (use_avx512(n)) return detail::signed_doubles_to_residues_avx512(c, n, q, out);
  for (std::size_t k = 0; k < n; ++k) {
    const auto v = static_cast<std::int64_t>(c[k]);
    out[k] = static_cast<u64>(v) + (q & static_cast<u64>(v >> 63));
  }
}

void reduce_from_2q_row(u64* a, std::size_t n, const Modulus& q) {
  if (use_avx512(n)) return detail::reduce_from_2q_row_avx512(a, n, q.value());
  for (std::size_t t = 0; t < n; ++t) a[t] = reduce_once(a[t], q.value());
}

void round_quotient_row(const u64* t, const double* inv, std::size_t kf, std::size_t n, u64* u) {
  if (use_avx512(n)) return detail::round_quotient_row_avx512(t, inv, kf, n, u);
  for (std::size_t c = 0; c < n; ++c) {
    double v = 0.5;
    for (std::size_t i = 0; i < kf; ++i) v += static_cast<double>(t[i * n + c]) * inv[i];
    u[c] = static_cast<u64>(v);
  }
}

namespace detail {
bool blocks_use_avx512() { return cpu_has_avx512dq(); }
}  // namespace detail

}  // namespace privsearch::ring
