#include "server/browser_front.h"

#include <fmt/format.h>

namespace privsearch::server::detail {
namespace {

// The head refusals of server/web_request_policy.h that need no parsing of values, as
// `http-request return` rules (deny knows only a few statuses) answering the same JSON error.
std::string browser_refusals(std::uint64_t max_body_bytes) {
  struct Rule {
    int status;
    const char *code, *message, *condition;
  };
  const std::string too_large =
      fmt::format("{{ req.hdr_val(content-length) gt {} }}", max_body_bytes);
  const Rule rules[] = {
      {411, "LENGTH_REQUIRED", "no Transfer-Encoding: send the body with a Content-Length",
       "{ req.hdr_cnt(transfer-encoding) gt 0 }"},
      {415, "UNSUPPORTED_ENCODING", "request bodies are not compressed here",
       "{ req.hdr_cnt(content-encoding) gt 0 }"},
      {413, "MESSAGE_TOO_LARGE", "the body is larger than the message cap", too_large.c_str()},
      // fhdr: the whole value (hdr splits it at commas, so a list never matched)
      {416, "RANGE_NOT_SATISFIABLE", "one byte range per request",
       "{ req.fhdr(range) -m sub , } || { req.fhdr(range) -m sub -i %2c }"},
      // A call's answer is one message; the endpoint would answer each range with a copy.
      {416, "RANGE_NOT_SATISFIABLE", "calls take no Range",
       "{ req.hdr_cnt(range) gt 0 } !{ method GET HEAD }"},
  };
  std::string out;
  for (const auto& r : rules) {
    out += fmt::format(
        "  http-request return status {} content-type application/json string "
        "'{{\"code\":\"{}\",\"message\":\"{}\"}}' hdr connection close if {}\n",
        r.status, r.code, r.message, r.condition);
  }
  return out;
}

// Whom a browser request counts for: its source, or behind a trusted HTTP proxy the address
// the proxy appended to X-Forwarded-For.
std::string browser_tracking(const BrowserFrontSpec& b) {
  if (b.trusted_http_proxies.empty()) return "  http-request track-sc1 src,ipmask(32,64)\n";
  std::string sources;
  for (const auto& p : b.trusted_http_proxies) sources += " " + p;
  return fmt::format(
      "  acl from_web_proxy src{}\n"
      "  http-request track-sc1 req.hdr_ip(x-forwarded-for,-1),ipmask(32,64) if from_web_proxy\n"
      "  http-request track-sc1 src,ipmask(32,64) if !from_web_proxy\n",
      sources);
}

// The 429 past an address's share of the endpoint, readable by a page of an allowed origin
// (its CORS header, as the endpoint sets it), so the page can wait and retry.
std::string browser_too_many(const BrowserFrontSpec& b) {
  const std::string answer = fmt::format(
      "  http-request return status 429 content-type application/json string "
      "'{{\"code\":\"OVERLOADED\",\"message\":\"too many requests of this address at "
      "once\"}}' hdr retry-after 1");
  const std::string over = fmt::format("{{ sc1_conn_cur gt {} }}", b.slots_per_source);
  std::string out;
  if (!b.allowed_origins.empty()) {
    std::string origins;
    for (const auto& o : b.allowed_origins) origins += " " + o;
    out += fmt::format(
        "{} hdr access-control-allow-origin \"%[req.hdr(origin)]\" hdr vary origin if {} "
        "{{ req.hdr(origin) -m str{} }}\n",
        answer, over, origins);
  }
  return out + fmt::format("{} if {}\n", answer, over);
}

// The browser endpoint's frontend and backend (BrowserFrontSpec), after the gRPC ones.
}  // namespace

std::string browser_config(const BrowserFrontSpec& b, const std::filesystem::path& pem_file,
                           unsigned maxconn, const std::string& source_rules) {
  return fmt::format(
      "\n"
      "frontend browser\n"
      "  bind fd@4 ssl crt {pem} alpn http/1.1\n"
      "  maxconn {maxconn}\n"
      "  stick-table type ipv6 size 100k expire 60s store conn_cur,conn_rate(10s)\n"
      "{source_rules}"
      "  # what the endpoint's head check refuses, refused here before a byte reaches it, with\n"
      "  # its JSON errors: bodies only with a length within the cap, never coded; one range\n"
      "{refusals}"
      "  http-request set-header {peer_header} %[src]\n"
      "  default_backend web\n"
      "\n"
      "backend web\n"
      "  # a pool of at most {slots} connections (the endpoint's threads), reused across\n"
      "  # browsers; requests beyond wait in the front's queue, idle browsers hold nothing;\n"
      "  # one address has at most {per_source} requests inside the endpoint (bodies arrive\n"
      "  # through it: a trickled body holds its slot until the endpoint's deadline)\n"
      "  stick-table type ipv6 size 100k expire 60s store conn_cur\n"
      "{tracking}"
      "{too_many}"
      "  http-reuse safe\n"
      "  timeout queue 30s\n"
      "  server web unix@{socket} ssl verify none maxconn {slots} pool-purge-delay 1s\n",
      fmt::arg("pem", pem_file.string()), fmt::arg("maxconn", maxconn),
      fmt::arg("source_rules", source_rules),
      fmt::arg("refusals", browser_refusals(b.max_body_bytes)),
      fmt::arg("peer_header", kFrontPeerHeader), fmt::arg("slots", b.backend_slots),
      fmt::arg("per_source", b.slots_per_source), fmt::arg("tracking", browser_tracking(b)),
      fmt::arg("too_many", browser_too_many(b)), fmt::arg("socket", b.backend_socket.string()));
}

}  // namespace privsearch::server::detail
