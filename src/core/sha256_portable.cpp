// Sha256 (core/sha256.h) over the portable implementation, for builds without OpenSSL.
#include <memory>

#include "core/check.h"
#include "core/portable/sha256.h"
#include "core/sha256.h"

namespace privsearch {

Sha256::Sha256() : ctx_(new portable::Sha256State()) {}

Sha256::~Sha256() { delete static_cast<portable::Sha256State*>(ctx_); }

void Sha256::update(std::span<const std::uint8_t> data) {
  static_cast<portable::Sha256State*>(ctx_)->update(data.data(), data.size());
}

Sha256Digest Sha256::finish() { return static_cast<portable::Sha256State*>(ctx_)->finish(); }

}  // namespace privsearch
