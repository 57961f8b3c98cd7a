// Status and Result<T>: the one error model of privsearch (GCC 12 has no std::expected).
//
// A Status is a code plus a message. Messages name the offending field in backticks, its value
// and the bound it broke, e.g. "`n` = 3000 is not a power of two". Result<T> holds either a T or
// a non-OK Status. Both are [[nodiscard]]; PRIVSEARCH_RETURN_IF_ERROR and
// PRIVSEARCH_ASSIGN_OR_RETURN propagate errors without exceptions.
// Thread safety: value types, no shared state.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "core/check.h"

namespace privsearch {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // the caller passed something that can never work
  kOutOfRange = 2,          // a value outside its allowed range
  kFailedPrecondition = 3,  // the objects are fine but do not fit together (params id, level)
  kDataLoss = 4,            // malformed or truncated bytes
  kResourceExhausted = 5,   // a named limit was hit
  kUnavailable = 6,         // network or peer not reachable
  kNotFound = 7,            // a named thing (key, file, preset) does not exist
  kInternal = 8,            // a bug or a failure of a third-party library
  kUnauthenticated = 9,     // a signature or credential does not verify
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "DATA_LOSS: ciphertext truncated at byte 12"
  std::string to_string() const;

  // Prefixes the message with context ("loading key set: ...").
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument_error(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status out_of_range_error(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status failed_precondition_error(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status data_loss_error(std::string m) { return Status(StatusCode::kDataLoss, std::move(m)); }
inline Status resource_exhausted_error(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status unavailable_error(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status not_found_error(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status internal_error(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status unauthenticated_error(std::string m) {
  return Status(StatusCode::kUnauthenticated, std::move(m));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    PRIVSEARCH_CHECK(!std::get<Status>(v_).ok(), "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  const T& value() const& {
    PRIVSEARCH_CHECK(ok(), "value() on an error Result");
    return std::get<T>(v_);
  }
  T& value() & {
    PRIVSEARCH_CHECK(ok(), "value() on an error Result");
    return std::get<T>(v_);
  }
  T&& value() && {
    PRIVSEARCH_CHECK(ok(), "value() on an error Result");
    return std::get<T>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace privsearch

#define PRIVSEARCH_CONCAT_INNER_(a, b) a##b
#define PRIVSEARCH_CONCAT_(a, b) PRIVSEARCH_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define PRIVSEARCH_RETURN_IF_ERROR(expr)                     \
  do {                                                       \
    ::privsearch::Status privsearch_status_ = (expr);        \
    if (!privsearch_status_.ok()) return privsearch_status_; \
  } while (0)

// PRIVSEARCH_ASSIGN_OR_RETURN(auto x, make_x()); declares/assigns x or returns the error.
#define PRIVSEARCH_ASSIGN_OR_RETURN(lhs, expr) \
  PRIVSEARCH_ASSIGN_OR_RETURN_IMPL_(PRIVSEARCH_CONCAT_(privsearch_result_, __LINE__), lhs, expr)
#define PRIVSEARCH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                      \
  if (!tmp.ok()) return tmp.status();                     \
  lhs = std::move(tmp).value()
