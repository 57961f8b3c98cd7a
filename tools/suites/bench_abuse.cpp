#include "suites/bench_abuse.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/rerank_session.h"
#include "client/search_client.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "harness/stalled_streams.h"
#include "index/manifest.h"
#include "pir/zippir/zippir_client.h"
#include "protocol/identities.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

double mb(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// One abuse class against one provider: the attack runs on its own threads between start() and
// stop(); `report` says what it did.
struct Attack {
  std::function<Status()> start;
  std::function<void()> stop;
  std::function<nlohmann::json()> report;
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
    PRIVSEARCH_ASSIGN_OR_RETURN(
        r->provider_,
        SpawnedProvider::start({o.index, work,
                                {"--auth-tokens", (work / "tokens").string(), "--max-candidates",
                                 "1024", "--scores-per-key", "1000000000"}}));
    PRIVSEARCH_ASSIGN_OR_RETURN(r->manifest_, index::load_manifest(o.index, false));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto transport, r->connect(r->alice_));
    PRIVSEARCH_ASSIGN_OR_RETURN(r->search_, client::SearchClient::open(o.index, std::move(transport)));
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
    PRIVSEARCH_RETURN_IF_ERROR(search_->search_vector(raw, client::SearchOptions{}).status());
    return ms_since(t0);
  }

  Result<AbuseClassResult> measure(Attack attack) {
    AbuseClassResult out;
    PRIVSEARCH_RETURN_IF_ERROR(legit_search().status());  // keys uploaded, caches warm
    for (std::size_t i = 0; i < o_.idle_searches; ++i) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const double ms, legit_search());
      out.idle_ms.push_back(ms);
    }
    const int pid = provider_->pid();
    out.rss_before_mb = mb(process_rss_bytes(pid));
    std::atomic<bool> sampling{true};
    std::atomic<std::uint64_t> peak{process_rss_bytes(pid)};
    std::thread sampler([&] {
      while (sampling) {
        const auto rss = process_rss_bytes(pid);
        if (rss > peak) peak = rss;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    Status started = attack.start();
    const auto until = Clock::now() + std::chrono::milliseconds(static_cast<long>(o_.abuse_s * 1000));
    while (started.ok() && Clock::now() < until) {
      auto ms = legit_search();
      if (ms.ok()) {
        out.during_ms.push_back(*ms);
      } else {
        if (out.legit_failures++ == 0) out.first_failure = ms.status().to_string();
      }
    }
    attack.stop();
    std::this_thread::sleep_for(std::chrono::seconds(2));  // let the provider release memory
    sampling = false;
    sampler.join();
    PRIVSEARCH_RETURN_IF_ERROR(started);
    out.rss_peak_mb = mb(peak);
    out.rss_after_mb = mb(process_rss_bytes(pid));
    out.abuse = attack.report();
    return out;
  }

 private:
  explicit AbuseRun(const AbuseBenchOptions& o) : o_(o), prng_(Prng::create()) {}
  const AbuseBenchOptions& o_;
  std::string alice_, mallory_;
  std::unique_ptr<SpawnedProvider> provider_;
  index::Manifest manifest_;
  std::unique_ptr<client::SearchClient> search_;
  Prng prng_;
};

// Threads that repeat `step` until stopped; `step` returns false to count a refusal.
struct Loop {
  std::atomic<bool> running{false};
  std::atomic<std::uint64_t> done{0}, refused{0};
  std::vector<std::thread> threads;
  void start(int n, std::function<bool()> step) {
    running = true;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([this, step] {
        while (running) (step() ? done : refused)++;
      });
    }
  }
  void stop() {
    running = false;
    for (auto& t : threads) t.join();
    threads.clear();
  }
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
  const Progress progress("bench abuse: ");
  for (const auto& name : o.classes) {
    progress(fmt::format("{}: provider on {}", name, o.index.string()));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto run, AbuseRun::start(o, name));
    Loop loop;
    nlohmann::json extra = nlohmann::json::object();
    Attack attack;
    std::unique_ptr<StalledStreams> streams;
    std::vector<v1::UploadKeysRequest> key_sets;
    std::unique_ptr<client::ProviderClient> mallory;
    PRIVSEARCH_ASSIGN_OR_RETURN(mallory, run->connect(run->mallory()));
    std::vector<v1::RerankRequest> heavy;
    std::optional<client::RerankSession> session;
    std::string setup_template;
    std::thread fetch;            // pir_setups: alice's fetch during the flood
    nlohmann::json fetch_report;
    if (name == "stalled_streams") {
      attack.start = [&] {
        StalledStreamsSpec spec;
        spec.port = run->provider().port();
        PRIVSEARCH_ASSIGN_OR_RETURN(streams, StalledStreams::start(spec));
        return Status();
      };
      attack.stop = [&] {
        extra = {{"connections", streams->connections()},
                 {"body_mb_sent", mb(streams->body_bytes_sent())},
                 {"connections_closed_by_provider", streams->connections_closed()},
                 {"streams_reset_by_provider", streams->streams_reset()}};
        streams.reset();
      };
    } else if (name == "key_sets") {
      progress("key_sets: generating 24 distinct K = 100 key sets");
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto info, mallory->server_info());
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(info.params_name()));
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
      for (int i = 0; i < 24; ++i) {
        PRIVSEARCH_ASSIGN_OR_RETURN(auto s,
                                    client::RerankSession::create(params, info.dim(), Prng::create()));
        PRIVSEARCH_ASSIGN_OR_RETURN(auto up, s.make_key_upload(100, false));
        key_sets.push_back(std::move(up));
      }
      std::atomic<std::size_t> next{0};
      attack.start = [&] {
        loop.start(2, [&] {
          const auto& up = key_sets[next++ % key_sets.size()];
          auto r = mallory->upload_keys(up);
          return r.ok() && !r->has_error();
        });
        return Status();
      };
      attack.stop = [&] {
        loop.stop();
        extra = {{"uploads_accepted", loop.done.load()}, {"uploads_refused", loop.refused.load()},
                 {"distinct_key_sets", key_sets.size()}};
      };
    } else if (name == "pir_setups") {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto pinfo, mallory->pir_info());
      if (pinfo.has_error()) return Status(StatusCode::kFailedPrecondition, "bench abuse: the index serves no PIR");
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto pub,
                                  pir::ZipPirPublicInfo::deserialize(byte_view(pinfo.info())));
      progress("pir_setups: one real Paillier key as the forgeries' template");
      Prng prng = Prng::create();
      PRIVSEARCH_ASSIGN_OR_RETURN(auto real, pir::ZipPirClient::create(pub, prng));
      setup_template = to_byte_string(real.setup_message());
      const std::size_t nbytes = static_cast<std::size_t>(pub.params.paillier_bits) / 8;
      const std::string version = run->manifest().version_id;
      attack.start = [&, nbytes, version] {
        loop.start(1, [&, nbytes, version] {
          // A random odd modulus of the right size in place of the real one.
          thread_local Prng p = Prng::create();
          std::string forged = setup_template;
          const std::size_t at = forged.size() - pir::kZipPirSeedBytes - nbytes;
          std::vector<std::uint8_t> n(nbytes);
          p.fill(n);
          n[0] |= 0x80;
          n[nbytes - 1] |= 1;
          std::copy(n.begin(), n.end(), forged.begin() + static_cast<std::ptrdiff_t>(at));
          v1::PirSetupRequest req;
          req.set_artifact_version(version);
          req.set_setup(forged);
          auto r = mallory->pir_setup(req);
          return r.ok() && !r->has_error();
        });
        // Alice's first private fetch while the flood goes on: setup, first hint, answer.
        fetch = std::thread([&, version] {
          auto transport = run->connect(run->alice());
          if (!transport.ok()) return;
          const auto t0 = Clock::now();
          auto fetcher = client::PayloadFetcher::create(**transport, version, {});
          client::FetchTiming ft;
          auto text = fetcher.ok() ? (*fetcher)->fetch(1, &ft)
                                   : Result<std::string>(fetcher.status());
          const auto info = (*transport)->pir_info();
          fetch_report = {{"ok", text.ok()},
                          {"first_fetch_ms", ms_since(t0)},
                          {"hint_wait_ms", ft.wait_ms},
                          {"offline_s_per_hint", info.ok() ? info->offline_s_per_query() : 0.0}};
          if (!text.ok()) fetch_report["error"] = text.status().to_string();
        });
        return Status();
      };
      attack.stop = [&] {
        fetch.join();  // the fetch may outlast the searches: the flood goes on until it is done
        loop.stop();
        extra = {{"setups_accepted", loop.done.load()},
                 {"setups_refused", loop.refused.load()},
                 {"legit_fetch_during_flood", fetch_report}};
      };
    } else if (name == "overload") {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto info, mallory->server_info());
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(info.params_name()));
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto s, client::RerankSession::create(params, info.dim(), Prng::create()));
      session.emplace(std::move(s));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto up_req, session->make_key_upload(1024, false));
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, mallory->upload_keys(up_req));
      if (up.has_error()) return client::provider_refusal("the attacker's keys", up.error());
      session->set_key_id(1024, up.key_id());
      Prng prng = Prng::create();
      for (int i = 0; i < 4; ++i) {
        std::vector<std::uint64_t> ids(1024);
        for (std::size_t j = 0; j < ids.size(); ++j) ids[j] = (j * 7919 + static_cast<std::size_t>(i)) % info.documents();
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        if (ids.size() != 1024) return invalid_argument_error("bench abuse: the index is too small for K = 1024");
        const auto z = random_unit_vector(info.dim(), prng);
        PRIVSEARCH_ASSIGN_OR_RETURN(auto pending,
                                    session->build_request({z, ids, info.artifact_version()}));
        heavy.push_back(std::move(pending.request));
      }
      std::atomic<std::size_t> next{0};
      attack.start = [&] {
        loop.start(24, [&] {
          auto r = mallory->rerank(heavy[next++ % heavy.size()]);
          return r.ok() && !r->has_error();
        });
        return Status();
      };
      attack.stop = [&] {
        loop.stop();
        extra = {{"threads", 24}, {"k", 1024}, {"reranks_served", loop.done.load()},
                 {"reranks_refused", loop.refused.load()}};
      };
    } else {
      return invalid_argument_error("bench abuse: unknown class `" + name + "`");
    }
    attack.report = [&] { return extra; };
    PRIVSEARCH_ASSIGN_OR_RETURN(auto result, run->measure(attack));
    progress(fmt::format("{}: rss {:.0f} -> {:.0f} -> {:.0f} MB, {} legit searches, {} failures",
                         name, result.rss_before_mb, result.rss_peak_mb, result.rss_after_mb,
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
  out["transport"] = "gRPC over TLS 1.3, 127.0.0.1, provider in its own process, default limits";
  for (const auto& [name, r] : classes) {
    const auto idle = eval::describe(r.idle_ms), during = eval::describe(r.during_ms);
    nlohmann::json c;
    c["provider_rss_mb"] = {{"before", r.rss_before_mb}, {"peak", r.rss_peak_mb},
                            {"after", r.rss_after_mb}};
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
