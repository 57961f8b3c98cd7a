// What the browser tests share: a TLS certificate made for the test, the provider process with
// its browser endpoint (started here, stopped by its pid), the native CLI client for the same
// query, and headless Chromium through puppeteer-core. Every wait is bounded.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

export function parseArgs(argv) {
  const out = {};
  for (let i = 2; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const need of ["build", "source", "index"]) {
    if (!out[need]) throw new Error(`missing --${need}`);
  }
  return out;
}

export function check(condition, message) {
  if (!condition) throw new Error(`FAILED: ${message}`);
}

async function waitFor(predicate, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = predicate();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

export function tempDir(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `privsearch-${name}-`));
}

// A self-signed P-256 certificate for 127.0.0.1, and its SPKI hash for Chromium's pin.
export function makeCertificate(dir) {
  const key = path.join(dir, "key.pem"), cert = path.join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], { stdio: "ignore" });
  const der = execFileSync("sh", ["-c",
    `openssl x509 -in '${cert}' -pubkey -noout | openssl pkey -pubin -outform der`]);
  const crypto = createRequire(import.meta.url)("node:crypto");
  const spki = crypto.createHash("sha256").update(der).digest("base64");
  return { key, cert, spki };
}

// The web page's files (BUILD/web, from `make web`) copied so a test may add files to it.
export function webRoot(args, dir) {
  const src = path.join(args.build, "web");
  check(fs.existsSync(path.join(src, "privsearch_web.wasm")),
    `${src} has no WebAssembly client: run \`make web\` (scripts/build_web.sh) first`);
  const out = path.join(dir, "web");
  fs.cpSync(src, out, { recursive: true });
  return out;
}

const started = new Set();  // every provider child still running, for the watchdog

// SIGKILL to every provider this process started (by pid), when a test must give up.
export function killAll() {
  for (const p of started) p.child.kill("SIGKILL");
}

export class Provider {
  // Starts privsearch-provider on `index` with the browser endpoint; resolves when both ports
  // are written.
  static async start(args, { index, dir, cert, webRootDir, extra = [] }) {
    const p = new Provider();
    p.log = path.join(dir, "provider.log");
    const portFile = path.join(dir, "grpc.port"), webPortFile = path.join(dir, "web.port");
    const bin = path.join(args.build, "tools", "privsearch-provider");
    const logFd = fs.openSync(p.log, "w");
    const root = webRootDir ? ["--web-root", webRootDir] : [];  // null: no page (a bundle's test)
    p.child = spawn(bin, ["--index", index, "--listen", "127.0.0.1:0", "--cert", cert.cert,
      "--key", cert.key, "--state", "memory", "--web-listen", "127.0.0.1:0", ...root,
      "--web-payloads", "--port-file", portFile, "--web-port-file", webPortFile,
      ...extra], { stdio: ["ignore", "ignore", logFd] });
    p.exited = new Promise((resolve) => p.child.on("exit", (code) => resolve(code)));
    started.add(p);
    p.child.on("exit", () => { p.dead = true; started.delete(p); });
    await waitFor(() => p.dead || (fs.existsSync(webPortFile) && fs.existsSync(portFile)), 120000,
      "the provider's ports");
    check(!p.dead, `the provider exited: ${fs.readFileSync(p.log, "utf8")}`);
    p.port = Number(fs.readFileSync(portFile, "utf8").trim());
    p.webPort = Number(fs.readFileSync(webPortFile, "utf8").trim());
    p.url = `https://127.0.0.1:${p.webPort}/`;
    return p;
  }

  requestLog() {
    return fs.readFileSync(this.log, "utf8").split("\n").filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
  }

  // SIGTERM by pid, then SIGKILL when it has not exited within 10 s.
  async stop() {
    if (this.dead) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10000);
    await this.exited;
    clearTimeout(timer);
  }
}

// The native client's answers for `queries` (privsearch search --json, one object per query:
// ids and scores).
export function nativeAnswers(args, provider, index, cert, queries, top = 10, extra = [], env = process.env) {
  const bin = path.join(args.build, "tools", "privsearch");
  const out = execFileSync(bin, ["search", "--index", index, "--port", String(provider.port),
    "--ca", cert.cert, "--json", "--top", String(top), ...extra, ...queries],
  { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "ignore"], timeout: 300000, env });
  return out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

export function nativeTop(args, provider, index, cert, queries, top = 10) {
  return nativeAnswers(args, provider, index, cert, queries, top).map((a) => a.ids);
}

// Two rankings of the same candidates by two encryptions of the same query agree up to the
// order of near-ties: CKKS decrypts each score within ~1e-4 (the row-norm bound's 2^-18), so
// two documents whose scores are closer than `tie` may swap. Returns null when they agree,
// else the first position that differs by more.
export function rankingDifference(ids, scores, refIds, refScores, tie = 1e-3) {
  if (ids.length !== refIds.length) return `lengths ${ids.length} != ${refIds.length}`;
  for (let i = 0; i < ids.length; ++i) {
    if (ids[i] === refIds[i]) continue;
    if (Math.abs(scores[i] - refScores[i]) > tie) {
      return `position ${i}: ${ids[i]} (${scores[i]}) vs ${refIds[i]} (${refScores[i]})`;
    }
  }
  return null;
}

export async function launchBrowser(args, cert, profileDir) {
  const require = createRequire(import.meta.url);
  const puppeteer = require(path.resolve(args.source, "web", "node_modules", "puppeteer-core"));
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    timeout: 60000,
    args: ["--no-sandbox", "--disable-gpu", `--ignore-certificate-errors-spki-list=${cert.spki}`,
      `--user-data-dir=${profileDir}`],
  });
}

// Opens the page and waits (bounded) until it is ready or shows an error.
export async function openPage(browser, url) {
  const page = await browser.newPage();
  page.setDefaultTimeout(60000);
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.readyMs ||
    !document.getElementById("error").hidden);
  const error = await page.$eval("#error", (e) => (e.hidden ? null : { code: e.dataset.code, text: e.textContent }));
  return { page, error, loadMs: Date.now() - t0 };
}

export async function searchInPage(page, text, accessPrivate = false) {
  const before = Number(await page.evaluate(() => document.body.dataset.searches || 0));
  await page.$eval("#access-private", (e, on) => { e.checked = on; }, accessPrivate);
  await page.$eval("#query", (e) => { e.value = ""; });
  await page.type("#query", text);
  await page.click("#go");
  await page.waitForFunction((n) => Number(document.body.dataset.searches || 0) > n ||
    !document.getElementById("error").hidden, {}, before);
  const error = await page.$eval("#error", (e) => (e.hidden ? null : e.textContent));
  check(error === null, `the page shows an error: ${error}`);
  const ids = await page.$$eval("#results li", (ls) => ls.map((l) => Number(l.dataset.doc)));
  const scores = await page.$$eval("#results li", (ls) => ls.map((l) => Number(l.dataset.score)));
  const figures = await page.$eval("#figures", (e) => ({ ...e.dataset }));
  return { ids, scores, figures };
}

// Clicks "fetch privately" on result `position` of the page's last search and waits (bounded)
// for its text or an error.
export async function fetchInPage(page, position) {
  await page.$eval("#error", (e) => { e.hidden = true; });
  const items = await page.$$("#results li");
  check(items.length > position, `no result ${position} to fetch`);
  const button = await items[position].$("button.fetch");
  check(button !== null, "no fetch button");
  await button.click();
  await page.waitForFunction((i) => document.querySelectorAll("#results li")[i].querySelector(".payload") ||
    !document.getElementById("error").hidden, {}, position);
  const error = await page.$eval("#error", (e) => (e.hidden ? null : { code: e.dataset.code, text: e.textContent }));
  if (error) return { error };
  return page.$$eval("#results li", (ls, i) => {
    const p = ls[i].querySelector(".payload");
    return { error: null, doc: Number(ls[i].dataset.doc), text: p.textContent, figures: { ...p.dataset } };
  }, position);
}

// The native client's top result for `query` and that document's payload by PIR (privsearch
// search --fetch 1 --json).
export function nativeFetch(args, provider, index, cert, query) {
  const bin = path.join(args.build, "tools", "privsearch");
  const out = execFileSync(bin, ["search", "--index", index, "--port", String(provider.port),
    "--ca", cert.cert, "--json", "--top", "10", "--fetch", "1", query],
  { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "ignore"], timeout: 300000 });
  const lines = out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  const fetched = lines.find((l) => l.fetched_doc !== undefined);
  check(fetched !== undefined, `the native client fetched nothing: ${out}`);
  return fetched;
}

// A static file server on 127.0.0.1 (any free port) for a page bundle: the page's origin apart
// from the provider's (http://127.0.0.1 is a secure context). GET and HEAD only, no listing.
export class StaticServer {
  static async start(dir) {
    const http = createRequire(import.meta.url)("node:http");
    const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript",
      ".css": "text/css", ".wasm": "application/wasm", ".proto": "text/plain", ".pub": "text/plain" };
    const s = new StaticServer();
    s.server = http.createServer((req, res) => {
      const name = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
      const file = path.join(dir, name);
      if (name.includes("..") || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "Content-Type": types[path.extname(file)] || "application/octet-stream",
        "Cache-Control": "no-store" });
      res.end(fs.readFileSync(file));
    });
    await new Promise((resolve) => s.server.listen(0, "127.0.0.1", resolve));
    s.port = s.server.address().port;
    s.origin = `http://127.0.0.1:${s.port}`;
    return s;
  }

  stop() {
    return new Promise((resolve) => { this.server.closeAllConnections(); this.server.close(resolve); });
  }
}
