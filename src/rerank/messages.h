// Rerank request and response objects and their binary form (the payloads that travel inside
// the service's protobuf messages).
//
// Request (client -> provider): params id, kernel, d', the query's replication period (the
// "padded length"), K, and the seeded query ciphertext. The provider re-derives the layout from
// (params, kernel, d', K) and rejects the request if anything disagrees.
// Response (provider -> client): the same header, the slot map (candidate -> ciphertext, slot;
// empty for the packed kernel, whose positions the header fixes) and the output ciphertexts,
// compact for the fast kernel, packed (rerank/packed_response.h) for the packed kernel and
// full for the paper's kernels.
// The client re-derives the layout and rejects a response whose header or slot map differs.
//
// Format: magic "PSRR" | u16 version 1 | u16 type (1 request, 2 response) | params id (32) |
// u8 kernel | u32 d' | u32 period | u32 K | type-specific body; all sizes are checked against
// limits before allocating, and nothing may trail.
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/compact.h"
#include "ckks/params.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::rerank {

struct MessageLimits {
  std::size_t max_candidates = kMaxCandidates;  // K (a provider passes its smaller limit)
  std::size_t max_outputs = 64;                 // response ciphertexts
  std::size_t max_ciphertext_bytes = 1 << 20;
};

struct RerankRequest {
  ckks::ParamsId params_id{};
  Kernel kernel = Kernel::kFast;
  std::size_t dim = 0;
  std::size_t period = 0;
  std::size_t k = 0;
  std::vector<std::uint8_t> query;  // serialized seeded ciphertext
};

struct RerankResponse {
  ckks::ParamsId params_id{};
  Kernel kernel = Kernel::kFast;
  std::size_t dim = 0;
  std::size_t period = 0;
  std::size_t k = 0;
  std::vector<SlotRef> slot_map;
  bool compact = true;
  std::vector<std::vector<std::uint8_t>> outputs;  // serialized (compact) ciphertexts
};

// The request header that `layout` implies (params id, kernel, d', period, K), carrying the
// serialized query ciphertext: the way to make a RerankRequest without filling its fields by
// position.
RerankRequest request_for_layout(const ckks::Params& params, const KernelLayout& layout,
                                 std::vector<std::uint8_t> query);

// The response header that `layout` implies, its slot map where the kernel sends one (not the
// packed kernel's) and the compact flag of its kernel, carrying the serialized outputs.
RerankResponse response_for_layout(const ckks::Params& params, const KernelLayout& layout,
                                   std::vector<std::vector<std::uint8_t>> outputs);

std::vector<std::uint8_t> serialize_request(const RerankRequest& r);
Result<RerankRequest> deserialize_request(std::span<const std::uint8_t> bytes,
                                          const MessageLimits& limits = {});
std::vector<std::uint8_t> serialize_response(const RerankResponse& r);
Result<RerankResponse> deserialize_response(std::span<const std::uint8_t> bytes,
                                            const MessageLimits& limits = {});

// Provider side: the layout this request asks for and its decoded query, or the reason to refuse
// it (wrong params id, unknown kernel, d' or K out of range or above the limits, padded length
// that does not match the layout, query not at the top level or not at the preset's scale).
struct AcceptedRequest {
  KernelLayout layout;
  ckks::Ciphertext query;
};
Result<AcceptedRequest> accept_request(const ckks::Params& params, const RerankRequest& request,
                                       const MessageLimits& limits = {});

// Client side: checks that the response answers `layout` (header and slot map).
Status check_response(const ckks::Params& params, const KernelLayout& layout,
                      const RerankResponse& response);

}  // namespace privsearch::rerank
