#include "net/tls.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

namespace privsearch::net {
namespace {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using CtxPtr = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, Deleter<SSL_free>>;

Status openssl_error(std::string what) {
  const unsigned long e = ERR_get_error();
  char buf[256] = {};
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return Status(StatusCode::kInternal, what + (e != 0 ? std::string(": ") + buf : std::string()));
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

Result<X509Ptr> read_certificate(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return openssl_error("BIO_new_mem_buf");
  X509Ptr x(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!x) {
    ERR_clear_error();
    return Status(StatusCode::kDataLoss, "not a PEM certificate");
  }
  return x;
}

Result<std::string> read_text_file(const std::filesystem::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "cannot open `" + file.string() + "`");
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (text.size() > max_bytes) {
    return Status(StatusCode::kResourceExhausted, "`" + file.string() + "` is too large for PEM");
  }
  return text;
}

std::string fingerprint_of(X509* x) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(x, EVP_sha256(), md, &len);
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    if (i != 0) out.push_back(':');
    out.push_back(hex[md[i] >> 4]);
    out.push_back(hex[md[i] & 15]);
  }
  return out;
}

Status add_extension(X509* x, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return openssl_error("X509V3_EXT_conf_nid");
  const int ok = X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
  return ok == 1 ? Status() : openssl_error("X509_add_ext");
}

}  // namespace

TlsIdentity::TlsIdentity(std::string certificate_pem, std::string private_key_pem)
    : certificate_pem_(std::move(certificate_pem)), private_key_pem_(std::move(private_key_pem)) {}

TlsIdentity::TlsIdentity(TlsIdentity&& o) noexcept
    : certificate_pem_(std::move(o.certificate_pem_)),
      private_key_pem_(std::move(o.private_key_pem_)) {
  o.wipe();
}

TlsIdentity& TlsIdentity::operator=(TlsIdentity&& o) noexcept {
  if (this != &o) {
    wipe();
    certificate_pem_ = std::move(o.certificate_pem_);
    private_key_pem_ = std::move(o.private_key_pem_);
    o.wipe();
  }
  return *this;
}

TlsIdentity::~TlsIdentity() { wipe(); }

void TlsIdentity::wipe() {
  if (!private_key_pem_.empty()) OPENSSL_cleanse(private_key_pem_.data(), private_key_pem_.size());
  private_key_pem_.clear();
}

Result<TlsIdentity> make_self_signed(std::string_view host, int days) {
  if (host.empty() || host.size() > 253 || days < 1 || days > 3650) {
    return Status(StatusCode::kInvalidArgument, "self-signed certificate: bad host or validity");
  }
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return openssl_error("EVP_EC_gen");
  X509Ptr x(X509_new());
  if (!x) return openssl_error("X509_new");
  X509_set_version(x.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return openssl_error("RAND_bytes");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  ASN1_INTEGER* sn = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
  BN_free(bn);
  if (sn == nullptr) return openssl_error("serial number");
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 86400L * days);
  X509_set_pubkey(x.get(), key.get());
  const std::string cn(host);
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("privsearch provider"), -1, -1,
                             0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  const std::string san = "DNS:" + cn + ",IP:127.0.0.1,IP:::1";
  PRIVSEARCH_RETURN_IF_ERROR(add_extension(x.get(), NID_subject_alt_name, san.c_str()));
  PRIVSEARCH_RETURN_IF_ERROR(add_extension(x.get(), NID_basic_constraints, "critical,CA:TRUE"));
  PRIVSEARCH_RETURN_IF_ERROR(
      add_extension(x.get(), NID_key_usage, "critical,digitalSignature,keyCertSign"));
  PRIVSEARCH_RETURN_IF_ERROR(add_extension(x.get(), NID_ext_key_usage, "serverAuth"));
  if (X509_sign(x.get(), key.get(), EVP_sha256()) == 0) return openssl_error("X509_sign");

  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_secmem()));
  if (!cert_bio || !key_bio) return openssl_error("BIO_new");
  if (PEM_write_bio_X509(cert_bio.get(), x.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return openssl_error("PEM write");
  }
  return TlsIdentity(bio_text(cert_bio.get()), bio_text(key_bio.get()));
}

Result<TlsIdentity> load_identity(const std::filesystem::path& certificate_file,
                                  const std::filesystem::path& private_key_file) {
  constexpr std::size_t kMaxPem = 1 << 20;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto cert_pem, read_text_file(certificate_file, kMaxPem));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto key_pem, read_text_file(private_key_file, kMaxPem));
  TlsIdentity identity(std::move(cert_pem), std::move(key_pem));
  auto cert = read_certificate(identity.certificate_pem());
  if (!cert.ok()) {
    return Status(StatusCode::kDataLoss,
                  "`" + certificate_file.string() + "`: not a PEM certificate");
  }
  const auto& kp = identity.private_key_pem();
  BioPtr bio(BIO_new_mem_buf(kp.data(), static_cast<int>(kp.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    ERR_clear_error();
    return Status(StatusCode::kDataLoss,
                  "`" + private_key_file.string() + "`: not an unencrypted PEM private key");
  }
  if (X509_check_private_key(cert.value().get(), key.get()) != 1) {
    ERR_clear_error();
    return Status(StatusCode::kFailedPrecondition,
                  "the private key does not match the certificate");
  }
  return identity;
}

Result<std::string> certificate_fingerprint(std::string_view certificate_pem) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto x, read_certificate(certificate_pem));
  return fingerprint_of(x.get());
}

namespace {

// OpenSSL writes to the socket with write(2): a peer that closes first (a balancer with no
// healthy replica yet, a front refusing the connection) raises SIGPIPE, whose default action
// kills the caller (a CLI, a Python program). Blocked for the call in this thread; one that
// became pending meanwhile is consumed, so it never reaches the process.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (sigismember(&old_, SIGPIPE) == 0) {
      const timespec none{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &none) == SIGPIPE) {
      }
      pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_{}, old_{};
};

}  // namespace

Result<std::string> fetch_server_certificate(const std::string& host, std::uint16_t port,
                                             int timeout_ms, std::string* protocol) {
  const ScopedSigpipeBlock no_sigpipe;
  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return openssl_error("SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof kAlpn);
  const std::string target =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  BioPtr conn(BIO_new_connect(target.c_str()));
  if (!conn) return openssl_error("BIO_new_connect");
  if (BIO_do_connect(conn.get()) <= 0) {
    ERR_clear_error();
    return Status(StatusCode::kUnavailable, "cannot connect to " + target);
  }
  int fd = -1;
  BIO_get_fd(conn.get(), &fd);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  SslPtr ssl(SSL_new(ctx.get()));
  if (!ssl) return openssl_error("SSL_new");
  SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  BIO* raw = conn.release();
  SSL_set_bio(ssl.get(), raw, raw);  // the SSL object owns the connection now
  if (SSL_connect(ssl.get()) != 1) {
    ERR_clear_error();
    return Status(StatusCode::kUnavailable, "TLS handshake with " + target + " failed");
  }
  if (protocol != nullptr) *protocol = SSL_get_version(ssl.get());
  X509Ptr peer(SSL_get1_peer_certificate(ssl.get()));
  SSL_shutdown(ssl.get());
  if (!peer) return Status(StatusCode::kUnavailable, target + " sent no certificate");
  BioPtr out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(out.get(), peer.get()) != 1) return openssl_error("PEM write");
  return bio_text(out.get());
}

}  // namespace privsearch::net
