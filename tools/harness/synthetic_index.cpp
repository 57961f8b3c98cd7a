#include "harness/synthetic_index.h"

#include <fmt/format.h>

#include <fstream>

#include "harness/progress.h"
#include "index/build.h"
#include "scoring/build.h"

namespace privsearch::tools {

Result<std::filesystem::path> ensure_synthetic_index(const std::filesystem::path& cache,
                                                     std::size_t docs, std::size_t input_dim,
                                                     std::size_t dim, std::size_t pq_m,
                                                     const Synthetic& gen,
                                                     std::uint32_t private_dim, bool ivf) {
  struct {
    std::filesystem::path cache;
    std::size_t docs, input_dim, dim, pq_m;
  } o{cache, docs, input_dim, dim, pq_m};
  const auto dir =
      o.cache / (fmt::format("synthetic-{}-{}-{}-m{}", o.docs, o.input_dim, o.dim, o.pq_m) +
                 (private_dim > 0 ? fmt::format("-private{}", private_dim) : std::string()) +
                 (ivf ? "-ivf" : ""));
  const auto index_dir = dir / "index";
  if (std::filesystem::exists(index_dir / "manifest.json")) return index_dir;
  std::filesystem::create_directories(dir);
  const Progress progress;
  progress(
      fmt::format("building a synthetic index of {} documents in {} (once)", o.docs, dir.string()));
  {
    std::ofstream corpus(dir / "corpus.jsonl");
    for (std::size_t i = 0; i < o.docs; ++i) {
      corpus << R"({"_id":"d)" << i << R"(","title":"document )" << i << R"(","text":""})" << '\n';
    }
  }
  index::Matrix m;
  m.rows = o.docs;
  m.cols = o.input_dim;
  m.data.resize(o.docs * o.input_dim);
  for (std::size_t i = 0; i < o.docs; ++i) {
    const auto v = gen.vector(i);
    std::copy(v.begin(), v.end(), m.data.begin() + static_cast<std::ptrdiff_t>(i * o.input_dim));
  }
  index::BuildOptions b;
  b.collection = dir;
  b.vectors = &m;
  b.out = index_dir;
  b.encoder_id = "synthetic-32-latent";
  b.dim = o.dim;
  b.pq_m = o.pq_m;
  b.record_bytes = 64;
  b.ivf = ivf;
  if (private_dim > 0) {
    scoring::ScoringBuildOptions so;
    so.dim = private_dim;
    b.extra_artifacts = scoring::scoring_artifacts_for_build(so);
  }
  PRIVSEARCH_RETURN_IF_ERROR(index::build_index(b, progress.callback()).status());
  return index_dir;
}

}  // namespace privsearch::tools
