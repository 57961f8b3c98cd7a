// TLS material for the provider and its clients, with OpenSSL (libssl/libcrypto) behind this
// header: a throwaway self-signed identity for local use, loading a certificate and key from PEM
// files, certificate fingerprints, and fetching a server's certificate for fingerprint pinning.
//
// Fingerprint: SHA-256 of the certificate's DER encoding, as upper-case hex pairs joined by ':'
// (the form `openssl x509 -fingerprint -sha256` prints), so users can compare it by eye.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace privsearch::net {

// A certificate and its private key in PEM. The key text is wiped when the object dies.
// Move-only.
class TlsIdentity {
 public:
  TlsIdentity(std::string certificate_pem, std::string private_key_pem);
  TlsIdentity(TlsIdentity&& o) noexcept;
  TlsIdentity& operator=(TlsIdentity&& o) noexcept;
  TlsIdentity(const TlsIdentity&) = delete;
  TlsIdentity& operator=(const TlsIdentity&) = delete;
  ~TlsIdentity();

  const std::string& certificate_pem() const { return certificate_pem_; }
  const std::string& private_key_pem() const { return private_key_pem_; }

 private:
  void wipe();
  std::string certificate_pem_;
  std::string private_key_pem_;
};

// An EC P-256 key and a self-signed X.509 v3 certificate for `host` (subject CN and
// subjectAltName DNS:host, plus IP:127.0.0.1 and IP:::1), valid for `days` days.
Result<TlsIdentity> make_self_signed(std::string_view host = "localhost", int days = 30);

// Reads a PEM certificate (chain) and PEM private key; checks that the key matches the leaf.
Result<TlsIdentity> load_identity(const std::filesystem::path& certificate_file,
                                  const std::filesystem::path& private_key_file);

// Fingerprint of the first certificate of a PEM text.
Result<std::string> certificate_fingerprint(std::string_view certificate_pem);

// Connects to host:port with TLS (no verification), returns the server's leaf certificate in
// PEM. The caller must compare its fingerprint with a pinned one before trusting it.
// `protocol`, when given, receives the negotiated version ("TLSv1.3").
Result<std::string> fetch_server_certificate(const std::string& host, std::uint16_t port,
                                             int timeout_ms = 5000,
                                             std::string* protocol = nullptr);

}  // namespace privsearch::net
