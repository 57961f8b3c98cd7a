// What the transport (server/provider_server.h) calls for the PIR RPCs: the local service
// (protocol/pir_service.h) or a coordinator over row shards (server/pir_coordinator.h).
// Thread safety: implementations allow concurrent calls.
#pragma once

#include <string>

#include "protocol/privsearch.pb.h"
#include "protocol/rate_limiter.h"

namespace privsearch::protocol {

class PirBackend {
 public:
  virtual ~PirBackend() = default;
  virtual v1::PirInfo info() const = 0;
  // `client_key`: who is asking (protocol::Caller::rate_key), for the setup rate limit.
  virtual v1::PirSetupResponse setup(const v1::PirSetupRequest& request,
                                     const std::string& client_key) = 0;
  virtual v1::PirStatusResponse status(const v1::PirStatusRequest& request) = 0;
  virtual v1::PirQueryResponse query(const v1::PirQueryRequest& request) = 0;
  virtual const RateLimit& setup_rate() const = 0;
};

// RATE_LIMITED for a PIR setup over `limit`, saying when to retry (the local service and a
// coordinator refuse alike).
v1::Error setup_rate_refusal(const RateLimit& limit, double wait_s);

}  // namespace privsearch::protocol
