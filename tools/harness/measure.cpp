#include "harness/measure.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace privsearch::tools {

void put_timing(nlohmann::json& out, const std::string& name, const TimingStats& s,
                double divisor) {
  auto round3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  out[name] = round3(s.median_us / divisor);
  out[name + "_p95"] = round3(s.p95_us / divisor);
}

nlohmann::json latency_summary(std::vector<double> values, const char* median_key) {
  auto round3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  const auto d = eval::describe(std::move(values));
  return {{median_key, round3(d.median)}, {"p95", round3(d.p95)}, {"p99", round3(d.p99)}};
}

nlohmann::json machine_description() {
  nlohmann::json m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  }
  m["hardware_threads"] = std::thread::hardware_concurrency();
  m["compiler"] = "g++ " __VERSION__;
#ifdef NDEBUG
  m["assertions"] = false;
#else
  m["assertions"] = true;
#endif
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  m["date"] = buf;
  return m;
}

int first_child_pid(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  int child = -1;
  in >> child;
  return child;
}

std::uint64_t process_rss_bytes(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;  // "VmRSS:   1234 kB"
    }
  }
  return 0;
}

std::size_t process_threads(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::strtoull(line.c_str() + 8, nullptr, 10);
  }
  return 0;
}

double process_cpu_seconds(int pid) {
  // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks, after the ")" of the name.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  const auto close = all.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(all.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double own_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace privsearch::tools
