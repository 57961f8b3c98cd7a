// `--html FILE` for `privsearch eval` and `privsearch audit`: one self-contained page (inline CSS
// and SVG, no scripts, no network) with the run's tables and charts — the search paper's figure
// analogues: quality by projected dimension (exact projected, PQ-only, PQ + rerank), the K and M
// sweeps, the encrypted-vs-plaintext decision, PQ reconstruction, candidate-ID leakage and
// linkability by K, the score oracle and the circuit-privacy boundary — plus the environment
// (machine, compiler, date, seeds, artifact version). Written atomically.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

// `kind` is "eval", "sweep" or "audit" (the JSON the command printed).
std::string render_report_html(const std::string& kind, const nlohmann::json& result);
Status write_report_html(const std::filesystem::path& file, const std::string& kind,
                         const nlohmann::json& result);

}  // namespace privsearch::tools
