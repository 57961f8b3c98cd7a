#include "protocol/pir_shards.h"

#include "pir/zippir/zippir_shard.h"

namespace privsearch::protocol {

Result<std::string> join_pir_answers(const std::string& info, const std::vector<std::string>& parts,
                                     bool allow_insecure) {
  auto parsed = pir::ZipPirPublicInfo::deserialize(
      std::span(reinterpret_cast<const std::uint8_t*>(info.data()), info.size()), allow_insecure);
  if (!parsed.ok()) {
    return data_loss_error("the PIR shards' public info does not parse: " + parsed.status().message());
  }
  std::vector<std::vector<std::uint8_t>> bytes;
  for (const auto& p : parts) bytes.emplace_back(p.begin(), p.end());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto joined, pir::assemble_zippir_response(*parsed, bytes));
  return std::string(joined.begin(), joined.end());
}

}  // namespace privsearch::protocol
