#include "index/build_streaming.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/bytes.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/payload_store.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/candidates/projection.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Say = std::function<void(const std::string&)>;

constexpr char kWorkDir[] = ".build";
constexpr char kTrainMagic[4] = {'P', 'S', 'B', 'T'};

// The settings a resumed build must share with the run that started it.
struct Shape {
  std::size_t dim = 0, m = 0, lists = 0, route = 0, spill = 0;
  std::size_t choices = 0;  // each row's best lists kept for the balanced assignment
  std::string settings;     // canonical JSON of everything that determines the artifacts
};

Result<Shape> shape_of(const StreamingBuildOptions& o) {
  const auto& s = o.source;
  if (s.rows == 0 || s.cols == 0 || !s.vectors || !s.document) {
    return invalid_argument_error("the streaming build needs rows, cols, vectors and documents");
  }
  if (s.rows > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("at most 2^32 - 1 documents (32-bit ids)");
  }
  if (o.block_rows == 0) return invalid_argument_error("block_rows must be positive");
  Shape sh;
  sh.dim = std::min(o.dim, s.cols);
  sh.m = o.pq_m != 0 ? o.pq_m : default_pq_m(sh.dim);
  if (sh.dim == 0 || sh.dim % sh.m != 0) {
    return invalid_argument_error(
        fmt::format("`M` = {} subquantizers must divide the dimension d' = {}", sh.m, sh.dim));
  }
  if (std::min(o.sample, s.rows) < std::max<std::size_t>(256, sh.dim)) {
    return invalid_argument_error(
        fmt::format("{} training rows; the projection and PQ need at least max(256, d' = {})",
                    std::min(o.sample, s.rows), sh.dim));
  }
  if (o.ivf) {
    sh.lists = o.ivf_lists != 0 ? o.ivf_lists : default_ivf_lists(s.rows);
    sh.route = std::min(o.ivf_route_dim != 0 ? o.ivf_route_dim : kIvfDefaultRouteDim, sh.dim);
    sh.spill = o.ivf_spill;
    if (sh.lists > s.rows || sh.spill < 1 || sh.spill > kMaxSpill || sh.spill > sh.lists) {
      return invalid_argument_error(fmt::format(
          "{} IVF lists with each document in {} for {} documents", sh.lists, sh.spill, s.rows));
    }
    sh.choices = std::min(kListChoices, sh.lists);
  }
  sh.settings = nlohmann::json{{"rows", s.rows},
                               {"cols", s.cols},
                               {"dim", sh.dim},
                               {"m", sh.m},
                               {"sample", o.sample},
                               {"seed", o.seed},
                               {"lists", sh.lists},
                               {"route", sh.route},
                               {"spill", sh.spill},
                               {"list_choices", sh.choices},
                               {"dtype", static_cast<int>(o.store_dtype)},
                               {"record_bytes", o.record_bytes}}
                    .dump();
  return sh;
}

// Rows `ids` of the source, projected onto the first `dims` coordinates, in blocks (the raw
// rows of a large sample would not fit next to the projected ones).
Matrix projected_rows(const StreamingSource& s, const Projection& proj,
                      const std::vector<std::size_t>& ids, std::size_t dims) {
  Matrix out;
  out.rows = ids.size();
  out.cols = dims;
  out.data.resize(ids.size() * dims);
  constexpr std::size_t kBlock = 65536;
  Matrix raw;
  raw.cols = s.cols;
  for (std::size_t b = 0; b < ids.size(); b += kBlock) {
    raw.rows = std::min(kBlock, ids.size() - b);
    raw.data.resize(raw.rows * s.cols);
    for (std::size_t i = 0; i < raw.rows; ++i)
      s.vectors(ids[b + i], 1, raw.data.data() + i * s.cols);
    const auto p = proj.project_documents(raw, dims);
    std::copy(p.data.begin(), p.data.end(),
              out.data.begin() + static_cast<std::ptrdiff_t>(b * dims));
  }
  return out;
}

struct Trained {
  Projection projection;
  PqCodebook codebook;
  std::vector<float> centroids;  // lists x r (empty without IVF)
};

Status save_trained(const fs::path& file, const Trained& t) {
  ByteWriter w;
  put_header(w, kTrainMagic);
  w.put_u64(t.codebook.dim);
  w.put_u64(t.codebook.m);
  w.put_u64(t.centroids.size());
  put_floats(w, t.codebook.centroids);
  put_floats(w, t.centroids);
  return write_bytes_atomically(file, w.bytes());
}

Result<Trained> load_trained(const fs::path& dir, const Shape& sh) {
  Trained t;
  PRIVSEARCH_ASSIGN_OR_RETURN(t.projection, load_projection(dir / "projection.bin"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(dir / kWorkDir / "train.bin"));
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kTrainMagic, dir / kWorkDir / "train.bin"));
  std::uint64_t dim = 0, m = 0, centroid_values = 0;
  if (!r.get_u64(dim).ok() || !r.get_u64(m).ok() || !r.get_u64(centroid_values).ok() ||
      dim != sh.dim || m != sh.m || centroid_values != sh.lists * sh.route ||
      t.projection.output_dim != sh.dim) {
    return data_loss_error("the saved training state does not match the build's settings");
  }
  t.codebook = shaped_codebook(dim, m);
  t.centroids.resize(centroid_values);
  PRIVSEARCH_RETURN_IF_ERROR(get_floats(r, t.codebook.centroids, "PQ centroids"));
  PRIVSEARCH_RETURN_IF_ERROR(get_floats(r, t.centroids, "IVF centroids"));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return t;
}

Result<Trained> train(const StreamingBuildOptions& o, const Shape& sh, const Say& say) {
  const fs::path work = o.out / kWorkDir;
  if (fs::exists(work / "train.bin") && fs::exists(o.out / "projection.bin")) {
    say("reusing the trained projection, codebook and centroids");
    return load_trained(o.out, sh);
  }
  const auto& s = o.source;
  Trained t;
  const auto ids = seeded_sample(s.rows, o.sample, o.seed, 4);
  say(fmt::format("fitting the SVD projection {} -> {} and PQ (M = {}) on {} sampled rows", s.cols,
                  sh.dim, sh.m, ids.size()));
  Matrix raw;
  raw.rows = ids.size();
  raw.cols = s.cols;
  raw.data.resize(ids.size() * s.cols);
  for (std::size_t i = 0; i < ids.size(); ++i) s.vectors(ids[i], 1, raw.data.data() + i * s.cols);
  SvdOptions so;
  so.sample_size = ids.size();
  so.seed = o.seed;
  PRIVSEARCH_ASSIGN_OR_RETURN(t.projection, fit_svd(raw, sh.dim, so));
  const Matrix projected = t.projection.project_documents(raw);
  raw = Matrix{};
  PRIVSEARCH_ASSIGN_OR_RETURN(t.codebook, train_pq_codebook(projected, sh.m, o.seed));
  if (o.ivf) {
    const auto ivf_ids =
        seeded_sample(s.rows, std::max(o.sample, kIvfTrainRowsPerList * sh.lists), o.seed, 5);
    say(fmt::format("training {} IVF centroids on {} sampled rows (first {} coordinates)", sh.lists,
                    ivf_ids.size(), sh.route));
    const Matrix prefix = projected_rows(s, t.projection, ivf_ids, sh.route);
    IvfOptions io;
    io.seed = o.seed;
    PRIVSEARCH_ASSIGN_OR_RETURN(t.centroids, train_ivf_centroids(prefix, sh.lists, sh.route, io));
  }
  PRIVSEARCH_RETURN_IF_ERROR(save_projection(o.out / "projection.bin", t.projection));
  PRIVSEARCH_RETURN_IF_ERROR(save_trained(work / "train.bin", t));
  return t;
}

Result<std::uint64_t> rows_done(const fs::path& file, const Shape& sh) {
  if (!fs::exists(file)) return std::uint64_t{0};
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded() || !j.contains("settings") || !j.contains("rows_done") ||
      !j["rows_done"].is_number_unsigned()) {
    return data_loss_error(fmt::format("{} is not a build checkpoint", file.string()));
  }
  if (j["settings"] != sh.settings) {
    return failed_precondition_error(fmt::format(
        "{} holds an unfinished build with other settings ({}); remove the directory or rerun "
        "with those settings",
        file.parent_path().parent_path().string(), j["settings"].dump()));
  }
  return j["rows_done"].get<std::uint64_t>();
}

Status save_rows_done(const fs::path& file, const Shape& sh, std::uint64_t rows) {
  const auto text = nlohmann::json{{"settings", sh.settings}, {"rows_done", rows}}.dump();
  return write_bytes_atomically(file,
                                {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

template <typename T>
std::span<const std::uint8_t> as_bytes(const std::vector<T>& v) {
  static_assert(sizeof(T) == 4);
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4};
}

// Every row's streamed list choices and scores (stream()), checked complete.
Result<ListChoices> read_choices(const fs::path& work, const Shape& sh, std::uint64_t rows) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lists, read_file_bytes(work / "choices.bin"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scores, read_file_bytes(work / "choice_scores.bin"));
  if (lists.size() != rows * sh.choices * 4 || scores.size() != lists.size()) {
    return data_loss_error("the streamed list choices are incomplete");
  }
  ListChoices c;
  c.rows = rows;
  c.choices = sh.choices;
  c.lists.resize(rows * sh.choices);
  c.scores.resize(rows * sh.choices);
  std::memcpy(c.lists.data(), lists.data(), lists.size());
  std::memcpy(c.scores.data(), scores.data(), scores.size());
  return c;
}

// Step 2: project, store, encode and assign every row, a block at a time, from the checkpoint on.
Status stream(const StreamingBuildOptions& o, const Shape& sh, const Trained& t, std::uint64_t done,
              const Say& say) {
  const fs::path work = o.out / kWorkDir;
  const auto& s = o.source;
  const std::size_t value_bytes = o.store_dtype == StoreDtype::kFloat16 ? 2 : 4;
  const auto header = ExactStore::encode_header(s.rows, sh.dim, o.store_dtype);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto store, ResumableFile::open(o.out / "exact.store",
                                      done == 0 ? 0 : header.size() + done * sh.dim * value_bytes));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto codes, ResumableFile::open(work / "codes.bin", done * sh.m));
  // Each row's best lists and their scores; the balanced assignment needs all rows' (finish).
  PRIVSEARCH_ASSIGN_OR_RETURN(auto choice_lists,
                              ResumableFile::open(work / "choices.bin", done * sh.choices * 4));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto choice_scores, ResumableFile::open(work / "choice_scores.bin", done * sh.choices * 4));
  if (done == 0) PRIVSEARCH_RETURN_IF_ERROR(store.append(header));
  if (done > 0) say(fmt::format("resuming after {} of {} rows", done, s.rows));
  const auto start = Clock::now();
  const std::uint64_t resumed_at = done;
  Matrix raw;
  raw.cols = s.cols;
  while (done < s.rows) {
    raw.rows = std::min<std::uint64_t>(o.block_rows, s.rows - done);
    raw.data.resize(raw.rows * s.cols);
    s.vectors(done, raw.rows, raw.data.data());
    const Matrix p = t.projection.project_documents(raw);
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto store_bytes,
                                ExactStore::encode_rows(p, o.store_dtype, done));
    PRIVSEARCH_RETURN_IF_ERROR(store.append(store_bytes));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto block_codes, pq_encode(t.codebook, p));
    PRIVSEARCH_RETURN_IF_ERROR(codes.append(block_codes));
    if (o.ivf) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto c, list_choices(t.centroids, sh.route, sh.choices, p));
      PRIVSEARCH_RETURN_IF_ERROR(choice_lists.append(as_bytes(c.lists)));
      PRIVSEARCH_RETURN_IF_ERROR(choice_scores.append(as_bytes(c.scores)));
    }
    PRIVSEARCH_RETURN_IF_ERROR(store.sync());
    PRIVSEARCH_RETURN_IF_ERROR(codes.sync());
    PRIVSEARCH_RETURN_IF_ERROR(choice_lists.sync());
    PRIVSEARCH_RETURN_IF_ERROR(choice_scores.sync());
    done += raw.rows;
    PRIVSEARCH_RETURN_IF_ERROR(save_rows_done(work / "progress.json", sh, done));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double rate = static_cast<double>(done - resumed_at) / std::max(seconds, 1e-9);
    say(fmt::format("streamed {} / {} rows ({:.1f}%), {:.0f} rows/s, about {:.0f} s left", done,
                    s.rows, 100.0 * static_cast<double>(done) / static_cast<double>(s.rows), rate,
                    static_cast<double>(s.rows - done) / std::max(rate, 1e-9)));
  }
  PRIVSEARCH_RETURN_IF_ERROR(codes.finish());
  PRIVSEARCH_RETURN_IF_ERROR(choice_lists.finish());
  PRIVSEARCH_RETURN_IF_ERROR(choice_scores.finish());
  return store.finish();
}

Manifest make_manifest(const StreamingBuildOptions& o, const Shape& sh) {
  Manifest man;
  man.collection = o.collection;
  man.encoder_id = o.encoder_id;
  man.projection = std::string(projection_kind_name(ProjectionKind::kSvd));
  man.dtype = o.store_dtype == StoreDtype::kFloat16 ? "float16" : "float32";
  man.documents = o.source.rows;
  man.input_dim = o.source.cols;
  man.dim = sh.dim;
  man.pq_m = sh.m;
  man.seed = o.seed;
  man.artifacts = {{kProjectionArtifact, "projection.bin", 0, ""},
                   {kExactStoreArtifact, "exact.store", 0, ""},
                   {kPqArtifact, "pq.bin", 0, ""},
                   {kPayloadsArtifact, "payloads.bin", 0, ""}};
  return man;
}

}  // namespace

Result<Manifest> build_index_streaming(const StreamingBuildOptions& o, const Progress& progress) {
  const Say say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  PRIVSEARCH_ASSIGN_OR_RETURN(const Shape sh, shape_of(o));
  const fs::path work = o.out / kWorkDir;
  std::error_code ec;
  fs::create_directories(work, ec);
  if (ec)
    return unavailable_error(fmt::format("cannot create `{}`: {}", work.string(), ec.message()));
  // The checkpoint names the settings from the first step on: a rerun with others is refused
  // before anything is overwritten.
  PRIVSEARCH_ASSIGN_OR_RETURN(std::uint64_t done, rows_done(work / "progress.json", sh));
  if (!fs::exists(work / "progress.json")) {
    PRIVSEARCH_RETURN_IF_ERROR(save_rows_done(work / "progress.json", sh, 0));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const Trained t, train(o, sh, say));
  if (done < o.source.rows || !fs::exists(o.out / "exact.store")) {
    PRIVSEARCH_RETURN_IF_ERROR(stream(o, sh, t, done, say));
  }
  say("writing the PQ artifact");
  PqArtifact pq;
  pq.codebook = t.codebook;
  pq.count = o.source.rows;
  PRIVSEARCH_ASSIGN_OR_RETURN(pq.codes, read_file_bytes(work / "codes.bin"));
  if (pq.codes.size() != pq.count * sh.m)
    return data_loss_error("the streamed PQ codes are incomplete");
  PRIVSEARCH_RETURN_IF_ERROR(save_pq(o.out / "pq.bin", pq));
  Manifest man = make_manifest(o, sh);
  if (o.ivf) {
    say(fmt::format("balancing and writing {} IVF lists", sh.lists));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto choices, read_choices(work, sh, pq.count));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto assignment,
                                balanced_assignment(choices, sh.lists, sh.spill));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto entries,
                                write_ivf(t.centroids, sh.route, sh.spill, assignment, pq, o.out));
    man.artifacts.insert(man.artifacts.end(), entries.begin(), entries.end());
  }
  pq = PqArtifact{};
  say("writing the payload store");
  PRIVSEARCH_RETURN_IF_ERROR(PayloadStore::write(o.out / "payloads.bin", o.source.rows,
                                                 o.source.document, o.record_bytes));
  say("writing the manifest (hashing every artifact)");
  PRIVSEARCH_RETURN_IF_ERROR(write_manifest(o.out, man));
  fs::remove_all(work, ec);
  return man;
}

}  // namespace privsearch::index
