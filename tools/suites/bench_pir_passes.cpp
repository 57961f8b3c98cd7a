#include "suites/bench_pir_passes.h"

#include <chrono>

#include "core/csprng.h"
#include "eval/statistics.h"
#include "pir/lwe/kernels.h"
#include "pir/zippir/zippir_shard.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

double timed_pass(const std::uint8_t* rows, std::size_t count, std::size_t stride,
                  const std::vector<std::uint32_t>& qu, std::vector<std::uint32_t>& out) {
  const auto t0 = Clock::now();
  pir::matvec_u8_u32(rows, count, stride, qu.data(), out.data());
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double gbps(std::size_t bytes, double ms) { return static_cast<double>(bytes) / (ms * 1e-3) / 1e9; }

nlohmann::json spread(std::vector<double> v) {
  const auto d = eval::describe(std::move(v));
  return {{"median", d.median}, {"p95", d.p95}, {"min", d.min}, {"max", d.max}};
}

}  // namespace

Result<PirPassComparison> compare_shard_passes(const pir::ZipPirParams& params,
                                               const pir::LweDatabase& db, std::size_t shards,
                                               std::size_t rounds) {
  const pir::DatabaseShape& shape = db.shape();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto plan, pir::plan_row_shards(params, shape, shards));
  std::vector<std::vector<std::uint8_t>> parts;
  PirPassComparison c;
  c.shards = shards;
  c.rounds = rounds;
  c.single_bytes = shape.rows * shape.columns;
  for (const auto& range : plan) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto rows, db.copy_rows(range.first_row, range.rows));
    parts.push_back(std::move(rows));
    c.shard_bytes.push_back(range.rows * shape.columns);
  }
  // Any query vector reads the same bytes; its entries past the columns stay zero (kernels.h).
  std::vector<std::uint32_t> qu(shape.stride, 0);
  Prng prng = Prng::create();
  for (std::size_t i = 0; i < shape.columns; ++i)
    qu[i] = static_cast<std::uint32_t>(prng.next_u64());
  std::vector<std::uint32_t> out(shape.rows);
  c.shard_ms.assign(plan.size(), {});
  for (std::size_t r = 0; r <= rounds; ++r) {
    const double single = timed_pass(db.data(), shape.rows, shape.stride, qu, out);
    std::vector<double> per_shard;
    for (std::size_t s = 0; s < plan.size(); ++s) {
      per_shard.push_back(timed_pass(parts[s].data(), plan[s].rows, shape.stride, qu, out));
    }
    if (r == 0) continue;  // warm-up: first touch of the shard copies
    c.single_ms.push_back(single);
    for (std::size_t s = 0; s < plan.size(); ++s) {
      c.shard_ms[s].push_back(per_shard[s]);
      c.ratio.push_back(gbps(c.shard_bytes[s], per_shard[s]) / gbps(c.single_bytes, single));
    }
  }
  return c;
}

nlohmann::json PirPassComparison::to_json() const {
  nlohmann::json j;
  j["shards"] = shards;
  j["rounds"] = rounds;
  std::vector<double> single_gbps;
  for (const double ms : single_ms) single_gbps.push_back(gbps(single_bytes, ms));
  j["single"] = {
      {"db_bytes", single_bytes}, {"pass_ms", spread(single_ms)}, {"gbps", spread(single_gbps)}};
  for (std::size_t s = 0; s < shard_ms.size(); ++s) {
    std::vector<double> g;
    for (const double ms : shard_ms[s]) g.push_back(gbps(shard_bytes[s], ms));
    j["per_shard"].push_back(
        {{"db_bytes", shard_bytes[s]}, {"pass_ms", spread(shard_ms[s])}, {"gbps", spread(g)}});
  }
  // The target: per-shard throughput within 15% of the single server's.
  j["shard_over_single_gbps"] = spread(ratio);
  return j;
}

}  // namespace privsearch::tools
