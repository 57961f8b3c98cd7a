// The protocol-level half of PIR over row shards (server/pir_coordinator.h): a coordinator holds
// the shards' answers as the bytes of their PirQuery responses and the database's public info
// as PirInfo carries it; this joins them (pir/zippir/zippir_shard.h) into the answer one server
// would send.
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::protocol {

// kDataLoss for info that does not parse or parts that do not fit together (see
// assemble_zippir_response); kUnavailable when rows are missing.
Result<std::string> join_pir_answers(const std::string& info, const std::vector<std::string>& parts,
                                     bool allow_insecure);
// The hintless backend's: `info` is the whole database's public info (pir/hintless/messages.h),
// `parts` one query's answers from the shards in output order (join_response_parts).
Result<std::string> join_hintless_answers(const std::string& info,
                                          const std::vector<std::string>& parts,
                                          bool allow_insecure);

}  // namespace privsearch::protocol
