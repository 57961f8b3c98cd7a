// ListFetchHandler (list_fetch_handler.h): the IVF index's public posting lists, served as stored.
#include "protocol/list_fetch_handler.h"

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "protocol/provider_core.h"
#include "protocol/refusal.h"

namespace privsearch::protocol {
namespace {

v1::FetchListsResponse lists_error(v1::ErrorCode code, std::string message) {
  return refusal_response<v1::FetchListsResponse>(code, std::move(message));
}

v1::FetchListsResponse lists_error(v1::Error error) {
  v1::FetchListsResponse r;
  *r.mutable_error() = std::move(error);
  return r;
}

// Every (list, generation) the request names: in range, named once, not an empty addition;
// `bytes` receives what their segments take.
std::optional<v1::Error> check_lists(const v1::FetchListsRequest& request,
                                     const index::IvfIndex& ivf, bool mixed, std::uint64_t& bytes) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;  // (generation, list)
  for (int i = 0; i < request.lists_size(); ++i) {
    const std::uint32_t list = request.lists(i);
    const std::uint32_t generation = mixed ? request.generations(i) : request.generation();
    if (generation > ivf.deltas.size()) {
      return make_error(v1::MALFORMED_REQUEST,
                        "generation " + std::to_string(generation) + " of an index with " +
                            std::to_string(ivf.deltas.size()) + " update generations");
    }
    if (list >= ivf.lists) {
      return make_error(
          v1::MALFORMED_REQUEST,
          "list " + std::to_string(list) + " outside the index's " + std::to_string(ivf.lists));
    }
    if (!seen.insert({generation, list}).second) {
      return make_error(v1::MALFORMED_REQUEST, "list " + std::to_string(list) +
                                                   " requested twice (generation " +
                                                   std::to_string(generation) + ")");
    }
    const auto& ref = ivf.ref(list, generation);
    if (generation > 0 && ref.bytes == 0) {
      return make_error(v1::MALFORMED_REQUEST, "list " + std::to_string(list) +
                                                   " gained no documents in generation " +
                                                   std::to_string(generation));
    }
    bytes += ref.bytes;
  }
  return std::nullopt;
}

}  // namespace

ListFetchHandler::ListFetchHandler(const ProviderLimits& limits, std::string artifact_version,
                                   std::shared_ptr<const index::IvfListStore> store)
    : limits_(limits), artifact_version_(std::move(artifact_version)), store_(std::move(store)) {}

v1::FetchListsResponse ListFetchHandler::answer(const v1::FetchListsRequest& request) const try {
  const auto& limits = limits_;
  if (auto e = check_size_and_version(request.ByteSizeLong(), request.artifact_version(),
                                      limits.max_message_bytes, artifact_version_)) {
    return refusal_response<v1::FetchListsResponse>(std::move(*e));
  }
  const auto& store = store_;
  if (!store) {
    return lists_error(v1::IVF_UNAVAILABLE,
                       "this provider's index has no IVF lists (built without, or below the size "
                       "where the build makes them): use the flat PQ artifact");
  }
  const auto& ivf = store->index();
  const auto count = static_cast<std::size_t>(request.lists_size());
  if (count == 0 || count > limits.max_lists_per_fetch) {
    return lists_error(v1::MALFORMED_REQUEST,
                       std::to_string(count) + " lists requested; between 1 and " +
                           std::to_string(limits.max_lists_per_fetch) + " per request");
  }
  const bool mixed = request.generations_size() != 0;
  if (mixed && static_cast<std::size_t>(request.generations_size()) != count) {
    return lists_error(v1::MALFORMED_REQUEST, std::to_string(request.generations_size()) +
                                                  " generations for " + std::to_string(count) +
                                                  " lists (one per list, or none)");
  }
  // Each list's generation: its own when given, else the request's.
  const auto generation_of = [&](int i) {
    return mixed ? request.generations(i) : request.generation();
  };
  std::uint64_t bytes = 0;
  if (auto e = check_lists(request, ivf, mixed, bytes)) return lists_error(std::move(*e));
  // The response must fit the message limit a client also enforces; a client splits its
  // probe by the sizes in its directory.
  if (bytes + 16 * count > limits.max_message_bytes) {
    return lists_error(v1::MESSAGE_TOO_LARGE, "the requested lists take " + std::to_string(bytes) +
                                                  " bytes; the message limit is " +
                                                  std::to_string(limits.max_message_bytes) +
                                                  ": request fewer per call");
  }
  v1::FetchListsResponse response;
  for (int i = 0; i < request.lists_size(); ++i) {
    auto segment = store->segment(request.lists(i), generation_of(i));
    if (!segment.ok()) {
      // Changed or cut off on disk since the load: no bytes rather than wrong ones.
      return lists_error(v1::DATA_LOSS,
                         segment.status().message() + " (the operator must reload the index)");
    }
    response.add_segments(std::move(segment).value());
  }
  return response;
} catch (const std::exception& e) {
  return lists_error(v1::INTERNAL, std::string("list fetch failed: ") + e.what());
}

}  // namespace privsearch::protocol
