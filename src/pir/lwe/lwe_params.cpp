#include "pir/lwe/lwe_params.h"

#include <array>
#include <cmath>
#include <string>

namespace privsearch::pir {
namespace {

constexpr std::array<LweParams, 4> kLweTable = {{
    {"zippir-n1400-binary", 1400, 32, 6.4, LweSecretKind::kBinary, true,
     "ZipPIR (arXiv 2603.09190) section 5.3: (n, q) = (1400, 2^32), discrete Gaussian sigma 6.4, "
     "> 128-bit by the lattice estimator; binary secret as in its security theorem"},
    {"hintless-n1400-ternary", 1400, 32, 6.4, LweSecretKind::kTernary, true,
     "HintlessPIR (Li, Lepoint, Patel et al. 2024) README: lwe_secret_dim 1400, q = 2^32, uniform "
     "ternary secret, sigma 6.4"},
    {"simplepir-n1024-uniform", 1024, 32, 6.4, LweSecretKind::kUniform, false,
     "SimplePIR (Henzinger et al., USENIX Security 2023) section 4.2: n = 1024, q = 2^32, sigma "
     "6.4, uniform secret; below the HE-standard 128-bit row for n = 1024 (125.6 bits in its "
     "cost model by scripts/lwe_estimate.py), so refused unless opted in"},
    {"insecure-test-n64-binary", 64, 32, 6.4, LweSecretKind::kBinary, false,
     "tests only: n = 64 gives no security"},
}};

}  // namespace

std::span<const LweParams> lwe_param_table() { return kLweTable; }

std::string_view secret_kind_name(LweSecretKind kind) {
  switch (kind) {
    case LweSecretKind::kBinary:
      return "binary";
    case LweSecretKind::kTernary:
      return "ternary";
    case LweSecretKind::kUniform:
      return "uniform";
  }
  return "unknown";
}

Result<LweParams> find_lwe_params(std::string_view name, bool allow_insecure) {
  return find_param_row(lwe_param_table(), name, allow_insecure, "LWE");
}

double lwe_decoding_failure_log2(double sigma, std::uint32_t plaintext_modulus, std::size_t d0,
                                 double delta, double extra_error) {
  const double s =
      sigma * static_cast<double>(plaintext_modulus - 1) * std::sqrt(static_cast<double>(d0));
  const double t = delta / 2.0 - extra_error;
  if (t <= 0) return 0.0;
  return 1.0 - (t * t) / (2.0 * s * s) / std::log(2.0);
}

}  // namespace privsearch::pir
