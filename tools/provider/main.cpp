// privsearch-provider: the provider process (`privsearch serve` runs it). Linked only against
// the public CKKS library, the index, the protocol core and the server — never against key
// generation, encryption or decryption (tests/provider_only checks this binary's symbols).
//
// It verifies the index manifest (re-hashing every artifact), maps the exact store read-only,
// and serves the Provider service of src/protocol/privsearch.proto over gRPC with TLS:
// GetServerInfo, UploadKeys and Rerank (encrypted rerank), and, when the index has a payload
// store, GetPirInfo and PirQuery (private payload fetch: hintless PIR by default; PirSetup and
// PirStatus too under --pir-backend zippir). SIGHUP
// reloads a rebuilt index; SIGTERM or SIGINT stop it after in-flight requests finish (up to 5 s).
#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "ckks/param_sets.h"
#include "provider/provider_process.h"
#include "rerank/layout.h"

namespace {

using privsearch::provider::ProviderSettings;

void add_transport_options(CLI::App& app, ProviderSettings& s) {
  app.add_option("--index", s.index_dir, "Index directory written by `privsearch build`")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--listen", s.listen,
                 "Address to listen on (default 127.0.0.1:50051; port 0 picks one)");
  app.add_option("--preset", s.preset,
                 "CKKS parameter preset, which picks the rerank kernel: packed-n4096 (default; "
                 "the packed kernel: 23 KB queries, 15 KB responses, 482 KB keys per epoch) or "
                 "rerank-n8192 (the fast slot kernel: 101 / 66 / 3,669 KB); paper-n8192 and "
                 "ifma-n8192 serve the fast kernel at those parameters")
      ->check(CLI::IsMember(privsearch::ckks::preset_names()));
  auto* cert =
      app.add_option("--cert", s.cert_file, "PEM certificate (chain)")->check(CLI::ExistingFile);
  auto* key = app.add_option("--key", s.key_file, "PEM private key of the certificate")
                  ->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
  auto* self_signed = app.add_flag("--self-signed", s.self_signed,
                                   "Generate a throwaway certificate for local use and print its "
                                   "SHA-256 fingerprint (clients pin it)");
  auto* insecure = app.add_flag("--insecure-loopback", s.insecure_loopback,
                                "Plaintext transport; only allowed on 127.0.0.1 / [::1]");
  self_signed->excludes(cert)->excludes(insecure);
  insecure->excludes(cert);
  app.add_option("--port-file", s.port_file, "Write the listening port to this file when ready");
  app.add_option("--fingerprint-file", s.fingerprint_file,
                 "Write the certificate fingerprint to this file when ready");
  app.add_option("--threads", s.threads, "Worker threads (default: the cores)");
  app.add_option("--kernel-threads", s.kernel_threads,
                 "Threads one rerank uses for its independent steps (default 2, at most the "
                 "cores; 1 when many clients keep every worker busy anyway)")
      ->check(CLI::Range(1u, 64u));
  app.add_option(
      "--state", s.state,
      "Where request budgets live: `file:PATH` (an append-only journal; default "
      "file:$XDG_STATE_HOME/privsearch/provider-budgets.journal, ~/.local/state when "
      "unset), `redis://[[USER]:PASSWORD@]HOST:PORT[/DB]` or `unix:///PATH` (shared by "
      "replicas with uploaded key sets and PIR registrations and hints; run Redis with "
      "appendonly yes and maxmemory-policy noeviction; better than a password in the URL, which "
      "every local user can read: PRIVSEARCH_REDIS_USER/PRIVSEARCH_REDIS_PASSWORD), or `memory` "
      "(reset by every restart: "
      "tests only). Budgets survive reloads, restarts and new key epochs; one provider "
      "per journal file (locked)");
  app.add_option("--auth-tokens", s.auth_tokens,
                 "Require bearer tokens: a file of `<identity> <sha256 hex of token>` lines "
                 "(`privsearch token new` makes them). Budgets and rate limits then follow the "
                 "identity, not the key epoch")
      ->check(CLI::ExistingFile);
  app.add_flag("--quiet", s.quiet,
               "No per-request log (default: one JSON line per request on stderr: rpc, outcome, "
               "K, bytes, ms; never keys, tokens, queries, candidate IDs or scores)");
}

// Message size, candidates, key sets, concurrency, retained versions.
void add_limit_options(CLI::App& app, ProviderSettings& s) {
  auto& l = s.limits;
  app.add_option("--max-message-bytes", l.max_message_bytes, "Largest accepted message")
      ->check(CLI::Range(std::uint64_t{1} << 16, std::uint64_t{1} << 30));
  app.add_option("--max-candidates", l.max_candidates, "Most candidate IDs per request")
      ->check(CLI::Range(std::size_t{1}, privsearch::rerank::kMaxCandidates));
  app.add_option("--max-key-sets", l.max_key_sets, "Cached evaluation-key sets (LRU)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-concurrent", l.max_concurrent_requests,
                 "Concurrent requests before OVERLOADED (default: 8 x the threads; each waits for "
                 "a worker)");
  app.add_option("--max-concurrent-per-client", s.max_concurrent_per_client,
                 "Requests one client (identity, else address) may have in flight before "
                 "OVERLOADED (default: half the threads, at least 1; 0: no limit, e.g. behind a "
                 "load balancer without identities)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--keep-versions", s.keep_versions,
                 "Index versions answered after a reload (SIGHUP): the current one and the "
                 "previous ones up to this count, each keeping its exact store and scoring "
                 "matrix loaded (default 2); a retired version gets ARTIFACT_STALE naming the "
                 "newest")
      ->check(CLI::Range(1, 8));
}

// The score budgets, the access-private query window, the key cache and key uploads, flooding.
void add_budget_options(CLI::App& app, ProviderSettings& s) {
  auto& l = s.limits;
  app.add_option("--scores-per-key", l.scores_per_key_id,
                 "Score budget of one key epoch: exact scores it may get, K per rerank "
                 "(score-oracle guard; default 51200 = 512 searches of K = 100)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--scores-per-identity", l.scores_per_identity,
                 "Score budget of one authenticated identity (--auth-tokens) per window, across "
                 "all its key epochs, on every replica sharing --state (default 1048576: 1,024 "
                 "searches of K = 1024 a day; 0: none)");
  app.add_option("--private-queries-per-window", l.private_queries_per_window,
                 "Access-private cluster queries per caller (identity, else address) per "
                 "--private-query-window-s (default 4096: 512 searches at m = 8; 0: unmetered)");
  app.add_option("--private-query-window-s", l.private_query_window_s,
                 "Window of the access-private query budget in seconds (default 3600; 0: "
                 "never refills)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  app.add_option("--identity-window-s", l.identity_budget_window_s,
                 "Window of the identity budget in seconds (default 86400; 0: never refills)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  app.add_option_function<std::uint64_t>(
         "--key-cache-mb", [&l](std::uint64_t mb) { l.key_cache_bytes = mb << 20; },
         "Memory for cached evaluation-key sets, uploads in progress included (default 512; "
         "a K = 100 set under rerank-n8192 takes ~23 MB)")
      ->check(CLI::Range(std::uint64_t{16}, std::uint64_t{1} << 20));
  app.add_option("--key-unused-s", s.key_unused_s,
                 "Evict an uploaded key set no request has used this long after its upload "
                 "(default 30; 0: keep it until its TTL or LRU eviction): what a churn of unused "
                 "key sets filled the cache with goes back");
  app.add_option("--key-set-ttl-s", l.key_set_ttl_s,
                 "Forget an uploaded key set this long after its upload, here and in a shared "
                 "--state store (default 86400); its client then uploads a new one")
      ->check(CLI::Range(std::int64_t{60}, std::int64_t{30} * 86400));
  app.add_option("--key-uploads-per-minute", l.key_uploads.per_minute,
                 "Key uploads per identity (or peer address) per minute (default 30, burst 10; "
                 "0: unlimited)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option(
         "--flood-bits", s.flood_bits,
         "Re-randomize every rerank response by noise flooding at this statistical "
         "security (bits; default 0 = off). Costs about bits + 7 of the response "
         "precision (packed-n4096: 4 keeps 8 bits); refused with the largest affordable value "
         "when the preset cannot afford it (docs/SECURITY.md, circuit privacy)")
      ->check(CLI::Range(0, 128));
}

void add_connection_options(CLI::App& app, ProviderSettings& s) {
  auto& t = s.transport;
  app.add_option_function<std::uint64_t>(
         "--transport-memory-mb", [&t](std::uint64_t mb) { t.memory_bytes = mb << 20; },
         "gRPC buffer memory for all connections together (default 256); past it unfinished "
         "messages stall instead of growing the provider")
      ->check(CLI::Range(std::uint64_t{16}, std::uint64_t{1} << 20));
  app.add_option("--max-streams-per-connection", t.max_streams_per_connection,
                 "Concurrent HTTP/2 streams per connection (default 32)")
      ->check(CLI::Range(1u, 1000u));
  auto seconds = [](int& ms) { return [&ms](int secs) { ms = secs * 1000; }; };
  app.add_option_function<int>("--connection-idle-s", seconds(t.max_connection_idle_ms),
                               "Close a connection without calls after this long (default 300)")
      ->check(CLI::Range(1, 86400));
  app.add_option_function<int>(
         "--connection-max-age-s", seconds(t.max_connection_age_ms),
         "Retire every connection at this age (default 300; clients reconnect transparently)")
      ->check(CLI::Range(1, 86400));
  app.add_option_function<int>(
         "--connection-grace-s", seconds(t.max_connection_age_grace_ms),
         "Close a retired connection this much later whatever its streams do (default 30): "
         "max-age + grace bounds how long a message may take to arrive")
      ->check(CLI::Range(1, 3600));
}

void add_front_options(CLI::App& app, ProviderSettings& s) {
  auto& f = s.front_limits;
  app.add_option("--front", s.front,
                 "What faces the network: `haproxy` (default) terminates TLS and enforces header, "
                 "connection, timeout and per-address limits in front of the provider, which "
                 "then listens on a private unix socket only (docs/SECURITY.md \"Transport\"); "
                 "`none` serves gRPC on --listen directly, without those protections")
      ->check(CLI::IsMember({"haproxy", "none"}));
  app.add_option("--front-max-connections", f.max_connections,
                 "Open client connections in total (default 4096, at most what the fd limit "
                 "allows)")
      ->check(CLI::Range(16u, 1000000u));
  app.add_option("--front-max-connections-per-address", f.max_connections_per_source,
                 "Open connections of one client address (default 64)")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--front-client-timeout-s", f.client_timeout_s,
                 "Drop a client that neither sends nor reads for this long (default 60)")
      ->check(CLI::Range(1, 3600));
  app.add_option("--front-trust-proxy-from", f.trusted_proxies,
                 "A load balancer (address or CIDR; repeatable) whose connections start with a "
                 "PROXY protocol v2 header naming the client (HAProxy `send-proxy-v2`, as "
                 "`privsearch cluster haproxy` writes): per-address limits then count the real "
                 "clients, not the balancer. Only these sources may send the header");
  app.add_option("--front-header-timeout-s", f.request_header_timeout_s,
                 "A request's headers must arrive within this (default 10)")
      ->check(CLI::Range(1, 600));
}

// ZipPIR's row shards: serve one shard, or answer through shards.
void add_web_options(CLI::App& app, ProviderSettings& s) {
  auto& w = s.web;
  app.add_option_function<std::string>(
      "--web-listen",
      [&s](const std::string& v) {
        s.web_listen = true;
        s.web.listen = v;
      },
      "Also serve browsers: the Provider RPCs as HTTP POST + protobuf over TLS and the "
      "index's public files on this host:port (port 0: any), with the same limits, tokens "
      "and budgets as gRPC (docs/SECURITY.md \"The browser endpoint\"); off by default");
  app.add_option("--web-root", w.web_root,
                 "For development: the page to serve at / (the web/ directory of a `make web` "
                 "build). The page's code then comes from the provider it protects against; "
                 "deploy the static bundle (node web/bundle.mjs) from another origin instead and "
                 "name that origin with --web-origin")
      ->check(CLI::ExistingDirectory);
  app.add_option("--web-origin", w.allowed_origins,
                 "An origin (scheme://host:port) allowed to call the endpoint from another site "
                 "(CORS; repeatable); default: the endpoint's own pages only");
  app.add_flag("--web-payloads", s.web_payloads,
               "Also let the page download the payload store (result titles; it is the "
               "documents themselves)");
  app.add_option("--web-trust-proxy-from", w.trusted_proxies,
                 "An HTTP proxy (address or CIDR; repeatable) in front of the browser endpoint: "
                 "the last X-Forwarded-For entry of its requests is the browser's address, which "
                 "every per-address limit then counts; nobody else's X-Forwarded-For is read, and "
                 "a request from it without one is refused");
  app.add_option(
         "--web-threads", w.threads,
         "Browser requests served at once (default 16; behind the front, one address may hold 4 "
         "of them and file transfers half)")
      ->check(CLI::Range(1u, 256u));
  app.add_option("--web-port-file", s.web_port_file,
                 "Write the browser endpoint's port to this file when ready");
}

void add_pir_shard_options(CLI::App& app, ProviderSettings& s) {
  auto* shard =
      app.add_option_function<std::string>(
             "--pir-shard",
             [&s](const std::string& v) {
               const auto slash = v.find('/');
               s.pir.shard = std::stoul(v.substr(0, slash));
               s.pir.shards = std::stoul(v.substr(slash + 1));
             },
             "Serve row shard I of S of the PIR database (I/S, e.g. 0/3) for a coordinator "
             "(--pir-shards); its answers are parts, not records")
          ->check(CLI::Validator(
              [](std::string& v) -> std::string {
                const auto slash = v.find('/');
                if (slash == std::string::npos || slash == 0 || slash + 1 == v.size() ||
                    v.find_first_not_of("0123456789/") != std::string::npos ||
                    v.find('/', slash + 1) != std::string::npos) {
                  return "expected I/S, e.g. 0/3";
                }
                const auto i = std::stoul(v.substr(0, slash)), n = std::stoul(v.substr(slash + 1));
                return i < n && n <= 64 ? std::string() : "expected 0 <= I < S <= 64";
              },
              "I/S"));
  auto* shards = app.add_option("--pir-shards", s.pir_shards,
                                "Answer PIR through these row shards (host:port,... in row order; "
                                "each a provider with --pir-shard I/S) instead of a local database")
                     ->delimiter(',');
  auto* ca = app.add_option("--pir-shard-ca", s.pir_shard_ca,
                            "The shards' certificate (or CA) in PEM, for --pir-shards")
                 ->check(CLI::ExistingFile);
  shards->excludes(shard);
  shards->needs(ca);
}

void add_pir_options(CLI::App& app, ProviderSettings& s) {
  app.add_flag("--no-pir", s.no_pir, "Do not serve private payload fetch");
  app.add_option("--pir-backend", s.pir_backend,
                 "Private fetch scheme: hintless (YPIR+SP: the database is preprocessed once for "
                 "every client, no setup, ~0.1-0.3 provider core-s per fetch; the default) or "
                 "zippir (the seed paper's: a setup per client and a Paillier hint per query, "
                 "minutes of provider CPU at 1 GiB). The --pir-ready, --pir-offline-threads, "
                 "--pir-max-clients, --pir-setups-per-minute, --pir-idle-expiry-s and "
                 "--pir-shard(s) options are ZipPIR's")
      ->check(CLI::IsMember({"hintless", "zippir"}));
  app.add_option("--pir-queries-per-minute", s.hintless.queries.per_minute,
                 "Hintless: PIR queries (each a pass over the database; a batch counts each) per "
                 "identity, or per address when anonymous, per minute (default 1200, burst 128; "
                 "0: unlimited)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--pir-queries-burst", s.hintless.queries.burst,
                 "Hintless: the most queries a caller may send at once (default 128; at least "
                 "--pir-max-batch)")
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--pir-max-batch", s.hintless.max_batch,
                 "Hintless: queries one PirQuery may carry (default 32: a search's top documents "
                 "or its probed lists in one database pass)")
      ->check(CLI::Range(1, 256));
  app.add_option("--pir-ready", s.pir.ready_per_client,
                 "PIR hints kept precomputed per client (default 2)")
      ->check(CLI::Range(1, 64));
  app.add_option("--pir-offline-threads", s.pir.offline_threads,
                 "Background threads (nice 19) computing PIR hints (default 1)")
      ->check(CLI::Range(1, 256));
  app.add_option("--pir-max-clients", s.pir.max_clients, "Registered PIR clients (default 256)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--pir-setups-per-minute", s.pir.setups.per_minute,
                 "PIR setups per identity (or peer address) per minute (default 10, burst 5; "
                 "0: unlimited)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--pir-idle-expiry-s", s.pir.idle_expiry_s,
                 "Forget a PIR registration unused this long, with its hints (default 3600)")
      ->check(CLI::Range(1, 1 << 30));
  add_pir_shard_options(app, s);
  app.add_flag("--pir-lists", s.pir_lists,
               "Also serve the IVF posting lists by PIR (clients' --private-lists): the "
               "provider then no longer learns which lists a search probes. Costs a database of "
               "lists x the longest list and one offline hint per list a client fetches "
               "(docs/SCALE.md)");
  app.add_option("--pir-lists-ready", s.pir_lists_ready,
                 "With --pir-lists: list hints kept precomputed per client (default 8; a search "
                 "uses one per probed list not cached)")
      ->check(CLI::Range(1, 256));
  app.add_flag("--pir-test-params", s.pir_test_params,
               "INSECURE small PIR parameters (hintless d = 256; ZipPIR LWE n = 64, 512-bit "
               "Paillier) for tests");
}

int fail(const privsearch::Status& s) {
  privsearch::provider::log(s.to_string());
  return 1;
}

// Process-wide settings before any thread starts: malloc's trimming and arenas, the fd limit.
void tune_process() {
  // Keep freed request buffers in the heap: returning them to the kernel after every request
  // costs page faults on the next one (measured in make demo, SciFact, K = 100: provider time
  // per request 15.4 ms -> 8.0 ms median).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  // One malloc arena per core (at least 2), not glibc's 8 per core: with gRPC's many threads
  // each holding its own, what an attack left freed in one could neither serve another thread
  // nor be trimmed (measured, stalled streams, 2-core Xeon: 60 s after the attack 4 arenas still
  // held +70 MB, 2 held +6 MB), while one arena for all serialized GMP's allocations in the
  // hint work (make demo's first private fetch waited 114 s instead of 25 s). MALLOC_ARENA_MAX in
  // the environment (glibc's own knob) still wins, for operators and A/B runs.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) {
    mallopt(M_ARENA_MAX, static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
  }
  // Descriptors: the soft limit up to the hard one, so that every connection the front may hold
  // (its cap is derived from this limit, server/http2_front.h) fits with room to spare.
  if (rlimit nofile{};
      ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }
}

// Serves until SIGTERM/SIGINT (SIGHUP reloads), giving memory back every 10 s; the exit status.
int serve_until_stopped(privsearch::provider::ProviderProcess& provider, const sigset_t& signals) {
  int sig = 0;
  unsigned idle_seconds = 0;
  for (;;) {
    // The thresholds above keep freed buffers between requests; every 10 s without a signal
    // the free memory goes back to the kernel, so RSS returns after a burst or an attack
    // (issue: memory bounded and given back) at the cost of one page fault per page afterwards.
    const timespec every{1, 0};
    sig = sigtimedwait(&signals, nullptr, &every);
    if (sig < 0) {
      if (errno == EAGAIN && ++idle_seconds % 10 == 0) {
        provider.maintain();
        malloc_trim(0);
      }
      // Without its front the provider is unreachable: exit so a supervisor restarts both.
      if (!provider.front_alive()) {
        privsearch::provider::log("the HTTP/2 front (haproxy) exited; stopping");
        provider.stop(0);
        return 1;
      }
      continue;
    }
    if (sig != SIGHUP) break;
    if (auto st = provider.reload(); !st.ok()) {
      privsearch::provider::log("reload failed, still serving the previous index: " +
                                st.to_string());
    }
  }
  privsearch::provider::log(fmt::format("received signal {}; finishing in-flight requests", sig));
  provider.stop(5000);
  privsearch::provider::log("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tune_process();
  CLI::App app{
      "privsearch-provider: serves encrypted reranking of a privsearch index over gRPC + TLS. "
      "It holds no secret key: clients upload evaluation keys and send encrypted queries; the "
      "provider learns the candidate IDs only (docs/SECURITY.md). With the index's payload store "
      "it also serves private payload fetch (hintless PIR): clients read documents without the "
      "provider learning which. SIGTERM/SIGINT stop it gracefully; SIGHUP reloads a rebuilt "
      "index from the same directory (rerank switches version; PIR hints of registered clients "
      "are recomputed in the background without them)."};
  app.set_version_flag("--version", "privsearch-provider " PRIVSEARCH_VERSION);
  ProviderSettings settings;
  add_transport_options(app, settings);
  add_limit_options(app, settings);
  add_budget_options(app, settings);
  add_connection_options(app, settings);
  add_front_options(app, settings);
  add_web_options(app, settings);
  add_pir_options(app, settings);
  CLI11_PARSE(app, argc, argv);
  if (settings.cert_file.empty() && !settings.self_signed && !settings.insecure_loopback) {
    privsearch::provider::log(
        "choose a TLS identity: --cert/--key, --self-signed, or (loopback "
        "only) --insecure-loopback");
    return 2;
  }
  // Block the stop and reload signals in every thread (gRPC's included); main waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto provider = privsearch::provider::ProviderProcess::load(std::move(settings));
  if (!provider.ok()) return fail(provider.status());
  if (auto st = (*provider)->start(); !st.ok()) return fail(st);
  return serve_until_stopped(**provider, signals);
}
