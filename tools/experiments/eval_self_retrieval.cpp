#include "experiments/eval_self_retrieval.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "eval/statistics.h"
#include "harness/spawned_provider.h"
#include "harness/synthetic_index.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/candidates/pq_scan.h"
#include "version/index_version.h"

namespace privsearch::tools {
namespace {

// Rank (1-based) of `target` in a best-first list, 0 when absent.
std::size_t rank_of(const std::vector<std::size_t>& order, std::size_t target) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == target) return i + 1;
  }
  return 0;
}

// Top-10 of every query over all rows, computed block by block with SGEMM.
std::vector<std::vector<std::size_t>> exhaustive_top10(
    const std::vector<float>& queries, std::size_t nq, std::size_t dim, std::size_t rows,
    const std::function<void(std::size_t first, std::size_t count, float* out)>& load_rows) {
  constexpr std::size_t kBlock = 32768;
  std::vector<std::vector<std::pair<float, std::size_t>>> best(nq);
  std::vector<float> block(kBlock * dim), scores(nq * kBlock);
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock) {
    const std::size_t cnt = std::min(kBlock, rows - r0);
    load_rows(r0, cnt, block.data());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(nq),
                static_cast<int>(cnt), static_cast<int>(dim), 1.0f, queries.data(),
                static_cast<int>(dim), block.data(), static_cast<int>(dim), 0.0f, scores.data(),
                static_cast<int>(cnt));
    for (std::size_t q = 0; q < nq; ++q) {
      auto& b = best[q];
      for (std::size_t i = 0; i < cnt; ++i) b.push_back({scores[q * cnt + i], r0 + i});
      std::partial_sort(
          b.begin(), b.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(10, b.size())),
          b.end(), [](const auto& a, const auto& c) {
            return a.first > c.first || (a.first == c.first && a.second < c.second);
          });
      b.resize(std::min<std::size_t>(10, b.size()));
    }
  }
  std::vector<std::vector<std::size_t>> out(nq);
  for (std::size_t q = 0; q < nq; ++q) {
    for (const auto& [s, i] : best[q]) out[q].push_back(i);
  }
  return out;
}

}  // namespace

SelfQueries make_self_queries(const SelfRetrievalOptions& o, const Synthetic& gen,
                              const index::Projection& proj, std::size_t d) {
  const std::size_t nq = o.validation + o.test;
  SelfQueries q;
  Prng pick = Prng::from_seed(Seed{0x5e}, o.seed);
  while (q.sources.size() < nq) {
    const std::size_t s = pick.uniform_below(o.docs);
    if (std::find(q.sources.begin(), q.sources.end(), s) == q.sources.end()) q.sources.push_back(s);
  }
  q.raw_flat.resize(nq * o.input_dim);
  q.projected_flat.resize(nq * d);
  q.raw.resize(nq);
  Prng noise_prng = Prng::from_seed(Seed{0x5f}, o.seed);
  for (std::size_t i = 0; i < nq; ++i) {
    // q = unit(x + noise * g) with g the normalized sum of three other random documents: noise
    // inside the data's own subspace (a direction orthogonal to every document would only
    // rescale all scores and leave the ranking unchanged).
    const auto x = gen.vector(q.sources[i]);
    std::vector<double> g(o.input_dim, 0.0);
    double gn = 0;
    for (int t = 0; t < 3; ++t) {
      const auto y = gen.vector(noise_prng.uniform_below(o.docs));
      for (std::size_t j = 0; j < o.input_dim; ++j) g[j] += y[j];
    }
    for (double v : g) gn += v * v;
    gn = std::sqrt(gn);
    auto& raw = q.raw[i];
    raw.resize(o.input_dim);
    double qn = 0;
    for (std::size_t j = 0; j < o.input_dim; ++j) {
      const double v = x[j] + o.noise * g[j] / gn;
      raw[j] = static_cast<float>(v);
      qn += v * v;
    }
    for (auto& v : raw) v = static_cast<float>(v / std::sqrt(qn));
    std::copy(raw.begin(), raw.end(),
              q.raw_flat.begin() + static_cast<std::ptrdiff_t>(i * o.input_dim));
    const auto z = proj.project_query(raw);
    std::copy(z.begin(), z.end(), q.projected_flat.begin() + static_cast<std::ptrdiff_t>(i * d));
  }
  return q;
}

namespace {

// Stage name -> (validation, test) ranks of each query's source document.
class SelfStages {
 public:
  SelfStages(std::size_t validation, SelfRetrievalResult& out)
      : validation_(validation), out_(out) {}
  void add(const std::string& name, std::size_t qi, std::size_t rank, double recall = -1) {
    auto& s = qi < validation_ ? out_.stages[name].first : out_.stages[name].second;
    s.add(rank);
    if (recall >= 0) s.in_candidates.push_back(recall);
  }

 private:
  std::size_t validation_;
  SelfRetrievalResult& out_;
};

// PQ-only order and the plaintext rerank of the PQ candidates.
Status pq_stages(const SelfRetrievalOptions& o, const SelfQueries& q,
                 const index::PqScanner& scanner, const index::ExactStore& store, SelfStages& st) {
  const std::size_t d = store.cols();
  for (std::size_t qi = 0; qi < q.sources.size(); ++qi) {
    const std::vector<float> z(
        q.projected_flat.begin() + static_cast<std::ptrdiff_t>(qi * d),
        q.projected_flat.begin() + static_cast<std::ptrdiff_t>((qi + 1) * d));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto cand, scanner.search(z, o.k));
    std::vector<std::size_t> order(cand.begin(), cand.end());
    const double in_cand = rank_of(order, q.sources[qi]) > 0 ? 1.0 : 0.0;
    st.add("pq_only", qi, rank_of(order, q.sources[qi]), in_cand);
    std::vector<std::pair<double, std::size_t>> re;
    for (auto c : order) {
      double s = 0;
      for (std::size_t j = 0; j < d; ++j) s += static_cast<double>(z[j]) * store.row(c)[j];
      re.push_back({s, c});
    }
    std::stable_sort(re.begin(), re.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::size_t> rr;
    for (const auto& [s, c] : re) rr.push_back(c);
    st.add("pq_rerank_plaintext", qi, rank_of(rr, q.sources[qi]), in_cand);
  }
  return Status();
}

// The encrypted rerank of the same queries through a provider process.
Status encrypted_stage(const SelfRetrievalOptions& o, const std::filesystem::path& index_dir,
                       const SelfQueries& q, SelfStages& st) {
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto provider,
      SpawnedProvider::start(
          {index_dir, index_dir.parent_path(), {"--no-pir", "--max-candidates", "1024"}}));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
  client::SearchOptions so;
  so.candidates = o.k;
  so.top = 10;
  for (std::size_t qi = 0; qi < q.sources.size(); ++qi) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, sc->search(client::Query::vector(q.raw[qi]), so));
    std::vector<std::size_t> top;
    for (const auto& h : r.hits) top.push_back(h.doc);
    std::vector<std::size_t> cands(r.candidates.begin(), r.candidates.end());
    st.add("pq_rerank_encrypted", qi, rank_of(top, q.sources[qi]),
           rank_of(cands, q.sources[qi]) > 0 ? 1.0 : 0.0);
  }
  return Status();
}

}  // namespace

SelfQueries make_bench_queries(std::size_t docs, std::size_t input_dim, std::size_t count,
                               const Synthetic& gen, const index::Projection& proj, std::size_t d) {
  SelfRetrievalOptions so;
  so.docs = docs;
  so.input_dim = input_dim;
  so.validation = 0;
  so.test = count;
  return make_self_queries(so, gen, proj, d);
}

Result<SelfRetrievalResult> run_self_retrieval(
    const SelfRetrievalOptions& o, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  const std::size_t nq = o.validation + o.test;
  if (o.docs < nq || o.docs < 1000)
    return invalid_argument_error("self-retrieval: too few documents");
  const Synthetic gen(o.input_dim);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto index_dir,
      ensure_synthetic_index(o.cache, o.docs, o.input_dim, o.dim, o.pq_m, gen));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto index_version,
                              version::IndexVersion::open(index_dir, version::tool_spec()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto proj, index_version.projection());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pq_file, index_version.verified_path(index::kPqArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pq, index::load_pq(pq_file));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scanner, index::PqScanner::create(pq));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto store, index_version.exact_store());
  const std::size_t d = store.cols();
  const SelfQueries q = make_self_queries(o, gen, proj, d);
  SelfRetrievalResult out;
  out.options = o;
  out.dim = d;
  out.pq_m = pq.codebook.m;
  SelfStages st(o.validation, out);
  say(fmt::format("exact search on the raw vectors ({} x {}, regenerated block by block)", o.docs,
                  o.input_dim));
  const auto raw_top = exhaustive_top10(q.raw_flat, nq, o.input_dim, o.docs,
                                        [&](std::size_t first, std::size_t count, float* rows) {
                                          for (std::size_t i = 0; i < count; ++i) {
                                            const auto v = gen.vector(first + i);
                                            std::copy(v.begin(), v.end(), rows + i * o.input_dim);
                                          }
                                        });
  say("exact search on the projected vectors (the exact store)");
  const auto proj_top = exhaustive_top10(
      q.projected_flat, nq, d, o.docs, [&](std::size_t first, std::size_t count, float* rows) {
        for (std::size_t i = 0; i < count; ++i) {
          std::copy(store.row(first + i), store.row(first + i) + d, rows + i * d);
        }
      });
  for (std::size_t qi = 0; qi < nq; ++qi) {
    st.add("exact_raw", qi, rank_of(raw_top[qi], q.sources[qi]));
    st.add("exact_projected", qi, rank_of(proj_top[qi], q.sources[qi]));
  }
  say("PQ scan and plaintext rerank");
  PRIVSEARCH_RETURN_IF_ERROR(pq_stages(o, q, scanner, store, st));
  if (o.encrypted) {
    say("encrypted rerank through a provider process");
    PRIVSEARCH_RETURN_IF_ERROR(encrypted_stage(o, index_dir, q, st));
  }
  return out;
}

void RankFigures::add(std::size_t rank) {
  hit1.push_back(rank == 1 ? 1 : 0);
  hit10.push_back(rank >= 1 && rank <= 10 ? 1 : 0);
  mrr10.push_back(rank >= 1 && rank <= 10 ? 1.0 / static_cast<double>(rank) : 0);
  ndcg10.push_back(rank >= 1 && rank <= 10 ? 1.0 / std::log2(static_cast<double>(rank) + 1) : 0);
}

nlohmann::json RankFigures::to_json() const {
  auto mean = [](const std::vector<double>& v) { return eval::describe(v).mean; };
  nlohmann::json j = {{"hit@1", mean(hit1)},
                      {"hit@10", mean(hit10)},
                      {"mrr@10", mean(mrr10)},
                      {"ndcg@10", mean(ndcg10)},
                      {"queries", hit1.size()}};
  if (!in_candidates.empty()) j["source_in_candidates"] = mean(in_candidates);
  return j;
}

nlohmann::json SelfRetrievalResult::to_json() const {
  const auto& o = options;
  nlohmann::json out;
  out["suite"] = "self_retrieval";
  out["docs"] = o.docs;
  out["input_dim"] = o.input_dim;
  out["dim"] = dim;
  out["pq_m"] = pq_m;
  out["k"] = o.k;
  out["noise"] = o.noise;
  out["queries"] = {{"validation", o.validation}, {"test", o.test}};
  out["limits"] =
      "retrieval of a perturbed copy of a synthetic vector (low-rank latent model + "
      "noise); one relevant document per query; not semantic relevance";
  for (const auto& [name, s] : stages) {
    out["stages"][name] = {{"validation", s.first.to_json()}, {"test", s.second.to_json()}};
  }
  return out;
}

}  // namespace privsearch::tools
