// CHECK and DCHECK: assertions for programming errors, never for untrusted input (which gets a
// Status). CHECK is always on; DCHECK compiles away in release builds (NDEBUG).
#pragma once

namespace privsearch::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* condition,
                               const char* message);
}  // namespace privsearch::detail

#define PRIVSEARCH_CHECK(cond, msg)                                         \
  do {                                                                      \
    if (!(cond)) [[unlikely]]                                               \
      ::privsearch::detail::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

#ifdef NDEBUG
#define PRIVSEARCH_DCHECK(cond, msg) \
  do {                               \
  } while (0)
#else
#define PRIVSEARCH_DCHECK(cond, msg) PRIVSEARCH_CHECK(cond, msg)
#endif
