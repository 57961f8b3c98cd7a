// LWE parameter sets for the SimplePIR core and ZipPIR, from a vetted table with provenance.
//
// Every row has q = 2^32 (arithmetic mod 2^32 is free on 32-bit lanes) and a discrete Gaussian
// error of standard deviation 6.4, as in SimplePIR (Henzinger et al. 2023, section 4.2),
// HintlessPIR (Li et al. 2024, n = 1400, uniform ternary secret) and ZipPIR (section 5.3: (n, q) =
// (1400, 2^32), sigma = 6.4, over 128-bit security by the lattice estimator; its theorem takes a
// binary secret). Rows marked insecure exist for fast tests and are refused unless the caller opts
// in. Thread safety: constant data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace privsearch::pir {

enum class LweSecretKind : std::uint8_t { kBinary = 1, kTernary = 2, kUniform = 3 };

struct LweParams {
  std::string_view name;
  std::uint32_t n = 0;  // secret dimension
  int log_q = 32;       // q = 2^32
  double sigma = 6.4;   // error standard deviation
  LweSecretKind secret = LweSecretKind::kBinary;
  bool secure = true;
  std::string_view provenance;
};

// The row of `table` named `name` (any row type with name, secure): kNotFound listing the known
// names; kInvalidArgument for an insecure row without `allow_insecure`.
template <typename Row>
Result<Row> find_param_row(std::span<const Row> table, std::string_view name, bool allow_insecure,
                           std::string_view what) {
  for (const auto& p : table) {
    if (p.name != name) continue;
    if (!p.secure && !allow_insecure) {
      return invalid_argument_error(std::string(what) + " parameter set `" + std::string(name) +
                                    "` is insecure (tests only)");
    }
    return p;
  }
  std::string names;
  for (const auto& p : table) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return not_found_error("unknown " + std::string(what) + " parameter set `" + std::string(name) +
                         "` (known: " + names + ")");
}

std::span<const LweParams> lwe_param_table();
// kNotFound for an unknown name; kInvalidArgument for an insecure row without `allow_insecure`.
Result<LweParams> find_lwe_params(std::string_view name, bool allow_insecure = false);
std::string_view secret_kind_name(LweSecretKind kind);

// SimplePIR decoding margin. With D entries in [0, p) and errors of deviation sigma, the noise of
// one answer entry sum_c D[r][c] e[c] is Gaussian with deviation at most sigma (p - 1) sqrt(d0)
// (independent errors, worst-case database). It decodes correctly when |noise + extra| < Delta/2,
// Delta = q / p, where `extra` is a deterministic additional error (ZipPIR's carries and
// roundings). Returns log2 of the union-bound failure probability per entry,
// log2(2 exp(-t^2 / (2 s^2))) with t = Delta/2 - extra.
double lwe_decoding_failure_log2(double sigma, std::uint32_t plaintext_modulus, std::size_t d0,
                                 double delta, double extra_error);

}  // namespace privsearch::pir
