// Fuzz target: the index version files a client reads before trusting an index. The first byte
// (mod 3) picks the decoder, the rest is the file: 0 manifest.sig
// (index/artifacts/manifest_signature.h), 1 manifest.json (index/artifacts/manifest.h, without
// re-hashing artifacts), 2 doc_ids.bin (index/artifacts/doc_ids.h).
// Properties: no crash; an accepted signature file re-serializes to one that parses to the same
// fields and does not verify under a fixed key it was not made with; an accepted manifest's
// version id matches its contents (load_manifest recomputes it); an accepted id table encodes
// back to the same bytes.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/check.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/signing_key.h"

namespace {
namespace fs = std::filesystem;

fs::path scratch() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("privsearch-fuzz-manifest-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

const privsearch::index::Ed25519PublicKey& fixed_key() {
  // RFC 8032 section 7.1 TEST 1's public key (its secret key is public: nothing here verifies
  // by accident unless the input carries a real signature by it).
  static const auto key = *privsearch::index::Ed25519PublicKey::from_raw(
      std::vector<std::uint8_t>{0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe,
                                0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6,
                                0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a});
  return key;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 3 == 2) {
    const auto ids = index::DocIds::decode({data + 1, size - 1});
    if (ids.ok()) {
      std::vector<std::string> all;
      for (std::uint64_t r = ids->first(); r < ids->records(); ++r) all.emplace_back(ids->id(r));
      const auto again = index::DocIds::encode(all, ids->first());
      PRIVSEARCH_CHECK(again.ok() && *again == std::vector<std::uint8_t>(data + 1, data + size),
                       "an accepted document id table does not encode to its bytes");
    }
    return 0;
  }
  if (data[0] % 3 == 0) {
    const auto s = index::parse_manifest_signature(body);
    if (s.ok()) {
      const auto again = index::parse_manifest_signature(index::serialize_manifest_signature(*s));
      PRIVSEARCH_CHECK(again.ok() && again->key_id == s->key_id &&
                           again->version_id == s->version_id && again->sequence == s->sequence &&
                           again->signature == s->signature,
                       "manifest signature decode/encode/decode changed the fields");
      (void)fixed_key().verify(std::vector<std::uint8_t>(body.begin(), body.end()), s->signature);
    }
    return 0;
  }
  const fs::path dir = scratch();
  std::ofstream(dir / "manifest.json", std::ios::binary | std::ios::trunc)
      .write(body.data(), static_cast<std::streamsize>(body.size()));
  const auto m = index::load_manifest(dir, /*verify=*/false);
  if (m.ok()) {
    PRIVSEARCH_CHECK(m->version_id.size() == 64, "an accepted manifest without a version id");
  }
  return 0;
}
