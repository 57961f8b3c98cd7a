// `--html FILE` for `privsearch eval` and `privsearch audit`: one self-contained page (inline CSS
// and SVG, no scripts, no network) with the run's tables and charts — the search paper's figure
// analogues: quality by projected dimension (exact projected, PQ-only, PQ + rerank), the K and M
// sweeps, the encrypted-vs-plaintext decision, PQ reconstruction, candidate-ID leakage and
// linkability by K, the score oracle and the circuit-privacy boundary — plus the environment
// (machine, compiler, date, seeds, artifact version). Written atomically.
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"
#include "experiments/reports.h"

namespace privsearch::tools {

std::string render_report_html(const EvalReport& report);
std::string render_report_html(const SweepReport& report);
std::string render_report_html(const AuditReport& report);

// The page of `report`, written atomically (EvalReport, SweepReport or AuditReport).
template <typename Report>
Status write_report_html(const std::filesystem::path& file, const Report& report);

}  // namespace privsearch::tools
