// A representative `privsearch audit` result for the report tests: every section the renderer
// knows, with a K sweep of three points and several estimators so the chart has lines.
#pragma once

#include <utility>

#include <nlohmann/json.hpp>

namespace privsearch::tools::testing_support {

inline nlohmann::json audit_result() {
  auto leak = [](double auc) {
    return nlohmann::json{{"cosine_mean", 0.6}, {"top10_overlap", 0.5}, {"top100_overlap", 0.6},
                          {"hit10", 0.7},       {"link_auc", auc},      {"link_tpr_at_1pct_fpr", 0.3}};
  };
  nlohmann::json sweep;
  for (const auto& [k, shift] : {std::pair{"K=20", 0.0}, {"K=50", 0.01}, {"K=100", 0.02}}) {
    sweep[k] = {{"centroid", leak(0.95 + shift)},
                {"log_rank_permuted", leak(0.93 + shift)},
                {"ridge_permuted", leak(0.6 - 2 * shift)}};
  }
  nlohmann::json dist = {{"mean", 0.9}, {"p05", 0.85}, {"p95", 0.95}};
  return {{"dataset", "<b>data</b>"},
          {"pq_reconstruction",
           {{"sample", 10},
            {"projected", {{"cosine", dist}, {"relative_l2", dist}, {"rmse", 0.1}}},
            {"lifted", {{"cosine", dist}, {"relative_l2", dist}, {"rmse", 0.2}}}}},
          {"candidate_leakage", sweep},
          {"link_auc_set", 0.99},
          {"link_auc_set_permuted", 0.98},
          {"circuit_privacy",
           {{"repeats", 20}, {"fixed_request_unique_response_hashes", 1},
            {"fresh_encryption_unique_response_hashes", 20},
            {"explicit_output_sanitisation_present", false}, {"max_abs_error", 1e-6},
            {"provider_ms_median", 3.1}, {"response_bytes", 65714},
            {"max_flood_bits_8bit_precision", 4}, {"max_flood_bits_12bit_precision", 0},
            {"rerandomized",
             {{"flood_security_bits", 4}, {"fixed_request_unique_response_hashes", 20},
              {"max_abs_error", 6.8e-4}, {"predicted_precision_bits", 8.25},
              {"provider_ms_median", 4.1}, {"response_bytes", 49330},
              {"public_key_bytes", 203848}}}}}};
}

}  // namespace privsearch::tools::testing_support
