// privsearch-provider: the provider process (`privsearch serve` runs it). Linked only against
// the public CKKS library, the index, the protocol core and the server — never against key
// generation, encryption or decryption (tests/provider_only checks this binary's symbols).
//
// It verifies the index manifest (re-hashing every artifact), maps the exact store read-only,
// and serves GetServerInfo / UploadKeys / Rerank over gRPC with TLS until SIGTERM or SIGINT,
// then lets in-flight requests finish (up to 5 s).
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ckks/param_sets.h"
#include "index/atomic_file.h"
#include "index/exact_store.h"
#include "index/manifest.h"
#include "index/payload_store.h"
#include "net/tls.h"
#include "protocol/provider_core.h"
#include "server/provider_server.h"

namespace {

using namespace privsearch;

Status write_text(const std::filesystem::path& file, const std::string& text) {
  return index::write_bytes_atomically(
      file, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

void log(const std::string& msg) { fmt::print(stderr, "privsearch-provider: {}\n", msg); }

int fail(const Status& s) {
  log(s.to_string());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed request buffers in the heap: returning them to the kernel after every request
  // costs page faults on the next one (measured in make demo, SciFact, K = 100: provider time
  // per request 15.4 ms -> 8.0 ms median).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{
      "privsearch-provider: serves encrypted reranking of a privsearch index over gRPC + TLS. "
      "It holds no secret key: clients upload evaluation keys and send encrypted queries; the "
      "provider learns the candidate IDs only (docs/SECURITY.md). With the index's payload store it "
      "also serves private payload fetch (ZipPIR): clients read documents without the provider "
      "learning which. SIGTERM/SIGINT stop it gracefully; SIGHUP reloads a rebuilt index from the "
      "same directory (rerank switches version; PIR hints of registered clients are recomputed "
      "in the background without them)."};
  std::filesystem::path index_dir, cert_file, key_file, port_file, fingerprint_file;
  std::string listen = "127.0.0.1:50051";
  std::string preset = "rerank-n8192";
  bool self_signed = false, insecure_loopback = false;
  unsigned threads = 0;
  protocol::ProviderLimits limits;
  app.add_option("--index", index_dir, "Index directory written by `privsearch build`")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--listen", listen, "Address to listen on (default 127.0.0.1:50051; port 0 picks one)");
  app.add_option("--preset", preset, "CKKS parameter preset (default rerank-n8192)");
  auto* cert_opt = app.add_option("--cert", cert_file, "PEM certificate (chain)")
                       ->check(CLI::ExistingFile);
  auto* key_opt = app.add_option("--key", key_file, "PEM private key of the certificate")
                      ->check(CLI::ExistingFile);
  cert_opt->needs(key_opt);
  key_opt->needs(cert_opt);
  auto* ss_opt = app.add_flag("--self-signed", self_signed,
                              "Generate a throwaway certificate for local use and print its "
                              "SHA-256 fingerprint (clients pin it)");
  auto* insecure_opt = app.add_flag("--insecure-loopback", insecure_loopback,
                                    "Plaintext transport; only allowed on 127.0.0.1 / [::1]");
  ss_opt->excludes(cert_opt)->excludes(insecure_opt);
  insecure_opt->excludes(cert_opt);
  app.add_option("--port-file", port_file, "Write the listening port to this file when ready");
  app.add_option("--fingerprint-file", fingerprint_file,
                 "Write the certificate fingerprint to this file when ready");
  app.add_option("--threads", threads, "Worker threads (default: the cores)");
  bool quiet = false;
  app.add_flag("--quiet", quiet,
               "No per-request log (default: one JSON line per request on stderr: rpc, outcome, "
               "K, bytes, ms; never keys, queries, candidate IDs or scores)");
  app.add_option("--max-message-bytes", limits.max_message_bytes, "Largest accepted message")
      ->check(CLI::Range(std::uint64_t{1} << 16, std::uint64_t{1} << 30));
  app.add_option("--max-candidates", limits.max_candidates, "Most candidate IDs per request")
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-key-sets", limits.max_key_sets, "Cached evaluation-key sets (LRU)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-concurrent", limits.max_concurrent_requests,
                 "Concurrent requests before OVERLOADED (default: 8 x the threads; each waits for a worker)");
  app.add_option("--requests-per-key", limits.requests_per_key_id,
                 "Request budget of one key id (score-oracle guard)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  int flood_bits = 0;
  app.add_option("--flood-bits", flood_bits,
                 "Re-randomize every rerank response by noise flooding at this statistical "
                 "security (bits; default 0 = off). Costs about bits + 7 of the response "
                 "precision; refused with the largest affordable value when the preset cannot "
                 "afford it (docs/SECURITY.md, circuit privacy)")
      ->check(CLI::Range(0, 128));
  bool no_pir = false, pir_test_params = false;
  protocol::PirConfig pir_config;
  app.add_flag("--no-pir", no_pir, "Do not serve private payload fetch (ZipPIR)");
  app.add_option("--pir-ready", pir_config.ready_per_client,
                 "PIR hints kept precomputed per client (default 2)")
      ->check(CLI::Range(1, 64));
  app.add_option("--pir-offline-threads", pir_config.offline_threads,
                 "Background threads (nice 19) computing PIR hints (default 1)")
      ->check(CLI::Range(1, 256));
  app.add_option("--pir-max-clients", pir_config.max_clients,
                 "Registered PIR clients (default 256)")
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--pir-test-params", pir_test_params,
               "INSECURE small PIR parameters (LWE n = 64, 512-bit Paillier) for tests");
  CLI11_PARSE(app, argc, argv);
  if (cert_file.empty() && !self_signed && !insecure_loopback) {
    log("choose a TLS identity: --cert/--key, --self-signed, or (loopback only) "
        "--insecure-loopback");
    return 2;
  }

  // Block the stop signals in every thread (gRPC's included); main waits for them below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);  // reload the index (see --help)
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto lit = ckks::preset_literal(preset);
  if (!lit.ok()) return fail(lit.status());
  auto params = ckks::Params::create(lit.value());
  if (!params.ok()) return fail(params.status());
  // The exact store and the core that points into it live and retire together.
  struct Serving {
    std::unique_ptr<index::ExactStore> store;
    std::unique_ptr<protocol::ProviderCore> core;
  };
  auto load_serving = [&](index::Manifest& manifest_out) -> Result<std::shared_ptr<protocol::ProviderCore>> {
    log("verifying the index manifest in " + index_dir.string());
    PRIVSEARCH_ASSIGN_OR_RETURN(manifest_out, index::load_manifest(index_dir, /*verify=*/true));
    const auto* entry = manifest_out.find("exact_store");
    if (entry == nullptr) return Status(StatusCode::kNotFound, "the manifest lists no exact_store");
    auto serving = std::make_shared<Serving>();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto store, index::ExactStore::open(index_dir / entry->file));
    serving->store = std::make_unique<index::ExactStore>(std::move(store));
    if (serving->store->cols() != manifest_out.dim ||
        serving->store->rows() != manifest_out.documents) {
      return Status(StatusCode::kDataLoss, "the exact store's shape differs from the manifest");
    }
    protocol::ProviderConfig config(params.value());
    config.params_name = preset;
    config.flood_security_bits = flood_bits;
    config.artifact_version = manifest_out.version_id;
    config.limits = limits;
    PRIVSEARCH_ASSIGN_OR_RETURN(serving->core,
                                protocol::ProviderCore::create(std::move(config),
                                                               serving->store.get()));
    return std::shared_ptr<protocol::ProviderCore>(serving, serving->core.get());
  };
  index::Manifest manifest_value;
  auto core = load_serving(manifest_value);
  if (!core.ok()) return fail(core.status());
  auto manifest = Result<index::Manifest>(manifest_value);

  std::unique_ptr<protocol::PirService> pir;
  const auto* payload_entry = manifest.value().find("payloads");
  if (!no_pir && payload_entry != nullptr) {
    auto payloads = index::PayloadStore::open(index_dir / payload_entry->file);
    if (!payloads.ok()) return fail(payloads.status());
    if (pir_test_params) {
      pir_config.lwe_params = "insecure-test-n64-binary";
      pir_config.paillier_bits = 512;
      pir_config.allow_insecure = true;
    }
    log(fmt::format("preparing private payload fetch: {} records of {} bytes (global hint H = D A)",
                    payloads.value().records(), payloads.value().record_bytes()));
    auto service = protocol::PirService::create(payloads.value(), manifest.value().version_id,
                                                pir_config);
    if (!service.ok()) return fail(service.status());
    pir = std::move(service).value();
  }

  std::optional<net::TlsIdentity> identity;
  if (self_signed) {
    auto id = net::make_self_signed("localhost", 30);
    if (!id.ok()) return fail(id.status());
    identity.emplace(std::move(id).value());
  } else if (!cert_file.empty()) {
    auto id = net::load_identity(cert_file, key_file);
    if (!id.ok()) return fail(id.status());
    identity.emplace(std::move(id).value());
  }
  server::ServeOptions so;
  so.listen = listen;
  so.identity = identity ? &*identity : nullptr;
  so.insecure_loopback = insecure_loopback;
  so.threads = threads;
  so.pir = pir.get();
  if (!quiet) {
    so.request_log = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  }
  auto srv = server::ProviderServer::start(core.value(), so);
  if (!srv.ok()) return fail(srv.status());

  const int port = srv.value()->port();
  std::string fingerprint;
  if (identity) {
    auto fp = net::certificate_fingerprint(identity->certificate_pem());
    if (!fp.ok()) return fail(fp.status());
    fingerprint = fp.value();
  }
  if (!fingerprint_file.empty() && !fingerprint.empty()) {
    if (auto s = write_text(fingerprint_file, fingerprint + "\n"); !s.ok()) {
      return fail(s);
    }
  }
  if (!port_file.empty()) {
    if (auto s = write_text(port_file, std::to_string(port) + "\n"); !s.ok()) {
      return fail(s);
    }
  }
  const auto info = core.value()->server_info();
  log(fmt::format("serving {} documents (d' = {}), artifact {}, params {}, pid {}{}",
                  info.documents(), info.dim(), info.artifact_version().substr(0, 16), preset,
                  ::getpid(), pir ? ", private payload fetch on" : ""));
  fmt::print("listening on {} port {}{}\n", listen.substr(0, listen.rfind(':')), port,
             fingerprint.empty() ? " (plaintext, loopback only)"
                                 : "; certificate SHA-256 fingerprint " + fingerprint);
  std::fflush(stdout);

  int sig = 0;
  for (;;) {
    sigwait(&stop, &sig);
    if (sig != SIGHUP) break;
    // Reload: a rebuilt index in the same directory. Rerank switches to the new artifact version;
    // the PIR database is rebuilt in place and every registered client's hints are recomputed
    // without the client (same shape: clients only switch their version).
    index::Manifest next;
    auto fresh = load_serving(next);
    if (!fresh.ok()) {
      log("reload failed, still serving the previous index: " + fresh.status().to_string());
      continue;
    }
    if (next.version_id == manifest.value().version_id) {
      log("reload: the index is unchanged");
      continue;
    }
    if (pir) {
      const auto* pe = next.find("payloads");
      auto payloads = pe == nullptr ? Result<index::PayloadStore>(Status(
                                          StatusCode::kNotFound, "the manifest lists no payloads"))
                                    : index::PayloadStore::open(index_dir / pe->file);
      Status rebuilt = payloads.ok() ? pir->rebuild(payloads.value(), next.version_id)
                                     : payloads.status();
      if (!rebuilt.ok()) {
        log("reload failed (PIR), still serving the previous index: " + rebuilt.to_string());
        continue;
      }
    }
    srv.value()->replace_core(fresh.value());
    manifest = Result<index::Manifest>(next);
    log(fmt::format("reloaded: artifact {}", next.version_id.substr(0, 16)));
  }
  log(fmt::format("received signal {}; finishing in-flight requests", sig));
  srv.value()->shutdown(5000);
  srv.value()->wait();
  log("stopped");
  return 0;
}
