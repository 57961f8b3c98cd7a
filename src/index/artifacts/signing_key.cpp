#include "index/artifacts/signing_key.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "core/sha256.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/manifest_signature.h"

namespace privsearch::index {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// The file's bytes (index::read_file_bytes: kNotFound naming it); wiped by the caller when
// they hold a secret.
Result<std::vector<std::uint8_t>> read_key_file(const std::filesystem::path& file) {
  auto bytes = read_file_bytes(file);
  if (bytes.ok() && bytes->size() > 64 * 1024) {
    OPENSSL_cleanse(bytes->data(), bytes->size());
    return data_loss_error(
        fmt::format("`{}` is {} bytes: not a key", file.string(), bytes->size()));
  }
  return bytes;
}

Result<std::array<std::uint8_t, kEd25519PublicKeyBytes>> raw_public(EVP_PKEY* key) {
  std::array<std::uint8_t, kEd25519PublicKeyBytes> raw{};
  std::size_t len = raw.size();
  if (EVP_PKEY_get_raw_public_key(key, raw.data(), &len) != 1 || len != raw.size()) {
    return internal_error("OpenSSL could not export the Ed25519 public key");
  }
  return raw;
}

// Writes `text` to `file` atomically with mode `mode`, set before the first byte.
Status write_text(const std::filesystem::path& file, std::string_view text, mode_t mode) {
  return write_file_atomically(file, [&](std::FILE* f) {
    if (::fchmod(::fileno(f), mode) != 0) return unavailable_error("chmod failed");
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
      return unavailable_error("short write");
    }
    return Status();
  });
}

}  // namespace

Result<Ed25519PublicKey> Ed25519PublicKey::from_raw(std::span<const std::uint8_t> raw) {
  if (raw.size() != kEd25519PublicKeyBytes) {
    return invalid_argument_error(
        fmt::format("an Ed25519 public key has 32 bytes, not {}", raw.size()));
  }
  // Let OpenSSL parse it once: a point that does not decode is refused at verify time anyway,
  // but a key object must exist.
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw.data(), raw.size()));
  if (!key) return invalid_argument_error("not an Ed25519 public key");
  Ed25519PublicKey k;
  std::copy(raw.begin(), raw.end(), k.raw_.begin());
  return k;
}

Result<Ed25519PublicKey> Ed25519PublicKey::load(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto text, read_key_file(file));
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) return internal_error("BIO_new_mem_buf failed");
  PkeyPtr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return data_loss_error(fmt::format("`{}` is not a PEM public key", file.string()));
  }
  if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    return invalid_argument_error(fmt::format(
        "`{}` holds a public key of another algorithm (Ed25519 needed)", file.string()));
  }
  Ed25519PublicKey k;
  PRIVSEARCH_ASSIGN_OR_RETURN(k.raw_, raw_public(key.get()));
  return k;
}

Status Ed25519PublicKey::save(const std::filesystem::path& file) const {
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()));
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!key || !bio || PEM_write_bio_PUBKEY(bio.get(), key.get()) != 1) {
    return internal_error("OpenSSL could not write the public key");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return write_text(file, std::string_view(data, static_cast<std::size_t>(len)), 0644);
}

std::string Ed25519PublicKey::key_id() const { return ed25519_key_id(raw_); }

bool Ed25519PublicKey::verify(std::span<const std::uint8_t> message,
                              const Ed25519Signature& signature) const {
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!key || !ctx) return false;  // fails closed
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), message.data(),
                          message.size()) == 1;
}

Result<Ed25519SigningKey> Ed25519SigningKey::generate() {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr), &EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1) {
    return internal_error("OpenSSL could not generate an Ed25519 key");
  }
  PkeyPtr key(raw);
  Ed25519SigningKey k;
  PRIVSEARCH_ASSIGN_OR_RETURN(k.public_.raw_, raw_public(key.get()));
  k.pkey_ = key.release();
  return k;
}

Result<Ed25519SigningKey> Ed25519SigningKey::from_secret_for_tests(
    std::span<const std::uint8_t> secret) {
  if (secret.size() != 32) return invalid_argument_error("an Ed25519 secret has 32 bytes");
  PkeyPtr key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, secret.data(), secret.size()));
  if (!key) return internal_error("OpenSSL refused the Ed25519 secret");
  Ed25519SigningKey k;
  PRIVSEARCH_ASSIGN_OR_RETURN(k.public_.raw_, raw_public(key.get()));
  k.pkey_ = key.release();
  return k;
}

Result<Ed25519SigningKey> Ed25519SigningKey::load(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto text, read_key_file(file));
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  OPENSSL_cleanse(text.data(), text.size());
  if (!key) return data_loss_error(fmt::format("`{}` is not a PEM private key", file.string()));
  if (EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    return invalid_argument_error(
        fmt::format("`{}` holds a key of another algorithm (Ed25519 needed)", file.string()));
  }
  Ed25519SigningKey k;
  PRIVSEARCH_ASSIGN_OR_RETURN(k.public_.raw_, raw_public(key.get()));
  k.pkey_ = key.release();
  return k;
}

Status Ed25519SigningKey::save(const std::filesystem::path& file) const {
  if (std::filesystem::exists(file)) {
    return failed_precondition_error(
        fmt::format("`{}` exists; a signing key is never overwritten", file.string()));
  }
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), static_cast<EVP_PKEY*>(pkey_), nullptr, nullptr,
                                       0, nullptr, nullptr) != 1) {
    return internal_error("OpenSSL could not write the signing key");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return write_text(file, std::string_view(data, static_cast<std::size_t>(len)), 0600);
}

Ed25519SigningKey::Ed25519SigningKey(Ed25519SigningKey&& other) noexcept
    : pkey_(std::exchange(other.pkey_, nullptr)), public_(other.public_) {}

Ed25519SigningKey& Ed25519SigningKey::operator=(Ed25519SigningKey&& other) noexcept {
  if (this != &other) {
    EVP_PKEY_free(static_cast<EVP_PKEY*>(pkey_));
    pkey_ = std::exchange(other.pkey_, nullptr);
    public_ = other.public_;
  }
  return *this;
}

Ed25519SigningKey::~Ed25519SigningKey() { EVP_PKEY_free(static_cast<EVP_PKEY*>(pkey_)); }

Ed25519Signature Ed25519SigningKey::sign(std::span<const std::uint8_t> message) const {
  Ed25519Signature sig{};
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  std::size_t len = sig.size();
  PRIVSEARCH_CHECK(
      ctx && pkey_ != nullptr &&
          EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, static_cast<EVP_PKEY*>(pkey_)) ==
              1 &&
          EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(), message.size()) == 1 &&
          len == sig.size(),
      "OpenSSL Ed25519 signing failed");
  return sig;
}

}  // namespace privsearch::index
