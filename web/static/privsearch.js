// privsearch in the browser: the typed API around the WebAssembly client core
// (web/wasm/browser_client.h). The page downloads the index's public artifacts once (the HTTP
// cache keeps them, keyed by their SHA-256), checks the manifest's signature when it pins the
// operator's key, and searches through the provider's browser endpoint (HTTP POST + protobuf,
// server/web_gateway.h). The CKKS secret key lives in the WebAssembly memory of this page only:
// it is never stored (a reload makes a new one and uploads new rotation keys, ~0.5 MB), so
// nothing secret outlives the tab.
//
//   const client = await privsearch.open(indexUrl, {pinnedKey, token});
//   const result = await client.search("vitamin D deficiency", 10);
//   result.hits: [{doc, id, score, title}], result.timing, result.bytes (id: the document's own)
//   const hidden = await client.searchPrivately("vitamin D deficiency", 10);  // access-private
//   const doc = await client.fetchPrivately(result.hits[0].doc);   // hintless PIR
//   doc.text, doc.cut (longer than a record: cut), doc.timing, doc.bytes
//
// Errors are PrivsearchError with a `code`: the provider's ErrorCode name (BUDGET_EXHAUSTED,
// UNAUTHENTICATED, ...), the client core's Status name (DATA_LOSS for a tampered artifact,
// FAILED_PRECONDITION, ...), or UNTRUSTED_INDEX / NETWORK for what this module checks itself.

export class PrivsearchError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = "PrivsearchError";
    this.code = code;
  }
}

// The artifacts a search needs (and their update generations "name.g"): the projection, the
// flat PQ codes, the encoder, every update's tombstones; the payloads for titles when served.
const NEEDED = ["projection", "pq", "encoder", "tombstones"];
const OPTIONAL = ["payloads", "payload_digests", "doc_ids"];
// The access-private scoring's public artifacts, fetched the first time the page searches in that
// mode (a page that never does downloads neither).
const PRIVATE_SCORING = ["scoring_layout", "scoring_hint"];
const DEFAULT_CANDIDATES = 100;
const PIR_DATABASE_PAYLOADS = 0;  // privsearch.v1.PirDatabase

function baseName(name) {
  const m = /^(.*)\.(\d+)$/.exec(name);
  return m ? m[1] : name;
}

function hex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

// `token`: the bearer token, for a provider that puts its index files behind tokens too. A 503
// (the endpoint's file transfers are all taken: at most 2 per client, half its threads in all)
// or a 429 (this address has 4 requests inside the endpoint already: the front's limit) is
// retried after its Retry-After, a few times.
async function fetchBytes(url, what, allowMissing = false, token = undefined) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  for (let attempt = 0; ; ++attempt) {
    let res;
    try {
      res = await fetch(url, { cache: "default", headers });
    } catch (e) {
      throw new PrivsearchError("NETWORK", `cannot fetch ${what}: ${e.message}`);
    }
    if ((res.status === 503 || res.status === 429) && attempt < 8) {
      await res.arrayBuffer();
      const wait = Math.min(5, Number(res.headers.get("Retry-After")) || 1) * 1000;
      await new Promise((resolve) => setTimeout(resolve, wait * (0.5 + Math.random() / 2)));
      continue;
    }
    if (allowMissing && res.status === 404) return null;
    if (!res.ok) throw new PrivsearchError("NETWORK", `${what}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  }
}

// The bundle pins the code it loads without a script tag: another byte is UNTRUSTED_CODE.
async function checkHash(bytes, wantHex, what) {
  const got = hex(await crypto.subtle.digest("SHA-256", bytes));
  if (got !== wantHex) {
    throw new PrivsearchError("UNTRUSTED_CODE", `${what} is not the one this page was bundled with`);
  }
}

// The operator's Ed25519 public key from its PEM (SPKI) text, as `privsearch keygen` writes it:
// the WebCrypto key and its 32 raw bytes (the last of the SPKI).
async function importPinnedKey(pem) {
  const body = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
  let key;
  try {
    key = await crypto.subtle.importKey("spki", der, { name: "Ed25519" }, false, ["verify"]);
  } catch (e) {
    throw new PrivsearchError("UNTRUSTED_INDEX", `the pinned key is not an Ed25519 key (${e.message})`);
  }
  return { key, raw: der.slice(der.length - 32) };
}

// manifest.sig against the manifest the core read and the pinned key. The core checks the
// format, the claims and the rollback / fork memory (client/core/trust_check.h, the native
// client's check); only the Ed25519 verification is WebCrypto's, here.
async function checkSignature(core, sigBytes, pinnedPem, storage) {
  if (!sigBytes) throw new PrivsearchError("UNTRUSTED_INDEX", "the index is not signed (no manifest.sig)");
  const { key, raw } = await importPinnedKey(pinnedPem);
  const slot = `privsearch-seen-${core.keyId(raw)}`;
  const claims = core.trustCheck(sigBytes, raw, storage ? storage.getItem(slot) : null);
  if (!claims.ok) throw new PrivsearchError("UNTRUSTED_INDEX", claims.message);
  const ok = await crypto.subtle.verify({ name: "Ed25519" }, key, claims.signature, claims.message);
  if (!ok) throw new PrivsearchError("UNTRUSTED_INDEX", "the manifest signature does not verify");
  if (storage && claims.remember) storage.setItem(slot, claims.seen);
}

// The Provider RPCs over the browser endpoint.
class Endpoint {
  constructor(base, proto, token, core) {
    this.base = base.replace(/\/$/, "");
    this.token = token;
    this.core = core;  // the retry policy (client/core/refusal.h)
    this.types = {};
    for (const name of ["ServerInfoRequest", "ServerInfo", "UploadKeysRequest", "UploadKeysResponse",
                        "RerankRequest", "RerankResponse", "PirInfoRequest", "PirInfo",
                        "PirQueryRequest", "PirQueryResponse", "PrivateScoreRequest",
                        "PrivateScoreResponse"]) {
      this.types[name] = proto.lookupType(`privsearch.v1.${name}`);
    }
    this.errorCode = proto.lookupEnum("privsearch.v1.ErrorCode");
  }

  // OVERLOADED (the in-flight or per-client share is taken, e.g. by the previous call's admission
  // until the provider has finished it) is retried after the core's jittered, doubling pauses,
  // the native transport's; every other refusal is the caller's.
  async call(method, requestType, responseType, fields, bytes) {
    for (let attempt = 0; ; ++attempt) {
      try {
        return await this.callOnce(method, requestType, responseType, fields, bytes);
      } catch (e) {
        const pause = this.core.backoffMs(e.code, attempt, 0.5 + Math.random());
        if (pause === null) throw e;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  async callOnce(method, requestType, responseType, fields, bytes) {
    const type = this.types[requestType];
    const body = type.encode(type.create(fields)).finish();
    const headers = { "Content-Type": "application/x-protobuf" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let res;
    try {
      res = await fetch(`${this.base}/privsearch.v1.Provider/${method}`, { method: "POST", headers, body });
    } catch (e) {
      throw new PrivsearchError("NETWORK", `${method}: ${e.message}`);
    }
    const answer = new Uint8Array(await res.arrayBuffer());
    if (bytes) {
      bytes.sent += body.length;
      bytes.received += answer.length;
    }
    if (!res.ok) {
      let error = { code: `HTTP_${res.status}`, message: method };
      try {
        error = JSON.parse(new TextDecoder().decode(answer));
      } catch (e) { /* not JSON: keep the status */ }
      throw new PrivsearchError(error.code, error.message);
    }
    const out = this.types[responseType];
    const message = out.toObject(out.decode(answer), { longs: Number, defaults: true, oneofs: true });
    if (message.error && message.error.code) {
      const name = this.errorCode.valuesById[message.error.code] || String(message.error.code);
      throw new PrivsearchError(name, message.error.message);
    }
    return message;
  }
}

function check(result) {
  if (!result.ok) throw new PrivsearchError(result.code, result.message);
  return result;
}

export class Client {
  constructor(core, endpoint, info, opened, files) {
    this.core = core;
    this.endpoint = endpoint;
    this.info = info;
    this.opened = opened;
    this.files = files;  // {module, base, manifest}: where later artifacts come from and go
    this.keyIds = new Map();  // K -> the provider's key id of K's current key epoch
    this.busy = Promise.resolve();  // one search at a time: the core has one owner
  }

  get version() { return this.opened.version; }
  get documents() { return this.opened.documents; }
  get hasTitles() { return this.opened.titles; }

  // A new key epoch for K: fresh rotation keys (and the public key when the provider floods).
  async uploadKeys(k, bytes) {
    const keys = check(this.core.keySet(k));
    const req = { paramsId: keys.paramsId, galoisKeys: keys.galoisKeys };
    if (this.info.floodSecurityBits > 0) req.publicKey = keys.publicKey;
    const answer = await this.endpoint.call("UploadKeys", "UploadKeysRequest", "UploadKeysResponse", req, bytes);
    this.keyIds.set(k, answer.keyId);
  }

  // The top `top` documents for `text` among K candidates: encoded, projected and scanned here,
  // the K candidates' scores computed by the provider under CKKS and decrypted here.
  search(text, top = 10, k = DEFAULT_CANDIDATES) {
    const run = this.busy.then(() => this.searchNow(text, top, k));
    this.busy = run.catch(() => {});
    return run;
  }

  async searchNow(text, top, k) {
    const t0 = performance.now();
    k = Math.min(k, this.documents);
    const bytes = { sent: 0, received: 0 };
    const timing = { keyUploadMs: 0 };
    const newEpoch = async () => {
      const tk = performance.now();
      await this.uploadKeys(k, bytes);
      timing.keyUploadMs += performance.now() - tk;
    };
    if (!this.keyIds.has(k)) await newEpoch();
    const prepared = check(this.core.prepare(text, k));
    Object.assign(timing, { encodeMs: prepared.encodeMs, scanMs: prepared.scanMs, encryptMs: prepared.encryptMs });
    const forget = () => this.core.finish(prepared.id, new Uint8Array(0), 0);
    const tr = performance.now();
    let answer;
    for (let renewals = 0; !answer; ++renewals) {
      try {
        answer = await this.endpoint.call("Rerank", "RerankRequest", "RerankResponse", {
          keyId: this.keyIds.get(k), artifactVersion: this.version,
          candidateIds: prepared.candidates, query: prepared.query,
        }, bytes);
      } catch (e) {
        // An evicted key set or a spent budget: a new key epoch and the same request, once (the
        // native client's policy, client/core/refusal.h).
        if (renewals > 0 || !this.core.renewsKeyEpoch(e.code, true)) {
          forget();
          throw e;
        }
        this.keyIds.delete(k);
        await newEpoch().catch((up) => { forget(); throw up; });
      }
    }
    timing.rpcMs = performance.now() - tr;
    timing.providerMs = answer.providerMs;
    const finished = check(this.core.finish(prepared.id, answer.payload, top));
    timing.decryptMs = finished.decryptMs;
    timing.totalMs = performance.now() - t0;
    return { hits: finished.hits, candidates: k, timing, bytes, scoresRemaining: answer.scoresRemaining };
  }

  // The RPC of a prepared request; when it fails the core forgets what it prepared (the secrets
  // and masks are never used again).
  async callOrForget(method, requestType, responseType, fields, bytes, forget) {
    try {
      return await this.endpoint.call(method, requestType, responseType, fields, bytes);
    } catch (e) {
      forget();
      throw e;
    }
  }

  // The top `top` documents for `text` by access-private scoring: K local candidates choose m
  // clusters, the provider scores every document of those clusters under LWE and sees no
  // candidate, no cluster and no score. The first call downloads the layout and hint.
  searchPrivately(text, top = 10, k = DEFAULT_CANDIDATES) {
    const run = this.busy.then(() => this.searchPrivatelyNow(text, top, k));
    this.busy = run.catch(() => {});
    return run;
  }

  async openPrivate(bytes) {
    const { module, base, manifest, token } = this.files;
    const wanted = manifest.artifacts.filter((a) => PRIVATE_SCORING.includes(baseName(a.name)));
    if (wanted.length < PRIVATE_SCORING.length) {
      throw new PrivsearchError("FAILED_PRECONDITION", "this index has no access-private scoring artifacts");
    }
    await Promise.all(wanted.map(async (a) => {
      const data = await fetchBytes(`${base}${a.file}?sha256=${a.sha256}`, a.file, false, token);
      bytes.received += data.length;
      module.FS.writeFile(`/index/${a.file}`, data);
    }));
    check(this.core.openPrivate("/index"));  // hashed against the manifest like the others
  }

  async searchPrivatelyNow(text, top, k) {
    const t0 = performance.now();
    const bytes = { sent: 0, received: 0 };
    const timing = {};
    if (!this.core.privateReady()) {
      const download = { sent: 0, received: 0 };
      const td = performance.now();
      await this.openPrivate(download);
      timing.artifactsMs = performance.now() - td;
      timing.artifactBytes = download.received;
    }
    const prepared = check(this.core.preparePrivate(text, Math.min(k, this.documents), 0));
    Object.assign(timing, { encodeMs: prepared.encodeMs, scanMs: prepared.scanMs,
                            masksMs: prepared.masksMs, encryptMs: prepared.encryptMs });
    const tr = performance.now();
    const answer = await this.callOrForget("PrivateScore", "PrivateScoreRequest", "PrivateScoreResponse", {
      artifactVersion: this.version, queries: prepared.queries, ciphertexts: prepared.ciphertexts,
    }, bytes, () => this.core.finishPrivate(prepared.id, new Uint8Array(0), 0));
    timing.rpcMs = performance.now() - tr;
    timing.providerMs = answer.providerMs;
    const finished = check(this.core.finishPrivate(prepared.id, answer.answers, top));
    timing.decryptMs = finished.decryptMs;
    timing.totalMs = performance.now() - t0;
    return { hits: finished.hits, clusters: prepared.queries, timing, bytes, accessPrivate: true };
  }

  // Document `doc`'s payload by hintless PIR (or, for an array of documents, theirs, in one
  // request): the provider answers a query over every payload and learns neither the documents
  // nor the text. The first call reads the provider's PirInfo.
  fetchPrivately(doc) {
    const run = this.busy.then(() => this.fetchNow(doc));
    this.busy = run.catch(() => {});
    return run;
  }

  async fetchNow(doc) {
    const t0 = performance.now();
    const bytes = { sent: 0, received: 0 };
    const timing = {};
    if (!this.core.pirReady()) {
      const info = await this.endpoint.call("GetPirInfo", "PirInfoRequest", "PirInfo",
        { database: PIR_DATABASE_PAYLOADS }, bytes);
      check(this.core.pirAgree(info.backend, info.info, info.maxBatch));
    }
    const prepared = check(this.core.prepareFetch(Array.isArray(doc) ? doc : [doc]));
    timing.queryMs = prepared.queryMs;
    const tr = performance.now();
    const answer = await this.callOrForget("PirQuery", "PirQueryRequest", "PirQueryResponse", {
      artifactVersion: this.version, database: PIR_DATABASE_PAYLOADS, queries: prepared.queries,
    }, bytes, () => this.core.finishFetch(prepared.id, []));
    timing.rpcMs = performance.now() - tr;
    timing.providerMs = answer.providerMs;
    // The core checks the count, decodes, and verifies every record against the signed index.
    const finished = check(this.core.finishFetch(prepared.id, answer.answers));
    timing.decodeMs = finished.decodeMs;
    timing.totalMs = performance.now() - t0;
    // cut: the document was longer than the index's records and ends cut (" [...]").
    if (Array.isArray(doc)) return { docs: doc, texts: finished.texts, cut: finished.cut, timing, bytes };
    return { doc, text: finished.texts[0], cut: finished.cut[0], timing, bytes };
  }
}

// Opens the index at `indexUrl` (a directory URL holding manifest.json; the provider's
// /index/) against the provider at options.endpoint (default: the index URL's origin).
//   options.pinnedKey   the operator's Ed25519 public key (PEM): the manifest must be signed by it
//   options.token       a bearer token, when the provider requires one
//   options.protobuf    the protobufjs library (default: the page's global `protobuf`)
//   options.createCore  the WebAssembly module's factory (default: import ./privsearch_web.js)
//   options.storage     where seen signed versions are remembered (default: localStorage)
//   options.onProgress  called with a line of text for each step of a first load
//   options.wasmSha256, options.protoSha256  the WebAssembly core's and the protocol file's
//                       SHA-256 (hex), from a static bundle's configuration (web/bundle.mjs):
//                       either one changed is UNTRUSTED_CODE before it is instantiated or parsed
export async function open(indexUrl, options = {}) {
  const progress = options.onProgress || (() => {});
  const base = indexUrl.endsWith("/") ? indexUrl : `${indexUrl}/`;
  const protobuf = options.protobuf || globalThis.protobuf;
  if (!protobuf) throw new PrivsearchError("FAILED_PRECONDITION", "no protobuf runtime (load protobuf.min.js)");
  const createCore = options.createCore || (await import("./privsearch_web.js")).default;
  const t0 = performance.now();
  const moduleOptions = { ...(options.moduleOptions || {}) };
  if (options.wasmSha256) {  // the core from bytes checked here, not fetched by the glue
    const wasm = await fetchBytes(new URL("privsearch_web.wasm", import.meta.url).href, "privsearch_web.wasm");
    await checkHash(wasm, options.wasmSha256, "privsearch_web.wasm");
    moduleOptions.wasmBinary = wasm;
  }
  const [module, protoText] = await Promise.all([
    createCore(moduleOptions),
    fetchBytes(options.protoUrl || new URL("privsearch.proto", import.meta.url).href, "privsearch.proto"),
  ]);
  if (options.protoSha256) await checkHash(protoText, options.protoSha256, "privsearch.proto");
  const proto = protobuf.parse(new TextDecoder().decode(protoText)).root;
  const core = new module.BrowserClient();
  module.FS.mkdir("/index");
  progress("manifest");
  module.FS.writeFile("/index/manifest.json", await fetchBytes(`${base}manifest.json`, "manifest.json", false, options.token));
  const manifest = check(core.readManifest("/index"));
  if (options.pinnedKey) {
    const sig = await fetchBytes(`${base}manifest.sig`, "manifest.sig", true, options.token);
    await checkSignature(core, sig, options.pinnedKey,
      options.storage !== undefined ? options.storage : globalThis.localStorage);
    module.FS.writeFile("/index/manifest.sig", sig);
  }
  const wanted = manifest.artifacts.filter((a) => NEEDED.includes(baseName(a.name)) ||
                                                  OPTIONAL.includes(baseName(a.name)));
  let downloaded = 0;
  await Promise.all(wanted.map(async (a) => {
    const optional = OPTIONAL.includes(baseName(a.name));
    const bytes = await fetchBytes(`${base}${a.file}?sha256=${a.sha256}`, a.file, optional, options.token);
    if (bytes === null) return;  // the provider does not serve it (titles off)
    downloaded += bytes.length;
    progress(`${a.name} (${(bytes.length / 1e6).toFixed(1)} MB)`);
    module.FS.writeFile(`/index/${a.file}`, bytes);
  }));
  // The core re-hashes every artifact against the manifest: a changed byte is DATA_LOSS.
  const opened = check(core.open("/index"));
  const endpoint = new Endpoint(options.endpoint || new URL(base).origin, proto, options.token, core);
  const info = await endpoint.call("GetServerInfo", "ServerInfoRequest", "ServerInfo", {});
  if (info.artifactVersion !== opened.version && !info.retainedVersions.includes(opened.version)) {
    throw new PrivsearchError("WRONG_ARTIFACT_VERSION",
      `the provider serves ${info.artifactVersion.slice(0, 16)}; this index is ${opened.version.slice(0, 16)}`);
  }
  check(core.agree(info.paramsName, info.paramsId, info.floodSecurityBits > 0));
  opened.openMs = performance.now() - t0;
  opened.downloadedBytes = downloaded;
  return new Client(core, endpoint, info, opened, { module, base, manifest, token: options.token });
}
