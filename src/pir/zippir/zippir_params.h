// ZipPIR parameters and the packing they imply (ZipPIR, arXiv 2603.09190, sections 3.3 and 4;
// reconstruction in zippir-reference.md section 1.4).
//
// The client must learn H s for the rows of its column without holding H. ZipPIR packs k rows of
// H per Paillier plaintext and lets Paillier compute the packed inner products. This
// implementation packs a rescaled hint (the paper's section 3.3.2 applied to H):
//   H~ = round(H / 2^(32-b)) mod 2^b,  ans~ = round(ans / 2^(32-b)) mod 2^b,  gamma = 2^b,
//   E = gamma - 1 - H~ (a b-bit exponent, 0 <= E < gamma),
//   P[i][j] = sum_{l<k} E[ik+l][j] gamma^l,   pack(ans~)_i = sum_{l<k} ans~[ik+l] gamma^l,
//   T_i = P_i . s + pack(ans~)_i = sum_l gamma^l (ans~_l + E_l . s)  with a binary secret s.
// Each slot value v_l = ans~_l + E_l . s lies in [0, gamma (|s| + 1)) and is congruent to
// ans~_l - H~_l . s - |s| mod gamma; slots overlap (the paper's smaller-scale trick with
// gamma = q'), so slot l reads v_l plus a carry c_l in [0, |s| + 1] from the slots below, which
// the client removes to within a few units by its expectation |s|/2 (l > 0).
// T_i < (n + 1) gamma^k must stay below N: k = floor((bits(N) - 1 - log2(n + 2)) / b).
// Decoding of one byte then has error, in units of gamma,
//   D e / 2^(32-b)  +  rounding (sum of |s| + 1 terms in [-1/2, 1/2])  +  (c_l - |s|/2),
// against the margin Delta' / 2 = 2^(b - 9); correctness_log2() bounds its failure probability
// with the Gaussian tail (the last two terms are sums of |s| near-uniform terms, variance
// (n + 1) / 12 each, since H is pseudorandom).
// Smaller b shortens the exponents of the offline hint (cost linear in b) and fits more slots per
// plaintext (less state, response and online RNS work). b = 17 keeps the conservative bound
// below 2^-190 per byte at 1 GB (b = 16 gives 2^-41, just past the 2^-40 bar).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "pir/lwe/database.h"
#include "pir/lwe/lwe_params.h"

namespace privsearch::pir {

inline constexpr int kZipPirDefaultHintBits = 17;
inline constexpr std::size_t kZipPirMaxQueriesPerClient = 64;

struct ZipPirParams {
  LweParams lwe;
  int paillier_bits = 3072;
  int hint_bits = kZipPirDefaultHintBits;  // b
  bool allow_insecure = false;

  // Checks the LWE row (binary secret), Paillier size, b in [9, 32].
  Status validate() const;
  int shift() const { return 32 - hint_bits; }
  // Slots per Paillier plaintext for a modulus of exactly paillier_bits bits.
  std::size_t slots_per_plaintext() const;
  // d1' for a database shape.
  std::size_t packed_rows(const DatabaseShape& shape) const;
  // log2 of the per-byte decoding failure probability for a database of d0 columns.
  double correctness_log2(std::size_t columns) const;
  // Bits of the largest integer the online RNS product may reach: bits(P) + bits(N) + log2(n).
  std::size_t online_product_bits() const;
  // Stable identifier of the parameters (goes into every message).
  std::uint64_t id(const DatabaseShape& shape) const;
};

inline constexpr double kZipPirMaxFailureLog2 = -40.0;

}  // namespace privsearch::pir
