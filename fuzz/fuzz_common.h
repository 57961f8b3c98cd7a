// Shared setup for the decoder fuzz targets: small insecure params (n = 64) so inputs stay a
// few kilobytes and the fuzzer explores structure, not size.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "ckks/param_sets.h"
#include "ckks/params.h"
#include "core/check.h"
#include "index/artifacts/exact_store.h"

namespace privsearch::fuzz {

// A small exact store (rows x cols, value(i) at flat index i) in a private temporary file,
// removed once mapped; for the targets that need a ProviderCore.
inline std::unique_ptr<index::ExactStore> small_exact_store(std::size_t rows, std::size_t cols,
                                                            float (*value)(std::size_t),
                                                            const char* tag) {
  const auto file = std::filesystem::temp_directory_path() /
                    (std::string("privsearch-fuzz-") + tag + "-" + std::to_string(::getpid()));
  index::Matrix m;
  m.rows = rows;
  m.cols = cols;
  for (std::size_t i = 0; i < rows * cols; ++i) m.data.push_back(value(i));
  PRIVSEARCH_CHECK(index::ExactStore::write(file, m).ok(), "cannot write the fuzz store");
  auto s = std::make_unique<index::ExactStore>(index::ExactStore::open(file).value());
  std::filesystem::remove(file);
  return s;
}

inline const ckks::Params& fuzz_params() {
  static const ckks::Params params = ckks::Params::create(ckks::insecure_test_literal(64)).value();
  return params;
}

// The packed rerank kernel's preset at n = 64 (insecure), and the layout of its fuzz inputs.
inline const ckks::Params& fuzz_packed_params() {
  static const ckks::Params params = [] {
    auto l = ckks::packed_n4096_literal();
    l.name = "insecure-fuzz-packed";
    l.n = 64;
    l.insecure_for_tests = true;
    return ckks::Params::create(l).value();
  }();
  return params;
}
inline constexpr std::size_t kFuzzPackedDim = 5, kFuzzPackedK = 3;

}  // namespace privsearch::fuzz
