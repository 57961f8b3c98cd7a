// The provider process as a type: what privsearch-provider's main runs. It loads and verifies
// an index (manifest re-hashed, exact store mapped read-only), wires the rerank core and, when
// the index has a payload store, the private payload fetch (ZipPIR), serves them over gRPC with
// TLS, and on SIGHUP reloads a rebuilt index from the same directory without dropping clients.
// Links the public CKKS library only (tests/provider_only checks the binary's symbols).
// Thread safety: one owner; the gRPC server it starts has its own threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "ckks/param_sets.h"
#include "index/artifacts/exact_rows.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/payload_store.h"
#include "net/tls.h"
#include "protocol/identities.h"
#include "protocol/pir_hintless_service.h"
#include "protocol/pir_service.h"
#include "protocol/provider_core.h"
#include "server/http2_front.h"
#include "server/pir_coordinator.h"
#include "server/provider_server.h"
#include "server/web_gateway.h"
#include "version/index_version.h"

namespace privsearch::provider {

// Everything the command line sets (defaults are the command line's defaults).
struct ProviderSettings {
  std::filesystem::path index_dir, cert_file, key_file, port_file, fingerprint_file;
  std::string listen = "127.0.0.1:50051";
  std::string preset = std::string(ckks::kDefaultServicePreset);
  bool self_signed = false, insecure_loopback = false, quiet = false;
  unsigned threads = 0;
  unsigned kernel_threads = 2;  // ProviderConfig::kernel_threads (capped at the cores)
  protocol::ProviderLimits limits;
  server::TransportLimits transport;
  int max_concurrent_per_client = -1;  // server::ServeOptions
  unsigned keep_versions = 2;          // server::ServeOptions
  int flood_bits = 0;
  bool no_pir = false, pir_test_params = false;
  // Which scheme serves private fetch: "hintless" (YPIR+SP, no per-client work; the default) or
  // "zippir" (the seed paper's: a setup per client and a hint per query; `pir` holds its knobs).
  std::string pir_backend = "hintless";
  protocol::HintlessPirConfig hintless;
  protocol::PirConfig pir;
  // Row shards of the PIR database (server/pir_coordinator.h): this process answers PIR for the
  // shards at these addresses (host:port, in row order; their certificate in pir_shard_ca)
  // instead of holding the database.
  std::vector<std::string> pir_shards;
  std::filesystem::path pir_shard_ca;
  // Serve the IVF lists by ZipPIR too (protocol/ivf_list_pir.h), with this many hints kept
  // ready per client (a search fetches nprobe lists, each one query).
  bool pir_lists = false;
  std::size_t pir_lists_ready = 8;
  // Where request budgets live: "memory", "file:PATH"; empty: the default journal
  // (default_state_location()).
  std::string state;
  std::filesystem::path auth_tokens;  // empty: anonymous clients
  // The HTTP/2 front (server/http2_front.h) on `listen`: "haproxy" (the default) terminates TLS
  // and holds what gRPC 1.51 cannot, the provider listening on a private unix socket behind it;
  // "none" serves gRPC on `listen` itself, without those protections. --insecure-loopback
  // serves plaintext directly.
  std::string front = "haproxy";
  server::FrontLimits front_limits;
  // The browser endpoint (server/web_gateway.h): HTTP + protobuf over TLS on web.listen when
  // web_listen is set, the page from web.web_root; its port in web_port_file.
  bool web_listen = false;
  server::WebOptions web;
  std::filesystem::path web_port_file;
  bool web_payloads = false;  // the payload store among the page's downloads (result titles)
  // Key sets no request used since their upload are evicted this long after it (0: never); past
  // kKeyCacheWorkingSetBytes, sets idle for 10 minutes too (KeyCache::evict_idle).
  unsigned key_unused_s = 30;
};

// What the key cache keeps however idle: a few clients' sets (22.5 MB each at K = 100).
inline constexpr std::uint64_t kKeyCacheWorkingSetBytes = std::uint64_t{64} << 20;

// file:$XDG_STATE_HOME/privsearch/provider-budgets.journal ($HOME/.local/state when unset).
Result<std::string> default_state_location();

class ProviderProcess {
 public:
  // Verifies the index and builds the rerank core and the PIR service; nothing listens yet.
  static Result<std::unique_ptr<ProviderProcess>> load(ProviderSettings settings);
  ~ProviderProcess();

  // Starts the gRPC server, writes the port and fingerprint files (atomically, once listening)
  // and prints the "listening on" line on stdout.
  Status start();
  // Re-reads the index directory: a new artifact version replaces the rerank core and rebuilds
  // the PIR database in place (registered clients' hints are recomputed without them). On any
  // failure the previous index keeps being served and the reason is returned.
  Status reload();
  // Lets in-flight requests finish (up to `grace_ms`), then stops (the front first).
  void stop(int grace_ms);
  // Periodic upkeep (every 10 s from main): evicts unused and idle key sets, so that memory an
  // attack filled the cache with can be given back by the malloc_trim that follows.
  void maintain();
  // False once the front has died (the provider then exits: it is unreachable); true without one.
  bool front_alive();
  Status announce_web() const;
  // Where the browser endpoint listens behind the front (in its private directory).
  std::filesystem::path web_socket() const;

 private:
  // A verified index and the rerank core serving it.
  struct Loaded {
    std::shared_ptr<const version::IndexVersion> version;  // opened once (version/index_version.h)
    std::shared_ptr<protocol::ProviderCore> core;
    std::shared_ptr<const index::ExactRows> rows;
  };
  explicit ProviderProcess(ProviderSettings settings);
  // The index in the directory, verified; a reload re-verifies only what it reads again (the
  // exact stores and list files of the version served, unchanged, are reused:
  // index/artifacts/append.h).
  Result<Loaded> load_core() const;
  Status open_state();
  // The parts of load_core that are present only in some indexes.
  Result<std::shared_ptr<const scoring::ScoringMatrix>> load_scoring_matrix(
      const version::IndexVersion& version) const;
  Result<std::shared_ptr<const index::IvfListStore>> load_ivf_lists(
      const version::IndexVersion& version) const;
  Status wire_pir();
  Status wire_pir_lists();
  // The PIR parameters of the settings (--pir-test-params: the insecure test set).
  protocol::PirConfig pir_config() const;
  protocol::HintlessPirConfig hintless_config() const;
  bool hintless() const { return settings_.pir_backend == "hintless"; }
  // A PIR database of `records` under the chosen backend (ZipPIR: `shared` registrations).
  Result<std::unique_ptr<protocol::PirBackend>> make_pir(
      const protocol::PirRecords& records, protocol::PirConfig config,
      std::shared_ptr<protocol::PirSharedState> shared) const;
  Status make_identity();
  // The front (provider_front.cpp): whether it is used; the private directory, the public socket
  // and `so` pointed at the unix socket behind it; then haproxy started on that socket.
  bool fronted() const;
  Status start_web();  // the browser endpoint, after the server
  Status prepare_front(server::ServeOptions& so);
  Result<std::uint16_t> start_front();
  // The port and fingerprint files and the "listening on" line, once clients can connect.
  Status announce(int port) const;
  void stop_front();

  ProviderSettings settings_;
  std::shared_ptr<protocol::ProviderState> state_;  // shared by every index version served
  std::optional<protocol::TokenRegistry> tokens_;
  std::optional<ckks::Params> params_;
  std::shared_ptr<const version::IndexVersion> version_;  // the version served
  index::Manifest manifest_;                              // its manifest
  std::shared_ptr<protocol::ProviderCore> core_;
  std::shared_ptr<const index::ExactRows> rows_;
  std::unique_ptr<protocol::PirBackend> pir_;
  std::unique_ptr<server::PirCoordinator> pir_coordinator_;  // with ProviderSettings::pir_shards
  std::unique_ptr<protocol::PirBackend> pir_lists_;          // with ProviderSettings::pir_lists
  // The replicas' shared PIR state (--state redis://...): also where registrations' owners live.
  std::shared_ptr<protocol::PirSharedState> pir_shared_;
  std::optional<net::TlsIdentity> identity_;
  std::unique_ptr<server::ProviderServer> server_;
  std::filesystem::path front_dir_;   // private: the front's configuration and the unix socket
  server::TcpListener listener_;      // the public socket, until haproxy holds it
  server::TcpListener web_listener_;  // the browser endpoint's public socket, likewise
  std::unique_ptr<server::Http2Front> front_;
  std::unique_ptr<server::WebGateway> web_;  // with ProviderSettings::web_listen
};

// One line on stderr, prefixed "privsearch-provider: " (never keys, queries or scores).
void log(const std::string& message);

}  // namespace privsearch::provider
