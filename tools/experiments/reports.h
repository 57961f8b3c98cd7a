// What `privsearch eval` and `privsearch audit` print and render: the typed results of one run,
// gathered with the dataset they ran on. to_json() is the command's JSON (field names are an
// interface scripts read); report_html.h renders the same objects as a page.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "eval/audit.h"
#include "eval/ladder.h"
#include "eval/sweep.h"
#include "experiments/audit_circuit.h"
#include "experiments/audit_extraction.h"
#include "experiments/eval_encrypted.h"

namespace privsearch::tools {

struct EvalReport {
  std::string dataset;
  eval::LadderResult ladder;
  std::optional<EncryptedEvalResult> encrypted;
  nlohmann::json to_json() const;
};

struct SweepReport {
  std::string dataset;
  eval::SweepResult sweep;
  nlohmann::json to_json() const;
};

struct AuditReport {
  std::string dataset;
  eval::AuditResult audit;
  CircuitAuditResult circuit;
  std::optional<ExtractionResult> extraction;
  nlohmann::json to_json() const;
};

}  // namespace privsearch::tools
