#include "suites/bench_pir.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "pir/zippir/zippir.h"
#include "pir/zippir/zippir_shard.h"
#include "suites/bench_pir_hintless.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
const Progress pir_progress("bench pir: ");

Result<PirOnlineFigures> time_online(pir::ZipPirServer& server,
                                     const std::vector<std::uint8_t>& query, std::size_t runs) {
  PirOnlineFigures f;
  Status failure;
  f.answer = time_runs(1, runs, [&] {
    pir::ZipPirAnswerTimings t;
    auto r = server.answer(query, &t);
    if (!r.ok()) {
      failure = r.status();
      return;
    }
    f.response = std::move(r).value();
    f.db_ms.push_back(t.db_pass_ms);
    f.hint_ms.push_back(t.hint_part_ms);
    f.conv_ms.push_back(t.offsets_to_rns_ms);
    f.mv_ms.push_back(t.rns_matvec_ms);
    f.crt_ms.push_back(t.crt_pack_add_ms);
  });
  PRIVSEARCH_RETURN_IF_ERROR(failure);
  return f;
}

// The database pass of each --shards count against the whole one, interleaved.
Result<std::vector<PirPassComparison>> shard_passes(const pir::ZipPirParams& params,
                                                    const pir::LweDatabase& db,
                                                    const PirBenchOptions& o) {
  std::vector<PirPassComparison> out;
  for (const std::size_t count : o.shards) {
    pir_progress(fmt::format("{} row shards: {} interleaved D.qu passes against the whole database",
                             count, o.runs));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto c, compare_shard_passes(params, db, count, o.runs));
    out.push_back(std::move(c));
  }
  return out;
}

// What one sharded measurement needs from the single server's run.
struct ShardInputs {
  const pir::ZipPirParams& params;
  const pir::DatabaseShape& shape;
  const pir::LweDatabase& db;
  const Seed& a_seed;
  unsigned threads;
  const pir::ZipPirServerLimits& limits;
  const std::vector<std::uint8_t>& setup;
  std::uint64_t client_id;
  const std::vector<std::uint8_t>& query;
  const pir::ZipPirPublicInfo& info;
  pir::ZipPirClient& client;
  const pir::ZipPirPendingQuery& pending;
  const std::vector<std::uint8_t>&expected, &single_response;
  std::size_t runs;
};

// `count` row shards over the same rows: each shard's offline hint and answer, the assembly of
// their parts, and whether the joined response is the single server's byte for byte.
Result<PirShardFigures> measure_shards(const ShardInputs& in, std::size_t count) {
  using namespace privsearch::pir;
  pir_progress(
      fmt::format("{} row shards: preprocessing, offline hint and answers per shard", count));
  PirShardFigures f;
  f.shards = count;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto plan, plan_row_shards(in.params, in.shape, count));
  std::vector<std::vector<std::uint8_t>> parts;
  for (const auto& range : plan) {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto shard,
        ZipPirServer::create_shard(in.params, in.db, range, in.a_seed, in.threads, in.limits));
    PRIVSEARCH_RETURN_IF_ERROR(shard->register_client(in.setup).status());
    auto t0 = Clock::now();
    PRIVSEARCH_RETURN_IF_ERROR(shard->precompute(in.client_id, 0, 1, in.threads));
    f.shard_offline_s.push_back(seconds_since(t0));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto figures, time_online(*shard, in.query, in.runs));
    f.shard_online_ms.push_back(figures.answer.median_us / 1000);
    f.shard_db_pass_ms.push_back(eval::describe(figures.db_ms).median);
    f.shard_db_bytes.push_back(shard->db_bytes());
    parts.push_back(std::move(figures.response));
  }
  std::vector<double> assemble_ms;
  std::vector<std::uint8_t> joined;
  for (std::size_t r = 0; r < in.runs; ++r) {
    const auto t0 = Clock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(joined, assemble_zippir_response(in.info, parts));
    assemble_ms.push_back(seconds_since(t0) * 1000);
  }
  f.assemble_ms = eval::describe(assemble_ms).median;
  f.identical = joined == in.single_response;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto got, in.client.extract(in.pending, joined, in.threads));
  f.recovered = got == in.expected;
  return f;
}

Result<PirSizeResult> run_one(const PirBenchOptions& o, std::size_t db_mb, unsigned threads) {
  using namespace privsearch::pir;
  PirSizeResult p;
  p.db_mb = db_mb;
  p.record_bytes = o.record_bytes;
  p.threads = threads;
  p.records = (db_mb << 20) / o.record_bytes;
  PRIVSEARCH_ASSIGN_OR_RETURN(p.shape, choose_database_shape(p.records, o.record_bytes));
  PRIVSEARCH_ASSIGN_OR_RETURN(p.params.lwe, find_lwe_params("zippir-n1400-binary"));
  p.params.paillier_bits = o.paillier_bits;
  if (o.hint_bits != 0) p.params.hint_bits = o.hint_bits;
  PRIVSEARCH_RETURN_IF_ERROR(p.params.validate());
  pir_progress(std::to_string(db_mb) + " MiB: " + std::to_string(p.shape.rows) + " x " +
               std::to_string(p.shape.columns) + " bytes, filling");
  PRIVSEARCH_ASSIGN_OR_RETURN(LweDatabase db, LweDatabase::create(p.shape));
  db.fill_pseudorandom(db_mb);
  PRIVSEARCH_ASSIGN_OR_RETURN(p.passes, shard_passes(p.params, db, o));
  p.passes_only = o.passes_only;
  if (o.passes_only) return p;
  const std::size_t probe = p.records / 3;
  const std::vector<std::uint8_t> expected = db.record(probe);

  pir_progress("server preprocessing (H = D A, rescaled exponents, P in RNS)");
  auto t0 = Clock::now();
  ZipPirServerLimits limits;
  limits.retain_hints_for_retries = true;  // time repeated answers of one query
  const Seed a_seed = Prng::random_seed();
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto server, ZipPirServer::create(p.params, std::move(db), a_seed, threads, limits));
  const auto client_info_bytes = server->info().serialize();
  p.preprocess_s = seconds_since(t0);
  p.packed_rows = server->packed_rows();
  p.state_bytes_per_query = server->state_bytes_per_query();
  pir_progress("client key generation");
  Prng prng = Prng::create();
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(ZipPirClient client, ZipPirClient::create(server->info(), prng));
  p.keygen_s = seconds_since(t0);
  const auto setup = client.setup_message();
  p.setup_bytes = setup.size();
  PRIVSEARCH_ASSIGN_OR_RETURN(std::uint64_t id, server->register_client(setup));

  pir_progress("offline hint for one query (all cores)");
  t0 = Clock::now();
  const double cpu0 = own_cpu_seconds();
  PRIVSEARCH_RETURN_IF_ERROR(server->precompute(id, 0, 1, threads));
  p.offline_wall = seconds_since(t0);
  p.offline_cpu = own_cpu_seconds() - cpu0;

  pir_progress("client offsets (n Paillier decryptions) and query");
  t0 = Clock::now();
  PRIVSEARCH_RETURN_IF_ERROR(client.precompute_query(0, threads));
  p.offsets_s = seconds_since(t0);
  std::optional<ZipPirPendingQuery> pending;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto query, client.query(probe, prng, pending, threads));
  p.client_query_ms = client.timings().query_ms;
  p.query_bytes = query.size();

  pir_progress("online answers (one thread)");
  PRIVSEARCH_ASSIGN_OR_RETURN(p.online, time_online(*server, query, o.runs));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto record, client.extract(*pending, p.online.response, threads));
  p.extract_ms = client.timings().extract_ms;
  p.recovered = record == expected;
  if (o.shards.empty()) return p;

  server.reset();  // the shards hold the same rows again
  PRIVSEARCH_ASSIGN_OR_RETURN(LweDatabase again, LweDatabase::create(p.shape));
  again.fill_pseudorandom(db_mb);
  const auto public_info = *ZipPirPublicInfo::deserialize(client_info_bytes, false);
  const ShardInputs in{
      p.params,    p.shape, again,    a_seed,   threads,           limits, setup, id, query,
      public_info, client,  *pending, expected, p.online.response, o.runs};
  for (const std::size_t count : o.shards) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto f, measure_shards(in, count));
    p.sharded.push_back(std::move(f));
  }
  return p;
}

}  // namespace

nlohmann::json PirShardFigures::to_json() const {
  nlohmann::json j;
  j["shards"] = shards;
  double slowest = 0;
  for (std::size_t i = 0; i < shard_online_ms.size(); ++i) {
    slowest = std::max(slowest, shard_online_ms[i]);
    j["per_shard"].push_back({{"db_bytes", shard_db_bytes[i]},
                              {"online_ms", shard_online_ms[i]},
                              {"db_pass_ms", shard_db_pass_ms[i]},
                              {"db_pass_gbps", static_cast<double>(shard_db_bytes[i]) /
                                                   (shard_db_pass_ms[i] * 1e-3) / 1e9},
                              {"online_gbps", static_cast<double>(shard_db_bytes[i]) /
                                                  (shard_online_ms[i] * 1e-3) / 1e9},
                              {"offline_s", shard_offline_s[i]}});
  }
  j["assemble_ms"] = assemble_ms;
  j["fetch_ms"] = slowest + assemble_ms;  // the slowest shard, then the coordinator's join
  j["identical_to_single_server"] = identical;
  j["record_recovered"] = recovered;
  return j;
}

nlohmann::json PirSizeResult::to_json() const {
  nlohmann::json passes_json = nlohmann::json::array();
  for (const auto& c : passes) passes_json.push_back(c.to_json());
  if (passes_only) {
    return {{"db_mb", db_mb},
            {"db_bytes", shape.matrix_bytes()},
            {"record_bytes", record_bytes},
            {"shape", {{"d1_rows", shape.rows}, {"d0_columns", shape.columns}}},
            {"interleaved_passes", passes_json}};
  }
  auto median = [](std::vector<double> v) { return eval::describe(std::move(v)).median; };
  const auto& f = online;
  const double bytes = static_cast<double>(shape.matrix_bytes());
  nlohmann::json j;
  j["db_mb"] = db_mb;
  j["db_bytes"] = shape.matrix_bytes();
  j["record_bytes"] = record_bytes;
  j["records"] = records;
  j["shape"] = {{"d1_rows", shape.rows},
                {"d0_columns", shape.columns},
                {"packed_rows", packed_rows},
                {"slots_per_plaintext", params.slots_per_plaintext()},
                {"hint_bits", params.hint_bits},
                {"lwe_n", params.lwe.n},
                {"paillier_bits", params.paillier_bits}};
  j["online_ms"] = {{"median", f.answer.median_us / 1000},
                    {"p95", f.answer.p95_us / 1000},
                    {"runs", f.answer.runs}};
  j["online_gbps"] = bytes / (f.answer.median_us * 1e-6) / 1e9;
  j["db_pass_ms"] = median(f.db_ms);
  j["db_pass_gbps"] = bytes / (median(f.db_ms) * 1e-3) / 1e9;
  j["hint_part_ms"] = median(f.hint_ms);
  j["hint_part_breakdown_ms"] = {{"offsets_to_rns", median(f.conv_ms)},
                                 {"rns_matvec", median(f.mv_ms)},
                                 {"crt_pack_paillier_add", median(f.crt_ms)}};
  j["offline_s_per_query"] = {
      {"wall_all_cores", offline_wall}, {"cpu_s", offline_cpu}, {"threads", threads}};
  j["offline_cpu_minutes_per_query"] = offline_cpu / 60;
  j["client_offsets_s"] = offsets_s;
  j["client_query_ms"] = client_query_ms;
  j["client_extract_ms"] = extract_ms;
  j["client_keygen_s"] = keygen_s;
  j["query_bytes"] = query_bytes;
  j["response_bytes"] = f.response.size();
  j["server_state_bytes_per_query"] = state_bytes_per_query;
  j["setup_upload_bytes"] = setup_bytes;
  j["server_preprocess_s"] = preprocess_s;
  j["record_recovered"] = recovered;
  j["decoding_failure_log2"] = params.correctness_log2(shape.columns);
  for (const auto& s : sharded) j["sharded"].push_back(s.to_json());
  if (!passes.empty()) j["interleaved_passes"] = passes_json;
  return j;
}

nlohmann::json PirBenchResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "pir";
  out["machine"] = machine;
  out["protocol"] = "ZipPIR (LWE n=1400 q=2^32 binary secret, Paillier, rescaled packed hint)";
  if (sizes.size() == 1) {
    const auto one = sizes[0].to_json();  // kept alive: items() refers into it
    for (const auto& [k, v] : one.items()) out[k] = v;
  } else {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& s : sizes) all.push_back(s.to_json());
    out["sizes"] = all;
  }
  return out;
}

Result<PirBenchResult> run_pir_bench(const PirBenchOptions& options) {
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  PirBenchResult out;
  out.machine = machine_description();
  for (const std::size_t mb : options.db_mb) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto one, run_one(options, mb, threads));
    out.sizes.push_back(std::move(one));
  }
  return out;
}

nlohmann::json zippir_backend_fields(const PirSizeResult& r) {
  const double online_ms = r.online.answer.median_us / 1000;
  const double client_ms = r.offsets_s * 1000 + r.client_query_ms + r.extract_ms;
  nlohmann::json j;
  j["backend"] = "zippir";
  j["db_mb"] = r.db_mb;
  j["record_bytes"] = r.record_bytes;
  j["records"] = r.records;
  j["online_server_ms"] = {{"median", online_ms},
                           {"p95", r.online.answer.p95_us / 1000},
                           {"runs", r.online.answer.runs}};
  j["server_cpu_s_per_fetch"] = r.offline_cpu + online_ms / 1000;
  j["offline_server_cpu_s_per_query"] = r.offline_cpu;
  j["preprocess_s"] = r.preprocess_s;
  j["query_bytes"] = r.query_bytes;
  j["response_bytes"] = r.online.response.size();
  j["key_bytes"] = r.setup_bytes;
  j["client_ms"] = {{"keygen", r.keygen_s * 1000},
                    {"offsets", r.offsets_s * 1000},
                    {"query", r.client_query_ms},
                    {"decode", r.extract_ms},
                    {"total", client_ms}};
  j["first_fetch_ms"] = r.keygen_s * 1000 + r.offline_wall * 1000 + client_ms + online_ms;
  j["record_recovered"] = r.recovered;
  return j;
}

Result<nlohmann::json> run_pir_backends(const PirBenchOptions& options,
                                        const std::vector<std::string>& backends,
                                        const std::vector<std::size_t>& record_sizes) {
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json out;
  out["suite"] = "pir";
  out["machine"] = machine_description();
  out["results"] = nlohmann::json::array();
  for (const std::size_t mb : options.db_mb) {
    for (const std::size_t bytes : record_sizes) {
      double hintless_cpu = 0, zippir_cpu = 0;
      for (const std::string& backend : backends) {
        if (backend == "hintless") {
          HintlessBenchOptions h;
          h.db_mb = mb;
          h.record_bytes = bytes;
          h.runs = options.runs;
          h.threads = threads;
          h.batch = options.batch;
          PRIVSEARCH_ASSIGN_OR_RETURN(auto j, run_hintless_pir_bench(h));
          hintless_cpu = j["server_cpu_s_per_fetch"].get<double>();
          out["results"].push_back(std::move(j));
        } else {
          PirBenchOptions z = options;
          z.record_bytes = bytes;
          z.shards.clear();
          z.passes_only = false;
          PRIVSEARCH_ASSIGN_OR_RETURN(auto r, run_one(z, mb, threads));
          auto j = zippir_backend_fields(r);
          zippir_cpu = j["server_cpu_s_per_fetch"].get<double>();
          out["results"].push_back(std::move(j));
        }
      }
      if (hintless_cpu > 0 && zippir_cpu > 0) {
        out["ratios"].push_back(
            {{"db_mb", mb},
             {"record_bytes", bytes},
             {"zippir_over_hintless_cpu_per_fetch", zippir_cpu / hintless_cpu}});
      }
    }
  }
  return out;
}

}  // namespace privsearch::tools
