// Where an IVF search's posting lists come from (index/candidates/ivf.h): memory first (a bounded
// LRU of decoded lists), then the on-disk segment cache (client/segment_cache.h; best effort: a
// write that fails costs a later refetch, not the search), then the provider (FetchLists, ascending
// list order, split to the provider's per-request and message limits). Every segment is checked
// against the SHA-256 of the (signed) directory before it is decoded or cached: a tampered or
// truncated one is kDataLoss and is not kept. What the provider learns: the lists fetched, i.e. the
// probed lists not already cached (docs/SECURITY.md, "IVF lists"). In private mode
// (fetch_privately: the provider's --pir-lists) each missing list is instead one PIR fetch of
// its record (index/candidates/ivf_list_record.h: every generation's segments of the list, padded
// to one size), and the provider learns only how many lists were not cached, at the cost of one
// PIR query per list (hintless: batched, one pass over the lists' database; docs/SCALE.md). Thread
// safety: one search at a time (like SearchClient).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/segment_cache.h"
#include "core/status.h"
#include "index/candidates/ivf.h"

namespace privsearch::client {

struct ListFetchStats {
  std::size_t probed = 0;           // lists the search needed
  std::size_t segments = 0;         // their segments (the base's and every update's additions)
  std::size_t memory_hits = 0;      // segments already decoded in memory
  std::size_t disk_hits = 0;        // segments read from the segment cache
  std::size_t fetched = 0;          // segments fetched from the provider
  std::uint64_t fetched_bytes = 0;  // segment bytes received
  std::size_t requests = 0;         // FetchLists calls, or PIR fetches in private mode
  double fetch_ms = 0;              // time in those calls
  // Private mode: the PIR queries' bytes sent and their answers' received.
  std::uint64_t pir_query_bytes = 0, pir_response_bytes = 0;
};

struct ListSourceLimits {
  std::uint64_t memory_bytes = std::uint64_t{64} << 20;  // decoded lists kept in memory
  std::uint32_t max_lists_per_fetch = 64;                // the provider's Limits
  std::uint64_t max_message_bytes = 8u << 20;
  // The provider takes a generation per list (Limits.fetch_mixed_generations): the segments of
  // every generation go in the same requests; else one generation per request.
  bool mixed_generations = false;
};

class IvfListSource {
 public:
  // `ivf` and `transport` must outlive the source; `disk`: none keeps lists in memory only.
  IvfListSource(const index::IvfIndex* ivf, std::string artifact_version, ProviderClient* transport,
                std::optional<SegmentCache> disk, ListSourceLimits limits);

  // Fetches missing lists by PIR through `fetcher` (a fetcher of PIR_DATABASE_IVF_LISTS,
  // outliving the source) instead of FetchLists. kFailedPrecondition unless its records are
  // this index's lists (count and size). `constant_count`: fetch every probed list, cached or
  // not, so the provider sees the same number of queries (nprobe) for every search whatever
  // the caches hold; the caches then save decoding, not fetches.
  Status fetch_privately(PayloadFetcher* fetcher, bool constant_count = false);
  bool private_fetch() const { return private_ != nullptr; }

  // The decoded segments of `lists` (in that order; each list's base segment, then its
  // additions of every update generation that has one); adds what it did to `stats`.
  Result<std::vector<std::shared_ptr<const index::IvfList>>> get(
      std::span<const std::uint32_t> lists, ListFetchStats& stats);

  // Calls `use` once with each of those segments in no set order: the cached ones, then the
  // fetched ones response by response (each checked against the directory and decoded first).
  // Stops at the first error, use's included.
  using SegmentUse = std::function<Status(const std::shared_ptr<const index::IvfList>&)>;
  Status visit(std::span<const std::uint32_t> lists, ListFetchStats& stats, const SegmentUse& use);

 private:
  // A segment's key: generation in the high half, list in the low one.
  static std::uint64_t key(std::uint32_t list, std::uint32_t generation) {
    return (std::uint64_t{generation} << 32) | list;
  }
  std::shared_ptr<const index::IvfList> from_memory(std::uint64_t key);
  void remember(const std::shared_ptr<const index::IvfList>& list);
  // Fetches the segments of `missing[g]` (ascending, none cached) of every generation g.
  Status fetch(const std::vector<std::vector<std::uint32_t>>& missing, ListFetchStats& stats,
               const SegmentUse& use);
  // The same by PIR: one record per list with any missing segment; uses the missing ones.
  // `probed`: every distinct probed list (fetched too, unused, with constant_count_).
  Status fetch_private(const std::vector<std::vector<std::uint32_t>>& missing,
                       std::span<const std::uint32_t> probed, ListFetchStats& stats,
                       const SegmentUse& use);
  // The hintless path of fetch_private: the wanted lists (list -> missing generations) batched.
  Status fetch_private_batch(const std::map<std::uint32_t, std::vector<std::uint32_t>>& wanted,
                             ListFetchStats& stats, const SegmentUse& use);
  // Splits the lists' PIR records into their segments, checks every one, then delivers the
  // generations `wanted` of each (nothing when any record fails).
  Status deliver_records(std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>>& records,
                         const std::map<std::uint32_t, std::vector<std::uint32_t>>& wanted,
                         ListFetchStats& stats, const SegmentUse& use);
  // Keeps a checked, decoded segment (memory; disk best effort) and hands it to `use`.
  Status deliver(index::IvfList decoded, std::span<const std::uint8_t> bytes,
                 const SegmentUse& use);

  const index::IvfIndex* ivf_;
  std::string version_;
  ProviderClient* transport_;
  std::optional<SegmentCache> disk_;
  ListSourceLimits limits_;
  PayloadFetcher* private_ = nullptr;
  bool constant_count_ = false;
  // Memory LRU: most recent at the front.
  std::list<std::shared_ptr<const index::IvfList>> recent_;
  std::unordered_map<std::uint64_t, std::list<std::shared_ptr<const index::IvfList>>::iterator>
      by_list_;
  std::uint64_t memory_bytes_ = 0;
};

}  // namespace privsearch::client
