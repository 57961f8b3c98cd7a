// Ed25519 signatures (RFC 8032) through OpenSSL's EVP interface: the operator's key that signs
// index manifests (index/artifacts/manifest_signature.h), and its files. Keys are OpenSSL-generated
// (its CSPRNG, the project's only one) and stored as PEM (PKCS#8 for the secret,
// SubjectPublicKeyInfo for the public half), so `openssl pkey -in KEY -pubout` reads them too. The
// secret key file is written with mode 0600 before any byte of it; the PEM text read back is wiped
// after parsing; SigningKey is move-only and frees the key with OpenSSL (which cleanses private key
// material). Thread safety: const methods may be called concurrently (OpenSSL EVP keys are
// immutable once created; each call uses its own context).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "core/status.h"

namespace privsearch::index {

inline constexpr std::size_t kEd25519PublicKeyBytes = 32;
inline constexpr std::size_t kEd25519SignatureBytes = 64;
using Ed25519Signature = std::array<std::uint8_t, kEd25519SignatureBytes>;

class Ed25519PublicKey {
 public:
  static Result<Ed25519PublicKey> from_raw(std::span<const std::uint8_t> raw);
  // A PEM SubjectPublicKeyInfo file; kNotFound / kDataLoss naming the file, kInvalidArgument
  // for a key of another algorithm.
  static Result<Ed25519PublicKey> load(const std::filesystem::path& file);
  Status save(const std::filesystem::path& file) const;

  const std::array<std::uint8_t, kEd25519PublicKeyBytes>& raw() const { return raw_; }
  // First 16 hex digits of SHA-256 of the raw key: how files and messages name it.
  std::string key_id() const;
  // Whether `signature` is a valid signature of `message` under this key.
  bool verify(std::span<const std::uint8_t> message, const Ed25519Signature& signature) const;

 private:
  friend class Ed25519SigningKey;
  std::array<std::uint8_t, kEd25519PublicKeyBytes> raw_{};
};

class Ed25519SigningKey {
 public:
  static Result<Ed25519SigningKey> generate();
  // From the 32-byte RFC 8032 secret (known-answer tests and reproducible fuzz corpora only:
  // real keys come from generate()).
  static Result<Ed25519SigningKey> from_secret_for_tests(std::span<const std::uint8_t> secret);
  // A PEM PKCS#8 file holding an Ed25519 key.
  static Result<Ed25519SigningKey> load(const std::filesystem::path& file);
  // Atomically, mode 0600; refuses to replace an existing file.
  Status save(const std::filesystem::path& file) const;

  Ed25519SigningKey(Ed25519SigningKey&& other) noexcept;
  Ed25519SigningKey& operator=(Ed25519SigningKey&& other) noexcept;
  Ed25519SigningKey(const Ed25519SigningKey&) = delete;
  Ed25519SigningKey& operator=(const Ed25519SigningKey&) = delete;
  ~Ed25519SigningKey();

  const Ed25519PublicKey& public_key() const { return public_; }
  Ed25519Signature sign(std::span<const std::uint8_t> message) const;

 private:
  Ed25519SigningKey() = default;
  void* pkey_ = nullptr;  // EVP_PKEY*
  Ed25519PublicKey public_;
};

}  // namespace privsearch::index
