// CKKS encoder: the canonical embedding between C^(n/2) and R = Z[X]/(X^n + 1), scaled by delta.
//
// Slot j holds m(zeta^(5^j mod 2n)) with zeta = exp(i*pi/n): slots are ordered by powers of 5,
// as in SEAL, so rotating slots left by k is X -> X^(5^k) (Cheon-Kim-Kim-Song 2017, sec. 3;
// Cheon-Han-Kim-Kim-Song 2018 for the FFT form).
//
// Math used here: write S = n/2 and w_k = m_k + i*m_{k+S} (k < S). Because zeta^(5^j * S) = i
// (5^j = 1 mod 4), m(zeta^(5^j)) = sum_k w_k zeta^(5^j k). With 5^j = 4 t_j + 1 mod 2n this is
// the length-S DFT of (w_k zeta^k) at frequency t_j, so
//   decode: twist by zeta^k, forward DFT (omega = exp(2 pi i / S)), read slot j at t_j;
//   encode: place z_j at t_j, inverse DFT, untwist by zeta^-k, scale by delta, round.
// The DFTs are radix-2 (decimation in frequency forward, in time inverse) so that the slot map
// absorbs the bit reversal.
//
// Encoded plaintexts are in NTT form at the requested level. Coefficients must stay below 2^62
// in magnitude after scaling (kOutOfRange otherwise).
// Thread safety: immutable; encode/decode may run concurrently. Constant time: the transforms
// are data-independent; rounding and CRT reconstruction are branch-free per coefficient.
#pragma once

#include <complex>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "ckks/extended.h"
#include "ckks/params.h"
#include "ckks/plaintext.h"
#include "core/status.h"

namespace privsearch::ckks {

class Encoder {
 public:
  static Result<Encoder> create(const Params& params);

  const Params& params() const { return params_; }
  std::size_t slots() const { return params_.slots(); }

  // values.size() <= slots; missing slots are zero. Errors: kInvalidArgument (too many or
  // non-finite values, bad level or scale), kOutOfRange (a scaled coefficient >= 2^62).
  Result<Plaintext> encode(std::span<const double> values, std::size_t level, double scale) const;
  Result<Plaintext> encode(std::span<const std::complex<double>> values, std::size_t level,
                           double scale) const;
  // The same encoding over the extended basis q_0..q_level, P (for double hoisting).
  Result<ExtendedPlaintext> encode_extended(std::span<const double> values, std::size_t level,
                                            double scale) const;
  // Two real vectors with one complex inverse DFT: for real slot values the DFT output is
  // Hermitian, so W = IDFT(a + i b) splits as A[k] = (W[k] + conj W[-k]) / 2 and
  // B[k] = (W[k] - conj W[-k]) / 2i. Same results as two encode() calls, half the FFT work.
  Result<std::pair<Plaintext, Plaintext>> encode_pair(std::span<const double> a,
                                                      std::span<const double> b, std::size_t level,
                                                      double scale) const;
  // Every slot equal to `value`.
  Result<Plaintext> encode_constant(double value, std::size_t level, double scale) const;

  Result<std::vector<std::complex<double>>> decode_complex(const Plaintext& pt) const;
  // Real parts of all slots.
  Result<std::vector<double>> decode(const Plaintext& pt) const;
  // Slots of the polynomial with the given (already centred) integer coefficients, divided by
  // `scale`. coeffs.size() must be n. Used for decryptions outside R_Q (compact responses).
  Result<std::vector<std::complex<double>>> decode_coefficients(std::span<const double> coeffs,
                                                                double scale) const;

 private:
  struct Tables {
    std::vector<double> twist_re, twist_im;  // zeta^k, k < S
    std::vector<double> fft_re, fft_im;      // omega_len^j at offset len/2 - 1 + j
    std::vector<std::size_t> slot_index;     // brv(t_j): position of slot j in bit-reversed DFT
  };
  Encoder(Params params, std::shared_ptr<const Tables> t)
      : params_(std::move(params)), t_(std::move(t)) {}
  // Inverse DFT, scaling and rounding into `rows` (key-basis indices), NTT form.
  Result<ring::RnsPoly> encode_spectrum(std::vector<double>& re, std::vector<double>& im,
                                        const std::vector<std::size_t>& rows, double scale) const;
  // Scaling and rounding of an inverse-DFT output (natural order) into `rows`, NTT form.
  Result<ring::RnsPoly> round_to_rows(const double* re, const double* im,
                                      const std::vector<std::size_t>& rows, double scale) const;
  Status place_real(std::span<const double> values, std::size_t level, double scale,
                    std::vector<double>& re) const;
  void dft_forward(double* re, double* im) const;  // natural -> bit-reversed
  void dft_inverse(double* re, double* im) const;  // bit-reversed -> natural, unscaled

  Params params_;
  std::shared_ptr<const Tables> t_;
};

}  // namespace privsearch::ckks
