// Fuzz target: the provider's protobuf requests end to end through ProviderCore (protobuf
// parsing, then every payload decoder behind it: galois keys, PSRR request, ciphertext).
// Input: one selector byte (0 UploadKeys, 1 Rerank, 2 both in sequence) then protobuf bytes.
// Properties: the core never crashes or throws, and every answer is either a result or an Error
// with a named code.

#include <memory>
#include <string>

#include "fuzz_common.h"
#include "index/artifacts/exact_store.h"
#include "protocol/provider_core.h"

namespace {

using namespace privsearch;

protocol::ProviderCore& core() {
  // A small store (8 rows of d' = 5).
  static const std::unique_ptr<index::ExactStore> store = fuzz::small_exact_store(
      8, 5, [](std::size_t i) { return 0.1f * static_cast<float>(i % 7); }, "store");
  static const std::unique_ptr<protocol::ProviderCore> c = [] {
    protocol::ProviderConfig config(fuzz::fuzz_params());
    config.params_name = "insecure-test-64";
    config.artifact_version = "fuzz";
    config.limits.max_message_bytes = 1 << 16;
    config.limits.max_candidates = 16;
    return protocol::ProviderCore::create(std::move(config), store.get()).value();
  }();
  return *c;
}

void check_error(const v1::Error& e) {
  PRIVSEARCH_CHECK(e.code() != v1::ERROR_CODE_UNSPECIFIED && !e.message().empty(),
                   "a refusal without a named code and message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int selector = data[0] % 3;
  const auto* body = reinterpret_cast<const char*>(data + 1);
  const int body_size = static_cast<int>(size - 1);
  if (selector == 0 || selector == 2) {
    v1::UploadKeysRequest up;
    if (up.ParseFromArray(body, body_size)) {
      const auto r = core().upload_keys(up);
      if (r.has_error()) check_error(r.error());
    }
  }
  if (selector == 1 || selector == 2) {
    v1::RerankRequest rr;
    if (rr.ParseFromArray(body, body_size)) {
      const auto r = core().rerank(rr);
      if (r.has_error()) check_error(r.error());
    }
  }
  return 0;
}
