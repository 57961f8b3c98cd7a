// Elapsed wall time on the steady clock: the one way privsearch measures the timings it reports
// (request timings, benchmarks). Tests never time.
#pragma once

#include <chrono>

namespace privsearch {

using SteadyClock = std::chrono::steady_clock;

inline double ms_since(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace privsearch
