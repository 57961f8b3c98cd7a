#include "server/pir_coordinator.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "protocol/pir_shards.h"
#include "protocol/privsearch.grpc.pb.h"
#include "protocol/provider_core.h"

namespace privsearch::server {
namespace {

template <typename Response>
struct Reply {
  grpc::Status status;
  Response response;
};

}  // namespace

struct PirCoordinator::Shards {
  std::vector<std::string> addresses;
  std::vector<std::unique_ptr<v1::Provider::Stub>> stubs;
  int deadline_ms = 0;
  bool allow_insecure = false;
  // The public info of the database the shards serve, by artifact version (for assembly).
  std::mutex mu;
  std::string info_version, info;

  // Calls `method` on every shard at once; one reply per shard, in shard order.
  template <typename Request, typename Response>
  std::vector<Reply<Response>> fan_out(
      const Request& request,
      grpc::Status (v1::Provider::Stub::*method)(grpc::ClientContext*, const Request&, Response*)) {
    std::vector<Reply<Response>> replies(stubs.size());
    std::vector<std::thread> calls;
    for (std::size_t i = 0; i < stubs.size(); ++i) {
      calls.emplace_back([&, i] {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(deadline_ms));
        replies[i].status = (stubs[i].get()->*method)(&context, request, &replies[i].response);
      });
    }
    for (auto& c : calls) c.join();
    return replies;
  }

  // The first failure among the replies: a shard that did not answer, or a shard's refusal.
  template <typename Response>
  std::optional<v1::Error> first_failure(const std::vector<Reply<Response>>& replies) const {
    for (std::size_t i = 0; i < replies.size(); ++i) {
      if (!replies[i].status.ok()) {
        return protocol::make_error(
            v1::PIR_SHARD_UNAVAILABLE,
            fmt::format("PIR shard {} of {} ({}) did not answer: {}", i, replies.size(),
                        addresses[i], replies[i].status.error_message()));
      }
      if (replies[i].response.has_error()) {
        v1::Error passed = replies[i].response.error();
        passed.set_message(fmt::format("PIR shard {}: {}", i, passed.message()));
        return passed;
      }
    }
    return std::nullopt;
  }
};

Result<std::unique_ptr<PirCoordinator>> PirCoordinator::create(PirShardsConfig config) {
  if (config.addresses.empty() || config.ca_pem.empty()) {
    return invalid_argument_error("PIR shards need their addresses and their certificate");
  }
  auto c = std::unique_ptr<PirCoordinator>(new PirCoordinator(config));
  c->shards_ = std::make_unique<Shards>();
  c->shards_->addresses = config.addresses;
  c->shards_->deadline_ms = config.deadline_ms;
  c->shards_->allow_insecure = config.allow_insecure;
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = config.ca_pem;
  const auto credentials = grpc::SslCredentials(ssl);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  for (const auto& address : config.addresses) {
    c->shards_->stubs.push_back(
        v1::Provider::NewStub(grpc::CreateCustomChannel(address, credentials, args)));
  }
  return c;
}

PirCoordinator::PirCoordinator(PirShardsConfig config)
    : config_(std::move(config)), setup_limiter_(config_.setups) {}

PirCoordinator::~PirCoordinator() = default;

v1::PirInfo PirCoordinator::info() const {
  const auto replies = shards_->fan_out(v1::PirInfoRequest(), &v1::Provider::Stub::GetPirInfo);
  v1::PirInfo out;
  if (auto e = shards_->first_failure(replies)) {
    *out.mutable_error() = *e;
    return out;
  }
  out = replies[0].response;
  if (out.backend() == v1::PIR_BACKEND_HINTLESS) {
    // Output blocks in shard order, consecutive from 0 (the database's count is checked when
    // the parts are joined).
    std::uint32_t next = 0;
    for (std::size_t i = 0; i < replies.size(); ++i) {
      const auto& r = replies[i].response;
      if (r.backend() != v1::PIR_BACKEND_HINTLESS || r.shard_first_output() != next ||
          r.shard_outputs() == 0) {
        *out.mutable_error() = protocol::make_error(
            v1::INTERNAL,
            "PIR shard " + std::to_string(i) +
                " does not hold the next output block (every shard must serve shard I "
                "of one count S, listed in address order)");
        return out;
      }
      next += r.shard_outputs();
      out.set_max_batch(std::min(out.max_batch(), r.max_batch()));  // every shard must accept it
    }
    out.clear_shard_first_output();
    out.clear_shard_outputs();
  }
  std::uint64_t db_bytes = 0;
  double offline_s = 0, offline_cpu_s = 0;
  for (const auto& r : replies) {
    if (r.response.info() != out.info() ||
        r.response.artifact_version() != out.artifact_version()) {
      *out.mutable_error() = protocol::make_error(
          v1::INTERNAL, "the PIR shards serve different databases (public info or version differ)");
      return out;
    }
    db_bytes += r.response.pir_db_bytes();
    offline_s = std::max(offline_s, r.response.offline_s_per_query());
    offline_cpu_s = std::max(offline_cpu_s, r.response.offline_cpu_s_per_query());
  }
  out.set_pir_db_bytes(db_bytes);
  out.set_offline_s_per_query(offline_s);
  out.set_offline_cpu_s_per_query(offline_cpu_s);
  return out;
}

v1::PirSetupResponse PirCoordinator::setup(const v1::PirSetupRequest& request,
                                           const std::string& client_key) {
  v1::PirSetupResponse out;
  if (const double wait_s = setup_limiter_.take(client_key); wait_s > 0) {
    *out.mutable_error() = protocol::setup_rate_refusal(config_.setups, wait_s);
    return out;
  }
  const auto replies = shards_->fan_out(request, &v1::Provider::Stub::PirSetup);
  if (auto e = shards_->first_failure(replies)) {
    *out.mutable_error() = *e;
    return out;
  }
  for (const auto& r : replies) {
    if (r.response.client_id() != replies[0].response.client_id()) {
      *out.mutable_error() =
          protocol::make_error(v1::INTERNAL, "the PIR shards disagree on the client id");
      return out;
    }
  }
  out.set_client_id(replies[0].response.client_id());
  return out;
}

v1::PirStatusResponse PirCoordinator::status(const v1::PirStatusRequest& request) {
  const auto replies = shards_->fan_out(request, &v1::Provider::Stub::PirStatus);
  v1::PirStatusResponse out;
  if (auto e = shards_->first_failure(replies)) {
    *out.mutable_error() = *e;
    return out;
  }
  // Ready only where every shard holds the hint.
  std::set<std::uint64_t> ready(replies[0].response.ready_query_indices().begin(),
                                replies[0].response.ready_query_indices().end());
  for (std::size_t i = 1; i < replies.size(); ++i) {
    const std::set<std::uint64_t> here(replies[i].response.ready_query_indices().begin(),
                                       replies[i].response.ready_query_indices().end());
    std::erase_if(ready, [&](std::uint64_t q) { return here.count(q) == 0; });
  }
  for (const auto q : ready) out.add_ready_query_indices(q);
  return out;
}

v1::PirQueryResponse PirCoordinator::query(const v1::PirQueryRequest& request) {
  v1::PirQueryResponse out;
  // The database's public info (for the assembly), cached per artifact version.
  std::string public_info;
  {
    std::lock_guard lock(shards_->mu);
    if (shards_->info_version == request.artifact_version()) public_info = shards_->info;
  }
  if (public_info.empty()) {
    const auto i = info();
    if (i.has_error()) {
      *out.mutable_error() = i.error();
      return out;
    }
    public_info = i.info();
    std::lock_guard lock(shards_->mu);
    shards_->info_version = i.artifact_version();
    shards_->info = public_info;
  }
  const auto replies = shards_->fan_out(request, &v1::Provider::Stub::PirQuery);
  if (auto e = shards_->first_failure(replies)) {
    *out.mutable_error() = *e;
    return out;
  }
  double provider_ms = 0;
  for (const auto& r : replies) provider_ms = std::max(provider_ms, r.response.provider_ms());
  if (request.queries_size() > 0) return join_hintless(public_info, replies, provider_ms);
  std::vector<std::string> parts;
  for (const auto& r : replies) parts.push_back(r.response.answer());
  auto joined = protocol::join_pir_answers(public_info, parts, shards_->allow_insecure);
  if (!joined.ok()) {
    *out.mutable_error() = protocol::make_error(
        joined.status().code() == StatusCode::kUnavailable ? v1::PIR_SHARD_UNAVAILABLE
                                                           : v1::INTERNAL,
        "the PIR shards' answers do not fit together: " + joined.status().message());
    return out;
  }
  out.set_answer(std::move(joined).value());
  out.set_provider_ms(provider_ms);
  return out;
}

namespace {
// The output count in a hintless answer's header (magic, params id, outputs); 0 when short.
std::uint32_t part_outputs(const std::string& part) {
  if (part.size() < 12) return 0;
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(part[8 + i])) << (8 * i);
  return v;
}
}  // namespace

template <typename Replies>
v1::PirQueryResponse PirCoordinator::join_hintless(const std::string& public_info,
                                                   const Replies& replies, double provider_ms) {
  v1::PirQueryResponse out;
  const int queries = replies[0].response.answers_size();
  // The parts are joined in address order; each shard says which block its answers hold, so a
  // shard restarted with another --pir-shard (or two swapped) fails whole instead of joining
  // into a wrong record.
  std::uint32_t expected_first = 0;
  for (const auto& r : replies) {
    if (r.response.shard_first_output() != expected_first || r.response.answers_size() == 0) {
      *out.mutable_error() =
          protocol::make_error(v1::INTERNAL,
                               "a PIR shard's answer holds another output block than its place in "
                               "the shard list (shards restarted or reordered)");
      return out;
    }
    expected_first += part_outputs(r.response.answers(0));
  }
  for (const auto& r : replies) {
    if (r.response.answers_size() != queries) {
      *out.mutable_error() =
          protocol::make_error(v1::INTERNAL, "the PIR shards answered different batch sizes");
      return out;
    }
  }
  for (int k = 0; k < queries; ++k) {
    std::vector<std::string> parts;
    for (const auto& r : replies) parts.push_back(r.response.answers(k));
    auto joined = protocol::join_hintless_answers(public_info, parts, shards_->allow_insecure);
    if (!joined.ok()) {
      v1::PirQueryResponse failed;
      *failed.mutable_error() =
          protocol::make_error(v1::INTERNAL, "the PIR shards' answers do not fit together: " +
                                                 joined.status().message());
      return failed;
    }
    out.add_answers(std::move(joined).value());
  }
  out.set_provider_ms(provider_ms);
  return out;
}

}  // namespace privsearch::server
