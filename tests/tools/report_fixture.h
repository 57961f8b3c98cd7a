// A representative `privsearch audit` report for the report tests: every section the renderer
// knows, with a K sweep of three points and several estimators so the chart has lines.
#pragma once

#include <utility>

#include "experiments/reports.h"

namespace privsearch::tools::testing_support {

inline AuditReport audit_report() {
  auto leak = [](double auc) {
    eval::EstimatorLeakage e;
    e.cosine_mean = 0.6;
    e.top10_overlap = 0.5;
    e.top100_overlap = 0.6;
    e.hit10 = 0.7;
    e.link_auc = auc;
    e.link_tpr_at_1pct_fpr = 0.3;
    return e;
  };
  AuditReport r;
  r.dataset = "<b>data</b>";
  for (const auto& [k, shift] : {std::pair{20, 0.0}, {50, 0.01}, {100, 0.02}}) {
    auto& at = r.audit.candidate_leakage[static_cast<std::size_t>(k)];
    at["centroid"] = leak(0.95 + shift);
    at["log_rank_permuted"] = leak(0.93 + shift);
    at["ridge_permuted"] = leak(0.6 - 2 * shift);
  }
  eval::Distribution dist;
  dist.mean = 0.9;
  dist.p05 = 0.85;
  dist.p95 = 0.95;
  r.audit.pq_reconstruction.sample = 10;
  r.audit.pq_reconstruction.projected = {dist, dist, 0.1};
  r.audit.pq_reconstruction.lifted = {dist, dist, 0.2};
  r.audit.link_auc_set = 0.99;
  r.audit.link_auc_set_permuted = 0.98;
  auto& c = r.circuit;
  c.repeats = 20;
  c.deterministic.fixed_request_unique_response_hashes = 1;
  c.deterministic.fresh_encryption_unique_response_hashes = 20;
  c.deterministic.max_abs_error = 1e-6;
  c.deterministic.provider_ms_median = 3.1;
  c.deterministic.response_bytes = 65714;
  c.max_flood_bits_8bit_precision = 4;
  c.max_flood_bits_12bit_precision = 0;
  c.rerandomized.flood_security_bits = 4;
  c.rerandomized.fixed_request_unique_response_hashes = 20;
  c.rerandomized.max_abs_error = 6.8e-4;
  c.rerandomized.predicted_precision_bits = 8.25;
  c.rerandomized.provider_ms_median = 4.1;
  c.rerandomized.response_bytes = 49330;
  c.rerandomized.public_key_bytes = 203848;
  return r;
}

}  // namespace privsearch::tools::testing_support
