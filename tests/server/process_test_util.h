// Helpers shared by the provider-process tests of this directory: counting a needle in a log,
// the tiny collection's IVF index, and a provider started on it with its request log kept.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/spawned_provider.h"
#include "index/artifacts/atomic_file.h"
#include "index/build.h"
#include "testing/tiny_collection.h"

namespace privsearch::testing {

// A PirQuery the provider answered (a loaded machine may add OVERLOADED refusals that the client
// retries: the provider computed nothing for those).
constexpr char kAnsweredPirQuery[] = "\"rpc\":\"PirQuery\",\"outcome\":\"OK\"";

inline std::size_t count_in(const std::filesystem::path& file, const std::string& needle) {
  const auto bytes = *index::read_file_bytes(file);
  const std::string text(bytes.begin(), bytes.end());
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The tiny collection's index with 8 IVF lists (and the flat artifact).
inline index::BuildOptions ivf_index(const Collection& c) {
  auto o = tiny_index_options(c, 128);
  o.ivf = true;
  o.ivf_lists = 8;
  EXPECT_TRUE(index::build_index(o, nullptr).ok());
  return o;
}

// A provider on `index` with `args` after the defaults `base`, its log (with the request log)
// in c.dir / "provider.log"; null (and a test failure) when it does not start.
inline std::unique_ptr<tools::SpawnedProvider> spawn_logged(const Collection& c,
                                                            const std::filesystem::path& index,
                                                            std::vector<std::string> base,
                                                            const std::vector<std::string>& args) {
  tools::ProviderLaunch launch;
  launch.binary = PRIVSEARCH_PROVIDER_BIN;
  launch.index_dir = index;
  launch.work_dir = c.dir;
  launch.extra_args = std::move(base);
  launch.extra_args.insert(launch.extra_args.end(), args.begin(), args.end());
  launch.start_timeout = std::chrono::seconds(60);
  launch.log_file = c.dir / "provider.log";
  launch.quiet = false;  // the request log: which RPCs the provider saw
  auto started = tools::SpawnedProvider::start(launch);
  EXPECT_TRUE(started.ok()) << started.status().to_string();
  return started.ok() ? std::move(started).value() : nullptr;
}

}  // namespace privsearch::testing
