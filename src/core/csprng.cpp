#include "core/csprng.h"

#include <pthread.h>

#include <atomic>
#include <bit>
#include <cstring>
#include <utility>

#include "core/check.h"
#include "core/csprng_backend.h"
#include "core/secure_buffer.h"

namespace privsearch {

namespace {

// Incremented in every child process fork() makes (pthread_atfork), registered once before the
// first OS-seeded generator exists.
std::atomic<std::uint64_t> g_fork_generation{0};
void count_fork_in_child() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }
void register_fork_counter() {
  static const bool registered = [] {
    PRIVSEARCH_CHECK(::pthread_atfork(nullptr, nullptr, count_fork_in_child) == 0,
                     "pthread_atfork failed");
    return true;
  }();
  (void)registered;
}
// Registered when the program starts, not at the first create(): state drawn from seeded
// streams (or made without any OS-seeded generator) must see a fork too.
[[maybe_unused]] const bool kForkCounterAtStart = (register_fork_counter(), true);
}  // namespace

std::uint64_t Prng::current_fork_generation() {
  // On every draw (reseed_if_forked): one relaxed load; the counter was registered at start.
  return g_fork_generation.load(std::memory_order_relaxed);
}

void Prng::reseed_after_fork() {
  Seed seed = random_seed();
  Prng fresh;
  fresh.ctx_ = detail::open_keystream(seed, 0, detail::KeystreamUse::kSecret);
  secure_zero(seed.data(), seed.size());
  fresh.os_seeded_ = true;
  fresh.fork_generation_ = current_fork_generation();
  *this = std::move(fresh);
}

Seed Prng::random_seed() {
  Seed seed{};
  detail::os_entropy(seed);
  return seed;
}

Prng Prng::create() {
  register_fork_counter();
  Seed seed = random_seed();
  Prng p;
  p.ctx_ = detail::open_keystream(seed, 0, detail::KeystreamUse::kSecret);
  secure_zero(seed.data(), seed.size());
  p.os_seeded_ = true;
  p.fork_generation_ = current_fork_generation();
  return p;
}

Prng Prng::from_seed(const Seed& seed, std::uint64_t stream) {
  Prng p;
  p.ctx_ = detail::open_keystream(seed, stream, detail::KeystreamUse::kReproducible);
  return p;
}

Prng::~Prng() {
  if (ctx_ != nullptr) detail::close_keystream(ctx_);
  secure_zero(buffer_.data(), buffer_.size());
}

Prng::Prng(Prng&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)),
      os_seeded_(std::exchange(other.os_seeded_, false)),
      fork_generation_(other.fork_generation_),
      buffer_(other.buffer_),
      used_(other.used_) {
  secure_zero(other.buffer_.data(), other.buffer_.size());
  other.used_ = kBufferBytes;
}

Prng& Prng::operator=(Prng&& other) noexcept {
  if (this != &other) {
    if (ctx_ != nullptr) detail::close_keystream(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
    os_seeded_ = std::exchange(other.os_seeded_, false);
    fork_generation_ = other.fork_generation_;
    buffer_ = other.buffer_;
    used_ = other.used_;
    secure_zero(other.buffer_.data(), other.buffer_.size());
    other.used_ = kBufferBytes;
  }
  return *this;
}

void Prng::refill() {
  PRIVSEARCH_CHECK(ctx_ != nullptr, "use of a moved-from Prng");
  detail::next_keystream(ctx_, buffer_);
  used_ = 0;
}

void Prng::fill(std::span<std::uint8_t> out) {
  reseed_if_forked();
  std::size_t done = 0;
  while (done < out.size()) {
    // Whole blocks straight into `out` when the buffer is spent: the same stream, in the same
    // order, without buffering (and wiping) keystream nobody asked for.
    if (used_ == kBufferBytes && out.size() - done >= 16) {
      PRIVSEARCH_CHECK(ctx_ != nullptr, "use of a moved-from Prng");
      const std::size_t take =
          std::min<std::size_t>((out.size() - done) & ~std::size_t{15}, kBufferBytes);
      detail::next_keystream(ctx_, out.subspan(done, take));
      done += take;
      continue;
    }
    if (used_ == kBufferBytes) refill();
    const std::size_t take = std::min(out.size() - done, kBufferBytes - used_);
    std::memcpy(out.data() + done, buffer_.data() + used_, take);
    secure_zero(buffer_.data() + used_, take);
    used_ += take;
    done += take;
  }
}

std::uint64_t Prng::next_u64() {
  reseed_if_forked();
  if (kBufferBytes - used_ < 8) {
    std::uint64_t v = 0;
    fill({reinterpret_cast<std::uint8_t*>(&v), sizeof(v)});
    return v;
  }
  std::uint64_t v;
  std::memcpy(&v, buffer_.data() + used_, 8);
  used_ += 8;
  return v;
}

std::uint64_t Prng::uniform_below(std::uint64_t bound) {
  PRIVSEARCH_CHECK(bound > 0, "uniform_below(0)");
  if (bound == 1) return 0;
  const int bits = static_cast<int>(std::bit_width(bound - 1));
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  for (;;) {
    const std::uint64_t v = next_u64() & mask;
    if (v < bound) return v;
  }
}

}  // namespace privsearch
