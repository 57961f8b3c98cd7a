// The JavaScript face of BrowserClient (embind): every call returns a plain object, {ok: true,
// ...} or {ok: false, code, message} with the Status code's name, so the page shows a named
// error instead of catching exceptions (the JSON parser's own are caught inside). Byte strings
// cross as Uint8Array copies; the secret key never crosses.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "browser_client.h"
#include "client/core/refusal.h"
#include "client/core/trust_check.h"
#include "core/bytes.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/manifest_signature.h"

namespace privsearch::web {
namespace {

using emscripten::val;

std::string from_bytes(const val& bytes) {
  const auto v = emscripten::convertJSArrayToNumberVector<std::uint8_t>(bytes);
  return std::string(v.begin(), v.end());
}

val to_bytes(const std::string& s) {
  return val::global("Uint8Array")
      .new_(
          emscripten::typed_memory_view(s.size(), reinterpret_cast<const std::uint8_t*>(s.data())));
}

val failure(const Status& status) {
  val out = val::object();
  out.set("ok", false);
  out.set("code", std::string(status_code_name(status.code())));
  out.set("message", status.message());
  return out;
}

val success() {
  val out = val::object();
  out.set("ok", true);
  return out;
}

// The page's handle: BrowserClient once opened.
class Handle {
 public:
  // The manifest alone, not verified against any artifact (none is there yet): its version id
  // (the canonical hash the signature covers) and the artifacts it lists, so the page checks
  // the signature before downloading anything.
  val read_manifest(const std::string& dir) {
    auto m = index::load_manifest(dir, /*verify=*/false);
    if (!m.ok()) return failure(m.status());
    manifest_ = m.value();
    val out = success();
    out.set("version", m.value().version_id);
    out.set("sequence", static_cast<double>(m.value().sequence));
    out.set("documents", static_cast<double>(m.value().documents));
    val list = val::array();
    for (const auto& a : m.value().artifacts) {
      val e = val::object();
      e.set("name", a.name);
      e.set("file", a.file);
      e.set("bytes", static_cast<double>(a.bytes));
      e.set("sha256", a.sha256);
      list.call<void>("push", e);
    }
    out.set("artifacts", list);
    return out;
  }

  // The first 16 hex digits of SHA-256 of the pinned raw Ed25519 key: how signatures name it.
  std::string key_id(const val& raw_key) const {
    const std::string raw = from_bytes(raw_key);
    return index::ed25519_key_id(byte_view(raw));
  }

  // The manifest read by read_manifest against its signature file (manifest.sig's bytes), the
  // pinned raw key and the newest version this browser remembers for that key (`seen`: the JSON
  // text trust_check returned before, or null): the format, the claims (key, version, sequence)
  // and the rollback / fork check, the native client's (client/core/trust_check.h). The page
  // then verifies `signature` over `message` with WebCrypto and, when `remember`, stores `seen`.
  val trust_check(const val& signature_file, const val& raw_key, const val& seen_text) const {
    if (!manifest_) return failure(failed_precondition_error("read the manifest first"));
    auto sig = index::parse_manifest_signature(from_bytes(signature_file));
    if (!sig.ok()) return failure(sig.status());
    const std::string id = key_id(raw_key);
    const Status claims = index::check_signature_claims(*sig, *manifest_, id, "the index");
    if (!claims.ok()) return failure(claims);
    auto seen = parse_seen(seen_text);
    if (!seen.ok()) return failure(seen.status());
    auto newer = client::core::check_seen_version({manifest_->sequence, manifest_->version_id},
                                                  *seen, id, "the index");
    if (!newer.ok()) return failure(newer.status());
    val out = success();
    out.set("keyId", id);
    out.set("message",
            to_bytes(to_byte_string(index::manifest_signature_message(manifest_->version_id))));
    out.set("signature", to_bytes(to_byte_string(sig->signature)));
    out.set("remember", *newer);
    nlohmann::json j = {{"sequence", manifest_->sequence}, {"version", manifest_->version_id}};
    out.set("seen", j.dump());
    return out;
  }

  val open(const std::string& dir) {
    auto c = BrowserClient::open(dir);
    if (!c.ok()) return failure(c.status());
    client_ = std::move(c).value();
    val out = success();
    out.set("version", client_->version_id());
    out.set("dim", static_cast<double>(client_->dim()));
    out.set("documents", static_cast<double>(client_->documents()));
    out.set("titles", client_->has_titles());
    return out;
  }

  val agree(const std::string& params_name, const val& params_id, bool floods) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    const Status s = client_->agree(params_name, from_bytes(params_id), floods);
    return s.ok() ? success() : failure(s);
  }

  val key_set(double k) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    auto keys = client_->key_set(static_cast<std::size_t>(k));
    if (!keys.ok()) return failure(keys.status());
    val out = success();
    out.set("paramsId", to_bytes(keys.value().params_id));
    out.set("galoisKeys", to_bytes(keys.value().galois_keys));
    out.set("publicKey", to_bytes(keys.value().public_key));
    return out;
  }

  val prepare(const std::string& text, double k) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    auto p = client_->prepare(text, static_cast<std::size_t>(k));
    if (!p.ok()) return failure(p.status());
    const auto& v = p.value();
    val out = success();
    out.set("id", v.id);
    val ids = val::array();
    for (const auto id : v.candidates) ids.call<void>("push", static_cast<double>(id));
    out.set("candidates", ids);
    out.set("query", to_bytes(v.query));
    out.set("encodeMs", v.encode_ms);
    out.set("scanMs", v.scan_ms);
    out.set("encryptMs", v.encrypt_ms);
    return out;
  }

  val finish(double id, const val& payload, double top) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    auto f = client_->finish(static_cast<std::uint32_t>(id), from_bytes(payload),
                             static_cast<std::size_t>(top));
    if (!f.ok()) return failure(f.status());
    return finished(f.value());
  }

  // {ok, hits: [{doc, score, title}], decryptMs}
  static val finished(const FinishedSearch& f) {
    val hits = val::array();
    for (const auto& h : f.hits) {
      val hit = val::object();
      hit.set("doc", static_cast<double>(h.doc));
      hit.set("score", h.score);
      hit.set("id", h.id);
      hit.set("title", h.title);
      hits.call<void>("push", hit);
    }
    val out = success();
    out.set("hits", hits);
    out.set("decryptMs", f.decrypt_ms);
    return out;
  }

  val open_private(const std::string& dir) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    const Status s = client_->open_private(dir);
    return s.ok() ? success() : failure(s);
  }

  bool private_ready() const { return client_ && client_->private_ready(); }

  val prepare_private(const std::string& text, double k, double clusters) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    auto p = client_->prepare_private(text, static_cast<std::size_t>(k),
                                      static_cast<std::size_t>(clusters));
    if (!p.ok()) return failure(p.status());
    const auto& v = p.value();
    val out = success();
    out.set("id", v.id);
    out.set("queries", v.queries);
    out.set("ciphertexts", to_bytes(v.ciphertexts));
    out.set("encodeMs", v.encode_ms);
    out.set("scanMs", v.scan_ms);
    out.set("masksMs", v.masks_ms);
    out.set("encryptMs", v.encrypt_ms);
    return out;
  }

  val finish_private(double id, const val& answers, double top) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    auto f = client_->finish_private(static_cast<std::uint32_t>(id), from_bytes(answers),
                                     static_cast<std::size_t>(top));
    if (!f.ok()) return failure(f.status());
    return finished(f.value());
  }

  val pir_agree(double backend, const val& info, double max_batch) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    const Status s = client_->pir_agree(static_cast<int>(backend), from_bytes(info),
                                        static_cast<std::size_t>(max_batch));
    return s.ok() ? success() : failure(s);
  }

  bool pir_ready() const { return client_ && client_->pir_ready(); }

  // `docs`: an array of document rows, fetched in one request.
  val prepare_fetch(const val& docs) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    const auto rows = emscripten::convertJSArrayToNumberVector<double>(docs);
    std::vector<std::uint64_t> wanted;
    for (const double d : rows) {
      if (!(d >= 0) || d != static_cast<double>(static_cast<std::uint64_t>(d))) {
        return failure(invalid_argument_error("a document row is a non-negative integer"));
      }
      wanted.push_back(static_cast<std::uint64_t>(d));
    }
    auto p = client_->prepare_fetch(wanted);
    if (!p.ok()) return failure(p.status());
    val out = success();
    out.set("id", p.value().id);
    val queries = val::array();
    for (const auto& q : p.value().queries) queries.call<void>("push", to_bytes(q));
    out.set("queries", queries);
    out.set("queryMs", p.value().query_ms);
    return out;
  }

  // `answers`: PirQueryResponse.answers (an array of Uint8Array).
  val finish_fetch(double id, const val& answers) {
    if (!client_) return failure(failed_precondition_error("open an index first"));
    std::vector<std::string> bytes;
    const auto count = answers["length"].as<unsigned>();
    for (unsigned i = 0; i < count; ++i) bytes.push_back(from_bytes(answers[i]));
    auto f = client_->finish_fetch(static_cast<std::uint32_t>(id), bytes);
    if (!f.ok()) return failure(f.status());
    val out = success();
    val texts = val::array();
    for (const auto& t : f.value().texts) texts.call<void>("push", t);
    out.set("texts", texts);
    val cut = val::array();
    for (const bool c : f.value().cut) cut.call<void>("push", c);
    out.set("cut", cut);
    out.set("decodeMs", f.value().decode_ms);
    return out;
  }

  val project_text(const std::string& text) const {
    if (!client_) return val::null();
    const auto z = client_->project_text(text);
    return val::global("Float32Array").new_(emscripten::typed_memory_view(z.size(), z.data()));
  }

  // The retry policy (client/core/refusal.h) for a refusal the page got by name: whether a
  // rerank refused so is sent again under a new key epoch, and the pause before retry `attempt`
  // of an OVERLOADED call (null: give up, or not a refusal to retry).
  bool renews_key_epoch(const std::string& name, bool budget_renewal_allowed) const {
    const auto row = client::core::refusal(name);
    return row && client::core::renews_key_epoch(row->code, budget_renewal_allowed);
  }
  val backoff_ms(const std::string& name, double attempt, double jitter) const {
    const auto row = client::core::refusal(name);
    if (!row || row->action != client::core::RefusalAction::kBackoff) return val::null();
    const auto pause = client::core::backoff_ms(static_cast<int>(attempt), jitter);
    return pause ? val(*pause) : val::null();
  }

 private:
  // What localStorage held for the key: {"sequence": n, "version": hex}, or nothing. Damaged is
  // DATA_LOSS: refusing is safer than forgetting what was seen.
  static Result<std::optional<client::core::SeenVersion>> parse_seen(const val& text) {
    if (text.isNull() || text.isUndefined()) return std::optional<client::core::SeenVersion>();
    const auto j = nlohmann::json::parse(text.as<std::string>(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("sequence") ||
        !j["sequence"].is_number_unsigned() || !j.contains("version") ||
        !j["version"].is_string()) {
      return data_loss_error("this browser's memory of seen index versions is damaged");
    }
    return std::optional<client::core::SeenVersion>(client::core::SeenVersion{
        j["sequence"].get<std::uint64_t>(), j["version"].get<std::string>()});
  }

  std::optional<index::Manifest> manifest_;
  std::unique_ptr<BrowserClient> client_;
};

}  // namespace
}  // namespace privsearch::web

EMSCRIPTEN_BINDINGS(privsearch_web) {
  using privsearch::web::Handle;
  emscripten::class_<Handle>("BrowserClient")
      .constructor<>()
      .function("readManifest", &Handle::read_manifest)
      .function("keyId", &Handle::key_id)
      .function("trustCheck", &Handle::trust_check)
      .function("renewsKeyEpoch", &Handle::renews_key_epoch)
      .function("backoffMs", &Handle::backoff_ms)
      .function("open", &Handle::open)
      .function("agree", &Handle::agree)
      .function("keySet", &Handle::key_set)
      .function("prepare", &Handle::prepare)
      .function("finish", &Handle::finish)
      .function("openPrivate", &Handle::open_private)
      .function("privateReady", &Handle::private_ready)
      .function("preparePrivate", &Handle::prepare_private)
      .function("finishPrivate", &Handle::finish_private)
      .function("pirAgree", &Handle::pir_agree)
      .function("pirReady", &Handle::pir_ready)
      .function("prepareFetch", &Handle::prepare_fetch)
      .function("finishFetch", &Handle::finish_fetch)
      .function("projectText", &Handle::project_text);
}
