#include "experiments/reports.h"

namespace privsearch::tools {

nlohmann::json EvalReport::to_json() const {
  auto j = ladder.to_json();
  if (encrypted) {
    const auto e = encrypted->to_json();
    j["encrypted_rerank"] = e;
    for (const char* key : {"top10_order_match", "ckks_minus_plain_ndcg10", "decision"}) {
      j[key] = e[key];
    }
  }
  j["dataset"] = dataset;
  return j;
}

nlohmann::json SweepReport::to_json() const {
  auto j = sweep.to_json();
  j["dataset"] = dataset;
  return j;
}

nlohmann::json AuditReport::to_json() const {
  auto j = audit.to_json();
  j["dataset"] = dataset;
  j["circuit_privacy"] = circuit.to_json();
  if (extraction) {
    const auto ex = extraction->to_json();
    j["score_oracle"] = ex;
    j["extraction_cosine"] = ex["extraction_cosine"];
    j["extraction_refused"] = ex["extraction_refused"];
    j["not_covered"] = {"response re-randomization (noise flooding) option"};
  }
  return j;
}

}  // namespace privsearch::tools
