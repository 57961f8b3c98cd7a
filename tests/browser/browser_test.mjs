// The browser client in headless Chromium against a real provider process (ctest label
// `browser`). Cases:
//   search     the page's top 10 for SciFact queries equal the native client's for the same
//              index and provider; the provider's request log holds for the page exactly what it
//              holds for the native client (sizes, counts, outcome, time; never the query); a
//              screenshot of the result page is kept (--artifacts)
//   tampered   one byte of a public artifact changed on its way to the page: DATA_LOSS naming
//              it on the page, no results
//   signature  a signed index: the page pinning the signer's key opens it and remembers its
//              version; a remembered newer sequence (rollback) or another version of the same
//              sequence (fork) is UNTRUSTED_INDEX; pinning another key shows UNTRUSTED_INDEX, no
//              results
//   private    the access-private toggle: the page's top 10 equal the native client's
//              access-private search exactly (integer scores), and the provider logged the same
//              PrivateScore sizes for both; the layout and hint are downloaded on first use
//   fetch      "fetch privately" on the top result: the page's text equals the native client's
//              PIR fetch of the same document, and the provider logged the same PirQuery sizes
//              for both; a fetch against a provider without PIR shows a named error
//   tokens     a provider with --auth-tokens: the page given a token in its URL's fragment loads
//              the index files (behind the tokens too) and searches, and the token leaves the
//              address bar; without a token the page shows the refusal
// Usage: node browser_test.mjs --build BUILD --source SRC --index INDEX --data BEIR --case C
//        [--artifacts DIR]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {
  check, fetchInPage, killAll, launchBrowser, makeCertificate, nativeAnswers, nativeFetch, openPage,
  parseArgs, Provider, rankingDifference, searchInPage,
  tempDir, webRoot,
} from "./harness.mjs";

const LOG_FIELDS = ["bytes_in", "bytes_out", "k", "ms", "outcome", "rpc", "ts_ms"].join(",");

function judgedQueries(data, count) {
  const judged = new Set(fs.readFileSync(path.join(data, "qrels", "test.tsv"), "utf8").split("\n")
    .slice(1).map((l) => l.split("\t")[0]));
  return fs.readFileSync(path.join(data, "queries.jsonl"), "utf8").split("\n").filter(Boolean)
    .map((l) => JSON.parse(l)).filter((q) => judged.has(q._id)).slice(0, count).map((q) => q.text);
}

// A copy of the index whose files are hard links (the test may replace some without touching
// the original).
function linkedCopy(index, dir) {
  const out = path.join(dir, "index");
  fs.mkdirSync(out);
  for (const f of fs.readdirSync(index)) fs.linkSync(path.join(index, f), path.join(out, f));
  return out;
}

async function withSetup(args, name, body) {
  const dir = tempDir(name);
  const cert = makeCertificate(dir);
  const root = webRoot(args, dir);
  let provider, browser;
  try {
    const ctx = { dir, cert, root, index: args.index };
    ctx.startProvider = async (index) => {
      provider = await Provider.start(args, { index, dir, cert, webRootDir: root });
      return provider;
    };
    ctx.browser = async () => {
      browser = await launchBrowser(args, cert, path.join(dir, "profile"));
      return browser;
    };
    await body(ctx);
  } finally {
    if (browser) await browser.close();
    if (provider) await provider.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function searchCase(args) {
  await withSetup(args, "browser-search", async (ctx) => {
    const provider = await ctx.startProvider(args.index);
    const browser = await ctx.browser();
    const cold = await openPage(browser, provider.url);
    check(cold.error === null, `the page did not open: ${JSON.stringify(cold.error)}`);
    const queries = judgedQueries(args.data, 3);
    const figures = { cold_load_ms: cold.loadMs, searches: [] };
    const page = [];
    for (const q of queries) page.push(await searchInPage(cold.page, q));
    const native = nativeAnswers(args, provider, args.index, ctx.cert, queries);
    for (let i = 0; i < queries.length; ++i) {
      const got = page[i];
      check(got.ids.length === 10, `query ${i}: ${got.ids.length} results`);
      const d = rankingDifference(got.ids, got.scores, native[i].ids, native[i].scores);
      check(d === null, `query ${i} "${queries[i]}": page and native client differ at ${d}`);
      figures.searches.push(got.figures);
    }
    if (args.artifacts) {
      fs.mkdirSync(args.artifacts, { recursive: true });
      await cold.page.screenshot({ path: path.join(args.artifacts, "browser-search.png"), fullPage: true });
    }
    // The artifacts are now in the browser's cache: a second page load.
    const cached = await openPage(browser, provider.url);
    check(cached.error === null, "the second load failed");
    figures.cached_load_ms = cached.loadMs;
    // What the provider logged: the same fields for the page's calls as for the native ones,
    // and nothing of the queries.
    const log = provider.requestLog();
    const reranks = log.filter((l) => l.rpc === "Rerank");
    check(reranks.length === 2 * queries.length, `${reranks.length} Rerank log lines`);
    for (const line of log) {
      check(Object.keys(line).sort().join(",") === LOG_FIELDS, `log line ${JSON.stringify(line)}`);
      check(line.outcome === "OK", `a refused call: ${JSON.stringify(line)}`);
    }
    const text = fs.readFileSync(provider.log, "utf8");
    for (const q of queries) check(!text.includes(q), `the query "${q}" in the provider's log`);
    const web = reranks.slice(0, queries.length), cli = reranks.slice(queries.length);
    for (let i = 0; i < queries.length; ++i) {
      check(web[i].k === cli[i].k && Math.abs(web[i].bytes_in - cli[i].bytes_in) < 16 &&
            web[i].bytes_out === cli[i].bytes_out, `page vs native sizes ${JSON.stringify([web[i], cli[i]])}`);
    }
    if (args.artifacts) {
      fs.writeFileSync(path.join(args.artifacts, "browser-search.json"), JSON.stringify(figures, null, 2));
    }
    console.log(JSON.stringify(figures));
  });
}

async function tamperedCase(args) {
  await withSetup(args, "browser-tampered", async (ctx) => {
    // Changed after the provider verified its index at start: what a page gets from a damaged
    // disk, cache or proxy between it and the operator.
    const index = linkedCopy(args.index, ctx.dir);
    const provider = await ctx.startProvider(index);
    const pq = path.join(index, "pq.bin");
    const bytes = fs.readFileSync(pq);
    bytes[bytes.length >> 1] ^= 0x01;
    fs.unlinkSync(pq);
    fs.writeFileSync(pq, bytes);
    const browser = await ctx.browser();
    const opened = await openPage(browser, provider.url);
    check(opened.error !== null, "a tampered artifact was accepted");
    check(opened.error.code === "DATA_LOSS", `error ${JSON.stringify(opened.error)}`);
    check(/pq/.test(opened.error.text), `the error does not name the artifact: ${opened.error.text}`);
    const results = await opened.page.$$eval("#results li", (ls) => ls.length);
    check(results === 0, "results shown");
    if (args.artifacts) {
      fs.mkdirSync(args.artifacts, { recursive: true });
      await opened.page.screenshot({ path: path.join(args.artifacts, "browser-tampered.png") });
    }
    console.log(JSON.stringify(opened.error));
  });
}

async function signatureCase(args) {
  await withSetup(args, "browser-signature", async (ctx) => {
    const index = linkedCopy(args.index, ctx.dir);
    const bin = path.join(args.build, "tools", "privsearch");
    for (const who of ["operator", "other"]) {
      execFileSync(bin, ["keygen-signing", "--out", path.join(ctx.dir, who)], { stdio: "ignore" });
      fs.copyFileSync(path.join(ctx.dir, `${who}.pub`), path.join(ctx.root, `${who}.pub`));
    }
    execFileSync(bin, ["sign", "--index", index, "--key", path.join(ctx.dir, "operator")], { stdio: "ignore" });
    const provider = await ctx.startProvider(index);
    const browser = await ctx.browser();
    const good = await openPage(browser, `${provider.url}?key=operator.pub`);
    check(good.error === null, `the signed index did not open: ${JSON.stringify(good.error)}`);
    const info = await good.page.$eval("#index-info", (e) => e.textContent);
    check(info.includes("signature verified"), info);
    // The page remembers the newest signed version (the client core's trust check): an older
    // sequence is a rollback, the same sequence with another version a fork, both refused.
    const seen = await good.page.evaluate(() => {
      const slot = Object.keys(localStorage).find((k) => k.startsWith("privsearch-seen-"));
      return slot ? { slot, value: JSON.parse(localStorage.getItem(slot)) } : null;
    });
    check(seen !== null && seen.value.sequence >= 1 && /^[0-9a-f]{64}$/.test(seen.value.version),
      `remembered: ${JSON.stringify(seen)}`);
    for (const [kind, remembered] of [
      ["rollback", { sequence: seen.value.sequence + 1, version: "0".repeat(64) }],
      ["fork", { sequence: seen.value.sequence, version: "0".repeat(64) }]]) {
      await good.page.evaluate((slot, v) => localStorage.setItem(slot, v), seen.slot,
        JSON.stringify(remembered));
      const refused = await openPage(browser, `${provider.url}?key=operator.pub`);
      check(refused.error !== null && refused.error.code === "UNTRUSTED_INDEX" &&
        refused.error.text.includes(kind), `${kind}: ${JSON.stringify(refused.error)}`);
      await refused.page.close();
    }
    await good.page.evaluate((slot, v) => localStorage.setItem(slot, v), seen.slot,
      JSON.stringify(seen.value));
    const wrong = await openPage(browser, `${provider.url}?key=other.pub`);
    check(wrong.error !== null && wrong.error.code === "UNTRUSTED_INDEX",
      `another key's pin: ${JSON.stringify(wrong.error)}`);
    const results = await wrong.page.$$eval("#results li", (ls) => ls.length);
    check(results === 0, "results shown");
    console.log(JSON.stringify(wrong.error));
  });
}

async function privateCase(args) {
  await withSetup(args, "browser-private", async (ctx) => {
    const provider = await ctx.startProvider(args.index);
    const browser = await ctx.browser();
    const opened = await openPage(browser, provider.url);
    check(opened.error === null, `the page did not open: ${JSON.stringify(opened.error)}`);
    const queries = judgedQueries(args.data, 3);
    const page = [];
    for (const q of queries) page.push(await searchInPage(opened.page, q, true));
    const native = nativeAnswers(args, provider, args.index, ctx.cert, queries, 10, ["--access-private"]);
    for (let i = 0; i < queries.length; ++i) {
      check(page[i].figures.accessPrivate === "1", `query ${i} was not access-private`);
      check(JSON.stringify(page[i].ids) === JSON.stringify(native[i].ids),
        `query ${i}: page ${page[i].ids} vs native ${native[i].ids}`);
      check(JSON.stringify(page[i].scores) === JSON.stringify(native[i].scores),
        `query ${i}: page scores ${page[i].scores} vs native ${native[i].scores}`);
    }
    const log = provider.requestLog();
    check(!log.some((l) => l.rpc === "Rerank"), "an access-private search sent candidates (Rerank)");
    const scores = log.filter((l) => l.rpc === "PrivateScore");
    check(scores.length === 2 * queries.length, `${scores.length} PrivateScore log lines`);
    for (const line of scores) check(line.outcome === "OK", `a refused call: ${JSON.stringify(line)}`);
    const web = scores.slice(0, queries.length), cli = scores.slice(queries.length);
    for (let i = 0; i < queries.length; ++i) {
      check(Math.abs(web[i].bytes_in - cli[i].bytes_in) < 16 && web[i].bytes_out === cli[i].bytes_out,
        `page vs native PrivateScore sizes ${JSON.stringify([web[i], cli[i]])}`);
      check(web[i].bytes_in === web[0].bytes_in, "PrivateScore request sizes differ between queries");
    }
    const text = fs.readFileSync(provider.log, "utf8");
    for (const q of queries) check(!text.includes(q), `the query "${q}" in the provider's log`);
    if (args.artifacts) {
      fs.mkdirSync(args.artifacts, { recursive: true });
      await opened.page.screenshot({ path: path.join(args.artifacts, "browser-private.png"), fullPage: true });
    }
    console.log(JSON.stringify(page.map((p) => p.figures)));
  });
}

async function fetchCase(args) {
  await withSetup(args, "browser-fetch", async (ctx) => {
    const provider = await ctx.startProvider(args.index);
    const browser = await ctx.browser();
    const opened = await openPage(browser, provider.url);
    check(opened.error === null, `the page did not open: ${JSON.stringify(opened.error)}`);
    const [query] = judgedQueries(args.data, 1);
    const searched = await searchInPage(opened.page, query);
    const got = await fetchInPage(opened.page, 0);
    check(got.error === null, `the private fetch failed: ${JSON.stringify(got.error)}`);
    check(got.doc === searched.ids[0], `fetched ${got.doc}, the top result is ${searched.ids[0]}`);
    check(got.text.length > 0, "an empty payload");
    const native = nativeFetch(args, provider, args.index, ctx.cert, query);
    check(native.fetched_doc === got.doc, `native fetched ${native.fetched_doc}, the page ${got.doc}`);
    check(native.text === got.text, `the page's text differs from the native client's:\n${got.text}\n${native.text}`);
    // A second fetch (PirInfo read once): another document, its own fresh secret.
    const second = await fetchInPage(opened.page, 1);
    check(second.error === null && second.doc === searched.ids[1], `second fetch ${JSON.stringify(second)}`);
    const log = provider.requestLog().filter((l) => l.rpc === "PirQuery");
    check(log.length === 3, `${log.length} PirQuery log lines`);
    for (const line of log) check(line.outcome === "OK", `a refused PirQuery: ${JSON.stringify(line)}`);
    // One query per call from both clients: the same request and answer sizes (the page's
    // protobuf framing may differ by a few bytes).
    // In order: the page's first fetch, the native client's, the page's second.
    check(Math.abs(log[0].bytes_in - log[1].bytes_in) < 16 && log[0].bytes_out === log[1].bytes_out,
      `page vs native PirQuery sizes ${JSON.stringify([log[0], log[1]])}`);
    const text = fs.readFileSync(provider.log, "utf8");
    check(!text.includes(got.text.slice(0, 40)), "the fetched text in the provider's log");
    if (args.artifacts) {
      fs.mkdirSync(args.artifacts, { recursive: true });
      await opened.page.screenshot({ path: path.join(args.artifacts, "browser-fetch.png"), fullPage: true });
    }
    console.log(JSON.stringify({ doc: got.doc, chars: got.text.length, first: got.figures, second: second.figures }));
  });
  // A provider that serves no PIR: the button shows the provider's refusal, named.
  await withSetup(args, "browser-fetch-off", async (ctx) => {
    const provider = await Provider.start(args, { index: args.index, dir: ctx.dir, cert: ctx.cert,
      webRootDir: ctx.root, extra: ["--no-pir"] });
    try {
      const browser = await ctx.browser();
      const opened = await openPage(browser, provider.url);
      check(opened.error === null, `the page did not open: ${JSON.stringify(opened.error)}`);
      const [query] = judgedQueries(args.data, 1);
      await searchInPage(opened.page, query);
      const got = await fetchInPage(opened.page, 0);
      check(got.error !== null && /^[A-Z_]+$/.test(got.error.code), `no named error: ${JSON.stringify(got)}`);
      console.log(JSON.stringify(got.error));
    } finally {
      await provider.stop();
    }
  });
}

const args = parseArgs(process.argv);
// A provider that requires bearer tokens: the page given one in its URL's fragment loads the
// index files (behind the tokens too) and searches, and the token is gone from the address bar;
// without one the page shows the refusal.
async function tokensCase(args) {
  await withSetup(args, "browser-tokens", async (ctx) => {
    const bin = path.join(args.build, "tools", "privsearch");
    const line = execFileSync(bin, ["token", "new", "--identity", "reader", "--out",
      path.join(ctx.dir, "reader.token")], { encoding: "utf8" }).trim().split("\n").pop();
    fs.writeFileSync(path.join(ctx.dir, "tokens"), `${line}\n`);
    const token = fs.readFileSync(path.join(ctx.dir, "reader.token"), "utf8").trim();
    const provider = await Provider.start(args, { index: args.index, dir: ctx.dir, cert: ctx.cert,
      webRootDir: ctx.root, extra: ["--auth-tokens", path.join(ctx.dir, "tokens")] });
    try {
      const browser = await ctx.browser();
      const good = await openPage(browser, `${provider.url}#token=${encodeURIComponent(token)}`);
      check(good.error === null, `the page with a token did not open: ${JSON.stringify(good.error)}`);
      const href = await good.page.evaluate(() => location.href);
      check(!href.includes("token") && !href.includes(token), `the token stayed in the URL: ${href}`);
      const result = await searchInPage(good.page, "vitamin D deficiency and cancer risk");
      check(result.ids.length === 10, `results: ${result.ids}`);
      const none = await openPage(browser, provider.url);
      check(none.error !== null, "the page opened without a token");
      console.log(JSON.stringify({ with_token: "searched", without: none.error }));
    } finally {
      await provider.stop();
    }
  });
}

const cases = {
  search: searchCase, tampered: tamperedCase, signature: signatureCase, private: privateCase,
  fetch: fetchCase, tokens: tokensCase,
};
const run = cases[args.case];
if (!run) throw new Error(`unknown --case ${args.case}`);
const watchdog = setTimeout(() => { console.error("browser test: 240 s watchdog"); killAll(); process.exit(2); }, 240000);
run(args).then(() => { clearTimeout(watchdog); console.log("PASSED"); })
  .catch((e) => { console.error(e.stack || e); process.exitCode = 1; clearTimeout(watchdog); });
