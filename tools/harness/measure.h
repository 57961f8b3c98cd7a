// Measurement helpers shared by the benchmark suites and the experiments: repeated runs after
// warm-up summarized by eval::describe (the one statistics helper: median, p95, p99), and a
// description of the machine. Timings are never asserted, only reported.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/statistics.h"

namespace privsearch::tools {

struct TimingStats {
  double median_us = 0;
  double p95_us = 0;
  double p99_us = 0;
  std::size_t runs = 0;
};

// Runs `fn` `warmup` times untimed, then `runs` times timed.
template <typename Fn>
TimingStats time_runs(std::size_t warmup, std::size_t runs, Fn&& fn) {
  for (std::size_t i = 0; i < warmup; ++i) fn();
  std::vector<double> us;
  us.reserve(runs);
  for (std::size_t i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  const auto d = eval::describe(std::move(us));
  return TimingStats{d.median, d.p95, d.p99, runs};
}

// Resident memory of a process (VmRSS of /proc/<pid>/status) in bytes; 0 when unreadable.
std::uint64_t process_rss_bytes(int pid);
// The threads of process `pid` (0 when it is gone).
std::size_t process_threads(int pid);
// The first child of `pid` (/proc/PID/task/PID/children), -1 when none: the provider's HTTP/2
// front (server/http2_front.h) is its only child.
int first_child_pid(int pid);
// User + system CPU seconds a process has used (/proc/<pid>/stat); 0 when unreadable.
double process_cpu_seconds(int pid);
// The same for this process (getrusage, microsecond resolution).
double own_cpu_seconds();

// Adds `name` (median) and `name_p95` to a JSON object, in the unit the name ends with.
void put_timing(nlohmann::json& out, const std::string& name, const TimingStats& s,
                double divisor = 1.0);

// {"median": .., "p95": .., "p99": ..} of `values` (milliseconds or whatever unit they carry),
// rounded to 3 decimals: the shape every latency figure of the JSON output has.
nlohmann::json latency_summary(std::vector<double> values, const char* median_key = "median");

// CPU model, core count, compiler, build type, date.
nlohmann::json machine_description();

}  // namespace privsearch::tools
