// The search page: opens the provider's index through privsearch.js, then searches as the user
// types and submits. As a static bundle (web/bundle.mjs, from an origin apart from the
// provider), its configuration names the provider and pins the operator's index-signing key;
// served by the provider itself (--web-root, for development), the URL parameter key=<URL of the
// operator's Ed25519 public key (PEM)> pins it. A bearer token, for a provider that requires one,
// comes in the URL's fragment (#token=...), which browsers never send to a server, and is
// removed from the address bar (and so from history and bookmarks) once read. Without a pinned
// key the page says it is unverified.
import { open } from "./privsearch.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

// The bearer token from the fragment, then out of the address bar.
function takeToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get("token") || undefined;
  if (token) history.replaceState(null, "", location.pathname + location.search);
  return token;
}

function showError(e) {
  $("error").hidden = false;
  $("error").dataset.code = e.code || "ERROR";
  $("error").textContent = e.code ? `${e.code}: ${e.message.replace(`${e.code}: `, "")}` : String(e);
  $("status").textContent = "failed";
}

// Fetches document `doc` by hintless PIR and shows its text under its result.
async function fetchPrivately(client, li, doc) {
  const button = li.querySelector("button");
  button.disabled = true;
  $("error").hidden = true;
  $("status").textContent = `fetching document ${doc} privately…`;
  try {
    const got = await client.fetchPrivately(doc);
    const text = li.querySelector(".payload") || document.createElement("p");
    text.className = "payload";
    text.textContent = got.text;
    text.dataset.cut = got.cut;
    const t = got.timing;
    text.title = `${t.totalMs.toFixed(1)} ms (query ${t.queryMs.toFixed(1)}, provider ` +
      `${t.providerMs.toFixed(1)}, round trip ${t.rpcMs.toFixed(1)}, decode ${t.decodeMs.toFixed(1)}) · ` +
      `${got.bytes.sent.toLocaleString("en")} B sent, ${got.bytes.received.toLocaleString("en")} B received`;
    text.dataset.totalMs = t.totalMs;
    text.dataset.sent = got.bytes.sent;
    text.dataset.received = got.bytes.received;
    li.append(text);
    // A document longer than the index's records arrives cut: said, not hidden.
    li.querySelector(".cut-note")?.remove();
    if (got.cut) {
      const note = document.createElement("small");
      note.className = "cut-note";
      note.textContent = "(cut: this document is longer than the index's records)";
      li.append(note);
    }
    $("status").textContent = `fetched privately: ${text.title}`;
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
  }
}

function render(client, result) {
  const list = $("results");
  list.replaceChildren();
  for (const hit of result.hits) {
    const li = document.createElement("li");
    li.dataset.doc = hit.doc;
    li.dataset.id = hit.id;
    li.dataset.score = hit.score;
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = hit.title || `document ${hit.doc}`;
    const doc = document.createElement("span");
    doc.className = "doc";
    doc.textContent = hit.id ? hit.id : `row ${hit.doc}`;  // the document's own id
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = hit.score.toFixed(4);
    const fetchButton = document.createElement("button");
    fetchButton.type = "button";
    fetchButton.className = "fetch";
    fetchButton.textContent = "fetch privately";
    fetchButton.title = "the document's text by hintless PIR: the provider does not learn which";
    fetchButton.addEventListener("click", () => fetchPrivately(client, li, hit.doc));
    li.append(title, doc, score, fetchButton);
    list.append(li);
  }
  const t = result.timing;
  const scope = result.accessPrivate
    ? `access-private: every document of ${result.clusters} clusters scored`
    : `of ${result.candidates} candidates`;
  $("figures").hidden = false;
  $("figures").textContent =
    `${result.hits.length} ${scope} · ${t.totalMs.toFixed(1)} ms ` +
    `(encode ${t.encodeMs.toFixed(1)}, scan ${t.scanMs.toFixed(1)}, ` +
    `${t.masksMs ? `LWE masks ${t.masksMs.toFixed(1)}, ` : ""}encrypt ${t.encryptMs.toFixed(1)}, ` +
    `provider ${t.providerMs.toFixed(1)}, round trip ${t.rpcMs.toFixed(1)}, decrypt ${t.decryptMs.toFixed(1)}` +
    `${t.keyUploadMs ? `, key upload ${t.keyUploadMs.toFixed(0)}` : ""}` +
    `${t.artifactsMs ? `, layout and hint ${(t.artifactBytes / 1e6).toFixed(1)} MB in ${t.artifactsMs.toFixed(0)}` : ""}) · ` +
    `${result.bytes.sent.toLocaleString("en")} B sent, ${result.bytes.received.toLocaleString("en")} B received`;
  $("figures").dataset.totalMs = t.totalMs;
  $("figures").dataset.accessPrivate = result.accessPrivate ? "1" : "0";
  $("figures").dataset.sent = result.bytes.sent;
  $("figures").dataset.received = result.bytes.received;
}

// The static bundle's configuration (web/bundle.mjs), or null when the provider serves the page.
function bundleConfig() {
  const node = document.getElementById("privsearch-bundle");
  return node ? JSON.parse(node.textContent) : null;
}

// Whether the index's signer is pinned, shown for as long as the page is open.
function showTrust(pinned, bundled) {
  const el = $("trust");
  el.dataset.state = pinned ? "verified" : "unverified";
  el.textContent = pinned
    ? `index signature verified against the operator's key${bundled ? " in this bundle" : ""}`
    : "UNVERIFIED: no index-signing key is pinned, so the provider could serve any index" +
      (bundled ? "" : " (and this page's code comes from the provider itself)");
}

async function pinnedKeyOf(config) {
  if (config) return config.pinnedKey;
  if (!params.get("key")) return undefined;
  const res = await fetch(params.get("key"));
  if (!res.ok) throw Object.assign(new Error(`cannot load the pinned key (HTTP ${res.status})`), { code: "UNTRUSTED_INDEX" });
  return res.text();
}

async function main() {
  const t0 = performance.now();
  const config = bundleConfig();
  const pinnedKey = await pinnedKeyOf(config);
  const base = config
    ? config.index || `${config.provider}/index/`
    : new URL("index/", location.href).href;
  const client = await open(base, {
    pinnedKey, token: takeToken(),
    endpoint: config ? config.provider : undefined,
    wasmSha256: config ? config.wasmSha256 : undefined,
    protoSha256: config ? config.protoSha256 : undefined,
    onProgress: (step) => { $("status").textContent = `loading ${step}…`; },
  });
  showTrust(Boolean(pinnedKey), Boolean(config));
  const info = client.opened;
  $("index-info").textContent = `index ${info.version.slice(0, 16)} · ${info.documents} documents · ` +
    `d' = ${info.dim} · ${(info.downloadedBytes / 1e6).toFixed(1)} MB of public artifacts` +
    (pinnedKey ? " · signature verified" : "");
  $("status").textContent = `ready in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
  document.body.dataset.readyMs = performance.now() - t0;
  $("query").disabled = false;
  $("go").disabled = false;
  $("access-private").disabled = false;
  $("query").placeholder = "search the collection privately";
  $("query").focus();
  $("search-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("query").value.trim();
    if (!text) return;
    $("error").hidden = true;
    $("status").textContent = "searching…";
    try {
      const result = $("access-private").checked
        ? await client.searchPrivately(text, 10)
        : await client.search(text, 10);
      render(client, result);
      $("status").textContent = "done";
      document.body.dataset.searches = Number(document.body.dataset.searches || 0) + 1;
    } catch (e) {
      showError(e);
    }
  });
}

main().catch(showError);
