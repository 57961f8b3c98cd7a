// The browser endpoint's part of the front's haproxy.cfg (server/http2_front.h
// BrowserFrontSpec): its frontend on fd@4, the head refusals it shares with
// server/web_request_policy.h, whom each request counts for, the per-address share of the
// endpoint and the pooled backend on the endpoint's unix socket. Internal to the front.
#pragma once

#include <filesystem>
#include <string>

#include "server/http2_front.h"

namespace privsearch::server::detail {

// `source_rules`: the front's per-address connection rules (the gRPC frontend's own).
std::string browser_config(const BrowserFrontSpec& browser, const std::filesystem::path& pem_file,
                           unsigned maxconn, const std::string& source_rules);

}  // namespace privsearch::server::detail
