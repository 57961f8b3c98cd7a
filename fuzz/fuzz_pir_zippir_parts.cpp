// Fuzz target: the coordinator's join of row shards' answer parts (assemble_zippir_response,
// pir/zippir/zippir_shard.h). Input: a count byte (1-4 parts), then each part as a u16 length and
// its bytes. Property: hostile parts give an error, never a crash; whatever assembles has the
// single server's size; the genuine parts assemble to the single server's bytes.
#include "fuzz_pir_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  using namespace privsearch::pir;
  if (size == 0) return 0;
  auto& f = fuzz::pir_fixture();
  static const bool genuine_checked = [&f] {
    const auto joined = assemble_zippir_response(f.server->info(), f.parts);
    PRIVSEARCH_CHECK(joined.ok() && *joined == f.response,
                     "the genuine parts do not assemble to the single server's response");
    return true;
  }();
  (void)genuine_checked;
  const std::size_t count = data[0] % 4 + 1;
  std::vector<std::vector<std::uint8_t>> parts;
  std::size_t at = 1;
  for (std::size_t i = 0; i < count && at + 2 <= size; ++i) {
    const std::size_t len = std::min<std::size_t>(data[at] | (data[at + 1] << 8), size - at - 2);
    parts.emplace_back(data + at + 2, data + at + 2 + len);
    at += 2 + len;
  }
  const auto joined = assemble_zippir_response(f.server->info(), parts);
  if (joined.ok()) {
    PRIVSEARCH_CHECK(joined->size() == f.response.size(), "assembled response of the wrong size");
  }
  return 0;
}
