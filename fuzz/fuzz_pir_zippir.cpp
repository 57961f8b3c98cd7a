// Fuzz target: every ZipPIR message decoder (public info, setup, query, response, hint, and the
// hint a replica takes from the shared store) against a live tiny deployment. Property: hostile
// bytes give an error, never a crash, and the genuine query is still answered afterwards (the
// server keeps serving).
#include "fuzz_pir_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  using namespace privsearch::pir;
  if (size == 0) return 0;
  auto& f = fuzz::pir_fixture();
  const std::span<const std::uint8_t> body(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      const auto info = ZipPirPublicInfo::deserialize(body, true);
      if (info.ok()) {
        const auto again = info->serialize();
        PRIVSEARCH_CHECK(
            again.size() == body.size() && std::equal(again.begin(), again.end(), body.begin()),
            "ZipPIR info decode/encode is not a bijection");
      }
      break;
    }
    case 1:
      (void)f.server->register_client(body);
      break;
    case 2:
      (void)f.server->answer(body);
      break;
    case 3:
      (void)f.client->store_hint(body);
      break;
    case 4:
      (void)f.client->extract(*f.pending, body);
      break;
    default: {
      // A hint from the shared store: whatever it holds, an error or an answer of the right
      // shape; the genuine one answers with the record the in-process answer gives.
      static const bool genuine_checked = [&f] {
        const auto answer = f.server->answer_with_hint(f.query, f.stored_hint);
        PRIVSEARCH_CHECK(answer.ok() && f.client->extract(*f.pending, *answer).value() ==
                                            f.client->extract(*f.pending, f.response).value(),
                         "the genuine stored hint answers with another record");
        return true;
      }();
      (void)genuine_checked;
      const auto answer = f.server->answer_with_hint(f.query, body);
      if (answer.ok()) {
        PRIVSEARCH_CHECK(answer->size() == f.response.size(), "answer of the wrong size");
      }
      break;
    }
  }
  const auto again = f.server->answer(f.query);
  PRIVSEARCH_CHECK(again.ok(), "the server stopped answering the genuine query");
  return 0;
}
