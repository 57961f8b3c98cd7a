#include "client/core/trust_check.h"

#include <fmt/format.h>

namespace privsearch::client::core {

Result<bool> check_seen_version(const SeenVersion& opened, const std::optional<SeenVersion>& seen,
                                std::string_view key_id, std::string_view where) {
  if (opened.sequence == 0) {
    return failed_precondition_error(fmt::format(
        "index `{}` is signed but has no version sequence; sign it with `privsearch sign`", where));
  }
  if (!seen) return true;
  if (opened.sequence < seen->sequence) {
    return failed_precondition_error(fmt::format(
        "rollback: index `{}` is version sequence {} ({}...), older than sequence {} ({}...) "
        "this client has already seen signed by key {}; fetch the current index",
        where, opened.sequence, opened.version_id.substr(0, 12), seen->sequence,
        seen->version_id.substr(0, 12), key_id));
  }
  if (opened.sequence == seen->sequence) {
    if (seen->version_id == opened.version_id) return false;
    return failed_precondition_error(fmt::format(
        "fork: key {} signed two different indexes as sequence {} ({}... seen, {}... now)", key_id,
        seen->sequence, seen->version_id.substr(0, 12), opened.version_id.substr(0, 12)));
  }
  return true;
}

}  // namespace privsearch::client::core
