#include "rerank_requests.h"

#include <cmath>

#include "ckks/serialization.h"
#include "rerank/client/scores.h"
#include "rerank/messages.h"

namespace privsearch::tools {
namespace {
std::string bytes_of(std::span<const std::uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}
}  // namespace

std::vector<double> random_unit_vector(std::size_t dim, Prng& prng) {
  std::vector<double> z(dim);
  double norm = 0;
  for (auto& v : z) {
    v = static_cast<double>(prng.next_u64() >> 11) * 0x1p-53 - 0.5;
    norm += v * v;
  }
  for (auto& v : z) v /= std::sqrt(norm);
  return z;
}

v1::UploadKeysRequest make_upload_request(const ckks::Params& params,
                                          const ckks::GaloisKeys& keys) {
  v1::UploadKeysRequest up;
  up.set_params_id(bytes_of(params.id()));
  up.set_galois_keys(bytes_of(ckks::serialize_galois_keys(params, keys)));
  return up;
}

Result<v1::RerankRequest> make_rerank_request(const ckks::Params& params,
                                              const rerank::KernelLayout& layout,
                                              const ckks::SecretKey& sk,
                                              std::span<const double> z,
                                              std::span<const std::uint64_t> ids,
                                              const std::string& key_id,
                                              const std::string& artifact_version, Prng& prng) {
  const std::vector<double> zv(z.begin(), z.end());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ct, rerank::encrypt_query(layout, params, sk, zv, prng));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ctb, ckks::serialize_ciphertext(
                                                  params, ct, ckks::CiphertextForm::kSeeded));
  rerank::RerankRequest rr{params.id(), rerank::Kernel::kFast, z.size(), layout.period,
                           ids.size(), ctb};
  v1::RerankRequest req;
  req.set_key_id(key_id);
  req.set_artifact_version(artifact_version);
  for (auto id : ids) req.add_candidate_ids(id);
  req.set_query(bytes_of(rerank::serialize_request(rr)));
  return req;
}

}  // namespace privsearch::tools
