#include "suites/bench_ivf.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

#include "client/search_client.h"
#include "core/bytes.h"
#include "core/csprng.h"
#include "core/elapsed.h"
#include "eval/leakage.h"
#include "eval/metrics.h"
#include "eval/statistics.h"
#include "experiments/eval_self_retrieval.h"
#include "experiments/offline_index.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/synthetic_index.h"
#include "index/artifacts/atomic_file.h"
#include "index/build.h"
#include "index/candidates/ivf.h"
#include "index/encoders/beir.h"
#include "suites/list_cache_model.h"

namespace privsearch::tools {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// An IVF index with every list decoded (the bench measures the scan, not the fetch).
struct LoadedIvf {
  index::IvfIndex ivf;
  std::vector<index::IvfList> lists;
};

Result<LoadedIvf> load_all_lists(const fs::path& dir) {
  LoadedIvf l;
  PRIVSEARCH_ASSIGN_OR_RETURN(l.ivf, index::load_ivf(dir / index::kIvfFile));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(dir / index::kIvfListsFile));
  if (bytes.size() != l.ivf.lists_file_bytes) {
    return data_loss_error(
        fmt::format("{} does not match its directory", (dir / index::kIvfListsFile).string()));
  }
  for (std::uint32_t i = 0; i < l.ivf.lists; ++i) {
    const auto& ref = l.ivf.directory[i];
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto list, index::decode_list(l.ivf, i, std::span(bytes).subspan(ref.offset, ref.bytes)));
    l.lists.push_back(std::move(list));
  }
  return l;
}

struct Probe {
  std::vector<std::uint32_t> lists;
  std::vector<std::uint32_t> candidates;
  double scan_ms = 0;
  std::uint64_t bytes = 0;
};

Result<Probe> probe(const LoadedIvf& l, std::span<const float> z, std::size_t nprobe,
                    std::size_t k) {
  Probe p;
  const auto t0 = Clock::now();
  p.lists = index::route_query(l.ivf, z, nprobe);
  std::vector<const index::IvfList*> views;
  for (const auto i : p.lists) views.push_back(&l.lists[i]);
  PRIVSEARCH_ASSIGN_OR_RETURN(p.candidates, index::ivf_search(l.ivf, views, z, k));
  p.scan_ms = ms_since(t0);
  for (const auto i : p.lists) p.bytes += l.ivf.directory[i].bytes;
  return p;
}

// The IVF lists of the synthetic index, built once from its exact rows and PQ codes.
Result<fs::path> ensure_synthetic_ivf(const IvfBenchOptions& o, const OfflineIndex& ix,
                                      const Progress& progress, double& build_s) {
  const std::size_t lists = o.lists != 0 ? o.lists : index::default_ivf_lists(o.docs);
  const std::size_t route =
      std::min(o.route_dim != 0 ? o.route_dim : index::kIvfDefaultRouteDim, o.dim);
  const auto dir = o.ivf_cache / fmt::format("synthetic-{}-{}-l{}-r{}-s{}-m{}", o.docs, o.dim,
                                             lists, route, o.spill, o.list_pq_m);
  if (fs::exists(dir / index::kIvfFile)) {
    progress("reusing " + dir.string());
    return dir;
  }
  fs::create_directories(dir);
  const auto& store = *ix.store;
  index::Matrix x;
  x.rows = store.rows();
  x.cols = store.cols();
  x.data.assign(store.row(0), store.row(0) + x.rows * x.cols);
  index::IvfOptions io;
  io.lists = lists;
  io.route_dim = route;
  io.spill = o.spill;
  io.pq_m = o.list_pq_m;
  progress(fmt::format("building {} IVF lists over {} documents in {} (once)", lists, x.rows,
                       dir.string()));
  const auto t0 = Clock::now();
  PRIVSEARCH_RETURN_IF_ERROR(index::build_ivf(x, *ix.pq, io, dir).status());
  build_s = ms_since(t0) / 1000;
  return dir;
}

std::size_t default_nprobe_of(const IvfBenchOptions& o) {
  const auto& n = o.nprobe;
  return std::find(n.begin(), n.end(), client::kDefaultNprobe) != n.end() ? client::kDefaultNprobe
                                                                          : n.front();
}

// Median, largest and mean encoded list size.
nlohmann::json list_bytes_summary(const index::IvfIndex& ivf) {
  std::vector<std::uint64_t> sizes;
  for (const auto& ref : ivf.directory) sizes.push_back(ref.bytes);
  std::sort(sizes.begin(), sizes.end());
  return {{"median", sizes[sizes.size() / 2]},
          {"max", sizes.back()},
          {"mean", ivf.lists_file_bytes / ivf.lists}};
}

Result<nlohmann::json> synthetic_part(const IvfBenchOptions& o, const Progress& progress) {
  const Synthetic gen(o.input_dim);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto index_dir,
      ensure_synthetic_index(o.cache, o.docs, o.input_dim, o.dim, o.pq_m, gen));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ix, OfflineIndex::open(index_dir));
  double build_s = 0;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ivf_dir, ensure_synthetic_ivf(o, *ix, progress, build_s));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto l, load_all_lists(ivf_dir));
  const auto& store = *ix->store;
  const auto queries =
      make_bench_queries(o.docs, o.input_dim, o.queries, gen, ix->projection, store.cols());
  auto z_of = [&](std::size_t qi) {
    return std::span<const float>(queries.projected_flat.data() + qi * store.cols(), store.cols());
  };
  std::size_t hit_flat = 0;
  std::vector<double> flat_ms;
  for (std::size_t qi = 0; qi < o.queries; ++qi) {
    const auto t0 = Clock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto c, ix->scanner->search(z_of(qi), o.k));
    flat_ms.push_back(ms_since(t0));
    hit_flat += in_top10(exact_rerank(store, z_of(qi), c), queries.sources[qi]);
  }
  const double nq = static_cast<double>(o.queries);
  nlohmann::json out;
  out["docs"] = o.docs;
  out["lists"] = l.ivf.lists;
  out["route_dim"] = l.ivf.route_dim;
  out["spill"] = l.ivf.spill;
  out["list_pq_m"] = l.ivf.codebook.m;
  out["k"] = o.k;
  out["queries"] = o.queries;
  out["hit10_flat"] = static_cast<double>(hit_flat) / nq;
  out["flat_scan_ms"] = latency_summary(flat_ms);
  const std::uint64_t shared_bytes =
      file_bytes(index_dir / "manifest.json") + file_bytes(index_dir / "projection.bin");
  out["flat_client_bytes"] = shared_bytes + file_bytes(index_dir / "pq.bin");
  out["ivf_directory_bytes"] = file_bytes(ivf_dir / index::kIvfFile);
  out["list_bytes"] = list_bytes_summary(l.ivf);
  if (build_s > 0) out["ivf_build_s"] = build_s;
  const std::size_t default_nprobe = default_nprobe_of(o);
  for (const auto nprobe : o.nprobe) {
    std::size_t hit = 0, in_candidates = 0;
    std::vector<double> scan_ms, probed_bytes, warm_bytes;
    ListCacheModel cache(o.warm_cache_mb << 20);
    for (std::size_t qi = 0; qi < o.queries; ++qi) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto p, probe(l, z_of(qi), nprobe, o.k));
      scan_ms.push_back(p.scan_ms);
      probed_bytes.push_back(static_cast<double>(p.bytes));
      const auto fetched = cache.fetch(l.ivf, p.lists);
      if (qi >= o.queries / 2) warm_bytes.push_back(static_cast<double>(fetched));
      hit += in_top10(exact_rerank(store, z_of(qi), p.candidates), queries.sources[qi]);
      in_candidates += std::find(p.candidates.begin(), p.candidates.end(), queries.sources[qi]) !=
                       p.candidates.end();
      if (qi == 0 && nprobe == default_nprobe) {
        out["client_bytes_first_search"] =
            shared_bytes + file_bytes(ivf_dir / index::kIvfFile) + p.bytes;
      }
    }
    nlohmann::json row;
    row["nprobe"] = nprobe;
    row["hit10_ivf"] = static_cast<double>(hit) / nq;
    row["hit10_vs_flat"] = (static_cast<double>(hit) - static_cast<double>(hit_flat)) / nq;
    row["source_in_candidates"] = static_cast<double>(in_candidates) / nq;
    row["scan_ms"] = latency_summary(scan_ms);
    row["probed_bytes"] = latency_summary(probed_bytes);
    row["client_bytes_per_search_warm"] = eval::describe(warm_bytes).mean;
    out["by_nprobe"].push_back(row);
    progress(fmt::format("bench ivf: nprobe {} Hit@10 {:.3f} (flat {:.3f})", nprobe,
                         static_cast<double>(hit) / nq, static_cast<double>(hit_flat) / nq));
  }
  out["default_nprobe"] = default_nprobe;
  return out;
}

// The SciFact (or other BEIR) index with IVF lists, built once.
Result<fs::path> ensure_dataset_ivf_index(const IvfBenchOptions& o, const Progress& progress) {
  // Named by the settings as given (the default list count is "N/250", not 0: defaults change).
  const auto lists = o.dataset_lists != 0 ? std::to_string(o.dataset_lists)
                                          : fmt::format("N{}", index::kIvfDocumentsPerList);
  const auto dir = o.ivf_cache / fmt::format("{}-l{}-r{}-s{}-m{}", o.dataset.filename().string(),
                                             lists, o.route_dim, o.spill, o.list_pq_m);
  if (fs::exists(dir / "manifest.json")) {
    progress("reusing " + dir.string());
    return dir;
  }
  index::BuildOptions b;
  b.collection = o.dataset;
  b.out = dir;
  b.dim = o.dim;
  b.ivf = true;
  b.ivf_lists = o.dataset_lists;
  b.ivf_route_dim = o.route_dim;
  b.ivf_spill = o.spill;
  b.ivf_pq_m = o.list_pq_m;
  PRIVSEARCH_RETURN_IF_ERROR(index::build_index(b, progress.callback()).status());
  return dir;
}

// The mean of the given rows (each of `dim` values at `row(i)`).
template <typename Row>
std::vector<double> mean_of(std::span<const std::uint32_t> ids, std::size_t dim, Row&& row) {
  std::vector<double> m(dim, 0.0);
  for (const auto id : ids) {
    const float* r = row(id);
    for (std::size_t j = 0; j < dim; ++j) m[j] += r[j];
  }
  return m;
}

// Linkability of two halves of each query's set (a random split: the provider sees sets) and the
// neighbourhood the whole set reveals, for one kind of set (lists or candidates).
struct SetLeak {
  std::vector<std::vector<double>> half_a, half_b;
  double recovered = 0;
  template <typename Row>
  void add(std::vector<std::uint32_t> set, std::size_t dim, Row&& row, Prng& prng,
           const index::ExactStore& store, const std::vector<std::size_t>& truth) {
    for (std::size_t i = set.size(); i > 1; --i) std::swap(set[i - 1], set[prng.uniform_below(i)]);
    const std::size_t h = set.size() / 2;
    const std::span<const std::uint32_t> all(set);
    half_a.push_back(mean_of(all.subspan(0, h), dim, row));
    half_b.push_back(mean_of(all.subspan(h), dim, row));
    recovered += top10_overlap(truth, exact_top10(store, mean_of(all, dim, row)));
  }
  double link_auc(const std::vector<std::size_t>& shifts) const {
    std::vector<double> pos, neg;
    const std::size_t n = half_a.size();
    for (std::size_t i = 0; i < n; ++i) pos.push_back(eval::cosine(half_a[i], half_b[i]));
    for (const auto s : shifts) {
      for (std::size_t i = 0; i < n; ++i)
        neg.push_back(eval::cosine(half_a[i], half_b[(i + s) % n]));
    }
    return eval::roc_auc(pos, neg);
  }
};

// The collection's judged queries with a non-zero projected vector.
struct JudgedQuery {
  std::vector<float> z;
  const std::map<std::string, int>* qrels;
};

template <typename Index>
std::vector<JudgedQuery> judged_queries(const Index& ix, const index::Collection& collection) {
  std::vector<JudgedQuery> queries;
  for (const auto& q : collection.queries) {
    const auto it = collection.qrels.find(q.id);
    if (it == collection.qrels.end()) continue;
    auto z = ix.projection.project_query(ix.encoder->encode_query(q.text));
    if (std::all_of(z.begin(), z.end(), [](float v) { return v == 0.0f; })) continue;
    queries.push_back({std::move(z), &it->second});
  }
  return queries;
}

Result<nlohmann::json> dataset_part(const IvfBenchOptions& o, const Progress& progress) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto dir, ensure_dataset_ivf_index(o, progress));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ix, OfflineIndex::open(dir));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto l, load_all_lists(dir));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto collection, index::load_collection(o.dataset));
  if (!ix->encoder) return failed_precondition_error("the dataset index has no text encoder");
  const auto& store = *ix->store;
  const std::vector<JudgedQuery> queries = judged_queries(*ix, collection);
  auto ndcg = [&](const JudgedQuery& q, const std::vector<std::uint32_t>& candidates) {
    std::vector<std::string> ranking;
    for (const auto d : exact_rerank(store, q.z, candidates))
      ranking.push_back(collection.corpus[d].id);
    return eval::score_ranking(ranking, *q.qrels).ndcg_at_10;
  };
  double flat = 0;
  std::vector<std::vector<std::uint32_t>> flat_candidates;
  for (const auto& q : queries) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto c, ix->scanner->search(q.z, o.k));
    flat += ndcg(q, c);
    flat_candidates.push_back(std::move(c));
  }
  const double nq = static_cast<double>(queries.size());
  nlohmann::json out;
  out["dataset"] = o.dataset.string();
  out["docs"] = store.rows();
  out["lists"] = l.ivf.lists;
  out["route_dim"] = l.ivf.route_dim;
  out["spill"] = l.ivf.spill;
  out["list_pq_m"] = l.ivf.codebook.m;
  out["queries"] = queries.size();
  out["ndcg10_flat"] = flat / nq;
  Prng prng = Prng::from_seed(Seed{}, 0x4956);  // "IV": the halves' splits, reproducible
  std::vector<std::size_t> shifts;
  Prng shift_prng = Prng::from_seed(Seed{}, 0x4c4b);
  for (std::size_t s = 0; s < 10; ++s)
    shifts.push_back(1 + shift_prng.uniform_below(queries.size() - 1));
  std::vector<std::vector<std::size_t>> truth;
  SetLeak candidates_leak;
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    truth.push_back(
        exact_top10(store, std::vector<double>(queries[qi].z.begin(), queries[qi].z.end())));
    candidates_leak.add(
        flat_candidates[qi], store.cols(), [&](std::uint32_t d) { return store.row(d); }, prng,
        store, truth[qi]);
  }
  out["link_auc_candidates"] = candidates_leak.link_auc(shifts);
  out["top10_recovered_candidates"] = candidates_leak.recovered / nq;
  for (const auto nprobe : o.dataset_nprobe) {
    double sum = 0;
    SetLeak lists_leak;
    for (std::size_t qi = 0; qi < queries.size(); ++qi) {
      const auto& q = queries[qi];
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto p, probe(l, q.z, nprobe, o.k));
      sum += ndcg(q, p.candidates);
      lists_leak.add(
          p.lists, l.ivf.route_dim,
          [&](std::uint32_t i) { return l.ivf.centroids.data() + i * l.ivf.route_dim; }, prng,
          store, truth[qi]);
    }
    // The halves need two lists each side to mean anything.
    const bool halves = std::min(nprobe, l.ivf.lists) >= 4;
    out["by_nprobe"].push_back(
        {{"nprobe", nprobe},
         {"ndcg10_ivf", sum / nq},
         {"ndcg10_vs_flat", (sum - flat) / nq},
         {"probed_fraction",
          static_cast<double>(std::min(nprobe, l.ivf.lists)) / static_cast<double>(l.ivf.lists)},
         {"link_auc_lists",
          halves ? nlohmann::json(lists_leak.link_auc(shifts)) : nlohmann::json()},
         {"top10_recovered_lists", lists_leak.recovered / nq}});
  }
  return out;
}

}  // namespace

Result<nlohmann::json> run_ivf_bench(const IvfBenchOptions& o) {
  if (o.nprobe.empty()) return invalid_argument_error("--nprobe needs at least one value");
  const Progress progress;
  nlohmann::json out;
  out["machine"] = machine_description();
  if (o.docs > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out["synthetic"], synthetic_part(o, progress));
  }
  if (!o.dataset.empty() && fs::exists(o.dataset / "corpus.jsonl")) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out["quality"], dataset_part(o, progress));
  }
  return out;
}

}  // namespace privsearch::tools
