#include "harness/spawned_provider.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"
#include "index/build.h"
#include "net/tls.h"
#include "server/child_process.h"

namespace privsearch::tools {
namespace {

std::filesystem::path provider_binary(const ProviderLaunch& launch) {
  if (!launch.binary.empty()) return launch.binary;
  // PRIVSEARCH_PROVIDER_BIN overrides the location (tests run from another directory).
  const char* env = std::getenv("PRIVSEARCH_PROVIDER_BIN");
  if (env != nullptr && *env != '\0') return env;
  return provider_beside_this_executable();
}

std::string first_word(const std::filesystem::path& file) {
  std::string w;
  std::ifstream(file) >> w;
  return w;
}

}  // namespace

namespace {

// A failed start with the provider's own words: the last lines of its log (where it says why:
// a missing index, a busy port), so a caller does not have to find the file.
Status with_log_tail(const Status& failed, const std::filesystem::path& log_file) {
  if (log_file.empty()) return failed;
  std::ifstream in(log_file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return failed;
  std::string tail;
  for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) {
    tail += "\n  " + lines[i].substr(0, 400);
  }
  return Status(failed.code(),
                failed.message() + "; its log (" + log_file.string() + ") ends:" + tail);
}

}  // namespace

std::filesystem::path provider_beside_this_executable() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : self.parent_path()) / "privsearch-provider";
}

Result<SharedCertificate> write_shared_certificate(const std::filesystem::path& dir, int days) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto identity, net::make_self_signed("localhost", days));
  SharedCertificate out{dir / "cert.pem", dir / "key.pem"};
  PRIVSEARCH_RETURN_IF_ERROR(
      index::write_bytes_atomically(out.cert_file, byte_view(identity.certificate_pem())));
  PRIVSEARCH_RETURN_IF_ERROR(
      index::write_bytes_atomically(out.key_file, byte_view(identity.private_key_pem())));
  std::filesystem::permissions(
      out.key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot restrict " + out.key_file.string());
  return out;
}

Result<std::unique_ptr<SpawnedProvider>> SpawnedProvider::start(const ProviderLaunch& launch) {
  const auto bin = provider_binary(launch);
  std::error_code ec;
  std::filesystem::create_directories(launch.work_dir, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot create " + launch.work_dir.string());
  const auto port_file = launch.work_dir / "provider.port";
  const auto fp_file = launch.work_dir / "provider.fingerprint";
  std::filesystem::remove(port_file, ec);
  std::filesystem::remove(fp_file, ec);
  std::vector<std::string> args = {
      bin.string(),  "--index",          launch.index_dir.string(), "--listen",      launch.listen,
      "--port-file", port_file.string(), "--fingerprint-file",      fp_file.string()};
  if (launch.cert_file.empty()) {
    args.emplace_back("--self-signed");
  } else {
    args.insert(args.end(),
                {"--cert", launch.cert_file.string(), "--key", launch.key_file.string()});
  }
  if (launch.quiet) args.emplace_back("--quiet");
  // Budgets in the work directory (one journal per provider: the default one is locked by the
  // first provider on the machine); a launch may choose its own.
  if (std::find(launch.extra_args.begin(), launch.extra_args.end(), "--state") ==
      launch.extra_args.end()) {
    args.emplace_back("--state");
    args.emplace_back("file:" + (launch.work_dir / "provider-budgets.journal").string());
  }
  args.insert(args.end(), launch.extra_args.begin(), launch.extra_args.end());
  for (const auto& balancer : launch.trust_proxy_from) {
    args.insert(args.end(), {"--front-trust-proxy-from", balancer});
  }
  std::unique_ptr<SpawnedProvider> p(new SpawnedProvider());
  p->pid_ = server::spawn_child(args, launch.quiet, launch.log_file.string());
  if (p->pid_ < 0) return Status(StatusCode::kInternal, "fork failed");
  // The provider writes each file atomically once it listens.
  const Status started = server::wait_until_ready(
      p->pid_,
      [&] { return std::filesystem::exists(port_file) && std::filesystem::exists(fp_file); },
      std::chrono::duration_cast<std::chrono::milliseconds>(launch.start_timeout),
      "the provider process (" + bin.string() + ")");
  if (!started.ok()) return with_log_tail(started, launch.log_file);
  const auto port = first_word(port_file);
  p->fingerprint_ = first_word(fp_file);
  const long port_value = port.empty() ? 0 : std::strtol(port.c_str(), nullptr, 10);
  if (port_value <= 0 || port_value > 65535 || p->fingerprint_.empty()) {
    return Status(StatusCode::kUnavailable, "the provider wrote no usable port or fingerprint");
  }
  p->port_ = static_cast<std::uint16_t>(port_value);
  return p;
}

SpawnedProvider::~SpawnedProvider() { stop(); }

client::ConnectOptions SpawnedProvider::connect_options() const {
  client::ConnectOptions co;
  co.port = port_;
  co.pinned_fingerprint = fingerprint_;
  return co;
}

bool SpawnedProvider::signal(int sig) const { return pid_ > 0 && ::kill(pid_, sig) == 0; }

int SpawnedProvider::stop() { return server::stop_child(pid_); }

Result<CollectionIndex> index_collection(const std::filesystem::path& dataset_dir,
                                         const std::filesystem::path& work_dir, std::size_t dim,
                                         std::uint64_t seed) {
  index::BuildOptions b;
  b.collection = dataset_dir;
  b.out = work_dir / dataset_dir.filename() / "index";
  b.dim = dim;
  b.seed = seed;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto manifest, index::build_index(b, nullptr));
  return CollectionIndex{b.out, std::move(manifest)};
}

Result<std::unique_ptr<client::SearchClient>> connect_search_client(
    const std::filesystem::path& index_dir, const SpawnedProvider& provider) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto transport,
                              client::ProviderClient::connect(provider.connect_options()));
  return client::SearchClient::open(index_dir, std::move(transport));
}

}  // namespace privsearch::tools
