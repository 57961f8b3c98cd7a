#include "provider_process.h"

#include "index/build.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace privsearch::tools {

ProviderProcess::~ProviderProcess() {
  if (pid > 0) {
    ::kill(pid, SIGTERM);
    int st = 0;
    ::waitpid(pid, &st, 0);
  }
}

Status start_provider_process(const std::filesystem::path& index_dir,
                              const std::filesystem::path& work_dir,
                              const std::vector<std::string>& extra_args, ProviderProcess& p) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  // PRIVSEARCH_PROVIDER_BIN overrides the location (tests run from another directory).
  const char* env = std::getenv("PRIVSEARCH_PROVIDER_BIN");
  const auto bin = env != nullptr && *env != '\0'
                       ? std::filesystem::path(env)
                       : (ec ? std::filesystem::path(".") : self.parent_path()) / "privsearch-provider";
  std::filesystem::create_directories(work_dir);
  const auto port_file = work_dir / "provider.port";
  const auto fp_file = work_dir / "provider.fingerprint";
  std::filesystem::remove(port_file);
  std::filesystem::remove(fp_file);
  std::vector<std::string> args = {bin.string(), "--index", index_dir.string(), "--listen",
                                   "127.0.0.1:0", "--self-signed", "--port-file",
                                   port_file.string(), "--fingerprint-file", fp_file.string(),
                                   "--quiet"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  p.pid = ::fork();
  if (p.pid < 0) return Status(StatusCode::kInternal, "fork failed");
  if (p.pid == 0) {
    // The provider's "listening on" line must not mix into this command's JSON on stdout.
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!std::filesystem::exists(port_file) || !std::filesystem::exists(fp_file)) {
    int st = 0;
    if (::waitpid(p.pid, &st, WNOHANG) == p.pid) {
      p.pid = -1;
      return Status(StatusCode::kUnavailable, "the provider process exited at start-up");
    }
    if (std::chrono::steady_clock::now() > until) {
      return Status(StatusCode::kUnavailable, "the provider did not start");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream(port_file) >> p.port;
  std::ifstream(fp_file) >> p.fingerprint;
  return Status();
}

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
    const std::filesystem::path& index_dir, const ProviderProcess& p) {
  client::ConnectOptions co;
  co.port = p.port;
  co.pinned_fingerprint = p.fingerprint;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto transport, client::ProviderClient::connect(co));
  return client::SearchClient::open(index_dir, std::move(transport));
}

}  // namespace privsearch::tools
