// The provider as a child process for the benchmarks and the encrypted evaluation: fork + exec
// privsearch-provider (next to this binary) on an index with a self-signed certificate on
// 127.0.0.1 port 0, wait for its port and fingerprint files, stop it with SIGTERM.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/search_client.h"
#include "core/status.h"
#include "index/manifest.h"

namespace privsearch::tools {

struct ProviderProcess {
  pid_t pid = -1;
  std::uint16_t port = 0;
  std::string fingerprint;
  ProviderProcess() = default;
  ProviderProcess(const ProviderProcess&) = delete;
  ProviderProcess& operator=(const ProviderProcess&) = delete;
  ~ProviderProcess();
};

// `work_dir` holds the port and fingerprint files; `extra_args` are appended to the command line.
Status start_provider_process(const std::filesystem::path& index_dir,
                              const std::filesystem::path& work_dir,
                              const std::vector<std::string>& extra_args, ProviderProcess& p);

// Indexes a BEIR collection with the built-in encoder under work_dir/<collection name>/index
// (rebuilt on every call) for a provider process to serve.
struct CollectionIndex {
  std::filesystem::path dir;
  index::Manifest manifest;
};
Result<CollectionIndex> index_collection(const std::filesystem::path& dataset_dir,
                                         const std::filesystem::path& work_dir, std::size_t dim,
                                         std::uint64_t seed = 1);

Result<std::unique_ptr<client::SearchClient>> connect_search_client(
    const std::filesystem::path& index_dir, const ProviderProcess& p);

}  // namespace privsearch::tools
