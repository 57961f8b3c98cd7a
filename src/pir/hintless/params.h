// Parameter sets of the hintless PIR backend (YPIR+SP: Menon & Wu, "YPIR: High-Throughput
// Single-Server PIR with Silent Preprocessing", USENIX Security 2024, ePrint 2024/270, section
// 4.6), from a vetted table with provenance, and the decryption-failure bound of a database shape.
//
// One ring R_q = Z_q[X]/(X^d + 1) serves both layers: the SimplePIR pass (LWE of dimension d over
// the structured matrix of the CRS), the CDKS packing of its answer (Chen-Dai-Kim-Song 2021,
// Construction 2.8 of YPIR) and the split modulus switch of the response (YPIR Lemma 2.4).
// q = q_a q_b is the product of two 28-bit NTT primes, so every product of a residue and a
// 14-bit entry or a 19-bit digit fits a 64-bit lane with room for lazy sums.
// Security: the HE standard (Albrecht et al. 2018, Table 1, the error-distribution-secret rows as
// OpenFHE's stdlatticeparms encodes them) allows log2 q <= 56 at n = 2048 for 128 bits; the
// secret is drawn from the error distribution (YPIR Def. 2.2), fresh for every query.
// Thread safety: constant data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/status.h"

namespace privsearch::pir::hintless {

struct HintlessParams {
  std::string_view name;
  std::uint32_t id = 0;      // carried by every message; a mismatch is PIR_VERSION_MISMATCH
  std::size_t d = 0;         // ring degree = LWE dimension of the first layer
  std::uint64_t q_a = 0;     // the two NTT primes, q = q_a q_b; q_a is also the response's
  std::uint64_t q_b = 0;     //   a-part modulus (q~_a)
  double sigma = 6.4;        // standard deviation of errors and secret (rounded Gaussian)
  int p_bits = 14;           // database entries are in [0, 2^p_bits)
  int gadget_digits = 3;     // t: balanced digits of the key switch
  int gadget_log_base = 19;  // z = 2^19
  int response_b_bits = 20;  // q~_b = 2^20: the response's b-part modulus
  bool secure = true;
  std::string_view provenance;

  int log_d() const;
  std::uint64_t p() const { return std::uint64_t{1} << p_bits; }
  double log2_q() const;
  // Bytes one output ciphertext takes in a response: d (28 + 20) bits.
  std::size_t output_bytes() const;
  // Bytes of the packing key: log2(d) automorphisms x t rows x d coefficients x 2 x 28 bits.
  std::size_t packing_key_bytes() const;
  // 14-bit entries carry 7 bytes per 4 entries: bytes one output's column slice holds.
  std::size_t column_bytes_per_output() const { return d * static_cast<std::size_t>(p_bits) / 8; }
};

std::span<const HintlessParams> hintless_param_table();
// kNotFound for an unknown name; kInvalidArgument for an insecure row without `allow_insecure`.
Result<HintlessParams> find_hintless_params(std::string_view name, bool allow_insecure = false);
// The row whose id is `id` (messages carry ids): kFailedPrecondition when none is.
Result<HintlessParams> hintless_params_by_id(std::uint32_t id, bool allow_insecure = false);
// The checks every row passes (run by find_* and by the table test): primes, 2d | q_i - 1,
// the HE-standard bound on log2 q for d, z^t >= q, q~_b < q~_a, p | q~_b.
Status check_hintless_params(const HintlessParams& params);

// log2 of the probability that some coefficient of a response fails to decode, for a database of
// `columns` (d0) columns and `outputs` (rho) packed outputs per column, worst-case entries:
//   tau     = q~b/(2p) - (q~b mod p) - (2 + (q~b mod p) + (q~b/q)(q mod p))/2     (Lemmas 2.3, 2.4)
//   s^2     = (q~b/q~a)^2 d s_s^2/4                                  a-part rounding
//           + (q~b/q)^2 [ d0 (p-1)^2 s_e^2                           query error times D
//                          + (d^2 - 1) t d z^2 s_e^2 / 12 ]         CDKS packing (Thm 2.9)
//   log2 f  = log2(2 d rho) - pi tau^2 / (s^2 ln 2)                  union over d rho coefficients
// with Gaussian widths s_e = s_s = sigma sqrt(2 pi). 0 when tau <= 0.
double hintless_decoding_failure_log2(const HintlessParams& params, std::size_t columns,
                                      std::size_t outputs);
// The bound every served shape must meet.
inline constexpr double kMaxDecodingFailureLog2 = -40.0;

}  // namespace privsearch::pir::hintless
