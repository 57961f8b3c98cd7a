#include "suites/bench_abuse_classes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/rerank_session.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "harness/h2_attacks.h"
#include "harness/random_vectors.h"
#include "harness/stalled_streams.h"
#include "pir/paillier/paillier.h"
#include "pir/zippir/zippir_client.h"
#include "suites/bench_abuse_browser.h"

namespace privsearch::tools::abuse {
namespace {

using Clock = std::chrono::steady_clock;

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

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

// The CKKS parameters the provider serves.
Result<ckks::Params> served_params(client::ProviderClient& cl, v1::ServerInfo* info) {
  PRIVSEARCH_ASSIGN_OR_RETURN(*info, cl.server_info());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(info->params_name()));
  return ckks::Params::create(lit);
}

// 20 connections x 10 HTTP/2 streams announcing 8 MB messages, never finished.
class StalledStreamsClass : public AbuseClass {
 public:
  explicit StalledStreamsClass(const Target& t) : t_(t) {}
  Status start() override {
    StalledStreamsSpec spec;
    spec.port = t_.port;
    PRIVSEARCH_ASSIGN_OR_RETURN(streams_, StalledStreams::start(spec));
    return Status();
  }
  void stop() override {
    report_ = {{"connections", streams_->connections()},
               {"body_mb_sent", mib(streams_->body_bytes_sent())},
               {"connections_closed_by_provider", streams_->connections_closed()},
               {"streams_reset_by_provider", streams_->streams_reset()}};
    streams_.reset();
  }
  nlohmann::json report() const override { return report_; }

 private:
  const Target& t_;
  std::unique_ptr<StalledStreams> streams_;
  nlohmann::json report_;
};

// Distinct K = 100 key sets uploaded back to back from 2 threads.
class KeySetsClass : public AbuseClass {
 public:
  static Result<std::unique_ptr<AbuseClass>> make(const Target& t) {
    std::unique_ptr<KeySetsClass> c(new KeySetsClass());
    PRIVSEARCH_ASSIGN_OR_RETURN(c->mallory_, t.connect(t.mallory));
    v1::ServerInfo info;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, served_params(*c->mallory_, &info));
    for (int i = 0; i < 24; ++i) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          auto s, client::RerankSession::create(params, info.dim(), Prng::create()));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto up, s.make_key_upload(100, false));
      c->key_sets_.push_back(std::move(up));
    }
    return std::unique_ptr<AbuseClass>(std::move(c));
  }
  Status start() override {
    loop_.start(2, [this] {
      auto r = mallory_->upload_keys(key_sets_[next_++ % key_sets_.size()]);
      return r.ok() && !r->has_error();
    });
    return Status();
  }
  void stop() override { loop_.stop(); }
  nlohmann::json report() const override {
    return {{"uploads_accepted", loop_.done.load()},
            {"uploads_refused", loop_.refused.load()},
            {"distinct_key_sets", key_sets_.size()}};
  }

 private:
  KeySetsClass() = default;
  std::unique_ptr<client::ProviderClient> mallory_;
  std::vector<v1::UploadKeysRequest> key_sets_;
  std::atomic<std::size_t> next_{0};
  Loop loop_;
};

// 24 threads of K = 1024 reranks under one key set.
class OverloadClass : public AbuseClass {
 public:
  static Result<std::unique_ptr<AbuseClass>> make(const Target& t) {
    std::unique_ptr<OverloadClass> c(new OverloadClass());
    PRIVSEARCH_ASSIGN_OR_RETURN(c->mallory_, t.connect(t.mallory));
    v1::ServerInfo info;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, served_params(*c->mallory_, &info));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto session,
                                client::RerankSession::create(params, info.dim(), Prng::create()));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto up_req, session.make_key_upload(1024, false));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, c->mallory_->upload_keys(up_req));
    if (up.has_error()) return client::provider_refusal("the attacker's keys", up.error());
    session.set_key_id(1024, up.key_id());
    Prng prng = Prng::create();
    for (std::size_t i = 0; i < 4; ++i) {
      std::vector<std::uint64_t> ids(1024);
      for (std::size_t j = 0; j < ids.size(); ++j) ids[j] = (j * 7919 + i) % info.documents();
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      if (ids.size() != 1024) {
        return invalid_argument_error("bench abuse: the index is too small for K = 1024");
      }
      const auto z = random_unit_vector(info.dim(), prng);
      PRIVSEARCH_ASSIGN_OR_RETURN(auto pending,
                                  session.build_request({z, ids, info.artifact_version()}));
      c->heavy_.push_back(std::move(pending.request));
    }
    return std::unique_ptr<AbuseClass>(std::move(c));
  }
  Status start() override {
    loop_.start(24, [this] {
      auto r = mallory_->rerank(heavy_[next_++ % heavy_.size()]);
      return r.ok() && !r->has_error();
    });
    return Status();
  }
  void stop() override { loop_.stop(); }
  nlohmann::json report() const override {
    return {{"threads", 24},
            {"k", 1024},
            {"reranks_served", loop_.done.load()},
            {"reranks_refused", loop_.refused.load()}};
  }

 private:
  OverloadClass() = default;
  std::unique_ptr<client::ProviderClient> mallory_;
  std::vector<v1::RerankRequest> heavy_;
  std::atomic<std::size_t> next_{0};
  Loop loop_;
};

// ZipPIR setups with forged Paillier moduli as fast as answered, while the legitimate client
// makes its first private fetch (setup, first hint, answer).
class PirSetupsClass : public AbuseClass {
 public:
  static Result<std::unique_ptr<AbuseClass>> make(const Target& t) {
    std::unique_ptr<PirSetupsClass> c(new PirSetupsClass(t));
    PRIVSEARCH_ASSIGN_OR_RETURN(c->mallory_, t.connect(t.mallory));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto pinfo, c->mallory_->pir_info());
    if (pinfo.has_error() || pinfo.backend() != v1::PIR_BACKEND_ZIPPIR) {
      return Status(StatusCode::kFailedPrecondition,
                    "bench abuse pir_setups: the provider serves no ZipPIR");
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto pub,
                                pir::ZipPirPublicInfo::deserialize(byte_view(pinfo.info())));
    Prng prng = Prng::create();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto real, pir::ZipPirClient::create(pub, prng));
    c->template_ = to_byte_string(real.setup_message());
    c->modulus_bytes_ = static_cast<std::size_t>(pub.params.paillier_bits) / 8;
    v1::ServerInfo info;
    PRIVSEARCH_ASSIGN_OR_RETURN(info, c->mallory_->server_info());
    c->setups_per_minute_ = info.limits().pir_setups_per_minute();
    // The same fetch with no flood, under the legitimate searches that run during every attack
    // (they share the cores with the hint work): the baseline.
    std::atomic<bool> searching{true};
    std::thread load([&] {
      while (searching) t.legit_search();
    });
    c->idle_report_ = c->first_fetch();
    searching = false;
    load.join();
    return std::unique_ptr<AbuseClass>(std::move(c));
  }
  // Forgeries at the rate the provider allows one identity (its burst of 5 at once, then
  // pir_setups_per_minute), as the attacker: faster ones are refused RATE_LIMITED anyway
  // and would only burn the shared cores.
  Status start() override {
    started_ = Clock::now();
    loop_.start(1, [this] {
      pace();
      return loop_.running && forged_setup();
    });
    fetch_ = std::thread([this] { fetch_report_ = first_fetch(); });
    return Status();
  }
  void stop() override {
    fetch_.join();  // the fetch may outlast the searches: the flood goes on until it is done
    loop_.stop();
  }
  nlohmann::json report() const override {
    const double idle = idle_report_.value("first_fetch_ms", 0.0);
    const double during = fetch_report_.value("first_fetch_ms", 0.0);
    return {{"setups_accepted", loop_.done.load()},
            {"setups_refused", loop_.refused.load()},
            {"legit_fetch_idle", idle_report_},
            {"legit_fetch_during_flood", fetch_report_},
            {"first_fetch_ratio_to_idle", idle > 0 ? during / idle : 0.0}};
  }

 private:
  explicit PirSetupsClass(const Target& t) : t_(t) {}
  void pace() {
    constexpr std::uint64_t kBurst = 5;
    const std::uint64_t sent = loop_.done + loop_.refused;
    if (sent < kBurst || setups_per_minute_ <= 0) return;
    const auto due =
        started_ + std::chrono::milliseconds(static_cast<long>(
                       static_cast<double>(sent - kBurst + 1) * 60000.0 / setups_per_minute_));
    while (loop_.running && Clock::now() < due) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // A random odd modulus of the right size in place of the real one, drawn again until it passes
  // the provider's cheap checks (no prime factor below 4096, not a square: about 1 in 7.4 odd
  // numbers), so each forgery costs the provider a whole hint, as a real setup does.
  std::vector<std::uint8_t> forged_modulus() {
    std::vector<std::uint8_t> n(modulus_bytes_);
    for (int attempt = 0; attempt < 256; ++attempt) {
      prng_.fill(n);  // little-endian, as the setup message carries N
      n[0] |= 1;
      n[modulus_bytes_ - 1] |= 0x80;
      mpz_class value;
      mpz_import(value.get_mpz_t(), n.size(), -1, 1, 0, 0, n.data());
      if (pir::PaillierPublicKey::create(value, 1, /*allow_insecure=*/true).ok()) break;
    }
    return n;
  }
  bool forged_setup() {
    std::string forged = template_;
    const std::size_t at = forged.size() - pir::kZipPirSeedBytes - modulus_bytes_;
    const std::vector<std::uint8_t> n = forged_modulus();
    std::copy(n.begin(), n.end(), forged.begin() + static_cast<std::ptrdiff_t>(at));
    v1::PirSetupRequest req;
    req.set_artifact_version(t_.version);
    req.set_setup(forged);
    auto r = mallory_->pir_setup(req);
    return r.ok() && !r->has_error();
  }
  // A new client's first private fetch (its Paillier key, setup, first hint, answer).
  nlohmann::json first_fetch() const {
    auto transport = t_.connect(t_.alice);
    if (!transport.ok()) return {{"ok", false}, {"error", transport.status().to_string()}};
    const auto t0 = Clock::now();
    auto fetcher = client::PayloadFetcher::create(**transport, t_.version, {});
    client::FetchTiming ft;
    auto text = fetcher.ok() ? (*fetcher)->fetch(1, &ft) : Result<std::string>(fetcher.status());
    const auto info = (*transport)->pir_info();
    nlohmann::json report = {{"ok", text.ok()},
                             {"first_fetch_ms", ms_since(t0)},
                             {"hint_wait_ms", ft.wait_ms},
                             {"offline_s_per_hint", info.ok() ? info->offline_s_per_query() : 0.0}};
    if (!text.ok()) report["error"] = text.status().to_string();
    return report;
  }

  const Target& t_;
  std::unique_ptr<client::ProviderClient> mallory_;
  std::string template_;
  std::size_t modulus_bytes_ = 0;
  double setups_per_minute_ = 0;
  Clock::time_point started_;
  Prng prng_ = Prng::create();
  Loop loop_;
  std::thread fetch_;
  nlohmann::json idle_report_, fetch_report_;
};

// 4 connections with an initial window of 0, 32 GetServerInfo streams each, never read.
class UnreadAnswersClass : public AbuseClass {
 public:
  explicit UnreadAnswersClass(const Target& t) : t_(t) {}
  Status start() override {
    UnreadResponsesSpec spec;
    spec.port = t_.port;
    spec.source = "127.0.0.2";
    PRIVSEARCH_ASSIGN_OR_RETURN(attack_, UnreadResponses::start(spec));
    return Status();
  }
  void stop() override {
    report_ = {{"streams_opened", attack_->streams_opened()},
               {"connections_dropped", attack_->connections_dropped()}};
    attack_.reset();
  }
  nlohmann::json report() const override { return report_; }

 private:
  const Target& t_;
  std::unique_ptr<UnreadResponses> attack_;
  nlohmann::json report_;
};

// HEADERS + endless CONTINUATION frames of new 3 KB fields, 1.5 GB over reconnects.
class ContinuationFloodClass : public AbuseClass {
 public:
  explicit ContinuationFloodClass(const Target& t) : t_(t) {}
  Status start() override {
    ContinuationFloodSpec spec;
    spec.port = t_.port;
    spec.source = "127.0.0.3";
    spec.total_bytes = std::uint64_t{1536} << 20;
    PRIVSEARCH_ASSIGN_OR_RETURN(attack_, ContinuationFlood::start(spec));
    return Status();
  }
  void stop() override {
    report_ = {{"mb_sent", mib(attack_->bytes_sent())},
               {"connections", attack_->connections_made()},
               {"longest_block_mb", mib(attack_->longest_block())}};
    attack_.reset();
  }
  nlohmann::json report() const override { return report_; }

 private:
  const Target& t_;
  std::unique_ptr<ContinuationFlood> attack_;
  nlohmann::json report_;
};

// 1,100 idle TCP connections from 20 addresses plus 20,000 attempts from one more.
class ConnectionFloodClass : public AbuseClass {
 public:
  explicit ConnectionFloodClass(const Target& t) : t_(t) {}
  Status start() override {
    ConnectionFloodSpec spec;
    spec.port = t_.port;
    spec.attempts_from_one = 20000;
    PRIVSEARCH_ASSIGN_OR_RETURN(attack_, ConnectionFlood::start(spec));
    report_ = {{"connected", attack_->connected()}, {"held_open", attack_->still_open()}};
    return Status();
  }
  void stop() override {
    attack_->release();
    // A new client's first search after the flood: the accept loop still works.
    const auto t0 = Clock::now();
    Status served = Status(StatusCode::kUnavailable, "not tried");
    while (!served.ok() && Clock::now() - t0 < std::chrono::seconds(30)) {
      auto cl = t_.connect(t_.alice);
      served = cl.ok() ? (*cl)->server_info().status() : cl.status();
      if (!served.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    report_["new_connection_served_after_ms"] = served.ok() ? ms_since(t0) : -1.0;
    attack_.reset();
  }
  nlohmann::json report() const override { return report_; }

 private:
  const Target& t_;
  std::unique_ptr<ConnectionFlood> attack_;
  nlohmann::json report_;
};

}  // namespace

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names = {
      "stalled_streams", "key_sets",           "pir_setups",      "overload",
      "unread_answers",  "continuation_flood", "connection_flood"};
  static const std::vector<std::string> all = [] {
    auto out = names;
    for (const auto& b : browser_class_names()) out.push_back(b);
    return out;
  }();
  return all;
}

std::vector<std::string> provider_args(const std::string& name) {
  if (name == "pir_setups") return {"--pir-backend", "zippir"};
  if (is_browser_class(name)) return {"--web-listen", "127.0.0.1:0"};
  return {};
}

Result<std::unique_ptr<AbuseClass>> make_class(const std::string& name, const Target& t) {
  if (name == "stalled_streams") return std::unique_ptr<AbuseClass>(new StalledStreamsClass(t));
  if (name == "key_sets") return KeySetsClass::make(t);
  if (name == "pir_setups") return PirSetupsClass::make(t);
  if (name == "overload") return OverloadClass::make(t);
  if (name == "unread_answers") return std::unique_ptr<AbuseClass>(new UnreadAnswersClass(t));
  if (name == "continuation_flood") {
    return std::unique_ptr<AbuseClass>(new ContinuationFloodClass(t));
  }
  if (name == "connection_flood") return std::unique_ptr<AbuseClass>(new ConnectionFloodClass(t));
  if (is_browser_class(name)) return make_browser_class(name, t);
  return invalid_argument_error("bench abuse: unknown class `" + name + "`");
}

}  // namespace privsearch::tools::abuse
