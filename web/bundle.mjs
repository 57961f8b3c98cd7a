// The page as a static bundle for an origin apart from the provider (docs/SECURITY.md "The
// page's trust root"): the provider then serves data and answers calls, never the code that
// encrypts the query, so a curious provider cannot swap in a page that posts the query text.
//
//   node web/bundle.mjs --from build/web --out DIR --provider https://HOST:PORT
//                       [--signing-key OPERATOR.pub] [--index-url URL/] [--force]
//
// DIR gets the page's files and an index.html that pins every one of them:
//  - Subresource Integrity (SHA-384) on the stylesheet and the scripts, and an import map with
//    the integrity of every module (app.js, privsearch.js, the WebAssembly glue), so a changed
//    byte is refused by the browser before it runs;
//  - the WebAssembly core's and the protocol file's SHA-256 in the bundle's configuration, checked
//    by privsearch.js before the core is instantiated or the protocol parsed;
//  - a Content-Security-Policy: scripts only from this origin (and the one inline import map, by
//    its hash), WebAssembly compilation and Function() (the protobuf runtime's and embind's
//    generated code), connections only to this origin and the provider's;
//  - the configuration itself (the provider's origin, the operator's index-signing key when
//    given): the page pins that key, not one named in its URL, and shows "unverified" without.
// --index-url: where the page downloads the index's public files (default the provider's
// /index/): a static server or CDN holding a copy (`privsearch client-files`), so that the
// provider answers calls only and readers of large files never hold its threads; the files are
// checked against the signed manifest wherever they come from.
// Serve DIR with any static server (HTTPS in production; http://127.0.0.1 is a secure context
// for tests) and start the provider with --web-origin set to that server's origin.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const FILES = ["app.js", "privsearch.js", "privsearch_web.js", "privsearch_web.wasm",
  "protobuf.min.js", "style.css", "privsearch.proto"];
const MODULES = ["app.js", "privsearch.js", "privsearch_web.js"];

function parse(argv) {
  const out = { force: false };
  for (let i = 2; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--force") out.force = true;
    else if (["--from", "--out", "--provider", "--signing-key", "--index-url"].includes(a)) {
      out[a.slice(2)] = argv[++i];
    }
    else if (a === "--help" || a === "-h") out.help = true;
    else throw new Error(`unknown argument ${a} (--help)`);
  }
  return out;
}

const sri = (bytes) => `sha384-${crypto.createHash("sha384").update(bytes).digest("base64")}`;
const sha256Hex = (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");

// The provider's origin, checked: https (the endpoint only speaks TLS), no path.
function providerOrigin(text) {
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--provider ${text}: not a URL (https://HOST:PORT)`);
  }
  if (url.protocol !== "https:") throw new Error(`--provider ${text}: the endpoint speaks https only`);
  if (url.pathname !== "/" || url.search || url.hash) {
    throw new Error(`--provider ${text}: an origin, without a path`);
  }
  return url.origin;
}

function indexHtml(template, config, files) {
  const importMap = JSON.stringify({
    imports: {},
    integrity: Object.fromEntries(MODULES.map((m) => [`./${m}`, files[m]])),
  });
  const mapHash = `sha256-${crypto.createHash("sha256").update(importMap).digest("base64")}`;
  // 'unsafe-eval': the protobuf runtime builds its coders with Function() and emscripten's embind
  // its invokers the same way; both run only code this bundle pins (every script is SRI-checked),
  // and connect-src, which keeps the query in the page, does not depend on it. Static coders
  // (pbjs) and -sDYNAMIC_EXECUTION=0 would let it go.
  const csp = ["default-src 'none'", `script-src 'self' '${mapHash}' 'unsafe-eval' 'wasm-unsafe-eval'`,
    "style-src 'self'", `connect-src 'self' ${config.provider}`, "img-src 'self' data:",
    "base-uri 'none'", "form-action 'none'", "object-src 'none'"].join("; ");
  const head = [
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    `<link rel="stylesheet" href="style.css" integrity="${files["style.css"]}">`,
    `<script type="importmap">${importMap}</script>`,
    `<script src="protobuf.min.js" integrity="${files["protobuf.min.js"]}"></script>`,
    `<script type="module" src="app.js" integrity="${files["app.js"]}"></script>`,
    `<script type="application/json" id="privsearch-bundle">${JSON.stringify(config)}</script>`,
  ].join("\n");
  const start = template.indexOf('<link rel="stylesheet"');
  const end = template.indexOf("</head>");
  if (start < 0 || end < 0) throw new Error("index.html: no stylesheet link or </head> to replace");
  return template.slice(0, start) + head + "\n" + template.slice(end);
}

function main() {
  const args = parse(process.argv);
  if (args.help || !args.from || !args.out || !args.provider) {
    console.log("usage: node web/bundle.mjs --from build/web --out DIR --provider https://HOST:PORT " +
      "[--signing-key OPERATOR.pub] [--force]");
    process.exit(args.help ? 0 : 2);
  }
  const config = { provider: providerOrigin(args.provider) };
  if (args["index-url"]) {
    const url = new URL(args["index-url"]);  // throws on a malformed URL
    config.index = url.href.endsWith("/") ? url.href : `${url.href}/`;
    if (url.origin !== config.provider) config.indexOrigin = url.origin;
  }
  if (args["signing-key"]) {
    const pem = fs.readFileSync(args["signing-key"], "utf8");
    if (!pem.includes("BEGIN PUBLIC KEY")) throw new Error(`${args["signing-key"]}: not a PEM public key`);
    config.pinnedKey = pem;
  }
  if (fs.existsSync(args.out) && fs.readdirSync(args.out).length > 0 && !args.force) {
    throw new Error(`${args.out} is not empty (--force replaces its files)`);
  }
  fs.mkdirSync(args.out, { recursive: true });
  const files = {};
  for (const f of FILES) {
    const bytes = fs.readFileSync(path.join(args.from, f));
    fs.writeFileSync(path.join(args.out, f), bytes);
    files[f] = sri(bytes);
    if (f === "privsearch_web.wasm") config.wasmSha256 = sha256Hex(bytes);
    if (f === "privsearch.proto") config.protoSha256 = sha256Hex(bytes);
  }
  const template = fs.readFileSync(path.join(args.from, "index.html"), "utf8");
  fs.writeFileSync(path.join(args.out, "index.html"), indexHtml(template, config, files));
  console.log(`web bundle in ${args.out} for ${config.provider}` +
    (config.pinnedKey ? ", index-signing key pinned" : ", NO index-signing key pinned (unverified)"));
}

try {
  main();
} catch (e) {
  console.error(`bundle: ${e.message}`);
  process.exit(1);
}
