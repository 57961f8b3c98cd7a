#include "suites/bench_pir.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "harness/measure.h"
#include "pir/zippir/zippir.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
void progress(const std::string& s) { std::fprintf(stderr, "[bench pir] %s\n", s.c_str()); }

Result<nlohmann::json> run_one(const PirBenchOptions& o, std::size_t db_mb, unsigned threads) {
  using namespace privsearch::pir;
  const std::size_t records = (db_mb << 20) / o.record_bytes;
  PRIVSEARCH_ASSIGN_OR_RETURN(DatabaseShape shape,
                              choose_database_shape(records, o.record_bytes));
  ZipPirParams params;
  PRIVSEARCH_ASSIGN_OR_RETURN(params.lwe, find_lwe_params("zippir-n1400-binary"));
  params.paillier_bits = o.paillier_bits;
  if (o.hint_bits != 0) params.hint_bits = o.hint_bits;
  PRIVSEARCH_RETURN_IF_ERROR(params.validate());
  progress(std::to_string(db_mb) + " MiB: " + std::to_string(shape.rows) + " x " +
           std::to_string(shape.columns) + " bytes, filling");
  PRIVSEARCH_ASSIGN_OR_RETURN(LweDatabase db, LweDatabase::create(shape));
  db.fill_pseudorandom(db_mb);
  const std::size_t probe = records / 3;
  const std::vector<std::uint8_t> expected = db.record(probe);

  progress("server preprocessing (H = D A, rescaled exponents, P in RNS)");
  auto t0 = Clock::now();
  ZipPirServerLimits limits;
  limits.retain_hints_for_retries = true;  // time repeated answers of one query
  PRIVSEARCH_ASSIGN_OR_RETURN(auto server, ZipPirServer::create(params, std::move(db),
                                                                Prng::random_seed(), threads,
                                                                limits));
  const double preprocess_s = seconds_since(t0);

  progress("client key generation");
  Prng prng = Prng::create();
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(ZipPirClient client, ZipPirClient::create(server->info(), prng));
  const double keygen_s = seconds_since(t0);
  const auto setup = client.setup_message();
  PRIVSEARCH_ASSIGN_OR_RETURN(std::uint64_t id, server->register_client(setup));

  progress("offline hint for one query (all cores)");
  t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  PRIVSEARCH_RETURN_IF_ERROR(server->precompute(id, 0, 1, threads));
  const double offline_wall = seconds_since(t0);
  const double offline_cpu = cpu_seconds() - cpu0;

  progress("client offsets (n Paillier decryptions) and query");
  t0 = Clock::now();
  PRIVSEARCH_RETURN_IF_ERROR(client.precompute_query(0, threads));
  const double offsets_s = seconds_since(t0);
  std::optional<ZipPirPendingQuery> pending;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto query, client.query(probe, prng, pending, threads));
  const double client_query_ms = client.timings().query_ms;

  progress("online answers (one thread)");
  std::vector<double> db_ms, hint_ms, conv_ms, mv_ms, crt_ms;
  std::vector<std::uint8_t> response;
  Status failure;
  auto stats = time_runs(1, o.runs, [&] {
    ZipPirAnswerTimings t;
    auto r = server->answer(query, &t);
    if (!r.ok()) {
      failure = r.status();
      return;
    }
    response = std::move(r).value();
    db_ms.push_back(t.db_pass_ms);
    hint_ms.push_back(t.hint_part_ms);
    conv_ms.push_back(t.offsets_to_rns_ms);
    mv_ms.push_back(t.rns_matvec_ms);
    crt_ms.push_back(t.crt_pack_add_ms);
  });
  PRIVSEARCH_RETURN_IF_ERROR(failure);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto record, client.extract(*pending, response, threads));
  const double extract_ms = client.timings().extract_ms;
  auto median = [](std::vector<double> v) { return eval::describe(std::move(v)).median; };
  const double bytes = static_cast<double>(shape.matrix_bytes());
  nlohmann::json j;
  j["db_mb"] = db_mb;
  j["db_bytes"] = shape.matrix_bytes();
  j["record_bytes"] = o.record_bytes;
  j["records"] = records;
  j["shape"] = {{"d1_rows", shape.rows}, {"d0_columns", shape.columns},
                {"packed_rows", server->packed_rows()},
                {"slots_per_plaintext", params.slots_per_plaintext()},
                {"hint_bits", params.hint_bits}, {"lwe_n", params.lwe.n},
                {"paillier_bits", params.paillier_bits}};
  j["online_ms"] = {{"median", stats.median_us / 1000}, {"p95", stats.p95_us / 1000},
                    {"runs", stats.runs}};
  j["online_gbps"] = bytes / (stats.median_us * 1e-6) / 1e9;
  j["db_pass_ms"] = median(db_ms);
  j["db_pass_gbps"] = bytes / (median(db_ms) * 1e-3) / 1e9;
  j["hint_part_ms"] = median(hint_ms);
  j["hint_part_breakdown_ms"] = {{"offsets_to_rns", median(conv_ms)},
                                 {"rns_matvec", median(mv_ms)},
                                 {"crt_pack_paillier_add", median(crt_ms)}};
  j["offline_s_per_query"] = {{"wall_all_cores", offline_wall},
                              {"cpu_s", offline_cpu},
                              {"threads", threads}};
  j["offline_cpu_minutes_per_query"] = offline_cpu / 60;
  j["client_offsets_s"] = offsets_s;
  j["client_query_ms"] = client_query_ms;
  j["client_extract_ms"] = extract_ms;
  j["client_keygen_s"] = keygen_s;
  j["query_bytes"] = query.size();
  j["response_bytes"] = response.size();
  j["server_state_bytes_per_query"] = server->state_bytes_per_query();
  j["setup_upload_bytes"] = setup.size();
  j["server_preprocess_s"] = preprocess_s;
  j["record_recovered"] = record == expected;
  j["decoding_failure_log2"] = params.correctness_log2(shape.columns);
  return j;
}

}  // namespace

Result<nlohmann::json> run_pir_bench(const PirBenchOptions& options) {
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json out;
  out["suite"] = "pir";
  out["machine"] = machine_description();
  out["protocol"] = "ZipPIR (LWE n=1400 q=2^32 binary secret, Paillier, rescaled packed hint)";
  nlohmann::json sizes = nlohmann::json::array();
  for (std::size_t mb : options.db_mb) {
    PRIVSEARCH_ASSIGN_OR_RETURN(nlohmann::json one, run_one(options, mb, threads));
    sizes.push_back(one);
  }
  if (sizes.size() == 1) {
    for (auto& [k, v] : sizes[0].items()) out[k] = v;
  } else {
    out["sizes"] = sizes;
  }
  return out;
}

}  // namespace privsearch::tools
