// The refusal shapes every provider RPC shares: a response carrying only a typed error, and the
// two checks each request meets before its own (the message-size limit, the artifact version
// served). One place, so the rerank, scoring and list handlers word and order them alike.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/provider_core.h"

namespace privsearch::protocol {

// A Response (any v1 response message with an `error` field) holding only that error.
template <class Response>
Response refusal_response(v1::ErrorCode code, std::string message) {
  Response r;
  *r.mutable_error() = make_error(code, std::move(message));
  return r;
}

// The same from an error already made (check_size_and_version's).
template <class Response>
Response refusal_response(v1::Error error) {
  Response r;
  *r.mutable_error() = std::move(error);
  return r;
}

// MESSAGE_TOO_LARGE above `max_message_bytes`, then WRONG_ARTIFACT_VERSION when the request names
// another version than the one served; nullopt when both pass.
inline std::optional<v1::Error> check_size_and_version(std::size_t request_bytes,
                                                       std::string_view request_version,
                                                       std::size_t max_message_bytes,
                                                       const std::string& served_version) {
  if (request_bytes > max_message_bytes) {
    return make_error(v1::MESSAGE_TOO_LARGE, "request above the message-size limit");
  }
  if (request_version != served_version) {
    return make_error(v1::WRONG_ARTIFACT_VERSION, "the provider serves artifact version " +
                                                      served_version + "; fetch the current index");
  }
  return std::nullopt;
}

}  // namespace privsearch::protocol
