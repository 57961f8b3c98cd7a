#include "experiments/audit_private.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>

#include "eval/leakage.h"
#include "experiments/offline_index.h"
#include "index/encoders/beir.h"
#include "scoring/build.h"

namespace privsearch::tools {
namespace {

// What the provider observes of one request.
struct View {
  double request_bytes = 0, response_bytes = 0, ms = 0;
  eval::Vec ciphertext;  // first entries as uniform reals in [-0.5, 0.5)
};

double auc_of(const std::vector<View>& a, const std::vector<View>& b,
              const std::vector<std::size_t>& shifts,
              const std::function<double(const View&, const View&)>& similarity) {
  std::vector<double> pos, neg;
  const std::size_t n = a.size();
  for (std::size_t i = 0; i < n; ++i) pos.push_back(similarity(a[i], b[i]));
  for (std::size_t s : shifts) {
    for (std::size_t i = 0; i < n; ++i) neg.push_back(similarity(a[i], b[(i + s) % n]));
  }
  return eval::roc_auc(pos, neg);
}

}  // namespace

nlohmann::json PrivateAuditResult::to_json() const {
  return {{"queries", queries},
          {"m", m},
          {"k", k},
          {"request_bytes", request_bytes},
          {"response_bytes", response_bytes},
          {"sizes_constant", sizes_constant},
          {"link_auc", link_auc},
          {"link_auc_bytes", link_auc_bytes},
          {"link_auc_timing", link_auc_timing},
          {"link_auc_ciphertext", link_auc_ciphertext},
          {"link_auc_candidate_mode", link_auc_candidate},
          {"top10_overlap_private", top10_overlap_private},
          {"top10_overlap_candidate_mode", top10_overlap_candidate},
          {"provider_ms", {{"median", provider_ms.median}, {"p95", provider_ms.p95}}}};
}

// What links two requests of one query (sizes, timing, ciphertext similarity; candidate mode:
// the halves' centroids), as ROC AUCs over true pairs against `shifts`-shifted ones.
void score_linkability(const std::vector<View>& first, const std::vector<View>& second,
                       const std::vector<eval::Vec>& half_a, const std::vector<eval::Vec>& half_b,
                       const std::vector<std::size_t>& shifts, PrivateAuditResult& r) {
  r.request_bytes = static_cast<std::uint64_t>(first[0].request_bytes);
  r.response_bytes = static_cast<std::uint64_t>(first[0].response_bytes);
  r.sizes_constant = true;
  for (const auto* views : {&first, &second}) {
    for (const auto& v : *views) {
      r.sizes_constant = r.sizes_constant && v.request_bytes == first[0].request_bytes &&
                         v.response_bytes == first[0].response_bytes;
    }
  }
  r.link_auc_bytes = auc_of(first, second, shifts, [](const View& a, const View& b) {
    return -std::fabs(a.request_bytes - b.request_bytes) -
           std::fabs(a.response_bytes - b.response_bytes);
  });
  r.link_auc_timing = auc_of(first, second, shifts,
                             [](const View& a, const View& b) { return -std::fabs(a.ms - b.ms); });
  r.link_auc_ciphertext = auc_of(first, second, shifts, [](const View& a, const View& b) {
    return eval::cosine(a.ciphertext, b.ciphertext);
  });
  r.link_auc = r.link_auc_bytes;
  for (double auc : {r.link_auc_timing, r.link_auc_ciphertext}) {
    if (std::fabs(auc - 0.5) > std::fabs(r.link_auc - 0.5)) r.link_auc = auc;
  }
  std::vector<double> pos, neg;
  for (std::size_t i = 0; i < r.queries; ++i) pos.push_back(eval::cosine(half_a[i], half_b[i]));
  for (std::size_t s : shifts) {
    for (std::size_t i = 0; i < r.queries; ++i) {
      neg.push_back(eval::cosine(half_a[i], half_b[(i + s) % r.queries]));
    }
  }
  r.link_auc_candidate = eval::roc_auc(pos, neg);
}

// The provider's best fixed guess of the top-10 against candidate mode's centroid guess.
void score_top10_overlap(const std::vector<std::vector<std::size_t>>& truth,
                         const std::vector<std::vector<std::size_t>>& candidate_guess,
                         const std::map<std::size_t, std::size_t>& popular, PrivateAuditResult& r) {
  // The provider's best fixed guess: the ten documents most often in a true top-10.
  std::vector<std::pair<std::size_t, std::size_t>> by_count;
  for (const auto& [doc, count] : popular) by_count.emplace_back(count, doc);
  std::sort(by_count.rbegin(), by_count.rend());
  std::vector<std::size_t> prior;
  for (std::size_t i = 0; i < std::min<std::size_t>(10, by_count.size()); ++i) {
    prior.push_back(by_count[i].second);
  }
  for (std::size_t i = 0; i < r.queries; ++i) {
    r.top10_overlap_private += top10_overlap(truth[i], prior);
    r.top10_overlap_candidate += top10_overlap(truth[i], candidate_guess[i]);
  }
  r.top10_overlap_private /= static_cast<double>(r.queries);
  r.top10_overlap_candidate /= static_cast<double>(r.queries);
}

namespace {

// One audit: the index and its access-private artifacts, the scorer and an in-process provider
// core, and what the provider observed of each query's two requests (the second sent in a later
// pass in shuffled order: adjacent requests share the machine's momentary speed, which would
// link them by time whatever they carry). Not movable: the scorer points into `art_`.
class PrivateAudit {
 public:
  static Result<std::unique_ptr<PrivateAudit>> open(const std::filesystem::path& index_dir,
                                                    const PrivateAuditOptions& o) {
    std::unique_ptr<PrivateAudit> a(new PrivateAudit(o));
    PRIVSEARCH_ASSIGN_OR_RETURN(a->ix_, OfflineIndex::open(index_dir));
    if (a->ix_->manifest.find(scoring::kMatrixArtifact) == nullptr) {
      return failed_precondition_error(index_dir.string() +
                                       " has no access-private scoring database");
    }
    if (!a->ix_->encoder) return failed_precondition_error("the index has no text encoder");
    PRIVSEARCH_ASSIGN_OR_RETURN(a->art_, scoring::load_scoring(index_dir));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto scorer,
                                scoring::PrivateScorer::create(&a->art_.layout, &a->art_.hint));
    a->scorer_.emplace(std::move(scorer));
    PRIVSEARCH_ASSIGN_OR_RETURN(
        a->core_,
        scoring_core(*a->ix_->store, a->ix_->manifest.version_id,
                     std::make_shared<const scoring::ScoringMatrix>(std::move(a->art_.matrix)),
                     o.m));
    return a;
  }

  // The first request of query `text` (false when it encodes to nothing), and the candidate
  // mode's view of the same query.
  Result<bool> audit_query(const std::string& text) {
    const auto z = ix_->projection.project_query(ix_->encoder->encode_query(text));
    const eval::Vec zd(z.begin(), z.end());
    if (eval::cosine(zd, zd) == 0) return false;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto candidates, ix_->scanner->search(z, o_.k));
    const auto clusters = scorer_->choose_clusters(z, candidates, o_.m);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto v, send(z, clusters));
    first_.push_back(std::move(v));
    audited_.push_back({std::vector<float>(z.begin(), z.end()), clusters});
    record_candidate_mode(zd, candidates);
    return true;
  }

  // Every query's second request, in an order drawn from the audit's seed; then the figures.
  Result<PrivateAuditResult> finish() {
    PrivateAuditResult r;
    r.m = o_.m;
    r.k = o_.k;
    r.queries = first_.size();
    if (r.queries < 2)
      return failed_precondition_error("the audit needs at least 2 judged queries");
    std::vector<std::size_t> order(r.queries);
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[shifts_prng_.uniform_below(i)]);
    }
    std::vector<View> second(r.queries);
    for (std::size_t i : order) {
      PRIVSEARCH_ASSIGN_OR_RETURN(second[i], send(audited_[i].z, audited_[i].clusters));
    }
    std::vector<std::size_t> shifts;
    for (std::size_t s = 0; s < std::min<std::size_t>(10, r.queries - 1); ++s) {
      shifts.push_back(1 + shifts_prng_.uniform_below(r.queries - 1));
    }
    score_linkability(first_, second, half_a_, half_b_, shifts, r);
    score_top10_overlap(truth_, candidate_guess_, popular_, r);
    r.provider_ms = eval::describe(ms_);
    if (!r.sizes_constant) {
      return internal_error("access-private request or response sizes varied with the query");
    }
    return r;
  }

 private:
  explicit PrivateAudit(const PrivateAuditOptions& o)
      : o_(o), shifts_prng_(Prng::from_seed(seed_of(o.seed), 0x4c4b)) {}  // "LK"
  static Seed seed_of(std::uint64_t s) {
    Seed seed{};
    for (std::size_t i = 0; i < 8; ++i) seed[i] = static_cast<std::uint8_t>(s >> (8 * i));
    return seed;
  }

  // One request as the provider sees it.
  Result<View> send(std::span<const float> z, const std::vector<std::uint32_t>& clusters) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, scorer_->encrypt(z, clusters, prng_));
    const auto req =
        private_request(ix_->manifest.version_id, pending, art_.layout.query_drop_bits);
    const auto resp = core_->private_score(req);
    if (resp.has_error()) {
      return internal_error("the provider refused an audit request: " + resp.error().message());
    }
    View v;
    v.request_bytes = static_cast<double>(req.ByteSizeLong());
    v.response_bytes = static_cast<double>(resp.ByteSizeLong());
    v.ms = resp.provider_ms();
    ms_.push_back(v.ms);
    const std::size_t n = std::min<std::size_t>(4096, pending.queries.size());
    for (std::size_t i = 0; i < n; ++i) {
      v.ciphertext.push_back(static_cast<double>(pending.queries[i]) * 0x1p-64 - 0.5);
    }
    return v;
  }

  // Candidate mode: the two halves of the candidates (centroids of exact rows), the true top
  // 10, and the neighbourhood the centroid of all of them recovers.
  void record_candidate_mode(const eval::Vec& zd, const std::vector<std::uint32_t>& candidates) {
    const auto& store = *ix_->store;
    auto centroid_of = [&](std::size_t start, std::size_t step) {
      std::vector<double> rows;
      std::size_t count = 0;
      for (std::size_t i = start; i < candidates.size(); i += step, ++count) {
        const float* row = store.row(candidates[i]);
        rows.insert(rows.end(), row, row + store.cols());
      }
      return eval::centroid_estimate(rows, count, store.cols());
    };
    half_a_.push_back(centroid_of(0, 2));
    half_b_.push_back(centroid_of(1, 2));
    truth_.push_back(exact_top10(store, zd));
    candidate_guess_.push_back(exact_top10(store, centroid_of(0, 1)));
    for (std::size_t d : truth_.back()) ++popular_[d];
  }

  struct Audited {
    std::vector<float> z;
    std::vector<std::uint32_t> clusters;
  };
  const PrivateAuditOptions o_;
  std::unique_ptr<OfflineIndex> ix_;
  scoring::ScoringArtifacts art_;
  std::optional<scoring::PrivateScorer> scorer_;
  std::unique_ptr<protocol::ProviderCore> core_;
  Prng shifts_prng_;
  Prng prng_ = Prng::create();
  std::vector<View> first_;
  std::vector<Audited> audited_;
  std::vector<eval::Vec> half_a_, half_b_;
  std::vector<std::vector<std::size_t>> truth_, candidate_guess_;
  std::map<std::size_t, std::size_t> popular_;
  std::vector<double> ms_;
};

}  // namespace

Result<PrivateAuditResult> run_private_audit(
    const std::filesystem::path& index_dir, const std::filesystem::path& dataset_dir,
    const PrivateAuditOptions& o, const std::function<void(const std::string&)>& progress) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto audit, PrivateAudit::open(index_dir, o));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto collection, index::load_collection(dataset_dir));
  std::size_t queries = 0;
  for (const auto& q : collection.queries) {
    if (collection.qrels.find(q.id) == collection.qrels.end()) continue;
    if (o.max_queries != 0 && queries == o.max_queries) break;
    PRIVSEARCH_ASSIGN_OR_RETURN(const bool audited, audit->audit_query(q.text));
    if (!audited) continue;
    ++queries;
    if (queries % 50 == 0 && progress) {
      progress(fmt::format("audit --access-private: {} queries", queries));
    }
  }
  return audit->finish();
}

}  // namespace privsearch::tools
