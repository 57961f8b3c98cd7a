// The score-oracle extraction audit (search paper section 4.3; reference notes 4.3): a client
// that chooses its query and candidates reads exact rows through the scores. For seeded target
// documents and every j < d', it sends the basis vector e_j with the single candidate (K = 1)
// through a real provider process and decrypts x_target[j]. Run twice: with the per-key-id
// budget disabled (the rows come back: cosine, relative L2, RMSE, queries, bytes, seconds;
// exact rows are opened only afterwards) and with the provider's default budget and one key
// epoch (the attack is refused before one row completes). Then with key rotation, as any
// client can: anonymous (a new epoch per spent budget; the row completes, bounded only by the
// key-upload rate) and under an identity budget of 512 (refused before the row completes).
// Query confidentiality is not at stake here; document privacy against clients is not provided
// by the scheme, and the budget is rate limiting, not cryptography.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/encoders/beir.h"

namespace privsearch::tools {

struct ExtractionOptions {
  std::size_t targets = 3;
  std::size_t dim = 672;
  std::uint64_t seed = 2026;
  std::filesystem::path work_dir = "build/audit-extraction";
};

// How close one recovered row came to the exact one.
struct RowRecovery {
  std::uint32_t target = 0;
  double cosine = 0, relative_l2 = 0, rmse = 0, mae = 0, max_abs_error = 0;
};

// One row extracted while renewing the key epoch whenever a budget is spent.
struct RotationCost {
  std::size_t answered = 0, key_epochs = 0, key_upload_bytes = 0, bytes = 0;
  double seconds = 0;
  bool row_completed = false;
  std::string refusal;  // why it stopped, when it did
};

struct ExtractionResult {
  std::vector<std::uint32_t> targets;
  std::size_t dim = 0;
  // Budget disabled: the rows come back.
  std::vector<RowRecovery> per_target;
  std::size_t queries = 0, bytes = 0;
  double seconds = 0;
  double extraction_cosine = 0;  // mean over the targets
  // The default budget, one key epoch.
  std::size_t k_max = 0;                    // candidates per request (the provider's maximum)
  std::size_t answered_before_refusal = 0;  // requests
  std::size_t scores_before_refusal = 0;    // requests x K: the key epoch's exact scores
  bool row_completed = false;
  std::string refusal;
  bool extraction_refused = false;  // refused before one row completed
  // Key rotation: anonymous (bounded by the key-upload rate) and under an identity budget.
  RotationCost rotation_anonymous, rotation_identity;
  double rows_per_minute_bound_anonymous = 0;
  // The JSON of the audit's `score_oracle` section (field names are an interface).
  nlohmann::json to_json() const;
};

Result<ExtractionResult> run_extraction_audit(
    const index::Collection& collection, const std::filesystem::path& dataset_dir,
    const ExtractionOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::tools
