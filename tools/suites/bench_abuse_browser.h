// The browser endpoint's abuse classes of `privsearch bench abuse` (issue 52), each against a
// provider started with --web-listen, over raw TLS from loopback addresses (what an attacker
// sends is whatever bytes it likes, not what a browser would):
//   browser_bodies      chunked bodies announcing 256 MiB, 261 KB gzip bombs of 256 MiB,
//                       Content-Length past the cap: 4 threads
//   browser_ranges      GETs of the largest public file with 2,700 ranges each: 2 threads
//   browser_slow_reads  24 connections reading the largest public file and never draining it
//   browser_bad_headers Authorization with bytes gRPC refuses (%01, UTF-8): 2 threads
//   browser_cross_origin text/plain and foreign-Origin POSTs of key uploads: 2 threads
//   browser_many_addresses  14 anonymous browsers from 14 addresses each upload keys and rerank
//                       once (every one must be served: one account per address; this class's
//                       provider runs without tokens)
// Each also keeps a legitimate browser caller busy (GetServerInfo + a key upload's head from
// 127.0.0.200) and reports its calls and failures beside the gRPC client's searches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "suites/bench_abuse_classes.h"

namespace privsearch::tools::abuse {

bool is_browser_class(const std::string& name);
// Classes whose provider must serve anonymous callers (no --auth-tokens).
inline bool anonymous_class(const std::string& name) { return name == "browser_many_addresses"; }
const std::vector<std::string>& browser_class_names();
Result<std::unique_ptr<AbuseClass>> make_browser_class(const std::string& name,
                                                       const Target& target);

}  // namespace privsearch::tools::abuse
