// The browser client's module (privsearch.js + the WebAssembly core) driven from node over
// every judged query of a BEIR collection, against a real provider's browser endpoint, beside
// the native client on the same index and provider: the top 10 must be identical for every
// query, and so nDCG@10. Prints one JSON object: nDCG@10 of both, the identical fraction, and
// the module's per-stage times (median, p95) with the native client's for the same searches.
// A test (ctest label `browser`) and the browser client's benchmark (`make web-bench`).
// Usage: node node_eval.mjs --build BUILD --source SRC --index INDEX --data BEIR [--limit N]
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import {
  check, killAll, makeCertificate, nativeAnswers, parseArgs, Provider, rankingDifference, tempDir,
  webRoot,
} from "./harness.mjs";

function readJsonl(file) {
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

// nDCG@10 with graded relevance from qrels (BEIR's definition: gain rel, discount log2(i + 2)).
function ndcg10(ranked, relevant) {
  let dcg = 0;
  ranked.slice(0, 10).forEach((doc, i) => { dcg += (relevant.get(doc) || 0) / Math.log2(i + 2); });
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, 10);
  let idcg = 0;
  ideal.forEach((g, i) => { idcg += g / Math.log2(i + 2); });
  return idcg === 0 ? 0 : dcg / idcg;
}

function stats(values) {
  const v = [...values].sort((a, b) => a - b);
  const at = (q) => v[Math.min(v.length - 1, Math.floor(q * (v.length - 1) + 0.5))];
  return { median: Number(at(0.5).toFixed(3)), p95: Number(at(0.95).toFixed(3)) };
}

// Node reads the certificates it trusts at start: the parent makes the test's certificate and
// runs this script again with NODE_EXTRA_CA_CERTS naming it.
function runChildWithCertificate() {
  const dir = tempDir("node-eval");
  makeCertificate(dir);
  const child = spawnSync(process.execPath, process.argv.slice(1), {
    stdio: "inherit", timeout: 540000,
    env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dir, "cert.pem"), PRIVSEARCH_EVAL_DIR: dir },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(child.status === null ? 2 : child.status);
}

async function main() {
  const args = parseArgs(process.argv);
  const dir = process.env.PRIVSEARCH_EVAL_DIR;
  const cert = { cert: path.join(dir, "cert.pem"), key: path.join(dir, "key.pem") };
  const root = webRoot(args, dir);
  const provider = await Provider.start(args, { index: args.index, dir, cert, webRootDir: root });
  try {
    // Node resolves the emscripten module's own paths through these (its ES6 output expects them).
    globalThis.__dirname = root;
    globalThis.require = createRequire(import.meta.url);
    const protobuf = createRequire(import.meta.url)(path.resolve(args.source, "web/node_modules/protobufjs"));
    const { open } = await import(path.join(root, "privsearch.js"));
    const createCore = (await import(path.join(root, "privsearch_web.js"))).default;
    const wasmBinary = fs.readFileSync(path.join(root, "privsearch_web.wasm"));
    const client = await open(`${provider.url}index/`, {
      protobuf, protoUrl: `${provider.url}privsearch.proto`, storage: null,
      createCore: (o) => createCore({ ...o, wasmBinary }),
    });

    const corpusIds = readJsonl(path.join(args.data, "corpus.jsonl")).map((d) => d._id);
    const qrels = new Map();
    for (const line of fs.readFileSync(path.join(args.data, "qrels", "test.tsv"), "utf8").split("\n").slice(1)) {
      const [q, d, g] = line.split("\t");
      if (!q || !(Number(g) > 0)) continue;
      if (!qrels.has(q)) qrels.set(q, new Map());
      qrels.get(q).set(d, Number(g));
    }
    let queries = readJsonl(path.join(args.data, "queries.jsonl")).filter((q) => qrels.has(q._id));
    if (args.limit) queries = queries.slice(0, Number(args.limit));

    const times = { encode: [], scan: [], encrypt: [], rpc: [], provider: [], decrypt: [], total: [] };
    const pageTop = [], pageScores = [];
    for (const q of queries) {
      const r = await client.search(q.text, 10);
      // Each hit named by the collection's own id (the signed id table the module holds).
      for (const h of r.hits) check(h.id === corpusIds[h.doc], `row ${h.doc}: id ${h.id}, not ${corpusIds[h.doc]}`);
      pageTop.push(r.hits.map((h) => h.doc));
      pageScores.push(r.hits.map((h) => h.score));
      const t = r.timing;
      times.encode.push(t.encodeMs); times.scan.push(t.scanMs); times.encrypt.push(t.encryptMs);
      times.rpc.push(t.rpcMs); times.provider.push(t.providerMs); times.decrypt.push(t.decryptMs);
      times.total.push(t.totalMs);
    }
    // The top 3 of the first query fetched privately in one request (the core's PirClient, the
    // native fetcher's): the same texts as one fetch each.
    const top3 = pageTop[0].slice(0, 3);
    const batch = await client.fetchPrivately(top3);
    check(batch.texts.length === top3.length, `${batch.texts.length} texts for ${top3.length} documents`);
    for (let i = 0; i < top3.length; ++i) {
      const one = await client.fetchPrivately(top3[i]);
      check(one.text.length > 0 && one.text === batch.texts[i], `document ${top3[i]}: batch and single fetch differ`);
    }
    const native = nativeAnswers(args, provider, args.index, cert, queries.map((q) => q.text));
    check(native.length === queries.length, `${native.length} native answers for ${queries.length} queries`);
    let identical = 0, ndcgPage = 0, ndcgNative = 0;
    const differences = [];
    queries.forEach((q, i) => {
      if (JSON.stringify(pageTop[i]) === JSON.stringify(native[i].ids)) identical += 1;
      const d = rankingDifference(pageTop[i], pageScores[i], native[i].ids, native[i].scores);
      if (d) differences.push(`query ${q._id}: ${d}`);
      ndcgPage += ndcg10(pageTop[i].map((doc) => corpusIds[doc]), qrels.get(q._id));
      ndcgNative += ndcg10(native[i].ids.map((doc) => corpusIds[doc]), qrels.get(q._id));
    });
    // The native client's scalar code paths (PRIVSEARCH_SCALAR=1: no AVX-512, as in the page) on
    // the same searches: what the module's encryption and decryption are compared with.
    const scalar = nativeAnswers(args, provider, args.index, cert, queries.map((q) => q.text), 10, [],
      { ...process.env, PRIVSEARCH_SCALAR: "1" });
    check(scalar.length === queries.length, `${scalar.length} scalar native answers`);
    const nativeScalar = Object.fromEntries(["encrypt", "decrypt"].map((k) =>
      [k, stats(scalar.slice(1).map((a) => a.timing_ms[k]))]));
    const wasm = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, stats(v.slice(1))]));
    const out = {
      collection: path.basename(args.data), queries: queries.length, cpu: os.cpus()[0].model,
      "ndcg@10_wasm": ndcgPage / queries.length, "ndcg@10_native": ndcgNative / queries.length,
      identical_top10_fraction: identical / queries.length,
      open_ms: Number(client.opened.openMs.toFixed(1)), downloaded_bytes: client.opened.downloadedBytes,
      wasm_ms: wasm,
      native_scalar_ms: nativeScalar,
      wasm_over_native_scalar: Object.fromEntries(["encrypt", "decrypt"].map((k) =>
        [k, Number((wasm[k].median / nativeScalar[k].median).toFixed(2))])),
    };
    console.log(JSON.stringify(out));
    // Equal up to near-ties; nDCG within what one swapped near-tie can move it (1 / queries).
    check(differences.length === 0, `rankings differ beyond near-ties: ${differences.join("; ")}`);
    check(Math.abs(out["ndcg@10_wasm"] - out["ndcg@10_native"]) <= 1 / queries.length,
      `nDCG@10 ${out["ndcg@10_wasm"]} vs native ${out["ndcg@10_native"]}`);
  } finally {
    await provider.stop();
  }
}

if (!process.env.PRIVSEARCH_EVAL_DIR) runChildWithCertificate();
const watchdog = setTimeout(() => { console.error("node eval: 480 s watchdog"); killAll(); process.exit(2); }, 480000);
main().then(() => { clearTimeout(watchdog); console.log("PASSED"); })
  .catch((e) => { console.error(e.stack || e); process.exitCode = 1; clearTimeout(watchdog); });
