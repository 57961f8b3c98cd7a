// The page as a static bundle from its own origin (web/bundle.mjs; ctest browser_bundle), in
// headless Chromium against a real provider process that serves no page at all:
//  - the bundle pinning the operator's key opens the signed index, says it is verified, and
//    searches (the provider named by the bundle, --web-origin naming the bundle's origin);
//  - its Content-Security-Policy stops the page's code from reaching any other origin;
//  - one byte changed in a script the page loads (privsearch.js) or in the WebAssembly core: the
//    browser refuses the script (Subresource Integrity), the page checks the core, and nothing
//    reaches the provider: no key upload, no search;
//  - a bundle without a key shows the "unverified" state; with --index-url the index files come
//    from the static origin's copy and the provider only answers the calls.
// Usage: node bundle_test.mjs --build BUILD --source SRC --index INDEX --data BEIR
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {
  check, killAll, launchBrowser, makeCertificate, parseArgs, Provider, searchInPage,
  StaticServer, tempDir,
} from "./harness.mjs";

function bundle(args, dir, provider, key, indexUrl) {
  const out = path.join(dir, key ? "bundle" : "bundle-unpinned");
  const extra = [...(key ? ["--signing-key", key] : []), ...(indexUrl ? ["--index-url", indexUrl] : [])];
  execFileSync(process.execPath, [path.join(args.source, "web", "bundle.mjs"), "--from",
    path.join(args.build, "web"), "--out", out, "--provider", `https://127.0.0.1:${provider.webPort}`,
    ...extra], { stdio: "ignore" });
  return out;
}

// Opens the bundle's page; ready, an error shown, or neither within `ms` (a refused script).
async function load(browser, url, ms = 20000) {
  const page = await browser.newPage();
  const console = [];
  page.on("console", (m) => console.push(m.text()));
  page.on("pageerror", (e) => console.push(String(e)));
  await page.goto(url);
  const settled = await page.waitForFunction(() => document.body.dataset.readyMs ||
    !document.getElementById("error").hidden, { timeout: ms }).then(() => true, () => false);
  const state = await page.evaluate(() => ({
    ready: Boolean(document.body.dataset.readyMs),
    error: document.getElementById("error").hidden ? null : document.getElementById("error").dataset.code,
    errorText: document.getElementById("error").textContent,
    trust: document.getElementById("trust").dataset.state,
    trustText: document.getElementById("trust").textContent,
  }));
  return { page, settled, console, ...state };
}

// Every call the provider logged (one JSON line each), by RPC name.
function calls(provider) {
  const out = {};
  for (const l of provider.requestLog()) out[l.rpc] = (out[l.rpc] || 0) + 1;
  return out;
}

async function run(args) {
  const dir = tempDir("browser-bundle");
  const cert = makeCertificate(dir);
  const index = path.join(dir, "index");
  fs.mkdirSync(index);
  for (const f of fs.readdirSync(args.index)) fs.linkSync(path.join(args.index, f), path.join(index, f));
  const bin = path.join(args.build, "tools", "privsearch");
  execFileSync(bin, ["keygen-signing", "--out", path.join(dir, "operator")], { stdio: "ignore" });
  execFileSync(bin, ["sign", "--index", index, "--key", path.join(dir, "operator")], { stdio: "ignore" });
  const site = await StaticServer.start(path.join(dir, "site"));
  let provider, browser;
  try {
    provider = await Provider.start(args, { index, dir, cert, webRootDir: null,
      extra: ["--web-origin", site.origin] });
    const signed = bundle(args, dir, provider, path.join(dir, "operator.pub"));
    fs.cpSync(signed, path.join(dir, "site"), { recursive: true });
    browser = await launchBrowser(args, cert, path.join(dir, "profile"));

    const good = await load(browser, `${site.origin}/index.html`);
    check(good.ready, `the bundle did not open: ${good.errorText} ${good.console.join(" | ")}`);
    check(good.trust === "verified", `trust state ${good.trust}: ${good.trustText}`);
    const result = await searchInPage(good.page, "vitamin D deficiency and cancer risk");
    check(result.ids.length === 10, `results: ${result.ids}`);
    const elsewhere = await good.page.evaluate(() =>
      fetch("https://127.0.0.1:9/x").then(() => "reached", (e) => `blocked: ${e.message}`));
    check(elsewhere.startsWith("blocked"), `the page reached another origin: ${elsewhere}`);
    check(good.console.some((m) => m.includes("Content Security Policy")),
      `no CSP report for the other origin: ${good.console.join(" | ")}`);
    console.log(JSON.stringify({ verified: good.trustText, csp: elsewhere }));

    for (const [file, what] of [["privsearch.js", "script"], ["privsearch_web.wasm", "core"]]) {
      const before = calls(provider);
      const target = path.join(dir, "site", file);
      const bytes = fs.readFileSync(target);
      const changed = Buffer.from(bytes);
      changed[changed.length - 2] ^= 1;  // one bit, near the end (a comment or a data byte)
      fs.writeFileSync(target, changed);
      const tampered = await load(browser, `${site.origin}/index.html`, 15000);
      fs.writeFileSync(target, bytes);
      check(!tampered.ready, `a tampered ${what} was run`);
      const after = calls(provider);
      check((after.UploadKeys || 0) === (before.UploadKeys || 0) && (after.Rerank || 0) === (before.Rerank || 0),
        `a tampered ${what} reached the provider: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
      const refused = what === "script"
        ? tampered.console.some((m) => m.includes("integrity"))
        : tampered.error === "UNTRUSTED_CODE";
      check(refused, `the tampered ${what} was not refused by name: ${tampered.error} ${tampered.console.join(" | ")}`);
      console.log(JSON.stringify({ tampered: file, error: tampered.error, console: tampered.console.slice(0, 2) }));
    }

    // Unpinned, and the index files from the static origin (a copy): the provider answers calls.
    fs.cpSync(index, path.join(dir, "site", "index"), { recursive: true });
    fs.cpSync(bundle(args, dir, provider, null, `${site.origin}/index/`), path.join(dir, "site"),
      { recursive: true });
    const filesBefore = fs.readFileSync(provider.log, "utf8").length;
    const unpinned = await load(browser, `${site.origin}/index.html`);
    check(unpinned.ready && unpinned.trust === "unverified", `unpinned: ${unpinned.trust} ${unpinned.trustText}`);
    const result2 = await searchInPage(unpinned.page, "vitamin D deficiency and cancer risk");
    check(result2.ids.length === 10, `results from the static index copy: ${result2.ids}`);
    check(fs.readFileSync(provider.log, "utf8").length > filesBefore, "no call reached the provider");
    console.log(JSON.stringify({ unpinned: unpinned.trustText }));
  } finally {
    if (browser) await browser.close();
    if (provider) await provider.stop();
    await site.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const args = parseArgs(process.argv);
const watchdog = setTimeout(() => { console.error("bundle test: 240 s watchdog"); killAll(); process.exit(2); }, 240000);
run(args).then(() => { clearTimeout(watchdog); console.log("PASSED"); })
  .catch((e) => { console.error(e.stack || e); process.exitCode = 1; clearTimeout(watchdog); });
