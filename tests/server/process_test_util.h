// Helpers shared by the provider-process tests of this directory: counting a needle in a log,
// the tiny collection's IVF index (signed, with a client's thin copy), and a provider started on
// it with its request log kept.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/search_client.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/signing_key.h"
#include "index/build.h"
#include "index/candidates/ivf.h"
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

// The IVF index signed by a fresh key, and the client's thin copy of it (projection and IVF
// artifact only) in c.dir / "thin".
struct SignedIvfIndex {
  index::BuildOptions build;
  index::Ed25519SigningKey key;
  std::filesystem::path thin;

  // Copies the client files again (after an update).
  void refresh_thin() const {
    ASSERT_TRUE(
        index::copy_client_files(build.out, thin, {"projection", index::kIvfArtifact}).ok());
  }
};

inline SignedIvfIndex signed_ivf_index(const Collection& c) {
  SignedIvfIndex s{ivf_index(c), *index::Ed25519SigningKey::generate(), c.dir / "thin"};
  EXPECT_TRUE(index::sign_index(s.build.out, s.key).ok());
  s.refresh_thin();
  return s;
}

// A client opening an IVF index without a disk cache: the lists fetched in the clear, or by
// PIR (test parameters allowed) when `private_lists`.
inline client::OpenOptions ivf_open_options(bool private_lists) {
  client::OpenOptions o;
  o.candidates = client::CandidateIndex::kIvf;
  o.disk_cache = false;
  o.private_lists = private_lists;
  o.allow_insecure_pir = private_lists;
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
