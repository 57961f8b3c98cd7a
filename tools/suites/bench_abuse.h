// `privsearch bench abuse --json`: the provider under each abuse class of issues 20 and 32, as a
// separate process over TLS on loopback, while a legitimate client searches. Per class: the
// provider's RSS before, at its peak during and after the abuse, and the legitimate searches'
// latency and failures during it (next to the idle latency measured first on the same provider).
// Classes (each against a fresh provider with bearer tokens: the attacker `mallory`, the
// legitimate client `alice`, so per-identity limits separate them on one loopback address):
//   stalled_streams  20 connections x 10 HTTP/2 streams announcing 8 MB messages, never finished
//   key_sets         distinct K = 100 key sets uploaded back to back from 2 threads
//   pir_setups       PIR setups with forged Paillier moduli as fast as answered
//   overload         24 threads of K = 1024 reranks under one key set
//   unread_answers   connections with window 0 whose GetServerInfo answers are never read
//   continuation_flood  HEADERS + endless CONTINUATION frames (CVE-2023-33953), 1.5 GB
//   connection_flood 1,100 idle connections from 20 addresses + 20,000 attempts from one
//   browser_*        the browser endpoint's classes (suites/bench_abuse_browser.h), against a
//                    provider with --web-listen
// The provider runs behind its HTTP/2 front (the default) or, with front = "none", without it,
// for the comparison in docs/SECURITY.md "Transport".
// The attacker runs on the same 2 cores as the provider and the legitimate client, so latency
// figures include CPU contention from the attacker itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct AbuseBenchOptions {
  std::filesystem::path index = "build/demo/index-scifact";
  double abuse_s = 8;                // legitimate searches during each abuse
  std::size_t idle_searches = 20;    // idle baseline per class
  std::vector<std::string> classes;  // empty: every class (suites/bench_abuse_classes.h)
  std::string front = "haproxy";     // the provider's --front: haproxy, or none to compare
};

struct AbuseClassResult {
  double rss_before_mb = 0, rss_peak_mb = 0, rss_after_60s_mb = 0, seconds_to_return = 0;
  std::array<double, 3> front_rss_mb{};  // before, peak, after (0: no front)
  std::vector<double> idle_ms, during_ms;
  std::size_t legit_failures = 0;
  std::string first_failure;
  nlohmann::json abuse;  // what the attacker did and what the provider did about it
};

struct AbuseBenchResult {
  nlohmann::json machine;
  std::string index, front;
  std::map<std::string, AbuseClassResult> classes;
  nlohmann::json to_json() const;
};

Result<AbuseBenchResult> run_abuse_bench(const AbuseBenchOptions& options);

}  // namespace privsearch::tools
