// What the transport (server/provider_server.h) calls for the PIR RPCs: the hintless service
// (protocol/pir_hintless_service.h, the default), the ZipPIR service (protocol/pir_service.h) or
// a coordinator over ZipPIR row shards (server/pir_coordinator.h).
// Thread safety: implementations allow concurrent calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "index/artifacts/payload_store.h"
#include "protocol/privsearch.pb.h"
#include "protocol/rate_limiter.h"

namespace privsearch::protocol {

// The records a PIR database serves: `records` fixed-size records of `record_bytes`, contiguous
// at `data` (which must outlive the call that reads it). The payload store's documents, or the
// IVF lists (protocol/ivf_list_pir.h).
struct PirRecords {
  std::size_t records = 0, record_bytes = 0;
  const std::uint8_t* data = nullptr;
  static PirRecords of(const index::PayloadStore& payloads) {
    return {payloads.records(), payloads.record_bytes(),
            payloads.records() == 0 ? nullptr : payloads.record(0)};
  }
};

class PirBackend {
 public:
  virtual ~PirBackend() = default;
  virtual v1::PirInfo info() const = 0;
  // `client_key`: who is asking (protocol::Caller::rate_key), for the setup rate limit.
  virtual v1::PirSetupResponse setup(const v1::PirSetupRequest& request,
                                     const std::string& client_key) = 0;
  virtual v1::PirStatusResponse status(const v1::PirStatusRequest& request) = 0;
  virtual v1::PirQueryResponse query(const v1::PirQueryRequest& request) = 0;
  // The transport's entry: `client_key` (Caller::rate_key) for a backend that meters queries
  // per caller (hintless: every query of a batch is a database pass).
  virtual v1::PirQueryResponse query_from(const v1::PirQueryRequest& request,
                                          const std::string& /*client_key*/) {
    return query(request);
  }
  virtual const RateLimit& setup_rate() const = 0;
  // A database update under a new artifact version (SIGHUP): kFailedPrecondition where the
  // backend cannot (a coordinator: its shards rebuild themselves).
  virtual Status rebuild(const PirRecords&, std::string, std::string* /*summary*/) {
    return failed_precondition_error("this PIR backend is not rebuilt in place");
  }
  // How the current database was made, for the log.
  virtual std::string last_build() const { return {}; }
};

// RATE_LIMITED for a PIR setup over `limit`, saying when to retry (the local service and a
// coordinator refuse alike).
v1::Error setup_rate_refusal(const RateLimit& limit, double wait_s);

}  // namespace privsearch::protocol
