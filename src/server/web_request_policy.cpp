#include "server/web_request_policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace privsearch::server {
namespace {

constexpr std::size_t kMaxAuthorizationBytes = 1024;
constexpr std::size_t kMaxAddressBytes = 64;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Every value of the header `name` (case-insensitive).
std::vector<std::string_view> values_of(const WebRequestHead& head, std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : head.headers) {
    if (iequals(k, name)) out.emplace_back(v);
  }
  return out;
}

WebRefusal refuse(int status, std::string code, std::string message) {
  return WebRefusal{status, std::move(code), std::move(message)};
}

// A 16-byte form of an IPv4 or IPv6 address (IPv4 as IPv4-mapped), or nullopt.
std::optional<std::array<std::uint8_t, 16>> parse_address(std::string_view text) {
  const std::string s(text);
  std::array<std::uint8_t, 16> a{};
  if (::inet_pton(AF_INET6, s.c_str(), a.data()) == 1) return a;
  std::array<std::uint8_t, 4> v4{};
  if (::inet_pton(AF_INET, s.c_str(), v4.data()) != 1) return std::nullopt;
  a[10] = a[11] = 0xff;
  std::copy(v4.begin(), v4.end(), a.begin() + 12);
  return a;
}

bool is_v4_mapped(const std::array<std::uint8_t, 16>& a) {
  return std::all_of(a.begin(), a.begin() + 10, [](auto b) { return b == 0; }) && a[10] == 0xff &&
         a[11] == 0xff;
}

// Whether `address` lies in `entry` ("ADDR" or "ADDR/BITS"; an IPv4 prefix counts from the
// mapped form's bit 96).
bool in_entry(const std::array<std::uint8_t, 16>& address, std::string_view entry) {
  const auto slash = entry.find('/');
  const auto base = parse_address(entry.substr(0, slash));
  if (!base) return false;
  unsigned bits = 128;
  if (slash != std::string_view::npos) {
    const auto digits = entry.substr(slash + 1);
    unsigned prefix = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    const unsigned most = is_v4_mapped(*base) ? 32 : 128;
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() ||
        prefix > most) {
      return false;
    }
    bits = is_v4_mapped(*base) ? 96 + prefix : prefix;
  }
  for (unsigned i = 0; i < 16; ++i) {
    const unsigned take = bits >= 8 * (i + 1) ? 8 : (bits > 8 * i ? bits - 8 * i : 0);
    const std::uint8_t mask = take == 0 ? 0 : static_cast<std::uint8_t>(0xff << (8 - take));
    if ((address[i] & mask) != ((*base)[i] & mask)) return false;
  }
  return true;
}

std::optional<WebRefusal> check_method(const WebRequestHead& head) {
  for (const char* allowed : {"GET", "HEAD", "POST", "OPTIONS"}) {
    if (head.method == allowed) return std::nullopt;
  }
  return refuse(405, "METHOD_NOT_ALLOWED", "the browser endpoint answers GET, HEAD, POST only");
}

// No transfer coding and no content coding: the body, if any, is exactly Content-Length bytes
// as sent, so the cap below is the memory it can take.
std::optional<WebRefusal> check_codings(const WebRequestHead& head) {
  if (!values_of(head, "Transfer-Encoding").empty()) {
    return refuse(411, "LENGTH_REQUIRED",
                  "no Transfer-Encoding: send the body with a Content-Length");
  }
  if (!values_of(head, "Content-Encoding").empty()) {  // identity too: a browser sends none
    return refuse(415, "UNSUPPORTED_ENCODING", "request bodies are not compressed here");
  }
  return std::nullopt;
}

// The declared body size: nullopt when absent; a refusal when malformed or repeated.
std::variant<std::optional<std::uint64_t>, WebRefusal> content_length(const WebRequestHead& head) {
  const auto values = values_of(head, "Content-Length");
  if (values.empty()) return std::optional<std::uint64_t>();
  const auto v = trim(values.front());
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (values.size() > 1 || v.empty() || ec != std::errc() || end != v.data() + v.size()) {
    return refuse(400, "MALFORMED_REQUEST", "one decimal Content-Length, please");
  }
  return std::optional<std::uint64_t>(n);
}

// The origin of the endpoint itself, as a browser names it in Origin: https:// + Host.
bool same_origin(const WebRequestHead& head, std::string_view origin) {
  const auto hosts = values_of(head, "Host");
  return hosts.size() == 1 && origin == "https://" + std::string(trim(hosts.front()));
}

std::optional<WebRefusal> check_post(const WebRequestHead& head, const WebRequestPolicy& policy) {
  // A call's answer is one message: the library would answer each byte range with a copy of it
  // (a 7.5 KB request with 1,500 ranges drew 600 KB).
  if (!values_of(head, "Range").empty()) {
    return refuse(416, "RANGE_NOT_SATISFIABLE", "calls take no Range");
  }
  const auto length = content_length(head);
  if (const auto* r = std::get_if<WebRefusal>(&length)) return *r;
  const auto& n = std::get<std::optional<std::uint64_t>>(length);
  if (!n) return refuse(411, "LENGTH_REQUIRED", "a POST needs a Content-Length");
  if (*n > policy.max_body_bytes) {
    return refuse(413, "MESSAGE_TOO_LARGE", "the body is larger than the provider's message cap");
  }
  const auto types = values_of(head, "Content-Type");
  if (types.size() != 1 || !iequals(trim(types.front()), "application/x-protobuf")) {
    return refuse(415, "UNSUPPORTED_MEDIA_TYPE", "a call's body is application/x-protobuf");
  }
  const auto origins = values_of(head, "Origin");
  if (origins.size() > 1) return refuse(403, "FOREIGN_ORIGIN", "one Origin, please");
  if (origins.size() == 1) {
    const auto origin = trim(origins.front());
    const auto& allowed = policy.allowed_origins;
    const bool listed = std::find(allowed.begin(), allowed.end(), origin) != allowed.end();
    if (!listed && !same_origin(head, origin)) {
      return refuse(403, "FOREIGN_ORIGIN", "calls from this origin are not accepted here");
    }
  }
  return std::nullopt;
}

std::optional<WebRefusal> check_read(const WebRequestHead& head) {
  const auto length = content_length(head);
  if (const auto* r = std::get_if<WebRefusal>(&length)) return *r;
  if (const auto& n = std::get<std::optional<std::uint64_t>>(length); n && *n > 0) {
    return refuse(400, "MALFORMED_REQUEST", "a GET carries no body");
  }
  const auto ranges = values_of(head, "Range");
  if (ranges.size() > 1) return refuse(416, "RANGE_NOT_SATISFIABLE", "one Range header, please");
  if (ranges.size() == 1) {
    const auto count = count_byte_ranges(ranges.front());
    if (!count || *count > 1) {
      return refuse(416, "RANGE_NOT_SATISFIABLE", "one byte range per request");
    }
  }
  return std::nullopt;
}

// The address that sent the request to us: the connection's peer, or the front's header.
std::variant<std::string, WebRefusal> sender_address(const WebRequestHead& head,
                                                     const WebRequestPolicy& policy) {
  if (!policy.behind_front) {
    if (!is_safe_metadata_value(head.peer, kMaxAddressBytes)) {
      return refuse(400, "MALFORMED_REQUEST", "unusable peer address");
    }
    return head.peer;
  }
  const auto named = values_of(head, "X-Privsearch-Peer");
  if (named.size() != 1 || named.front().size() > kMaxAddressBytes ||
      !parse_address(trim(named.front()))) {
    return refuse(400, "MALFORMED_REQUEST", "a request that did not come through the front");
  }
  return std::string(trim(named.front()));
}

std::variant<std::string, WebRefusal> client_address(const WebRequestHead& head,
                                                     const WebRequestPolicy& policy) {
  auto sender = sender_address(head, policy);
  if (std::holds_alternative<WebRefusal>(sender)) return sender;
  if (!address_in(std::get<std::string>(sender), policy.trusted_proxies)) return sender;
  const auto forwarded = values_of(head, "X-Forwarded-For");
  if (forwarded.empty()) {
    return refuse(400, "MALFORMED_REQUEST",
                  "a request through a trusted proxy must name its client (X-Forwarded-For)");
  }
  // The last entry of the last header: the one the trusted proxy appended.
  std::string_view list = forwarded.back();
  const auto comma = list.rfind(',');
  const auto last = trim(comma == std::string_view::npos ? list : list.substr(comma + 1));
  if (last.size() > kMaxAddressBytes || !parse_address(last)) {
    return refuse(400, "MALFORMED_REQUEST", "X-Forwarded-For does not end with an IP address");
  }
  return std::string(last);
}

std::variant<std::string, WebRefusal> authorization(const WebRequestHead& head) {
  const auto values = values_of(head, "Authorization");
  if (values.empty()) return std::string();
  if (values.size() > 1 || !is_safe_metadata_value(values.front(), kMaxAuthorizationBytes)) {
    return refuse(400, "MALFORMED_HEADER",
                  "the Authorization header must be one value of printable ASCII, at most 1 KiB");
  }
  return std::string(values.front());
}

}  // namespace

bool is_safe_metadata_value(std::string_view value, std::size_t max_bytes) {
  return value.size() <= max_bytes && std::all_of(value.begin(), value.end(), [](char c) {
           const auto b = static_cast<unsigned char>(c);
           return b >= 0x20 && b <= 0x7e;
         });
}

std::optional<std::size_t> count_byte_ranges(std::string_view value) {
  value = trim(value);
  if (value.empty()) return std::size_t{0};
  constexpr std::string_view kUnit = "bytes=";
  if (value.size() < kUnit.size() || !iequals(value.substr(0, kUnit.size()), kUnit)) {
    return std::nullopt;
  }
  value.remove_prefix(kUnit.size());
  std::size_t count = 0;
  for (;;) {
    const auto comma = value.find(',');
    const auto spec = trim(value.substr(0, comma));
    const auto dash = spec.find('-');
    const bool digits_only = std::all_of(spec.begin(), spec.end(),
                                         [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
    if (dash == std::string_view::npos || spec.size() < 2 || !digits_only ||
        spec.find('-', dash + 1) != std::string_view::npos) {
      return std::nullopt;
    }
    ++count;
    if (comma == std::string_view::npos) return count;
    value.remove_prefix(comma + 1);
  }
}

bool address_in(const std::string& address, const std::vector<std::string>& entries) {
  if (entries.empty()) return false;
  const auto a = parse_address(address);
  return a && std::any_of(entries.begin(), entries.end(),
                          [&](const std::string& e) { return in_entry(*a, e); });
}

bool valid_address_entries(const std::vector<std::string>& entries, std::string* bad) {
  for (const auto& e : entries) {
    const auto slash = e.find('/');
    const auto base = parse_address(std::string_view(e).substr(0, slash));
    // An entry matches its own base address exactly when it is well formed.
    if (!base || !in_entry(*base, e)) {
      if (bad != nullptr) *bad = e;
      return false;
    }
  }
  return true;
}

WebAdmission admit_web_request(const WebRequestHead& head, const WebRequestPolicy& policy) {
  if (auto r = check_method(head)) return *r;
  if (auto r = check_codings(head)) return *r;
  if (auto r = head.method == "POST" ? check_post(head, policy) : check_read(head)) return *r;
  auto address = client_address(head, policy);
  if (auto* r = std::get_if<WebRefusal>(&address)) return *r;
  auto auth = authorization(head);
  if (auto* r = std::get_if<WebRefusal>(&auth)) return *r;
  return AdmittedWebRequest{std::move(std::get<std::string>(address)),
                            std::move(std::get<std::string>(auth))};
}

}  // namespace privsearch::server
