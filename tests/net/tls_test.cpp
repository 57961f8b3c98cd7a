#include "net/tls.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

namespace privsearch::net {
namespace {

namespace fs = std::filesystem;

class TlsFilesTest : public ::testing::Test {
 protected:
  TlsFilesTest()
      : dir(fs::temp_directory_path() / ("privsearch-tls-" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
  }
  ~TlsFilesTest() override { fs::remove_all(dir); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  }
  fs::path dir;
};

TEST(TlsTest, SelfSignedIdentityHasPemAndStableFingerprint) {
  const auto id = *make_self_signed("localhost", 2);
  EXPECT_NE(id.certificate_pem().find("-----BEGIN CERTIFICATE-----"), std::string::npos);
  EXPECT_NE(id.private_key_pem().find("PRIVATE KEY-----"), std::string::npos);
  const auto fp = *certificate_fingerprint(id.certificate_pem());
  EXPECT_TRUE(std::regex_match(fp, std::regex("([0-9A-F]{2}:){31}[0-9A-F]{2}"))) << fp;
  EXPECT_EQ(*certificate_fingerprint(id.certificate_pem()), fp);
  // Two identities never share a certificate.
  EXPECT_NE(*certificate_fingerprint(make_self_signed("localhost", 2)->certificate_pem()), fp);
}

TEST(TlsTest, BadArgumentsAndBadPem) {
  EXPECT_EQ(make_self_signed("", 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(make_self_signed("localhost", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(certificate_fingerprint("not pem").status().code(), StatusCode::kDataLoss);
}

TEST(TlsTest, MovedFromIdentityHoldsNoKey) {
  auto a = *make_self_signed("localhost", 1);
  const auto key = a.private_key_pem();
  TlsIdentity b(std::move(a));
  EXPECT_EQ(b.private_key_pem(), key);
  EXPECT_TRUE(a.private_key_pem().empty());  // NOLINT(bugprone-use-after-move): checked wipe
}

TEST_F(TlsFilesTest, LoadIdentityChecksFilesAndKeyMatch) {
  const auto a = *make_self_signed("localhost", 1);
  const auto b = *make_self_signed("localhost", 1);
  const auto cert = write("cert.pem", a.certificate_pem());
  const auto key = write("key.pem", a.private_key_pem());
  const auto other_key = write("other.pem", b.private_key_pem());
  EXPECT_EQ(load_identity(cert, key)->certificate_pem(), a.certificate_pem());
  EXPECT_EQ(load_identity(cert, other_key).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(load_identity(dir / "missing.pem", key).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(load_identity(key, key).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(load_identity(cert, cert).status().code(), StatusCode::kDataLoss);
}

TEST(TlsTest, FetchFromClosedPortIsUnavailable) {
  // Port 1 on loopback: nothing listens there in a test environment.
  EXPECT_EQ(fetch_server_certificate("127.0.0.1", 1, 1000).status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace privsearch::net
