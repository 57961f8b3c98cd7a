// Hand-built rerank traffic for the audits and the systems benchmark, which need raw protobuf
// requests (a request replayed as is, a pool of pre-encrypted requests) rather than the
// SearchClient pipeline.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ckks/client/keygen.h"
#include "ckks/galois_keys.h"
#include "ckks/params.h"
#include "core/csprng.h"
#include "core/status.h"
#include "protocol/privsearch.pb.h"
#include "rerank/layout.h"

namespace privsearch::tools {

// A uniformly random direction of `dim` coordinates, unit norm.
std::vector<double> random_unit_vector(std::size_t dim, Prng& prng);

v1::UploadKeysRequest make_upload_request(const ckks::Params& params,
                                          const ckks::GaloisKeys& keys);

// The fast-kernel request for query `z` (unit norm) and candidate `ids`, seeded encryption.
Result<v1::RerankRequest> make_rerank_request(const ckks::Params& params,
                                              const rerank::KernelLayout& layout,
                                              const ckks::SecretKey& sk,
                                              std::span<const double> z,
                                              std::span<const std::uint64_t> ids,
                                              const std::string& key_id,
                                              const std::string& artifact_version, Prng& prng);

}  // namespace privsearch::tools
