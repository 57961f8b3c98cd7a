// The IVF index's public posting lists for one index version, served as stored
// (index/candidates/ivf.h): version, count, range, repeats and the response size checked, each
// segment verified against its hash before it is sent. Everything here is public; what a request
// reveals is which lists the client probes (docs/SECURITY.md). ProviderCore hands FetchLists
// requests to it. Thread safety: answer() may run concurrently.
#pragma once

#include <memory>
#include <string>

#include "index/candidates/ivf.h"
#include "protocol/privsearch.pb.h"
#include "protocol/provider_core.h"

namespace privsearch::protocol {

class ListFetchHandler {
 public:
  // `store` null: the index has no IVF lists (IVF_UNAVAILABLE).
  ListFetchHandler(const ProviderLimits& limits, std::string artifact_version,
                   std::shared_ptr<const index::IvfListStore> store);

  v1::FetchListsResponse answer(const v1::FetchListsRequest& request) const;

 private:
  const ProviderLimits limits_;
  const std::string artifact_version_;
  const std::shared_ptr<const index::IvfListStore> store_;
};

}  // namespace privsearch::protocol
