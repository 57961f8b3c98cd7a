#include "client/ivf_lists.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_set>

#include "client/rerank_session.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "index/candidates/ivf_list_record.h"

namespace privsearch::client {

IvfListSource::IvfListSource(const index::IvfIndex* ivf, std::string artifact_version,
                             ProviderClient* transport, std::optional<SegmentCache> disk,
                             ListSourceLimits limits)
    : ivf_(ivf),
      version_(std::move(artifact_version)),
      transport_(transport),
      disk_(std::move(disk)),
      limits_(limits) {}

std::shared_ptr<const index::IvfList> IvfListSource::from_memory(std::uint64_t k) {
  const auto it = by_list_.find(k);
  if (it == by_list_.end()) return nullptr;
  recent_.splice(recent_.begin(), recent_, it->second);
  return *it->second;
}

void IvfListSource::remember(const std::shared_ptr<const index::IvfList>& list) {
  const auto k = key(list->list, list->generation);
  if (by_list_.count(k) != 0) return;
  memory_bytes_ += list->memory_bytes();
  recent_.push_front(list);
  by_list_[k] = recent_.begin();
  // Lists in use stay alive through the caller's shared_ptr even when evicted here.
  while (memory_bytes_ > limits_.memory_bytes && recent_.size() > 1) {
    memory_bytes_ -= recent_.back()->memory_bytes();
    by_list_.erase(key(recent_.back()->list, recent_.back()->generation));
    recent_.pop_back();
  }
}

Status IvfListSource::fetch(const std::vector<std::vector<std::uint32_t>>& missing,
                            ListFetchStats& stats, const SegmentUse& use) {
  // Every missing segment as (generation, list), generations in order, lists ascending in each.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> wanted;
  for (std::uint32_t g = 0; g < missing.size(); ++g) {
    for (const auto l : missing[g]) wanted.emplace_back(g, l);
  }
  // Requests within the provider's count and message limits (sizes from the directory; 1 KB of
  // the message for the framing): one generation each unless the provider takes one per list.
  // (Several smaller requests in flight at once were measured no faster on loopback: the
  // transfer is CPU-bound there, and one request is one round trip on a real network.)
  const std::uint64_t budget = limits_.max_message_bytes > 2048 ? limits_.max_message_bytes - 1024
                                                                : limits_.max_message_bytes;
  std::size_t start = 0;
  while (start < wanted.size()) {
    std::size_t end = start;
    std::uint64_t bytes = 0;
    while (end < wanted.size() && end - start < limits_.max_lists_per_fetch &&
           (limits_.mixed_generations || wanted[end].first == wanted[start].first)) {
      const std::uint64_t next = ivf_->ref(wanted[end].second, wanted[end].first).bytes + 16;
      if (end > start && bytes + next > budget) break;
      bytes += next;
      ++end;
    }
    v1::FetchListsRequest request;
    request.set_artifact_version(version_);
    const bool one_generation =
        std::all_of(wanted.begin() + std::ptrdiff_t(start), wanted.begin() + std::ptrdiff_t(end),
                    [&](const auto& w) { return w.first == wanted[start].first; });
    if (one_generation) request.set_generation(wanted[start].first);
    for (std::size_t i = start; i < end; ++i) {
      request.add_lists(wanted[i].second);
      if (!one_generation) request.add_generations(wanted[i].first);
    }
    const auto t0 = std::chrono::steady_clock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto response, transport_->fetch_lists(request));
    stats.fetch_ms += ms_since(t0);
    ++stats.requests;
    if (response.has_error()) return provider_refusal("the IVF lists", response.error());
    if (static_cast<std::size_t>(response.segments_size()) != end - start) {
      return data_loss_error(fmt::format("the provider sent {} list segments for {} requested",
                                         response.segments_size(), end - start));
    }
    for (std::size_t i = start; i < end; ++i) {
      const auto [g, list] = wanted[i];
      const std::string& segment = response.segments(static_cast<int>(i - start));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto decoded,
                                  index::decode_list(*ivf_, list, byte_view(segment), g));
      stats.fetched_bytes += segment.size();
      ++stats.fetched;
      PRIVSEARCH_RETURN_IF_ERROR(deliver(std::move(decoded), byte_view(segment), use));
    }
    start = end;
  }
  return Status();
}

Status IvfListSource::deliver(index::IvfList decoded, std::span<const std::uint8_t> bytes,
                              const SegmentUse& use) {
  // The disk cache is best effort: a full or read-only disk costs refetches, not the search.
  if (disk_) {
    (void)disk_->put(ivf_->ref(decoded.list, decoded.generation).sha256,
                     std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  auto decoded_list = std::make_shared<const index::IvfList>(std::move(decoded));
  remember(decoded_list);
  return use(decoded_list);
}

Status IvfListSource::fetch_privately(PayloadFetcher* fetcher, bool constant_count) {
  const std::uint64_t record_bytes = index::list_record_bytes(*ivf_);
  if (fetcher->records() != ivf_->lists || fetcher->record_bytes() != record_bytes) {
    return failed_precondition_error(fmt::format(
        "the provider's IVF list PIR database holds {} records of {} bytes; this index has {} "
        "lists in records of {} bytes: refresh the local index",
        fetcher->records(), fetcher->record_bytes(), ivf_->lists, record_bytes));
  }
  private_ = fetcher;
  constant_count_ = constant_count;
  return Status();
}

Status IvfListSource::fetch_private(const std::vector<std::vector<std::uint32_t>>& missing,
                                    std::span<const std::uint32_t> probed, ListFetchStats& stats,
                                    const SegmentUse& use) {
  // list -> its missing generations; a list is fetched once whatever of it is missing (with
  // constant_count_, every probed list, its cached segments fetched again and not used).
  std::map<std::uint32_t, std::vector<std::uint32_t>> wanted;
  for (std::uint32_t g = 0; g < missing.size(); ++g) {
    for (const auto l : missing[g]) wanted[l].push_back(g);
  }
  if (constant_count_) {
    for (const auto l : probed) wanted.try_emplace(l);
  }
  // No selective-failure channel in the batch's shape (docs/SECURITY.md): every query is sent
  // the same way whatever an earlier answer held, and the records are checked and delivered
  // only after the last one, so neither the queries nor their timing depend on which list's
  // answer was damaged; the first failure is returned then. What remains is whether it failed.
  if (private_->hintless()) return fetch_private_batch(wanted, stats, use);
  std::vector<std::pair<std::uint32_t, Result<std::vector<std::uint8_t>>>> records;
  for (const auto& entry : wanted) {
    FetchTiming t;
    const auto t0 = std::chrono::steady_clock::now();
    records.emplace_back(entry.first, private_->fetch_record(entry.first, &t));
    stats.fetch_ms += ms_since(t0);
    ++stats.requests;
    stats.pir_query_bytes += t.query_bytes;
    stats.pir_response_bytes += t.response_bytes;
    // A transport failure is the provider's own doing at a position it chose without knowing
    // the list: stopping there tells it nothing (and a dead provider is not waited on 32 times).
    if (records.back().second.status().code() == StatusCode::kUnavailable) {
      return records.back().second.status();
    }
  }
  std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>> fetched;
  for (auto& [list, record] : records) {
    if (!record.ok()) return record.status();
    fetched.emplace_back(list, std::move(record).value());
  }
  return deliver_records(fetched, wanted, stats, use);
}

// Every record is split and checked (each segment against its SHA-256 in the directory) before
// any is delivered: a damaged record anywhere leaves nothing of the batch cached, so the next
// search's query count cannot tell the provider where in the batch the damaged list was.
Status IvfListSource::deliver_records(
    std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>>& records,
    const std::map<std::uint32_t, std::vector<std::uint32_t>>& wanted, ListFetchStats& stats,
    const SegmentUse& use) {
  std::vector<index::ListRecordPart> parts;
  for (const auto& [list, record] : records) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto split, index::split_list_record(*ivf_, list, record));
    const auto& generations = wanted.at(list);
    for (auto& part : split) {
      if (std::find(generations.begin(), generations.end(), part.list.generation) !=
          generations.end()) {
        parts.push_back(std::move(part));  // else: already used from a cache
      }
    }
  }
  for (auto& part : parts) {
    stats.fetched_bytes += part.bytes.size();
    ++stats.fetched;
    PRIVSEARCH_RETURN_IF_ERROR(deliver(std::move(part.list), part.bytes, use));
  }
  return Status();
}

// Hintless: every wanted list in as few PirQuery batches as the limits allow, each answered in
// one database pass; delivered only after the last, as above.
Status IvfListSource::fetch_private_batch(
    const std::map<std::uint32_t, std::vector<std::uint32_t>>& wanted, ListFetchStats& stats,
    const SegmentUse& use) {
  std::vector<std::uint64_t> lists;
  for (const auto& entry : wanted) lists.push_back(entry.first);
  FetchTiming t;
  const auto t0 = std::chrono::steady_clock::now();
  auto records = private_->fetch_records(lists, &t);
  stats.fetch_ms += ms_since(t0);
  ++stats.requests;
  stats.pir_query_bytes += t.query_bytes;
  stats.pir_response_bytes += t.response_bytes;
  PRIVSEARCH_RETURN_IF_ERROR(records.status());
  std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>> fetched;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    fetched.emplace_back(static_cast<std::uint32_t>(lists[i]), std::move((*records)[i]));
  }
  return deliver_records(fetched, wanted, stats, use);
}

Status IvfListSource::visit(std::span<const std::uint32_t> lists, ListFetchStats& stats,
                            const SegmentUse& use) {
  stats.probed += lists.size();
  const auto generations = static_cast<std::uint32_t>(ivf_->deltas.size());
  std::vector<std::vector<std::uint32_t>> missing(generations + 1);  // per generation
  std::unordered_set<std::uint64_t> seen;  // a list named twice is used once
  for (const auto l : lists) {
    if (l >= ivf_->lists) {
      return out_of_range_error(fmt::format("list {} outside the index's {}", l, ivf_->lists));
    }
  }
  for (const auto l : lists) {
    for (std::uint32_t g = 0; g <= generations; ++g) {
      const auto& ref = ivf_->ref(l, g);
      if (g > 0 && ref.bytes == 0) continue;  // the list gained nothing in update g
      const auto k = key(l, g);
      if (!seen.insert(k).second) continue;
      ++stats.segments;
      if (auto list = from_memory(k)) {
        ++stats.memory_hits;
        PRIVSEARCH_RETURN_IF_ERROR(use(list));
        continue;
      }
      if (disk_) {
        if (auto bytes = disk_->get(ref.sha256)) {
          auto decoded = index::decode_list(*ivf_, l, byte_view(*bytes), g);
          if (decoded.ok()) {
            ++stats.disk_hits;
            auto list = std::make_shared<const index::IvfList>(std::move(decoded).value());
            remember(list);
            PRIVSEARCH_RETURN_IF_ERROR(use(list));
            continue;
          }
        }
      }
      missing[g].push_back(l);
    }
  }
  // Ascending: the provider sees the set, not the routing order.
  for (auto& m : missing) std::sort(m.begin(), m.end());
  if (private_ == nullptr) return fetch(missing, stats, use);
  return fetch_private(missing, lists, stats, use);
}

Result<std::vector<std::shared_ptr<const index::IvfList>>> IvfListSource::get(
    std::span<const std::uint32_t> lists, ListFetchStats& stats) {
  // Holds every segment of this call, whatever the memory bound evicts meanwhile.
  std::unordered_map<std::uint64_t, std::shared_ptr<const index::IvfList>> found;
  PRIVSEARCH_RETURN_IF_ERROR(visit(lists, stats, [&](const auto& list) {
    found[key(list->list, list->generation)] = list;
    return Status();
  }));
  const auto generations = static_cast<std::uint32_t>(ivf_->deltas.size());
  std::vector<std::shared_ptr<const index::IvfList>> out;
  for (const auto l : lists) {
    for (std::uint32_t g = 0; g <= generations; ++g) {
      if (g > 0 && ivf_->ref(l, g).bytes == 0) continue;
      out.push_back(found.at(key(l, g)));
    }
  }
  return out;
}

}  // namespace privsearch::client
