#include "provider/provider_process.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "ckks/param_sets.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"
#include "protocol/ivf_list_pir.h"
#include "protocol/redis_connection.h"
#include "protocol/shared_key_store.h"
#include "scoring/layout.h"

namespace privsearch::provider {
namespace {

Status write_text(const std::filesystem::path& file, const std::string& text) {
  return index::write_bytes_atomically(file, byte_view(text));
}

}  // namespace

void log(const std::string& message) { fmt::print(stderr, "privsearch-provider: {}\n", message); }

ProviderProcess::ProviderProcess(ProviderSettings settings) : settings_(std::move(settings)) {}
ProviderProcess::~ProviderProcess() { stop_front(); }

Result<std::unique_ptr<ProviderProcess>> ProviderProcess::load(ProviderSettings settings) {
  std::unique_ptr<ProviderProcess> p(new ProviderProcess(std::move(settings)));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(p->settings_.preset));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto params, ckks::Params::create(lit));
  p->params_.emplace(std::move(params));
  PRIVSEARCH_RETURN_IF_ERROR(p->open_state());
  PRIVSEARCH_ASSIGN_OR_RETURN(auto loaded, p->load_core());
  p->core_ = std::move(loaded.core);
  p->version_ = std::move(loaded.version);
  p->manifest_ = p->version_->manifest();
  p->rows_ = std::move(loaded.rows);
  // The lists' database first: its refusals (no IVF index, shared state, a shard) come before
  // the payloads' preparation, which takes minutes at scale.
  PRIVSEARCH_RETURN_IF_ERROR(p->wire_pir_lists());
  PRIVSEARCH_RETURN_IF_ERROR(p->wire_pir());
  PRIVSEARCH_RETURN_IF_ERROR(p->make_identity());
  return p;
}

Result<std::string> default_state_location() {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path base;
  if (xdg != nullptr && *xdg != '\0') {
    base = xdg;
  } else if (home != nullptr && *home != '\0') {
    base = std::filesystem::path(home) / ".local" / "state";
  } else {
    return Status(StatusCode::kInvalidArgument,
                  "neither XDG_STATE_HOME nor HOME is set: choose where budgets live with "
                  "--state file:PATH (or --state memory)");
  }
  return "file:" + (base / "privsearch" / "provider-budgets.journal").string();
}

Status ProviderProcess::open_state() {
  auto& s = settings_;
  if (s.state.empty()) {
    PRIVSEARCH_ASSIGN_OR_RETURN(s.state, default_state_location());
  }
  auto ledger = protocol::open_ledger(s.state);
  if (!ledger.ok()) {
    return Status(ledger.status().code(), "--state: " + ledger.status().message());
  }
  log("request budgets kept in " + (*ledger)->where());
  state_ = protocol::ProviderCore::make_state(s.limits, std::move(ledger).value());
  if (protocol::is_redis_url(s.state)) {
    // Replicas sharing one Redis share uploaded key sets too (a key set uploaded through one
    // replica is served by every other).
    auto keys = protocol::open_redis_key_store(s.state);
    if (!keys.ok()) return Status(keys.status().code(), "--state: " + keys.status().message());
    state_->shared_keys = std::move(keys).value();
    log("uploaded key sets shared through " + state_->shared_keys->where());
  }
  if (!s.auth_tokens.empty()) {
    auto tokens = protocol::TokenRegistry::load(s.auth_tokens);
    if (!tokens.ok()) {
      return Status(tokens.status().code(), "--auth-tokens: " + tokens.status().message());
    }
    tokens_.emplace(std::move(tokens).value());
    log(fmt::format("bearer tokens required: {} identities", tokens_->size()));
  }
  return Status();
}

// Access-private scoring: the matrix (private) and, to check it against, the layout; null when
// the index has none.
Result<std::shared_ptr<const scoring::ScoringMatrix>> ProviderProcess::load_scoring_matrix(
    const version::IndexVersion& version) const {
  if (version.manifest().find(scoring::kMatrixArtifact) == nullptr) {
    return std::shared_ptr<const scoring::ScoringMatrix>();
  }
  log("loading the access-private scoring matrix");
  PRIVSEARCH_ASSIGN_OR_RETURN(auto matrix, version.scoring_matrix());
  return std::make_shared<const scoring::ScoringMatrix>(std::move(matrix));
}

// The IVF lists clients fetch (public), every generation's segments checked against the
// directory; null when the index has none.
Result<std::shared_ptr<const index::IvfListStore>> ProviderProcess::load_ivf_lists(
    const version::IndexVersion& version) const {
  if (version.manifest().find(index::kIvfListsArtifact) == nullptr) {
    return std::shared_ptr<const index::IvfListStore>();
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto ivf, version.ivf());
  // Every segment is checked against the directory once here; on a reload, those of the
  // version served that are unchanged keep their fingerprints (index/candidates/ivf.h).
  const index::IvfListStore* served = core_ ? core_->config().ivf_lists.get() : nullptr;
  const auto t_lists = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto list_store, index::IvfListStore::open(ivf.base_lists, std::move(ivf.ivf), served));
  for (std::uint32_t g = 1; g <= ivf.delta_lists.size(); ++g) {
    PRIVSEARCH_RETURN_IF_ERROR(list_store.open_generation(g, ivf.delta_lists[g - 1], served));
  }
  log(fmt::format("IVF list segments checked in {:.1f} s", seconds_since(t_lists)));
  return std::make_shared<const index::IvfListStore>(std::move(list_store));
}

Result<ProviderProcess::Loaded> ProviderProcess::load_core() const {
  const auto& s = settings_;
  log("verifying the index manifest in " + s.index_dir.string());
  // The first load re-hashes every artifact; a reload what is new and what it reads again
  // (version::OpenSpec::served).
  version::OpenSpec spec;
  spec.role = version::Role::kProvider;
  spec.served = core_ ? &manifest_ : nullptr;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto opened, version::IndexVersion::open(s.index_dir, spec));
  Loaded out;
  out.version = std::make_shared<const version::IndexVersion>(std::move(opened));
  const auto& manifest = out.version->manifest();
  const auto& deleted = out.version->deleted();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto rows,
                              index::ExactRows::open(s.index_dir, manifest, deleted, rows_.get()));
  out.rows = std::make_shared<const index::ExactRows>(std::move(rows));
  if (out.rows->segments() > 1 || !deleted.empty()) {
    log(fmt::format("{} row segments ({} reused), {} documents deleted", out.rows->segments(),
                    out.rows->reused_segments(), deleted.size()));
  }
  protocol::ProviderConfig config(*params_);
  config.params_name = s.preset;
  config.flood_security_bits = s.flood_bits;
  config.kernel_threads = std::clamp<std::size_t>(
      s.kernel_threads, 1, std::max(1u, std::thread::hardware_concurrency()));
  config.artifact_version = manifest.version_id;
  config.limits = s.limits;
  PRIVSEARCH_ASSIGN_OR_RETURN(config.scoring_matrix, load_scoring_matrix(*out.version));
  PRIVSEARCH_ASSIGN_OR_RETURN(config.ivf_lists, load_ivf_lists(*out.version));
  PRIVSEARCH_ASSIGN_OR_RETURN(out.core,
                              protocol::ProviderCore::create(std::move(config), out.rows, state_));
  return out;
}

Status ProviderProcess::wire_pir() {
  const auto* entry = manifest_.find(index::kPayloadsArtifact);
  if (settings_.no_pir || entry == nullptr) return Status();
  if (!settings_.pir_shards.empty()) {
    server::PirShardsConfig sc;
    sc.addresses = settings_.pir_shards;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto ca, index::read_file_bytes(settings_.pir_shard_ca));
    sc.ca_pem.assign(ca.begin(), ca.end());
    sc.setups = settings_.pir.setups;
    sc.allow_insecure = settings_.pir_test_params;
    PRIVSEARCH_ASSIGN_OR_RETURN(pir_coordinator_, server::PirCoordinator::create(std::move(sc)));
    log(fmt::format("private payload fetch through {} PIR shards ({} first)",
                    settings_.pir_shards.size(), settings_.pir_shards.front()));
    return Status();
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto payloads, version_->payloads());
  auto config = pir_config();
  config.matrix_salt = entry->sha256;  // shards' A: this index's own (PirConfig::matrix_salt)
  log(fmt::format("preparing private payload fetch ({}): {} records of {} bytes{}",
                  settings_.pir_backend, payloads.records(), payloads.record_bytes(),
                  config.shards > 1
                      ? fmt::format(", row shard {} of {}", config.shard, config.shards)
                      : std::string()));
  std::shared_ptr<protocol::PirSharedState> shared;
  if (!hintless() && protocol::is_redis_url(settings_.state)) {
    // ZipPIR registrations and hints shared with the other replicas, the client cap cluster-wide.
    // (Hintless needs nothing shared: every replica preprocesses the same records.)
    protocol::PirSharedLimits limits;
    limits.ready_per_client = config.ready_per_client;
    limits.max_clients = config.max_clients;
    limits.idle_expiry_s = config.idle_expiry_s;
    limits.evict_idle_after_s = config.evict_idle_after_s;
    auto opened = protocol::open_redis_pir_state(settings_.state, limits);
    if (!opened.ok()) {
      return Status(opened.status().code(), "--state: " + opened.status().message());
    }
    shared = std::move(opened).value();
    pir_shared_ = shared;
    log("PIR registrations and hints shared through " + shared->where());
  }
  const auto t0 = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(pir_, make_pir(protocol::PirRecords::of(payloads), config, shared));
  log(fmt::format("private payload fetch prepared in {:.1f} s ({})", ms_since(t0) / 1000,
                  pir_->last_build()));
  return Status();
}

Result<std::unique_ptr<protocol::PirBackend>> ProviderProcess::make_pir(
    const protocol::PirRecords& records, protocol::PirConfig config,
    std::shared_ptr<protocol::PirSharedState> shared) const {
  if (hintless()) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto s, protocol::HintlessPirService::create(
                                            records, manifest_.version_id, hintless_config()));
    return std::unique_ptr<protocol::PirBackend>(std::move(s));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto s, protocol::PirService::create(records, manifest_.version_id, config, shared));
  return std::unique_ptr<protocol::PirBackend>(std::move(s));
}

protocol::HintlessPirConfig ProviderProcess::hintless_config() const {
  auto config = settings_.hintless;
  config.shard = settings_.pir.shard;  // --pir-shard I/S: a block of output rows
  config.shards = settings_.pir.shards;
  if (settings_.pir_test_params) {
    config.params = "insecure-test-ypir-sp-d256";
    config.allow_insecure = true;
  }
  return config;
}

protocol::PirConfig ProviderProcess::pir_config() const {
  auto config = settings_.pir;
  if (settings_.pir_test_params) {
    config.lwe_params = "insecure-test-n64-binary";
    config.paillier_bits = 512;
    config.allow_insecure = true;
  }
  return config;
}

Status ProviderProcess::wire_pir_lists() {
  if (!settings_.pir_lists) return Status();
  const auto& lists = core_->config().ivf_lists;
  if (lists == nullptr) {
    return invalid_argument_error("--pir-lists: the index has no IVF lists (built without --ivf)");
  }
  if (settings_.pir.shards > 1 || (!hintless() && protocol::is_redis_url(settings_.state))) {
    return invalid_argument_error(
        "--pir-lists: the lists' PIR database is held by each process whole; it is not offered "
        "by a --pir-shard, nor with --state redis://... under --pir-backend zippir (shared "
        "registrations; the default hintless backend shares nothing and is)");
  }
  auto config = pir_config();
  config.ready_per_client = settings_.pir_lists_ready;
  config.shard = 0;
  config.shards = 1;
  const auto t0 = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto table, protocol::ivf_list_pir_table(*lists));
  log(
      fmt::format("preparing private IVF list fetch: {} lists as records of {} bytes (the "
                  "longest list rounded up to 4 KiB; {} MiB in all)",
                  table.records, table.record_bytes, table.bytes.size() >> 20));
  PRIVSEARCH_ASSIGN_OR_RETURN(pir_lists_, make_pir(table.view(), config, nullptr));
  log(fmt::format("private IVF list fetch prepared in {:.1f} s ({})", ms_since(t0) / 1000,
                  pir_lists_->last_build()));
  return Status();
}

Status ProviderProcess::make_identity() {
  if (settings_.self_signed) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto id, net::make_self_signed("localhost", 30));
    identity_.emplace(std::move(id));
  } else if (!settings_.cert_file.empty()) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto id,
                                net::load_identity(settings_.cert_file, settings_.key_file));
    identity_.emplace(std::move(id));
  }
  return Status();
}

Status ProviderProcess::start() {
  const auto& s = settings_;
  server::ServeOptions so;
  so.listen = s.listen;
  so.identity = identity_ ? &*identity_ : nullptr;
  so.insecure_loopback = s.insecure_loopback;
  so.threads = s.threads;
  so.pir = pir_coordinator_ ? static_cast<protocol::PirBackend*>(pir_coordinator_.get())
                            : static_cast<protocol::PirBackend*>(pir_.get());
  so.pir_lists = pir_lists_.get();
  so.pir_shared = pir_shared_;
  so.tokens = tokens_ ? &*tokens_ : nullptr;
  so.transport = s.transport;
  so.max_concurrent_per_client = s.max_concurrent_per_client;
  so.keep_versions = s.keep_versions;
  if (!s.quiet) {
    so.request_log = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  }
  if (fronted()) PRIVSEARCH_RETURN_IF_ERROR(prepare_front(so));
  PRIVSEARCH_ASSIGN_OR_RETURN(server_, server::ProviderServer::start(core_, so));
  int port = server_->port();
  // The browser endpoint first: behind the front, its socket must be there for haproxy.
  if (s.web_listen) PRIVSEARCH_RETURN_IF_ERROR(start_web());
  if (fronted()) {
    PRIVSEARCH_ASSIGN_OR_RETURN(port, start_front());
  }
  if (s.web_listen) PRIVSEARCH_RETURN_IF_ERROR(announce_web());
  return announce(port);
}

Status ProviderProcess::start_web() {
  auto web = settings_.web;
  web.identity = identity_ ? &*identity_ : nullptr;
  // What a client may download (what `privsearch client-files` copies), the payloads (the
  // documents themselves) only when the operator says so.
  std::vector<std::string> names{index::kProjectionArtifact, index::kPqArtifact,
                                 index::kEncoderArtifact,    index::kIvfArtifact,
                                 scoring::kLayoutArtifact,   scoring::kHintArtifact,
                                 index::kTombstonesArtifact, index::kPayloadDigestsArtifact,
                                 index::kDocIdsArtifact};
  if (settings_.web_payloads) names.emplace_back(index::kPayloadsArtifact);
  web.public_file = [dir = settings_.index_dir, names](const std::string& file) {
    return index::public_index_file(dir, file, names);
  };
  web.max_body_bytes = settings_.limits.max_message_bytes;
  web.tokens = tokens_ ? &*tokens_ : nullptr;
  if (fronted()) web.unix_socket = web_socket();
  PRIVSEARCH_ASSIGN_OR_RETURN(web_, server::WebGateway::start(*server_, web));
  return Status();
}

// The browser endpoint's public port (the front's socket, or the endpoint's own), once served.
Status ProviderProcess::announce_web() const {
  const auto& web = settings_.web;
  const int port = fronted() ? web_listener_.port : web_->port();
  if (!settings_.web_port_file.empty()) {
    PRIVSEARCH_RETURN_IF_ERROR(write_text(settings_.web_port_file, std::to_string(port) + "\n"));
  }
  log(fmt::format("browser endpoint on https://{}:{}/ (HTTP + protobuf, the same admission{}){}",
                  web.listen.substr(0, web.listen.rfind(':')), port,
                  fronted() ? "; behind the front" : "",
                  web.web_root.empty() ? "" : ", page from " + web.web_root.string()));
  if (!web.web_root.empty()) {
    log("--web-root is for development: the page's code comes from this provider, which its "
        "users' privacy is protected against; serve the bundle (node web/bundle.mjs) from a "
        "separate static origin in production (docs/SECURITY.md \"The page's trust root\")");
  }
  return Status();
}

Status ProviderProcess::announce(int port) const {
  const auto& s = settings_;
  std::string fingerprint;
  if (identity_) {
    PRIVSEARCH_ASSIGN_OR_RETURN(fingerprint,
                                net::certificate_fingerprint(identity_->certificate_pem()));
  }
  if (!s.fingerprint_file.empty() && !fingerprint.empty()) {
    PRIVSEARCH_RETURN_IF_ERROR(write_text(s.fingerprint_file, fingerprint + "\n"));
  }
  if (!s.port_file.empty()) {
    PRIVSEARCH_RETURN_IF_ERROR(write_text(s.port_file, std::to_string(port) + "\n"));
  }
  const auto info = core_->server_info();
  log(fmt::format("serving {} documents (d' = {}), artifact {}, params {}, pid {}{}{}",
                  info.documents(), info.dim(), info.artifact_version().substr(0, 16), s.preset,
                  ::getpid(), pir_ ? ", private payload fetch on" : "",
                  pir_lists_ ? ", private IVF list fetch on" : ""));
  fmt::print("listening on {} port {}{}{}\n", s.listen.substr(0, s.listen.rfind(':')), port,
             fingerprint.empty() ? " (plaintext, loopback only)"
                                 : "; certificate SHA-256 fingerprint " + fingerprint,
             front_ ? " (through the HTTP/2 front)" : "");
  std::fflush(stdout);
  return Status();
}

Status ProviderProcess::reload() {
  const auto t0 = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto next, load_core());
  log(fmt::format("reload: index verified and opened in {:.1f} s", ms_since(t0) / 1000));
  if (next.version->version_id() == manifest_.version_id) {
    log("reload: the index is unchanged");
    return Status();
  }
  if (pir_) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto payloads, next.version->payloads());
    std::string how;
    PRIVSEARCH_RETURN_IF_ERROR(
        pir_->rebuild(protocol::PirRecords::of(payloads), next.version->version_id(), &how));
    log("reload: PIR " + how);
  }
  if (pir_lists_) {
    if (next.core->config().ivf_lists == nullptr) {
      return failed_precondition_error(
          "reload: the new index has no IVF lists to serve by PIR "
          "(--pir-lists); still serving the previous one");
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto table,
                                protocol::ivf_list_pir_table(*next.core->config().ivf_lists));
    std::string how;
    PRIVSEARCH_RETURN_IF_ERROR(pir_lists_->rebuild(table.view(), next.version->version_id(), &how));
    log("reload: PIR of the IVF lists " + how);
  }
  core_ = std::move(next.core);
  version_ = std::move(next.version);
  manifest_ = version_->manifest();
  rows_ = std::move(next.rows);
  server_->replace_core(core_);
  log(fmt::format("reloaded: artifact {}", manifest_.version_id.substr(0, 16)));
  return Status();
}

void ProviderProcess::maintain() {
  if (settings_.key_unused_s == 0 || !state_) return;
  const std::size_t evicted =
      state_->keys.evict_idle(std::chrono::seconds(settings_.key_unused_s),
                              std::chrono::minutes(10), kKeyCacheWorkingSetBytes);
  if (evicted != 0) {
    log(fmt::format("key cache: {} unused or idle key set(s) evicted, {} MB held", evicted,
                    state_->keys.cached_bytes() >> 20));
  }
}

void ProviderProcess::stop(int grace_ms) {
  if (front_) front_->drain();  // no new connections; open streams go on to finish
  if (web_) web_->stop();
  if (server_) {
    server_->shutdown(grace_ms);
    server_->wait();
    server_.reset();
  }
  stop_front();
}

}  // namespace privsearch::provider
