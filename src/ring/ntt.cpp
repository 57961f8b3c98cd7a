#include "ring/ntt.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "ring/primes.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ring {

std::string_view ntt_path_name(NttPath path) {
  switch (path) {
    case NttPath::kScalar:
      return "scalar";
    case NttPath::kAvx512:
      return "avx512dq";
    case NttPath::kIfma:
      return "avx512ifma";
  }
  return "unknown";
}

// CPUID only exists on x86-64; elsewhere (WebAssembly) the scalar paths run. PRIVSEARCH_SCALAR=1
// forces them here too: the native scalar figures the browser client is compared with.
#if defined(__x86_64__)
namespace {
bool scalar_forced() {
  const char* v = std::getenv("PRIVSEARCH_SCALAR");
  return v != nullptr && *v != '\0' && *v != '0';
}
}  // namespace

bool cpu_has_ifma() {
  static const bool has = !scalar_forced() && detail::ifma_compiled() &&
                          __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
  return has;
}

bool cpu_has_avx512dq() {
  static const bool has = !scalar_forced() && detail::avx512_compiled() &&
                          __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return has;
}
#else
bool cpu_has_ifma() { return false; }
bool cpu_has_avx512dq() { return false; }
#endif

Result<NttTables> NttTables::create(std::size_t n, const Modulus& q) {
  if (n < 2 || n > (std::size_t{1} << 17) || (n & (n - 1)) != 0) {
    return invalid_argument_error(
        fmt::format("NTT degree `n` = {} is not a power of two in [2, 2^17]", n));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const u64 psi, minimal_primitive_root(q.value(), 2 * n));
  NttTables t(q);
  t.n_ = n;
  t.log_n_ = std::countr_zero(n);
  t.psi_ = psi;
  const u64 psi_inv = q.inv(psi);
  const bool small = q.value() < (u64{1} << 50);
  auto shoup52 = [&](u64 w) { return static_cast<u64>((static_cast<u128>(w) << 52) / q.value()); };
  Twiddles& tw = t.tw_;
  tw.root.resize(n);
  tw.inv_root.resize(n);
  // powers in standard order, then scattered to bit-reversed positions
  u64 p = 1, pi = 1;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t r = reverse_bits(k, t.log_n_);
    tw.root[r] = p;
    tw.inv_root[r] = pi;
    p = q.mul(p, psi);
    pi = q.mul(pi, psi_inv);
  }
  tw.root_shoup64.resize(n);
  tw.inv_root_shoup64.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    tw.root_shoup64[k] = q.shoup(tw.root[k]);
    tw.inv_root_shoup64[k] = q.shoup(tw.inv_root[k]);
  }
  if (small) {
    tw.root_shoup52.resize(n);
    tw.inv_root_shoup52.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      tw.root_shoup52[k] = shoup52(tw.root[k]);
      tw.inv_root_shoup52[k] = shoup52(tw.inv_root[k]);
    }
  }
  t.n_inv_ = q.inv(static_cast<u64>(n) % q.value());
  t.n_inv_shoup64_ = q.shoup(t.n_inv_);
  t.last_scaled_ = q.mul(tw.inv_root[1], t.n_inv_);
  t.last_scaled_shoup64_ = q.shoup(t.last_scaled_);
  if (small) {
    t.n_inv_shoup52_ = shoup52(t.n_inv_);
    t.last_scaled_shoup52_ = shoup52(t.last_scaled_);
  }
  t.default_path_ = NttPath::kScalar;
  if (t.supports(NttPath::kIfma)) {
    t.default_path_ = NttPath::kIfma;
  } else if (t.supports(NttPath::kAvx512)) {
    t.default_path_ = NttPath::kAvx512;
  }
  return t;
}

bool NttTables::supports(NttPath path) const {
  switch (path) {
    case NttPath::kScalar:
      return true;
    case NttPath::kAvx512:
      return n_ >= 16 && cpu_has_avx512dq();
    case NttPath::kIfma:
      return q_.value() < (u64{1} << 50) && n_ >= 16 && cpu_has_ifma();
  }
  return false;
}

void NttTables::forward(std::uint64_t* a, NttPath path) const {
  PRIVSEARCH_DCHECK(supports(path), "NTT path not supported for this modulus/CPU");
  if (path == NttPath::kIfma) {
    detail::ntt_forward_ifma(*this, a);
  } else if (path == NttPath::kAvx512) {
    detail::ntt_forward_avx512(*this, a);
  } else {
    detail::ntt_forward_scalar(*this, a);
  }
}

void NttTables::inverse(std::uint64_t* a, NttPath path) const {
  PRIVSEARCH_DCHECK(supports(path), "NTT path not supported for this modulus/CPU");
  if (path == NttPath::kIfma) {
    detail::ntt_inverse_ifma(*this, a);
  } else if (path == NttPath::kAvx512) {
    detail::ntt_inverse_avx512(*this, a);
  } else {
    detail::ntt_inverse_scalar(*this, a);
  }
}

void NttTables::forward_mod_down(const ModDownRow& row, std::uint64_t* scratch,
                                 NttPath path) const {
  using Mode = ModDownRow::Mode;
  PRIVSEARCH_DCHECK(supports(path), "NTT path not supported for this modulus/CPU");
  PRIVSEARCH_CHECK(row.y() != nullptr || row.mode() == Mode::kConversion,
                   "forward_mod_down: no input row");
  PRIVSEARCH_CHECK(row.x() != nullptr && row.out() != nullptr, "forward_mod_down: no target");
  PRIVSEARCH_CHECK(row.mode() != Mode::kLift || (row.p() < (u64{1} << 62) && row.p() % 2 == 1),
                   "forward_mod_down: p must be odd and below 2^62");
  PRIVSEARCH_CHECK(row.addend_perm() == nullptr || row.addend_perm()->n() == n_,
                   "forward_mod_down: permutation size mismatch");
  const auto& conv = row.conv();
  PRIVSEARCH_CHECK(
      row.mode() != Mode::kConversion ||
          (conv.t != nullptr && conv.sources >= 1 && conv.sources <= ModDownRow::kMaxConvSources &&
           conv.u != nullptr && conv.c != nullptr && conv.max_source < (u64{1} << 62)),
      "forward_mod_down: bad conversion operands");
  if (row.mode() == Mode::kConversion) {
    // IFMA takes the t_i when the special primes fit its lanes.
    if (path == NttPath::kIfma && conv.max_source < (u64{1} << 52)) {
      detail::ntt_forward_mod_down_ifma(*this, row, scratch);
    } else if (path != NttPath::kScalar && supports(NttPath::kAvx512)) {
      detail::ntt_forward_mod_down_avx512(*this, row, scratch);
    } else {
      detail::ntt_forward_mod_down_scalar(*this, row, scratch);
    }
    return;
  }
  // IFMA multiplies 52-bit lanes: the lifted inputs (below p + q) must fit. When p is wider
  // (a 60-bit special prime over a 40-bit q), one lifting pass into scratch first still beats
  // the emulated 64-bit transform; the kernel then reads scratch in place (direct mode: its
  // first stage loads both inputs of a butterfly before storing either).
  if (path == NttPath::kIfma && row.p() + q_.value() < (u64{1} << 52)) {
    detail::ntt_forward_mod_down_ifma(*this, row, scratch);
  } else if (path == NttPath::kIfma) {
    lift_centered_row(row.y(), row.p(), scratch, n_, q_);
    detail::ntt_forward_mod_down_ifma(*this, row.as_direct(scratch), scratch);
  } else if (path != NttPath::kScalar && supports(NttPath::kAvx512)) {
    detail::ntt_forward_mod_down_avx512(*this, row, scratch);
  } else {
    detail::ntt_forward_mod_down_scalar(*this, row, scratch);
  }
}

namespace detail {
// The reference composition: lift, transform, (x - v) * w, then the addend.
void ntt_forward_mod_down_scalar(const NttTables& t, const ModDownRow& row, u64* scratch) {
  const std::size_t n = t.n();
  const Modulus& q = t.modulus();
  switch (row.mode()) {
    case ModDownRow::Mode::kConversion: {
      const auto& conv = row.conv();
      for (std::size_t i = 0; i < n; ++i) {
        u64 acc = q.mul(conv.u[i], q.neg(conv.m));
        for (std::size_t k = 0; k < conv.sources; ++k) {
          acc = q.add(acc, q.mul(q.reduce(conv.t[k * n + i]), conv.c[k]));
        }
        scratch[i] = acc;
      }
      break;
    }
    case ModDownRow::Mode::kLift:
      lift_centered_row(row.y(), row.p(), scratch, n, q);
      break;
    case ModDownRow::Mode::kDirect:
      std::copy_n(row.y(), n, scratch);
      break;
  }
  t.forward(scratch, NttPath::kScalar);
  const u64 w = row.w(), ws = q.shoup(w);
  const u64* x = row.x();
  const u64* addend = row.addend();
  const GaloisPermutation* perm = row.addend_perm();
  for (std::size_t i = 0; i < n; ++i) {
    u64 r = row.x_prescaled() ? q.sub(x[i], q.mul_shoup(scratch[i], w, ws))
                              : q.mul_shoup(q.sub(x[i], scratch[i]), w, ws);
    if (addend != nullptr) r = q.add(r, addend[perm != nullptr ? perm->table()[i] : i]);
    row.out()[i] = r;
  }
}
}  // namespace detail

}  // namespace privsearch::ring
