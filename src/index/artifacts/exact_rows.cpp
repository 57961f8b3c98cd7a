#include "index/artifacts/exact_rows.h"

#include <fmt/format.h>

#include <algorithm>

#include "index/artifacts/artifact_names.h"

namespace privsearch::index {

Result<ExactRows> ExactRows::open(const std::filesystem::path& dir, const Manifest& manifest,
                                  const std::vector<std::uint32_t>& deleted,
                                  const ExactRows* previous) {
  ExactRows out;
  out.cols_ = manifest.dim;
  const std::uint32_t generations = index_generations(manifest);
  for (std::uint32_t g = 0; g <= generations; ++g) {
    const auto* entry = manifest.find(generation_artifact(kExactStoreArtifact, g));
    if (entry == nullptr) {
      if (g == 0) return not_found_error("the manifest lists no exact_store");
      continue;  // a generation of deletions only
    }
    Segment seg;
    seg.first = out.rows_;
    seg.key = entry->file + "@" + entry->sha256;
    if (previous != nullptr) {
      for (const auto& p : previous->stores_) {
        if (p.key == seg.key && p.first == seg.first) seg.store = p.store;
      }
    }
    if (seg.store) {
      ++out.reused_;
    } else {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto store, ExactStore::open(dir / entry->file));
      seg.store = std::make_shared<const ExactStore>(std::move(store));
    }
    if (seg.store->cols() != manifest.dim) {
      return data_loss_error(fmt::format("`{}` has {} columns; the manifest's d' is {}",
                                         entry->file, seg.store->cols(), manifest.dim));
    }
    out.rows_ += seg.store->rows();
    out.max_row_norm_ = std::max(out.max_row_norm_, seg.store->max_row_norm());
    out.stores_.push_back(std::move(seg));
  }
  if (out.rows_ != manifest.documents) {
    return data_loss_error(
        fmt::format("the exact stores hold {} rows; the manifest lists {} "
                    "documents",
                    out.rows_, manifest.documents));
  }
  out.deleted_ = deleted;
  return out;
}

ExactRows ExactRows::of(const ExactStore& store) {
  ExactRows out;
  Segment seg;
  seg.store = std::shared_ptr<const ExactStore>(std::shared_ptr<const ExactStore>(), &store);
  out.rows_ = store.rows();
  out.cols_ = store.cols();
  out.max_row_norm_ = store.max_row_norm();
  out.stores_.push_back(std::move(seg));
  return out;
}

bool ExactRows::read_only() const {
  return std::all_of(stores_.begin(), stores_.end(),
                     [](const Segment& s) { return s.store->read_only(); });
}

Status ExactRows::gather(std::span<const std::uint64_t> ids, std::vector<float>& out) const {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= rows_) {
      return out_of_range_error(
          fmt::format("candidate {} is row {}; the store has {} rows", i, ids[i], rows_));
    }
    if (std::binary_search(deleted_.begin(), deleted_.end(), ids[i])) {
      return not_found_error(
          fmt::format("candidate {} is document {}, deleted in this version", i, ids[i]));
    }
  }
  if (stores_.size() == 1) return stores_[0].store->gather(ids, out);
  // Each store gathers its own ids (ids relative to its first row); rows go back in order.
  out.assign(ids.size() * cols_, 0.0f);
  std::vector<std::uint64_t> local;
  std::vector<std::size_t> where;
  std::vector<float> rows;
  for (const auto& seg : stores_) {
    local.clear();
    where.clear();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= seg.first && ids[i] < seg.first + seg.store->rows()) {
        local.push_back(ids[i] - seg.first);
        where.push_back(i);
      }
    }
    if (local.empty()) continue;
    PRIVSEARCH_RETURN_IF_ERROR(seg.store->gather(local, rows));
    for (std::size_t j = 0; j < where.size(); ++j) {
      std::copy_n(rows.data() + j * cols_, cols_, out.data() + where[j] * cols_);
    }
  }
  return Status();
}

}  // namespace privsearch::index
