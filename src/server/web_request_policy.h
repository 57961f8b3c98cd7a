// What the browser endpoint (server/web_gateway.h) decides from a request's head alone, before
// it reads one byte of a body or copies one header into the in-process gRPC call's metadata.
//
// Why a head check at all: the HTTP library (cpp-httplib 0.11) reads a body before the route's
// handler runs, appends chunked bodies and inflates gzip / deflate / br ones without the body
// cap, answers `Range: bytes=0-,0-,...` with a multipart copy of the file per range, and
// percent-decodes header values; gRPC aborts the process on a metadata value outside
// 0x20-0x7E. Its pre-routing hook runs after the head is parsed and before any of that, so
// everything below is refused there (docs/SECURITY.md "The browser endpoint"):
//
//  - methods other than GET, HEAD, POST and OPTIONS (a PUT's body would be read);
//  - any Transfer-Encoding (a browser's fetch() always sends a Content-Length) and any
//    Content-Encoding (identity too: a browser sends none): 411 / 415, so no body is ever
//    inflated or appended;
//  - a POST without a Content-Length, or with one past the cap (413 before the body is read),
//    with a Content-Type other than application/x-protobuf (what the page sends; text/plain is
//    what a cross-site form or a no-preflight fetch sends), or from a foreign Origin: the
//    endpoint's own origin (https:// + Host) and the configured ones only;
//  - a GET or HEAD with a body, or with more than one byte range; a POST with any Range;
//  - an Authorization header that is duplicated, longer than 1 KiB or holds a byte outside
//    0x20-0x7E once decoded.
//
// The caller's address: the connection's peer (behind the front: the address the front names),
// or, when that address is one of the configured
// trusted proxies, the last X-Forwarded-For entry (the one that proxy appended), which must be
// an IP address; a trusted proxy's request without one is refused (it would make every client
// one account). Nobody else's X-Forwarded-For is read.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace privsearch::server {

struct WebRequestHead {
  std::string method;
  std::string path;
  // As received (names in any case; a name may repeat), values as the HTTP library decoded them.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string peer;  // the connection's remote address, no port
};

struct WebRequestPolicy {
  std::vector<std::string> allowed_origins;  // scheme://host[:port], exact
  std::vector<std::string> trusted_proxies;  // addresses or CIDRs (v4 or v6)
  std::uint64_t max_body_bytes = 0;
  // Behind the provider's front (server/http2_front.h), on a socket only the front reaches: the
  // connection's peer is the front, the browser's address its kFrontPeerHeader (one IP address,
  // or the request is refused: it did not come through the front).
  bool behind_front = false;
};

// A refusal as the endpoint answers it: status, the JSON error's code and its message.
struct WebRefusal {
  int http_status = 400;
  std::string code;
  std::string message;
};

// What the endpoint may use of an admitted request.
struct AdmittedWebRequest {
  std::string client_address;  // printable, <= 64 bytes: the in-process call's peer header
  std::string authorization;   // printable, <= 1 KiB, or empty: none sent
};

using WebAdmission = std::variant<AdmittedWebRequest, WebRefusal>;

WebAdmission admit_web_request(const WebRequestHead& head, const WebRequestPolicy& policy);

// A value gRPC accepts as metadata without aborting: 0x20-0x7E only, at most `max_bytes`.
bool is_safe_metadata_value(std::string_view value, std::size_t max_bytes);

// The number of ranges in a Range header value ("bytes=0-1,5-"): 0 for an empty value;
// nullopt when it is not a bytes range set.
std::optional<std::size_t> count_byte_ranges(std::string_view value);

// Whether `address` (an IPv4 or IPv6 address, IPv4-mapped forms as IPv4) lies in one of
// `entries` (addresses or CIDRs; a malformed entry matches nothing).
bool address_in(const std::string& address, const std::vector<std::string>& entries);

// Whether every entry of `entries` is an address or a CIDR (for option checking at start).
bool valid_address_entries(const std::vector<std::string>& entries, std::string* bad);

}  // namespace privsearch::server
