#include "protocol/pir_hintless_service.h"

#include <fmt/format.h>

#include <chrono>
#include <set>

#include "core/bytes.h"
#include "core/elapsed.h"
#include "pir/hintless/messages.h"
#include "protocol/provider_core.h"

namespace privsearch::protocol {

using namespace privsearch::pir::hintless;

Result<std::shared_ptr<const HintlessPirService::Database>> HintlessPirService::build(
    const HintlessPirConfig& config, const PirRecords& records, std::string version) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessParams params,
                              find_hintless_params(config.params, config.allow_insecure));
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessShape shape,
                              choose_hintless_shape(params, records.records, records.record_bytes));
  if (config.shards == 0 || config.shard >= config.shards || config.shards > shape.outputs) {
    return invalid_argument_error(
        fmt::format("PIR shard {}/{} (shard/shards): the hintless database has {} output block(s) "
                    "({} records of {} B), "
                    "so at most {} shard(s)",
                    config.shard, config.shards, shape.outputs, shape.records, shape.record_bytes,
                    shape.outputs));
  }
  const OutputRange range{config.shard * shape.outputs / config.shards,
                          (config.shard + 1) * shape.outputs / config.shards -
                              config.shard * shape.outputs / config.shards};
  const auto t0 = std::chrono::steady_clock::now();
  HintlessServerOptions options;
  options.threads = config.threads;
  auto source = [&records](std::size_t i) {
    return std::span<const std::uint8_t>(records.data + i * records.record_bytes,
                                         records.record_bytes);
  };
  PRIVSEARCH_ASSIGN_OR_RETURN(auto server,
                              HintlessServer::create(params, shape, source, options, range));
  auto db = std::make_shared<Database>();
  db->public_info = to_byte_string(encode_public_info(params, shape));
  db->version = std::move(version);
  db->build = fmt::format(
      "hintless YPIR+SP ({}): {} records of {} B in {} columns x {} outputs, preprocessed once for "
      "every client in {:.1f} s, {} MiB; decoding failure <= 2^{:.0f}",
      params.name, shape.records, shape.record_bytes, shape.columns, shape.outputs,
      ms_since(t0) / 1000, server->memory_bytes() >> 20,
      hintless_decoding_failure_log2(params, shape.columns, shape.outputs));
  if (config.shards > 1) {
    db->build += fmt::format("; shard {} of {}: outputs [{}, {})", config.shard, config.shards,
                             range.first, range.first + range.count);
  }
  db->server = std::move(server);
  return std::shared_ptr<const Database>(std::move(db));
}

Result<std::unique_ptr<HintlessPirService>> HintlessPirService::create(const PirRecords& records,
                                                                       std::string artifact_version,
                                                                       HintlessPirConfig config) {
  if (records.records == 0 || records.data == nullptr) {
    return invalid_argument_error("the hintless PIR database has no records");
  }
  std::unique_ptr<HintlessPirService> service(new HintlessPirService(config));
  PRIVSEARCH_ASSIGN_OR_RETURN(service->db_, build(config, records, std::move(artifact_version)));
  return service;
}

std::shared_ptr<const HintlessPirService::Database> HintlessPirService::current() const {
  std::lock_guard lock(mu_);
  return db_;
}

v1::PirInfo HintlessPirService::info() const {
  const auto db = current();
  v1::PirInfo out;
  out.set_info(db->public_info);
  out.set_backend(v1::PIR_BACKEND_HINTLESS);
  out.set_artifact_version(db->version);
  out.set_max_batch(static_cast<std::uint32_t>(config_.max_batch));
  out.set_pir_db_bytes(db->server->database().entries().size() * sizeof(std::uint16_t));
  if (config_.shards > 1) {
    out.set_shard_first_output(static_cast<std::uint32_t>(db->server->database().first_output()));
    out.set_shard_outputs(static_cast<std::uint32_t>(db->server->database().outputs()));
  }
  return out;
}

v1::PirSetupResponse HintlessPirService::setup(const v1::PirSetupRequest&, const std::string&) {
  v1::PirSetupResponse out;
  *out.mutable_error() = make_error(
      v1::MALFORMED_REQUEST,
      "this provider serves hintless PIR (PirInfo.backend = HINTLESS): no PirSetup is needed, "
      "send PirQuery directly");
  return out;
}

v1::PirStatusResponse HintlessPirService::status(const v1::PirStatusRequest&) {
  v1::PirStatusResponse out;
  *out.mutable_error() = make_error(
      v1::MALFORMED_REQUEST,
      "this provider serves hintless PIR (PirInfo.backend = HINTLESS): there is no per-client "
      "hint to wait for");
  return out;
}

v1::PirQueryResponse HintlessPirService::query_from(const v1::PirQueryRequest& request,
                                                    const std::string& client_key) {
  v1::PirQueryResponse out;
  auto refuse = [&out](v1::ErrorCode code, std::string message) {
    *out.mutable_error() = make_error(code, std::move(message));
    return out;
  };
  const auto db = current();
  if (request.artifact_version() != db->version) {
    return refuse(v1::PIR_VERSION_MISMATCH, "PIR database version `" + db->version +
                                                "`, the client has `" + request.artifact_version() +
                                                "`: the database was rebuilt");
  }
  if (request.queries_size() == 0 || !request.query().empty()) {
    return refuse(v1::MALFORMED_REQUEST,
                  "a hintless PirQuery carries its queries in `queries` (this provider does not "
                  "serve ZipPIR)");
  }
  if (static_cast<std::size_t>(request.queries_size()) > config_.max_batch) {
    return refuse(v1::PIR_LIMIT, fmt::format("{} queries in one PirQuery, the limit is {}",
                                             request.queries_size(), config_.max_batch));
  }
  // Metered per query, after the cheap refusals and before any decoding or database pass.
  if (const double wait_s = query_limiter_.take(client_key, request.queries_size()); wait_s > 0) {
    return refuse(v1::RATE_LIMITED,
                  fmt::format("{} PIR queries refused: at most {:.0f} per minute (burst {:.0f}) "
                              "per identity or address; retry in {:.1f} s",
                              request.queries_size(), config_.queries.per_minute,
                              config_.queries.burst, std::min(wait_s, 3600.0)));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto& server = *db->server;
  std::vector<HintlessQuery> queries;
  for (const auto& bytes : request.queries()) {
    auto decoded = decode_query(server.params(), server.shape(), byte_view(bytes));
    if (!decoded.ok()) {
      const bool stale = decoded.status().code() == StatusCode::kFailedPrecondition;
      return refuse(stale ? v1::PIR_VERSION_MISMATCH : v1::MALFORMED_REQUEST,
                    "query " + std::to_string(queries.size()) + ": " + decoded.status().message());
    }
    queries.push_back(std::move(*decoded));
  }
  auto answers = server.answer(queries);  // a shard's: its outputs only
  if (!answers.ok()) return refuse(v1::INTERNAL, answers.status().message());
  for (const auto& a : *answers) {
    out.add_answers(to_byte_string(encode_response(server.params(), a)));
  }
  out.set_provider_ms(ms_since(t0));
  out.set_shard_first_output(static_cast<std::uint32_t>(server.database().first_output()));
  return out;
}

Status HintlessPirService::rebuild(const PirRecords& records, std::string artifact_version,
                                   std::string* summary) {
  const auto now = current();
  const auto& old = *now->server;
  const auto t0 = std::chrono::steady_clock::now();
  auto source = [&records](std::size_t i) {
    return std::span<const std::uint8_t>(records.data + i * records.record_bytes,
                                         records.record_bytes);
  };
  std::unique_ptr<HintlessServer> server;
  std::string how;
  if (records.records == old.shape().records && records.record_bytes == old.shape().record_bytes) {
    // The same shape (an update that rewrote or zeroed records in place): a copy of the server,
    // its hint updated over the changed columns only, swapped in once ready.
    const auto changed = old.changed_columns(source);
    server = old.copy();
    PRIVSEARCH_RETURN_IF_ERROR(
        server->update_columns(std::set<std::size_t>(changed.begin(), changed.end()), source));
    how = fmt::format("the same shape; hint updated over its {} changed columns of {}",
                      changed.size(), old.shape().columns);
  } else if (auto grown = grow(old, records, source); grown.ok()) {
    // Appended records that only add columns: the kept hint plus the new columns' part.
    server = std::move(grown).value();
    how = fmt::format(
        "{} records appended in {} more columns ({} in all); hint updated over the "
        "changed and new columns only",
        records.records - old.shape().records, server->shape().columns - old.shape().columns,
        server->shape().columns);
  }
  if (!server) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto next, build(config_, records, std::move(artifact_version)));
    if (summary != nullptr) *summary = next->build;
    std::lock_guard lock(mu_);
    db_ = std::move(next);
    return Status();
  }
  auto db = std::make_shared<Database>();
  db->public_info = to_byte_string(encode_public_info(server->params(), server->shape()));
  db->version = std::move(artifact_version);
  db->build = fmt::format("hintless YPIR+SP: {}; packing precomputation redone in {:.1f} s", how,
                          ms_since(t0) / 1000);
  db->server = std::move(server);
  if (summary != nullptr) *summary = db->build;
  std::lock_guard lock(mu_);
  db_ = std::move(db);
  return Status();
}

Result<std::unique_ptr<HintlessServer>> HintlessPirService::grow(
    const HintlessServer& old, const PirRecords& records,
    const HintlessServer::RecordSource& source) const {
  if (records.records < old.shape().records || records.record_bytes != old.shape().record_bytes) {
    return failed_precondition_error("not an append");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const HintlessShape shape,
      choose_hintless_shape(old.params(), records.records, records.record_bytes));
  return old.grown(shape, source);
}

std::string HintlessPirService::last_build() const { return current()->build; }

}  // namespace privsearch::protocol
