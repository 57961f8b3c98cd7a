#include "protocol/pir_shards.h"

#include "core/bytes.h"
#include "pir/hintless/messages.h"
#include "pir/zippir/zippir_shard.h"

namespace privsearch::protocol {

Result<std::string> join_pir_answers(const std::string& info, const std::vector<std::string>& parts,
                                     bool allow_insecure) {
  auto parsed = pir::ZipPirPublicInfo::deserialize(
      std::span(reinterpret_cast<const std::uint8_t*>(info.data()), info.size()), allow_insecure);
  if (!parsed.ok()) {
    return data_loss_error("the PIR shards' public info does not parse: " +
                           parsed.status().message());
  }
  std::vector<std::vector<std::uint8_t>> bytes;
  for (const auto& p : parts) bytes.emplace_back(p.begin(), p.end());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto joined, pir::assemble_zippir_response(*parsed, bytes));
  return std::string(joined.begin(), joined.end());
}

Result<std::string> join_hintless_answers(const std::string& info,
                                          const std::vector<std::string>& parts,
                                          bool allow_insecure) {
  auto parsed = pir::hintless::decode_public_info(byte_view(info), allow_insecure);
  if (!parsed.ok()) {
    return data_loss_error("the PIR shards' public info does not parse: " +
                           parsed.status().message());
  }
  std::vector<std::span<const std::uint8_t>> views;
  for (const auto& p : parts) views.push_back(byte_view(p));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto joined, pir::hintless::join_response_parts(parsed->params, parsed->shape, views));
  return to_byte_string(joined);
}

}  // namespace privsearch::protocol
