#include "suites/bench_abuse.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "client/search_client.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/manifest.h"
#include "protocol/identities.h"
#include "suites/bench_abuse_browser.h"
#include "suites/bench_abuse_classes.h"
#include "version/index_version.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

double mb(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// RSS before, at the peak while sampling, and after, of one process (0 when pid < 0).
struct RssTrack {
  int pid = -1;
  std::uint64_t before = 0;
  std::atomic<std::uint64_t> peak{0};
  void begin(int p) {
    pid = p;
    before = p > 0 ? process_rss_bytes(p) : 0;
    peak = before;
  }
  void sample() {
    if (pid <= 0) return;
    const auto rss = process_rss_bytes(pid);
    if (rss > peak) peak = rss;
  }
  std::uint64_t now() const { return pid > 0 ? process_rss_bytes(pid) : 0; }
};

// The fixture of one class: a provider with two identities, alice's search client.
class AbuseRun {
 public:
  static Result<std::unique_ptr<AbuseRun>> start(const AbuseBenchOptions& o,
                                                 const std::string& name) {
    std::unique_ptr<AbuseRun> r(new AbuseRun(o));
    const auto work = o.index.parent_path() / ("bench-abuse-" + name);
    std::filesystem::remove_all(work);
    std::filesystem::create_directories(work);
    r->alice_ = protocol::new_token();
    r->mallory_ = protocol::new_token();
    std::ofstream(work / "tokens") << protocol::token_line("alice", r->alice_) << "\n"
                                   << protocol::token_line("mallory", r->mallory_) << "\n";
    // The default limits, except K = 1024 (the overload class) and a key budget that the
    // overload class does not exhaust within the run.
    std::vector<std::string> args{"--max-candidates", "1024",    "--scores-per-key",
                                  "1000000000",       "--front", o.front};
    if (!abuse::anonymous_class(name)) {
      args.insert(args.end(), {"--auth-tokens", (work / "tokens").string()});
    }
    for (auto& a : abuse::provider_args(name)) args.push_back(std::move(a));
    if (abuse::is_browser_class(name)) {
      args.insert(args.end(), {"--web-port-file", (work / "web.port").string()});
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(r->provider_, SpawnedProvider::start({o.index, work, args}));
    if (abuse::is_browser_class(name)) {
      std::ifstream port_file(work / "web.port");
      port_file >> r->web_port_;
      if (r->web_port_ == 0) return internal_error("bench abuse: no browser endpoint port");
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto v,
                                version::IndexVersion::open(o.index, version::tool_spec()));
    r->manifest_ = v.manifest();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto transport, r->connect(r->alice_));
    PRIVSEARCH_ASSIGN_OR_RETURN(r->search_,
                                client::SearchClient::open(o.index, std::move(transport)));
    return r;
  }

  Result<std::unique_ptr<client::ProviderClient>> connect(const std::string& token) const {
    auto co = provider_->connect_options();
    co.bearer_token = token;
    return client::ProviderClient::connect(co);
  }
  const std::string& mallory() const { return mallory_; }
  const std::string& alice() const { return alice_; }
  const SpawnedProvider& provider() const { return *provider_; }
  const index::Manifest& manifest() const { return manifest_; }

  // One legitimate search (keys uploaded on first use); its latency, or the failure.
  Result<double> legit_search() {
    const auto q = random_unit_vector(manifest_.input_dim, prng_);
    const std::vector<float> raw(q.begin(), q.end());
    const auto t0 = Clock::now();
    PRIVSEARCH_RETURN_IF_ERROR(
        search_->search(client::Query::vector(raw), client::SearchOptions{}).status());
    return ms_since(t0);
  }

  abuse::Target target() {
    abuse::Target t;
    t.connect = [this](const std::string& token) { return connect(token); };
    t.mallory = mallory_;
    t.alice = alice_;
    t.port = provider_->port();
    t.web_port = web_port_;
    t.largest_public_file = largest_public_file();
    t.version = manifest_.version_id;
    t.legit_search = [this] { (void)legit_search(); };
    return t;
  }

  Result<AbuseClassResult> measure(abuse::AbuseClass& attack) {
    AbuseClassResult out;
    PRIVSEARCH_RETURN_IF_ERROR(legit_search().status());  // keys uploaded, caches warm
    for (std::size_t i = 0; i < o_.idle_searches; ++i) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const double ms, legit_search());
      out.idle_ms.push_back(ms);
    }
    RssTrack provider, front;
    provider.begin(provider_->pid());
    front.begin(first_child_pid(provider_->pid()));
    std::atomic<bool> sampling{true};
    std::thread sampler([&] {
      while (sampling) {
        provider.sample();
        front.sample();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    Status started = attack.start();
    const auto until =
        Clock::now() + std::chrono::milliseconds(static_cast<long>(o_.abuse_s * 1000));
    while (started.ok() && Clock::now() < until) {
      auto ms = legit_search();
      if (ms.ok()) {
        out.during_ms.push_back(*ms);
      } else if (out.legit_failures++ == 0) {
        out.first_failure = ms.status().to_string();
      }
    }
    if (started.ok()) attack.stop();
    sampling = false;
    sampler.join();
    PRIVSEARCH_RETURN_IF_ERROR(started);
    out.rss_before_mb = mb(provider.before);
    out.rss_peak_mb = mb(provider.peak);
    out.front_rss_mb = {mb(front.before), mb(front.peak), 0};
    wait_for_memory_back(provider, out);
    out.front_rss_mb[2] = mb(front.now());
    out.abuse = attack.report();
    return out;
  }

 private:
  explicit AbuseRun(const AbuseBenchOptions& o) : o_(o), prng_(Prng::create()) {}
  // Up to 60 s after the attack, until the RSS is within 16 MB of before (the provider trims
  // its heap every 10 s): the RSS then, and how long it took.
  static void wait_for_memory_back(const RssTrack& provider, AbuseClassResult& out) {
    const auto t0 = Clock::now();
    std::uint64_t rss = provider.now();
    while (rss > provider.before + (std::uint64_t{16} << 20) &&
           Clock::now() - t0 < std::chrono::seconds(60)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      rss = provider.now();
    }
    out.rss_after_60s_mb = mb(rss);
    out.seconds_to_return = ms_since(t0) / 1000;
  }

  // The largest of the files every browser may read (projection, PQ codes, encoder).
  std::string largest_public_file() const {
    std::string best = "manifest.json";
    std::uintmax_t size = 0;
    for (const auto& a : manifest_.artifacts) {
      if (a.name != "projection" && a.name != "pq" && a.name != "encoder") continue;
      std::error_code ec;
      const auto n = std::filesystem::file_size(o_.index / a.file, ec);
      if (!ec && n > size) {
        size = n;
        best = a.file;
      }
    }
    return best;
  }

  const AbuseBenchOptions& o_;
  std::uint16_t web_port_ = 0;
  std::string alice_, mallory_;
  std::unique_ptr<SpawnedProvider> provider_;
  index::Manifest manifest_;
  std::unique_ptr<client::SearchClient> search_;
  Prng prng_;
};

}  // namespace

Result<AbuseBenchResult> run_abuse_bench(const AbuseBenchOptions& o) {
  if (!std::filesystem::exists(o.index / "manifest.json")) {
    return not_found_error("bench abuse: no index at `" + o.index.string() +
                           "` (run `make demo` first or pass --index DIR)");
  }
  AbuseBenchResult out;
  out.machine = machine_description();
  out.index = o.index.string();
  out.front = o.front;
  const Progress progress("bench abuse: ");
  const auto& names = o.classes.empty() ? abuse::class_names() : o.classes;
  for (const auto& name : names) {
    progress(fmt::format("{}: provider on {} (front {})", name, o.index.string(), o.front));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto run, AbuseRun::start(o, name));
    const abuse::Target target = run->target();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto attack, abuse::make_class(name, target));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto result, run->measure(*attack));
    progress(fmt::format("{}: rss {:.0f} -> {:.0f} -> {:.0f} MB, {} legit searches, {} failures",
                         name, result.rss_before_mb, result.rss_peak_mb, result.rss_after_60s_mb,
                         result.during_ms.size(), result.legit_failures));
    out.classes[name] = std::move(result);
  }
  return out;
}

nlohmann::json AbuseBenchResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "abuse";
  out["machine"] = machine;
  out["index"] = index;
  out["transport"] = front == "haproxy"
                         ? "TLS 1.3 to the provider's HTTP/2 front (haproxy), gRPC to the provider "
                           "on its unix socket; 127.0.0.1, default limits"
                         : "gRPC over TLS 1.3 straight to the provider (--front none), 127.0.0.1, "
                           "default limits";
  out["front"] = front;
  for (const auto& [name, r] : classes) {
    const auto idle = eval::describe(r.idle_ms), during = eval::describe(r.during_ms);
    nlohmann::json c;
    c["provider_rss_mb"] = {{"before", r.rss_before_mb},
                            {"peak", r.rss_peak_mb},
                            {"after_60s", r.rss_after_60s_mb},
                            {"seconds_to_return", r.seconds_to_return}};
    if (r.front_rss_mb[0] > 0) {
      c["front_rss_mb"] = {
          {"before", r.front_rss_mb[0]}, {"peak", r.front_rss_mb[1]}, {"after", r.front_rss_mb[2]}};
    }
    c["legit_search_ms"] = {{"median", during.median}, {"p95", during.p95}};
    c["legit_idle_search_ms"] = {{"median", idle.median}, {"p95", idle.p95}};
    c["legit_p50_ratio_to_idle"] = idle.median > 0 ? during.median / idle.median : 0.0;
    c["legit_searches"] = r.during_ms.size();
    c["legit_failures"] = r.legit_failures;
    if (!r.first_failure.empty()) c["first_failure"] = r.first_failure;
    c["abuse"] = r.abuse;
    out["classes"][name] = c;
  }
  return out;
}

}  // namespace privsearch::tools
