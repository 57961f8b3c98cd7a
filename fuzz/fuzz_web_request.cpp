// Fuzz target: the browser endpoint's head check (server/web_request_policy.h), which decides
// from untrusted header text what reaches gRPC metadata and whether a body is read at all.
// Input: lines; the first is the method, the second the connection's peer address, the rest
// "Name: value" headers (a line without a colon is a name with an empty value).
// Properties: no crash; an admitted request's client address and authorization are values gRPC
// accepts as metadata (0x20-0x7E, bounded); an admitted request has no transfer or content
// coding, a POST a Content-Length within the cap and the protobuf type, a read at most one
// range; a client address not from a trusted proxy is the peer itself.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "server/web_request_policy.h"

namespace {

using privsearch::server::WebRequestHead;

WebRequestHead parse_lines(std::string_view text) {
  WebRequestHead head;
  for (int line = 0; !text.empty(); ++line) {
    const auto nl = text.find('\n');
    const std::string_view l = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line == 0) {
      head.method = std::string(l);
    } else if (line == 1) {
      head.peer = std::string(l);
    } else {
      const auto colon = l.find(':');
      head.headers.emplace_back(
          std::string(l.substr(0, colon)),
          colon == std::string_view::npos ? std::string() : std::string(l.substr(colon + 1)));
    }
  }
  head.path = "/index/pq.bin";
  return head;
}

bool has_header(const WebRequestHead& head, std::string_view name) {
  for (const auto& [k, v] : head.headers) {
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(a) == std::tolower(b);
        })) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch::server;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const WebRequestHead head = parse_lines(text);
  const WebRequestPolicy policy{{"https://search.example"}, {"127.0.0.0/8", "::1"}, 1 << 20};
  const auto admitted = admit_web_request(head, policy);
  (void)count_byte_ranges(text);
  (void)address_in(std::string(text.substr(0, 64)), policy.trusted_proxies);
  const auto* ok = std::get_if<AdmittedWebRequest>(&admitted);
  if (ok == nullptr) return 0;
  PRIVSEARCH_CHECK(is_safe_metadata_value(ok->client_address, 64), "unsafe address admitted");
  PRIVSEARCH_CHECK(is_safe_metadata_value(ok->authorization, 1024), "unsafe token admitted");
  PRIVSEARCH_CHECK(!has_header(head, "Transfer-Encoding"), "a transfer coding admitted");
  PRIVSEARCH_CHECK(head.method == "GET" || head.method == "HEAD" || head.method == "POST" ||
                       head.method == "OPTIONS",
                   "a foreign method admitted");
  if (head.method == "POST") {
    PRIVSEARCH_CHECK(has_header(head, "Content-Length"), "a POST without a length admitted");
    PRIVSEARCH_CHECK(has_header(head, "Content-Type"), "a POST without a type admitted");
  }
  if (!address_in(head.peer, policy.trusted_proxies)) {
    PRIVSEARCH_CHECK(ok->client_address == head.peer, "a forwarded address believed");
  }
  return 0;
}
