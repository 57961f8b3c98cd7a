// An index build for collections too large to hold in memory: 10M documents of 768
// float32 values are 30 GB and their projected rows (d' = 672) 27 GB, on a 24 GiB machine. The
// vectors and the documents come from callbacks a block of rows at a time; what stays in memory
// is the training samples, the PQ codes (N x M bytes) and the list assignment (N x spill u32).
//
// Steps, each resumed where an interrupted run stopped (a rerun with the same settings):
//   1. train: the projection (SVD) and the PQ codebook on a seeded sample of `sample` rows, the
//      IVF centroids on a seeded sample of max(sample, kIvfTrainRowsPerList x lists) rows
//      (two-level k-means from kTwoLevelMinLists lists). projection.bin and .build/train.bin.
//   2. stream: every block of rows is projected, appended to the exact store, PQ-encoded and
//      assigned to its lists; the store, codes and assignment grow as ResumableFiles and after
//      each block .build/progress.json records the rows that are durable.
//   3. finish: pq.bin, the IVF lists, the payload store and last the manifest (an interrupted
//      build never looks complete); .build is removed.
// The artifacts are the ones build_index writes (same formats, same manifest entries); they
// differ from an in-memory build of the same rows only through the samples the models are
// trained on.
// Thread safety: one build per output directory (a second concurrent run is not detected).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/status.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/build.h"
#include "index/encoders/beir.h"

namespace privsearch::index {

// IVF training rows per list when streaming (k-means wants tens of points per centroid; the
// default `sample` alone would leave 5 per list at 10M documents and 40,000 lists).
inline constexpr std::size_t kIvfTrainRowsPerList = 64;

struct StreamingSource {
  std::size_t rows = 0;  // documents
  std::size_t cols = 0;  // embedding dimension
  // Fills out[0 .. count x cols) with the vectors of documents first .. first + count - 1.
  std::function<void(std::size_t first, std::size_t count, float* out)> vectors;
  // Document i (id and payload text).
  std::function<Document(std::size_t i)> document;
};

struct StreamingBuildOptions {
  StreamingSource source;
  std::filesystem::path out;
  std::string collection = "streamed";
  std::string encoder_id = "external";
  std::size_t dim = 672;
  std::size_t pq_m = 0;         // 0: default_pq_m(d')
  std::size_t sample = 200000;  // projection and PQ training rows
  std::size_t record_bytes = 2048;
  std::uint64_t seed = 1;
  bool ivf = true;
  std::size_t ivf_lists = 0;      // 0: default_ivf_lists(N)
  std::size_t ivf_route_dim = 0;  // 0: kIvfDefaultRouteDim (capped at d')
  std::size_t ivf_spill = kIvfDefaultSpill;
  StoreDtype store_dtype = StoreDtype::kFloat32;
  std::size_t block_rows = 131072;  // rows per streamed block (and per checkpoint)
};

// kFailedPrecondition when `out` holds an unfinished build with other settings (remove it or
// use those settings); kInvalidArgument for settings no build could satisfy.
Result<Manifest> build_index_streaming(const StreamingBuildOptions& options,
                                       const Progress& progress);

}  // namespace privsearch::index
