// Timing helpers for `privsearch bench`: repeated runs after warm-up, median and p95 in
// microseconds, and a description of the machine. Timings are never asserted, only reported.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace privsearch::tools {

struct TimingStats {
  double median_us = 0;
  double p95_us = 0;
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
  std::sort(us.begin(), us.end());
  TimingStats s;
  s.runs = runs;
  s.median_us = runs % 2 ? us[runs / 2] : 0.5 * (us[runs / 2 - 1] + us[runs / 2]);
  s.p95_us = us[std::min(runs - 1, static_cast<std::size_t>(0.95 * static_cast<double>(runs)))];
  return s;
}

// Adds `name` (median) and `name_p95` to a JSON object, in the unit the name ends with.
void put_timing(nlohmann::json& out, const std::string& name, const TimingStats& s,
                double divisor = 1.0);

// CPU model, core count, compiler, build type, date.
nlohmann::json machine_description();

}  // namespace privsearch::tools
