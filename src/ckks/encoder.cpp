#include "ckks/encoder.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <numbers>

#include "ckks/internal/poly_util.h"
#include "core/secure_buffer.h"
#include "ring/ntt.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ckks {

Result<Encoder> Encoder::create(const Params& params) {
  const std::size_t s = params.slots();
  const std::size_t two_n = 2 * params.n();
  const int log_s = std::countr_zero(s);
  auto t = std::make_shared<Tables>();
  t->twist_re.resize(s);
  t->twist_im.resize(s);
  for (std::size_t k = 0; k < s; ++k) {
    // zeta^k = exp(i pi k / n)
    const double angle =
        std::numbers::pi * static_cast<double>(k) / static_cast<double>(params.n());
    t->twist_re[k] = std::cos(angle);
    t->twist_im[k] = std::sin(angle);
  }
  t->fft_re.resize(s > 1 ? s - 1 : 1);
  t->fft_im.resize(s > 1 ? s - 1 : 1);
  for (std::size_t half = 1; half < s; half <<= 1) {
    const std::size_t len = 2 * half;
    for (std::size_t j = 0; j < half; ++j) {
      const double angle = 2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(len);
      t->fft_re[half - 1 + j] = std::cos(angle);
      t->fft_im[half - 1 + j] = std::sin(angle);
    }
  }
  t->slot_index.resize(s);
  std::uint64_t g = 1;
  for (std::size_t j = 0; j < s; ++j) {
    const std::size_t tj = static_cast<std::size_t>((g - 1) / 4);
    t->slot_index[j] = ring::reverse_bits(tj, log_s);
    g = (g * 5) % two_n;
  }
  return Encoder(params, std::move(t));
}

namespace {

// The radix-2 passes, cloned for AVX-512 and AVX2 (chosen at load time by the dynamic linker
// from CPUID); the inner loops are unit-stride over split real/imaginary arrays so they vectorize.
// x86-64-v4 = AVX-512 F/CD/BW/DQ/VL (DQ converts between doubles and 64-bit integers).
#define PRIVSEARCH_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

// Gentleman-Sande: X_t = sum_k x_k omega^(t k), output in bit-reversed order.
PRIVSEARCH_SIMD_CLONES
void dft_forward_passes(double* __restrict re, double* __restrict im, std::size_t s,
                        const double* __restrict fft_re, const double* __restrict fft_im) {
  for (std::size_t half = s / 2; half >= 1; half >>= 1) {
    const double* wr = fft_re + half - 1;
    const double* wi = fft_im + half - 1;
    for (std::size_t i = 0; i < s; i += 2 * half) {
      double* xr = re + i;
      double* xi = im + i;
      double* yr = xr + half;
      double* yi = xi + half;
      for (std::size_t j = 0; j < half; ++j) {
        const double ur = xr[j], ui = xi[j], vr = yr[j], vi = yi[j];
        xr[j] = ur + vr;
        xi[j] = ui + vi;
        const double dr = ur - vr, di = ui - vi;
        yr[j] = dr * wr[j] - di * wi[j];
        yi[j] = dr * wi[j] + di * wr[j];
      }
    }
  }
}

// Cooley-Tukey: x_k = sum_t y_t omega^(-t k), input in bit-reversed order.
// The first two stages have twiddles 1 and (1, -i): no multiplications, fused into one pass
// over blocks of four (the general loop would run with inner trip counts of 1 and 2).
PRIVSEARCH_SIMD_CLONES
void dft_inverse_passes(double* __restrict re, double* __restrict im, std::size_t s,
                        const double* __restrict fft_re, const double* __restrict fft_im) {
  std::size_t half = 1;
  if (s >= 4) {
    for (std::size_t i = 0; i < s; i += 4) {
      // stage half = 1: (x0, x1) -> (x0 + x1, x0 - x1), same for (x2, x3)
      const double a0r = re[i] + re[i + 1], a0i = im[i] + im[i + 1];
      const double a1r = re[i] - re[i + 1], a1i = im[i] - im[i + 1];
      const double a2r = re[i + 2] + re[i + 3], a2i = im[i + 2] + im[i + 3];
      const double a3r = re[i + 2] - re[i + 3], a3i = im[i + 2] - im[i + 3];
      // stage half = 2: twiddles conj(1) = 1 and conj(i) = -i; (a3 * -i) = (a3i, -a3r)
      re[i] = a0r + a2r;
      im[i] = a0i + a2i;
      re[i + 2] = a0r - a2r;
      im[i + 2] = a0i - a2i;
      re[i + 1] = a1r + a3i;
      im[i + 1] = a1i - a3r;
      re[i + 3] = a1r - a3i;
      im[i + 3] = a1i + a3r;
    }
    half = 4;
  }
  for (; half < s; half <<= 1) {
    const double* wr = fft_re + half - 1;
    const double* wi = fft_im + half - 1;
    for (std::size_t i = 0; i < s; i += 2 * half) {
      double* xr = re + i;
      double* xi = im + i;
      double* yr = xr + half;
      double* yi = xi + half;
      for (std::size_t j = 0; j < half; ++j) {
        // v = y * conj(w)
        const double vr = yr[j] * wr[j] + yi[j] * wi[j];
        const double vi = yi[j] * wr[j] - yr[j] * wi[j];
        const double ur = xr[j], ui = xi[j];
        xr[j] = ur + vr;
        xi[j] = ui + vi;
        yr[j] = ur - vr;
        yi[j] = ui - vi;
      }
    }
  }
}

// w_k = (re_k + i im_k) * (tw_re_k - i tw_im_k) * factor, rounded to integers:
// coeffs[k] = round(Re w_k), coeffs[k + s] = round(Im w_k). Returns max |coefficient|.
PRIVSEARCH_SIMD_CLONES
double untwist_and_round(const double* __restrict re, const double* __restrict im,
                         const double* __restrict tw_re, const double* __restrict tw_im,
                         double factor, std::size_t s, double* __restrict out) {
  double max_abs = 0;
  for (std::size_t k = 0; k < s; ++k) {
    const double tr = tw_re[k], ti = -tw_im[k];
    const double a = std::nearbyint((re[k] * tr - im[k] * ti) * factor);
    const double b = std::nearbyint((re[k] * ti + im[k] * tr) * factor);
    out[k] = a;
    out[k + s] = b;
    const double m = std::fabs(a) > std::fabs(b) ? std::fabs(a) : std::fabs(b);
    max_abs = m > max_abs ? m : max_abs;
  }
  return max_abs;
}

}  // namespace

void Encoder::dft_forward(double* re, double* im) const {
  dft_forward_passes(re, im, slots(), t_->fft_re.data(), t_->fft_im.data());
}

void Encoder::dft_inverse(double* re, double* im) const {
  dft_inverse_passes(re, im, slots(), t_->fft_re.data(), t_->fft_im.data());
}

namespace {
Status check_level_scale(const Params& params, std::size_t level, double scale) {
  if (level > params.max_level()) {
    return invalid_argument_error(
        fmt::format("`level` = {} exceeds the maximum level {}", level, params.max_level()));
  }
  if (!(scale >= 1.0) || !std::isfinite(scale) || std::log2(scale) >= 62) {
    return invalid_argument_error(fmt::format("`scale` = {} is not in [1, 2^62)", scale));
  }
  return Status();
}
}  // namespace

Status Encoder::place_real(std::span<const double> values, std::size_t level, double scale,
                           std::vector<double>& re) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_level_scale(params_, level, scale));
  const std::size_t s = slots();
  if (values.size() > s) {
    return invalid_argument_error(fmt::format("{} values do not fit {} slots", values.size(), s));
  }
  re.assign(s, 0.0);
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (!std::isfinite(values[j])) {
      return invalid_argument_error(fmt::format("value {} is not finite", j));
    }
    re[t_->slot_index[j]] = values[j];
  }
  return Status();
}

Result<Plaintext> Encoder::encode(std::span<const double> values, std::size_t level,
                                  double scale) const {
  std::vector<double> re, im(slots(), 0.0);
  PRIVSEARCH_RETURN_IF_ERROR(place_real(values, level, scale, re));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto poly,
                              encode_spectrum(re, im, key_rows(params_, level, false), scale));
  return Plaintext(params_.id(), level, scale, std::move(poly));
}

Result<ExtendedPlaintext> Encoder::encode_extended(std::span<const double> values,
                                                   std::size_t level, double scale) const {
  std::vector<double> re, im(slots(), 0.0);
  PRIVSEARCH_RETURN_IF_ERROR(place_real(values, level, scale, re));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto poly,
                              encode_spectrum(re, im, key_rows(params_, level, true), scale));
  return ExtendedPlaintext(params_.id(), level, scale, std::move(poly));
}

Result<Plaintext> Encoder::encode(std::span<const std::complex<double>> values, std::size_t level,
                                  double scale) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_level_scale(params_, level, scale));
  const std::size_t s = slots();
  if (values.size() > s) {
    return invalid_argument_error(fmt::format("{} values do not fit {} slots", values.size(), s));
  }
  std::vector<double> re(s, 0.0), im(s, 0.0);
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (!std::isfinite(values[j].real()) || !std::isfinite(values[j].imag())) {
      return invalid_argument_error(fmt::format("value {} is not finite", j));
    }
    re[t_->slot_index[j]] = values[j].real();
    im[t_->slot_index[j]] = values[j].imag();
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto poly,
                              encode_spectrum(re, im, key_rows(params_, level, false), scale));
  return Plaintext(params_.id(), level, scale, std::move(poly));
}

Result<Plaintext> Encoder::encode_constant(double value, std::size_t level, double scale) const {
  std::vector<double> v(slots(), value);
  return encode(v, level, scale);
}

Result<ring::RnsPoly> Encoder::encode_spectrum(std::vector<double>& re, std::vector<double>& im,
                                               const std::vector<std::size_t>& rows,
                                               double scale) const {
  dft_inverse(re.data(), im.data());
  return round_to_rows(re.data(), im.data(), rows, scale);
}

Result<std::pair<Plaintext, Plaintext>> Encoder::encode_pair(std::span<const double> a,
                                                             std::span<const double> b,
                                                             std::size_t level,
                                                             double scale) const {
  std::vector<double> re, im;
  PRIVSEARCH_RETURN_IF_ERROR(place_real(a, level, scale, re));
  PRIVSEARCH_RETURN_IF_ERROR(place_real(b, level, scale, im));
  dft_inverse(re.data(), im.data());
  const std::size_t s = slots();
  std::vector<double> ar(s), ai(s), br(s), bi(s);
  for (std::size_t k = 0; k < s; ++k) {
    const std::size_t m = (s - k) & (s - 1);
    // A = (W[k] + conj W[m]) / 2, B = (W[k] - conj W[m]) / 2i.
    ar[k] = 0.5 * (re[k] + re[m]);
    ai[k] = 0.5 * (im[k] - im[m]);
    br[k] = 0.5 * (im[k] + im[m]);
    bi[k] = -0.5 * (re[k] - re[m]);
  }
  const auto rows = key_rows(params_, level, false);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pa, round_to_rows(ar.data(), ai.data(), rows, scale));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pb, round_to_rows(br.data(), bi.data(), rows, scale));
  return std::make_pair(Plaintext(params_.id(), level, scale, std::move(pa)),
                        Plaintext(params_.id(), level, scale, std::move(pb)));
}

Result<ring::RnsPoly> Encoder::round_to_rows(const double* re, const double* im,
                                             const std::vector<std::size_t>& rows,
                                             double scale) const {
  const std::size_t s = slots();
  const std::size_t n = params_.n();
  // w_k = x_k * zeta^-k / S, coefficients m_k = round(delta Re w_k), m_{k+S} = round(delta Im w_k)
  const double factor = scale / static_cast<double>(s);
  thread_local std::vector<double> rounded;
  rounded.resize(n);
  const double max_abs = untwist_and_round(re, im, t_->twist_re.data(), t_->twist_im.data(), factor,
                                           s, rounded.data());
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!(max_abs < kLimit)) {
    return out_of_range_error(fmt::format(
        "encoding needs a coefficient of magnitude {:.3g} >= 2^62; lower the scale or the values",
        max_abs));
  }
  ring::RnsPoly poly = ring::RnsPoly::uninitialized(n, rows.size(), false);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ring::Modulus& q = params_.key_moduli()[rows[i]];
    std::uint64_t* row = poly.row(i);
    if (max_abs < static_cast<double>(q.value())) {
      // |c| < q: the residue is c, or c + q for negative c (the common case: a fast,
      // vectorizable loop).
      ring::signed_doubles_to_residues(rounded.data(), n, q.value(), row);
    } else {
      for (std::size_t k = 0; k < n; ++k) {
        row[k] = q.from_signed(static_cast<std::int64_t>(rounded[k]));
      }
    }
  }
  to_ntt(params_, rows, poly);
  return poly;
}

Result<std::vector<std::complex<double>>> Encoder::decode_complex(const Plaintext& pt) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, pt.params_id(), "plaintext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_level_scale(params_, pt.level(), pt.scale()));
  if (!pt.poly().is_ntt() || pt.poly().num_moduli() != pt.level() + 1 ||
      pt.poly().n() != params_.n()) {
    return invalid_argument_error("plaintext polynomial does not match its level");
  }
  const std::size_t n = params_.n();
  ring::RnsPoly poly = pt.poly();
  const auto rows = key_rows(params_, pt.level(), false);
  from_ntt(params_, rows, poly);
  const ring::RnsBase& base = params_.q_base(pt.level());
  std::vector<double> coeff(n);
  for (std::size_t k = 0; k < n; ++k) coeff[k] = base.compose_centered(poly.data().data() + k, n);
  // Decoding is the client's and its intermediates are the decrypted message: wiped
  // (docs/SECURITY.md, zeroization).
  const auto rows_of = poly.data();
  secure_zero(rows_of.data(), rows_of.size_bytes());
  auto decoded = decode_coefficients(coeff, pt.scale());
  secure_zero(coeff.data(), coeff.size() * sizeof(double));
  return decoded;
}

Result<std::vector<std::complex<double>>> Encoder::decode_coefficients(
    std::span<const double> coeff, double scale) const {
  const std::size_t s = slots();
  if (coeff.size() != params_.n() || !(scale > 0) || !std::isfinite(scale)) {
    return invalid_argument_error(
        fmt::format("decode_coefficients needs {} coefficients and a positive scale", params_.n()));
  }
  std::vector<double> re(s), im(s);
  const double inv_scale = 1.0 / scale;
  for (std::size_t k = 0; k < s; ++k) {
    const double wr = coeff[k] * inv_scale, wi = coeff[k + s] * inv_scale;
    re[k] = wr * t_->twist_re[k] - wi * t_->twist_im[k];
    im[k] = wr * t_->twist_im[k] + wi * t_->twist_re[k];
  }
  dft_forward(re.data(), im.data());
  std::vector<std::complex<double>> out(s);
  for (std::size_t j = 0; j < s; ++j) out[j] = {re[t_->slot_index[j]], im[t_->slot_index[j]]};
  secure_zero(re.data(), re.size() * sizeof(double));  // the decoded message (see above)
  secure_zero(im.data(), im.size() * sizeof(double));
  return out;
}

Result<std::vector<double>> Encoder::decode(const Plaintext& pt) const {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto c, decode_complex(pt));
  std::vector<double> out(c.size());
  for (std::size_t j = 0; j < c.size(); ++j) out[j] = c[j].real();
  secure_zero(c.data(), c.size() * sizeof(c[0]));
  return out;
}

}  // namespace privsearch::ckks
