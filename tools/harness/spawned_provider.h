// The provider as a child process, for the tests, benchmarks and experiments that need a real
// one: fork + exec privsearch-provider on an index with a self-signed certificate on 127.0.0.1
// port 0, wait until it has written its port and fingerprint files, and stop it by its pid
// (SIGTERM, then wait) when the object goes.
// Thread safety: one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/provider_client.h"
#include "client/search_client.h"
#include "core/status.h"
#include "index/artifacts/manifest.h"

namespace privsearch::tools {

struct ProviderLaunch {
  ProviderLaunch() = default;
  ProviderLaunch(std::filesystem::path index, std::filesystem::path work,
                 std::vector<std::string> extra = {})
      : index_dir(std::move(index)), work_dir(std::move(work)), extra_args(std::move(extra)) {}

  std::filesystem::path index_dir;
  std::filesystem::path work_dir;      // receives provider.port and provider.fingerprint
  std::string listen = "127.0.0.1:0";  // a fixed port lets a restarted provider keep clients
  // Empty: a throwaway self-signed certificate per start. A restarted provider that must keep
  // its pinned clients needs a certificate that outlives it.
  std::filesystem::path cert_file, key_file;
  std::vector<std::string> extra_args;
  // Empty: $PRIVSEARCH_PROVIDER_BIN when set, else privsearch-provider beside this executable.
  std::filesystem::path binary;
  bool quiet = true;  // --quiet, and the child's stdout to /dev/null (keeps JSON output clean)
  std::filesystem::path log_file;  // the child's stderr (its log), appended; empty: inherited
  std::chrono::seconds start_timeout{300};
  // Behind a balancer that sends PROXY v2 (BalancerSpec::send_proxy): its address(es), passed
  // as --front-trust-proxy-from.
  std::vector<std::string> trust_proxy_from;
};

// One throwaway self-signed certificate in `dir` (cert.pem, and key.pem readable by the owner
// only) for several provider replicas, so that clients pin one certificate for the service and
// a restarted replica keeps its clients. Fills `launch`'s cert_file and key_file when given.
struct SharedCertificate {
  std::filesystem::path cert_file, key_file;
  void apply(ProviderLaunch& launch) const {
    launch.cert_file = cert_file;
    launch.key_file = key_file;
  }
};
Result<SharedCertificate> write_shared_certificate(const std::filesystem::path& dir, int days = 1);

// privsearch-provider in the directory of the running executable (both are built into one
// directory and installed together).
std::filesystem::path provider_beside_this_executable();

class SpawnedProvider {
 public:
  // kUnavailable when the process exits during start-up or does not start in time (it is then
  // killed and reaped).
  static Result<std::unique_ptr<SpawnedProvider>> start(const ProviderLaunch& launch);
  ~SpawnedProvider();  // stop() unless already stopped
  SpawnedProvider(const SpawnedProvider&) = delete;
  SpawnedProvider& operator=(const SpawnedProvider&) = delete;

  pid_t pid() const { return pid_; }
  std::uint16_t port() const { return port_; }
  const std::string& fingerprint() const { return fingerprint_; }
  // Loopback, this port, the certificate fingerprint pinned.
  client::ConnectOptions connect_options() const;

  // Sends `sig` to the child (SIGHUP reloads the index); false once it has been reaped.
  bool signal(int sig) const;
  // SIGTERM and wait; the raw wait status (WIFEXITED / WEXITSTATUS apply), or -1 when the child
  // was already reaped.
  int stop();

 private:
  SpawnedProvider() = default;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string fingerprint_;
};

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
    const std::filesystem::path& index_dir, const SpawnedProvider& provider);

}  // namespace privsearch::tools
