#include "experiments/audit_circuit.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "ckks/param_sets.h"
#include "ckks/rerandomize.h"
#include "client/rerank_session.h"
#include "core/bytes.h"
#include "core/sha256.h"
#include "eval/leakage.h"
#include "harness/random_vectors.h"
#include "index/artifacts/exact_store.h"
#include "protocol/provider_core.h"
#include "rerank/flooding.h"

namespace privsearch::tools {
namespace {
std::string hash_hex(const std::string& s) { return to_hex(sha256(byte_view(s))); }

struct Fixture {
  ckks::Params params;
  index::Matrix docs;
  const index::ExactStore* store = nullptr;
};

// One provider configuration: `repeats` evaluations of one request and of fresh encryptions.
Result<CircuitVariant> run_variant(const Fixture& f, int flood_bits, std::size_t repeats,
                                   Prng& prng) {
  constexpr std::size_t kK = 8;
  const auto& params = f.params;
  const std::size_t dim = f.docs.cols;
  protocol::ProviderConfig config(params);
  config.artifact_version = "circuit-audit";
  config.flood_security_bits = flood_bits;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto core,
                              protocol::ProviderCore::create(std::move(config), f.store));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto session, client::RerankSession::create(params, dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, session.make_key_upload(kK, flood_bits > 0));
  const auto upr = core->upload_keys(up);
  if (upr.has_error()) return internal_error("key upload refused: " + upr.error().message());
  session.set_key_id(kK, upr.key_id());
  const auto z = random_unit_vector(dim, prng);
  const std::vector<std::uint64_t> ids = {3, 17, 0, 39, 22, 8, 61, 45};
  auto make_request = [&] { return session.build_request({z, ids, "circuit-audit"}); };
  double max_err = 0;
  std::vector<double> provider_ms;
  std::size_t response_bytes = 0;
  auto check = [&](const client::PendingRerank& pending, const v1::RerankResponse& resp) -> Status {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto scores, session.decode_response(pending, resp));
    provider_ms.push_back(resp.provider_ms());
    response_bytes = resp.payload().size();
    for (std::size_t c = 0; c < ids.size(); ++c) {
      double want = 0;
      for (std::size_t j = 0; j < dim; ++j) want += z[j] * f.docs.row(ids[c])[j];
      max_err = std::max(max_err, std::abs(scores[c] - want));
    }
    return Status();
  };
  std::set<std::string> fixed, fresh;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto one, make_request());
  const auto& layout = one.layout;
  for (std::size_t r = 0; r < repeats; ++r) {
    const auto resp = core->rerank(one.request);
    PRIVSEARCH_RETURN_IF_ERROR(check(one, resp));
    fixed.insert(hash_hex(resp.payload()));
  }
  for (std::size_t r = 0; r < repeats; ++r) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto req, make_request());
    const auto resp = core->rerank(req.request);
    PRIVSEARCH_RETURN_IF_ERROR(check(req, resp));
    fresh.insert(hash_hex(resp.payload()));
  }
  CircuitVariant v;
  v.fixed_request_unique_response_hashes = fixed.size();
  v.fresh_encryption_unique_response_hashes = fresh.size();
  v.max_abs_error = max_err;
  v.provider_ms_median = eval::describe(provider_ms).median;
  v.response_bytes = response_bytes;
  if (flood_bits > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const double bound,
                                rerank::fast_kernel_noise_l2_log2(layout, params));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto plan,
                                ckks::plan_flooding(params, 0, params.default_scale(),
                                                    core->config().score_bound, flood_bits, bound));
    v.flood_security_bits = flood_bits;
    v.noise_l2_bound_log2 = bound;
    v.flood_sigma_log2 = plan.sigma_log2;
    v.predicted_precision_bits = plan.precision_bits;
    v.public_key_bytes = up.public_key().size();
  }
  return v;
}

}  // namespace

Result<CircuitAuditResult> run_circuit_privacy_audit(std::size_t repeats, std::uint64_t seed,
                                                     int flood_bits) {
  constexpr std::size_t kDocs = 64, kDim = 32;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto lit, ckks::preset_literal("rerank-n8192"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
  Seed s{};
  for (int i = 0; i < 8; ++i)
    s[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(seed >> (8 * i));
  Prng prng = Prng::from_seed(s, 44);
  index::Matrix docs;
  docs.rows = kDocs;
  docs.cols = kDim;
  for (std::size_t i = 0; i < kDocs * kDim; ++i) {
    docs.data.push_back(
        static_cast<float>((static_cast<double>(prng.next_u64() >> 11) * 0x1p-53 - 0.5) * 0.3));
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("privsearch-circuit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::filesystem::path d;
    ~Cleanup() { std::filesystem::remove_all(d); }
  } cleanup{dir};
  PRIVSEARCH_RETURN_IF_ERROR(index::ExactStore::write(dir / "exact.bin", docs));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto store, index::ExactStore::open(dir / "exact.bin"));
  const Fixture f{params, docs, &store};
  CircuitAuditResult out;
  out.dim = kDim;
  out.k = 8;
  out.repeats = repeats;
  PRIVSEARCH_ASSIGN_OR_RETURN(out.deterministic, run_variant(f, 0, repeats, prng));
  PRIVSEARCH_ASSIGN_OR_RETURN(out.rerandomized, run_variant(f, flood_bits, repeats, prng));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto paper_layout,
                              rerank::make_layout(params, rerank::Kernel::kFast, 672, 100));
  PRIVSEARCH_ASSIGN_OR_RETURN(const double paper_bound,
                              rerank::fast_kernel_noise_l2_log2(paper_layout, params));
  out.max_flood_bits_8bit_precision =
      ckks::max_flooding_security_bits(params, 0, params.default_scale(), 1.0, paper_bound, 8);
  out.max_flood_bits_12bit_precision =
      ckks::max_flooding_security_bits(params, 0, params.default_scale(), 1.0, paper_bound, 12);
  return out;
}

nlohmann::json CircuitVariant::to_json() const {
  nlohmann::json j;
  j["fixed_request_unique_response_hashes"] = fixed_request_unique_response_hashes;
  j["fresh_encryption_unique_response_hashes"] = fresh_encryption_unique_response_hashes;
  j["max_abs_error"] = max_abs_error;
  j["provider_ms_median"] = provider_ms_median;
  j["response_bytes"] = response_bytes;
  if (flood_security_bits > 0) {
    j["flood_security_bits"] = flood_security_bits;
    j["noise_l2_bound_log2"] = noise_l2_bound_log2;
    j["flood_sigma_log2"] = flood_sigma_log2;
    j["predicted_precision_bits"] = predicted_precision_bits;
    j["public_key_bytes"] = public_key_bytes;
  }
  return j;
}

nlohmann::json CircuitAuditResult::to_json() const {
  auto j = deterministic.to_json();
  j["params"] = "rerank-n8192";
  j["dim"] = dim;
  j["k"] = k;
  j["repeats"] = repeats;
  j["explicit_output_sanitisation_present"] = false;
  j["note"] =
      "by default evaluation is deterministic and the output is not re-randomized, so "
      "circuit privacy is not claimed; `rerandomized` is the provider's --flood-bits "
      "option (docs/SECURITY.md)";
  auto flooded = rerandomized.to_json();
  flooded["provider_ms_overhead"] =
      rerandomized.provider_ms_median - deterministic.provider_ms_median;
  j["rerandomized"] = flooded;
  j["max_flood_bits_8bit_precision"] = max_flood_bits_8bit_precision;
  j["max_flood_bits_12bit_precision"] = max_flood_bits_12bit_precision;
  return j;
}

}  // namespace privsearch::tools
