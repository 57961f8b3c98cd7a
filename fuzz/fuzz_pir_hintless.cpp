// Fuzz target: the hintless PIR backend's decoders (pir/hintless/messages.h). Input: a selector
// byte, then the bytes. 0: a query (decoded against a small d = 256 database, and when it
// decodes, answered: the response must have the shape's size); 1: a response (decoded, and
// when it decodes, read by the client: the record has the slot's size); 2: the public info
// (whatever decodes passes check_shape and sizes a client). Property: hostile bytes give an
// error, never a crash; the genuine messages round-trip.
#include <memory>
#include <vector>

#include "core/check.h"
#include "pir/hintless/client/client.h"
#include "pir/hintless/server.h"

namespace {

using namespace privsearch;
using namespace privsearch::pir::hintless;

struct Fixture {
  HintlessParams params;
  HintlessShape shape;
  std::unique_ptr<HintlessServer> server;
  std::unique_ptr<HintlessClient> client;
  std::vector<std::vector<std::uint8_t>> records;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    x.params = find_hintless_params("insecure-test-ypir-sp-d256", true).value();
    x.shape = choose_hintless_shape(x.params, 50, 64).value();
    for (std::size_t i = 0; i < 50; ++i) x.records.emplace_back(64, static_cast<std::uint8_t>(i));
    x.server = std::move(HintlessServer::create(x.params, x.shape, [&x](std::size_t i) {
                           return std::span<const std::uint8_t>(x.records[i]);
                         }).value());
    x.client = std::make_unique<HintlessClient>(HintlessClient::create(x.params, x.shape).value());
    return x;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Fixture& f = fixture();
  const std::span<const std::uint8_t> body(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      auto q = decode_query(f.params, f.shape, body);
      if (!q.ok()) return 0;
      auto r = f.server->answer(std::span<const HintlessQuery>(&*q, 1));
      PRIVSEARCH_CHECK(r.ok() && encode_response(f.params, (*r)[0]).size() ==
                                     hintless_response_bytes(f.params, f.shape.outputs),
                       "a decoded query was not answered in the shape's size");
      return 0;
    }
    case 1: {
      auto r = decode_response(f.params, f.shape, body);
      if (!r.ok()) return 0;
      Prng prng = Prng::from_seed(Seed{}, 1);
      auto made = f.client->make_query(3, prng).value();
      auto record = f.client->decode(made.second, *r);
      PRIVSEARCH_CHECK(record.ok() && record->size() == f.shape.record_bytes,
                       "a decoded response did not give a record of the slot's size");
      return 0;
    }
    default: {
      auto info = decode_public_info(body, true);
      if (!info.ok()) return 0;
      PRIVSEARCH_CHECK(check_shape(info->params, info->shape).ok(), "decoded info fails its check");
      return 0;
    }
  }
}
