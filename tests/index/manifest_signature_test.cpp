#include "index/artifacts/manifest_signature.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "client/trusted_index.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/signing_key.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

struct Dir {
  Dir()
      : path(fs::temp_directory_path() / ("privsearch-signing-" + std::to_string(::getpid()) + "-" +
                                          std::to_string(counter++))) {
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  static inline int counter = 0;
  fs::path path;
};

std::string read(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write(const fs::path& f, const std::string& s) { std::ofstream(f, std::ios::binary) << s; }

// An index directory with two artifacts and a manifest at `sequence` (0: none).
Manifest make_index(const fs::path& dir, const std::string& content, std::uint64_t sequence,
                    const std::string& parent = "") {
  fs::create_directories(dir);
  write(dir / "pq.bin", content);
  write(dir / "projection.bin", "projection");
  Manifest m;
  m.collection = "tiny";
  m.encoder_id = "test";
  m.documents = 3;
  m.input_dim = 8;
  m.dim = 4;
  m.pq_m = 2;
  m.seed = 7;
  m.sequence = sequence;
  m.parent_version = parent;
  m.artifacts = {{"pq", "pq.bin", 0, ""}, {"projection", "projection.bin", 0, ""}};
  EXPECT_TRUE(write_manifest(dir, m).ok());
  return m;
}

TEST(SigningKey, SignsVerifiesAndRoundTripsThroughPemFiles) {
  Dir d;
  auto key = Ed25519SigningKey::generate();
  ASSERT_TRUE(key.ok());
  const std::vector<std::uint8_t> msg{'a', 'b', 'c'};
  const auto sig = key->sign(msg);
  EXPECT_TRUE(key->public_key().verify(msg, sig));
  auto flipped = sig;
  flipped[5] ^= 1;
  EXPECT_FALSE(key->public_key().verify(msg, flipped));
  EXPECT_FALSE(key->public_key().verify(std::vector<std::uint8_t>{'a', 'b', 'd'}, sig));

  ASSERT_TRUE(key->save(d.path / "k").ok());
  ASSERT_TRUE(key->public_key().save(d.path / "k.pub").ok());
  struct stat st {};
  ASSERT_EQ(::stat((d.path / "k").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // owner-only
  EXPECT_NE(read(d.path / "k").find("BEGIN PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(key->save(d.path / "k").code(), StatusCode::kFailedPrecondition);  // never replaced

  auto loaded = Ed25519SigningKey::load(d.path / "k");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->public_key().raw(), key->public_key().raw());
  // Ed25519 is deterministic: the same key signs the same message identically.
  EXPECT_EQ(loaded->sign(msg), sig);
  auto pub = Ed25519PublicKey::load(d.path / "k.pub");
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(pub->key_id(), key->public_key().key_id());
  EXPECT_EQ(pub->key_id().size(), 16u);

  // Damaged or foreign key files: named errors, never a key.
  write(d.path / "garbage", "not a key\n");
  EXPECT_EQ(Ed25519SigningKey::load(d.path / "garbage").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(Ed25519PublicKey::load(d.path / "garbage").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(Ed25519PublicKey::load(d.path / "missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Ed25519PublicKey::load(d.path).status().code(), StatusCode::kNotFound);  // a directory
  EXPECT_EQ(Ed25519SigningKey::load(d.path).status().code(), StatusCode::kNotFound);
  // The secret key file is not a public key file (and vice versa).
  EXPECT_FALSE(Ed25519PublicKey::load(d.path / "k").ok());
  EXPECT_FALSE(Ed25519SigningKey::load(d.path / "k.pub").ok());
  EXPECT_FALSE(Ed25519PublicKey::from_raw(std::vector<std::uint8_t>(31)).ok());
}

TEST(SigningKey, RfcTestVectorSigns) {
  // RFC 8032 section 7.1, TEST 1: the empty message.
  const std::vector<std::uint8_t> secret = {0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60,
                                            0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
                                            0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19,
                                            0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};
  const std::array<std::uint8_t, 32> pub = {0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7,
                                            0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
                                            0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25,
                                            0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
  const Ed25519Signature want = {0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2,
                                 0xcc, 0x80, 0x6e, 0x82, 0x8a, 0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5,
                                 0xd9, 0x74, 0xd8, 0x73, 0xe0, 0x65, 0x22, 0x49, 0x01, 0x55, 0x5f,
                                 0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b, 0xac, 0xc6, 0x1e, 0x39, 0x70,
                                 0x1c, 0xf9, 0xb4, 0x6b, 0xd2, 0x5b, 0xf5, 0xf0, 0x59, 0x5b, 0xbe,
                                 0x24, 0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b};
  auto key = Ed25519SigningKey::from_secret_for_tests(secret);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->public_key().raw(), pub);
  EXPECT_EQ(key->sign({}), want);
}

TEST(SigningKey, RfcTestVectorVerifies) {
  // RFC 8032 section 7.1, TEST 2: one-byte message 0x72.
  const std::vector<std::uint8_t> pub_raw = {0x3d, 0x40, 0x17, 0xc3, 0xe8, 0x43, 0x89, 0x5a,
                                             0x92, 0xb7, 0x0a, 0xa7, 0x4d, 0x1b, 0x7e, 0xbc,
                                             0x9c, 0x98, 0x2c, 0xcf, 0x2e, 0xc4, 0x96, 0x8c,
                                             0xc0, 0xcd, 0x55, 0xf1, 0x2a, 0xf4, 0x66, 0x0c};
  const Ed25519Signature sig = {0x92, 0xa0, 0x09, 0xa9, 0xf0, 0xd4, 0xca, 0xb8, 0x72, 0x0e, 0x82,
                                0x0b, 0x5f, 0x64, 0x25, 0x40, 0xa2, 0xb2, 0x7b, 0x54, 0x16, 0x50,
                                0x3f, 0x8f, 0xb3, 0x76, 0x22, 0x23, 0xeb, 0xdb, 0x69, 0xda, 0x08,
                                0x5a, 0xc1, 0xe4, 0x3e, 0x15, 0x99, 0x6e, 0x45, 0x8f, 0x36, 0x13,
                                0xd0, 0xf1, 0x1d, 0x8c, 0x38, 0x7b, 0x2e, 0xae, 0xb4, 0x30, 0x2a,
                                0xee, 0xb0, 0x0d, 0x29, 0x16, 0x12, 0xbb, 0x0c, 0x00};
  auto pub = Ed25519PublicKey::from_raw(pub_raw);
  ASSERT_TRUE(pub.ok());
  EXPECT_TRUE(pub->verify(std::vector<std::uint8_t>{0x72}, sig));
  EXPECT_FALSE(pub->verify(std::vector<std::uint8_t>{0x73}, sig));
}

TEST(ManifestSignature, ChainFieldsAreOptionalAndPartOfTheVersion) {
  Dir d;
  const auto plain = make_index(d.path / "a", "codes", 0);
  const auto chained = make_index(d.path / "b", "codes", 3, plain.version_id);
  EXPECT_NE(plain.version_id, chained.version_id);
  EXPECT_EQ(read(d.path / "a" / "manifest.json").find("sequence"), std::string::npos);
  auto back = load_manifest(d.path / "b");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->sequence, 3u);
  EXPECT_EQ(back->parent_version, plain.version_id);
  EXPECT_EQ(back->version_id, chained.version_id);
  // A parent that is not a version id, or sequence 0 written out: damaged.
  auto text = read(d.path / "b" / "manifest.json");
  auto j = nlohmann::json::parse(text);
  j["parent_version"] = "xyz";
  write(d.path / "b" / "manifest.json", j.dump());
  EXPECT_EQ(load_manifest(d.path / "b").status().code(), StatusCode::kDataLoss);
}

TEST(ManifestSignature, FileFormatRoundTripsAndRefusesDamage) {
  auto key = *Ed25519SigningKey::generate();
  Manifest m;
  m.version_id = std::string(64, 'a');
  m.sequence = 9;
  const auto s = sign_manifest(m, key);
  const auto text = serialize_manifest_signature(s);
  auto back = parse_manifest_signature(text);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->signature, s.signature);
  EXPECT_EQ(back->sequence, 9u);
  EXPECT_EQ(back->key_id, key.public_key().key_id());
  const auto j = nlohmann::json::parse(text);
  auto mutate = [&](auto&& f) {
    auto c = j;
    f(c);
    return parse_manifest_signature(c.dump()).status().code();
  };
  EXPECT_EQ(mutate([](auto& c) { c["format"] = 2; }), StatusCode::kDataLoss);
  EXPECT_EQ(mutate([](auto& c) { c["algorithm"] = "rsa"; }), StatusCode::kDataLoss);
  EXPECT_EQ(mutate([](auto& c) { c["signature"] = "00"; }), StatusCode::kDataLoss);
  EXPECT_EQ(mutate([](auto& c) { c["key_id"] = "ABCDEF0123456789"; }), StatusCode::kDataLoss);
  EXPECT_EQ(mutate([](auto& c) { c["sequence"] = -1; }), StatusCode::kDataLoss);
  EXPECT_EQ(mutate([](auto& c) { c.erase("version_id"); }), StatusCode::kDataLoss);
  EXPECT_EQ(mutate([](auto& c) { c["extra"] = 1; }), StatusCode::kDataLoss);
  EXPECT_EQ(parse_manifest_signature(text.substr(0, text.size() / 2)).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(parse_manifest_signature("[]").status().code(), StatusCode::kDataLoss);
}

TEST(ManifestSignature, VerifiesOnlyTheSignedVersionUnderThePinnedKey) {
  Dir d;
  auto key = *Ed25519SigningKey::generate();
  auto other = *Ed25519SigningKey::generate();
  const auto m = make_index(d.path / "i", "codes", 1);
  EXPECT_EQ(verify_manifest_signature(d.path / "i", m, key.public_key()).code(),
            StatusCode::kNotFound);  // unsigned
  ASSERT_TRUE(write_manifest_signature(d.path / "i", m, key).ok());
  EXPECT_TRUE(verify_manifest_signature(d.path / "i", m, key.public_key()).ok());
  EXPECT_EQ(verify_manifest_signature(d.path / "i", m, other.public_key()).code(),
            StatusCode::kUnauthenticated);  // another operator's key
  // A signature moved onto another version (the manifest rewritten with a changed artifact).
  auto changed = make_index(d.path / "i", "other codes", 1);
  EXPECT_EQ(verify_manifest_signature(d.path / "i", changed, key.public_key()).code(),
            StatusCode::kUnauthenticated);
  // A forged signature for the right version and key id.
  ASSERT_TRUE(write_manifest_signature(d.path / "i", changed, key).ok());
  auto s = *parse_manifest_signature(read(d.path / "i" / kManifestSignatureFile));
  s.signature[0] ^= 0x80;
  write(d.path / "i" / kManifestSignatureFile, serialize_manifest_signature(s));
  EXPECT_EQ(verify_manifest_signature(d.path / "i", changed, key.public_key()).code(),
            StatusCode::kUnauthenticated);
  write(d.path / "i" / kManifestSignatureFile, "{");
  EXPECT_EQ(verify_manifest_signature(d.path / "i", changed, key.public_key()).code(),
            StatusCode::kDataLoss);
}

TEST(ManifestSignature, SignIndexSetsTheChainAndRefusesABackwardSequence) {
  Dir d;
  auto key = *Ed25519SigningKey::generate();
  make_index(d.path / "v1", "one", 0);
  make_index(d.path / "v2", "two", 0);
  auto v1 = sign_index(d.path / "v1", key);
  ASSERT_TRUE(v1.ok()) << v1.status().to_string();
  EXPECT_EQ(v1->sequence, 1u);
  EXPECT_TRUE(v1->parent_version.empty());
  EXPECT_TRUE(verify_manifest_signature(d.path / "v1", *v1, key.public_key()).ok());
  auto again = sign_index(d.path / "v1", key);  // re-signing keeps the version
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->version_id, v1->version_id);
  auto v2 = sign_index(d.path / "v2", key, d.path / "v1");
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->sequence, 2u);
  EXPECT_EQ(v2->parent_version, v1->version_id);
  EXPECT_EQ(load_manifest(d.path / "v2")->version_id, v2->version_id);  // written
  EXPECT_TRUE(verify_manifest_signature(d.path / "v2", *v2, key.public_key()).ok());
  EXPECT_EQ(sign_index(d.path / "v2", key, d.path / "v1", 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(sign_index(d.path / "v2", key, {}, 0).status().code(), StatusCode::kInvalidArgument);
  auto jump = sign_index(d.path / "v2", key, {}, 10);
  ASSERT_TRUE(jump.ok());
  EXPECT_EQ(jump->sequence, 10u);
  // A changed artifact is caught before anything is signed.
  write(d.path / "v2" / "pq.bin", "tampered");
  EXPECT_EQ(sign_index(d.path / "v2", key).status().code(), StatusCode::kDataLoss);
}

TEST(IndexTrust, RefusesRollbackAndForksRemembersTheNewest) {
  Dir d;
  auto key = *Ed25519SigningKey::generate();
  ASSERT_TRUE(key.public_key().save(d.path / "op.pub").ok());
  const client::IndexTrust trust{d.path / "op.pub", d.path / "state" / "seen.json"};
  auto signed_index = [&](const std::string& name, const std::string& content, std::uint64_t seq) {
    const auto m = make_index(d.path / name, content, seq);
    EXPECT_TRUE(write_manifest_signature(d.path / name, m, key).ok());
    return m;
  };
  const auto v1 = signed_index("v1", "one", 1);
  const auto v2 = signed_index("v2", "two", 2);
  const auto v3 = signed_index("v3", "three", 3);
  EXPECT_TRUE(client::check_index_trust(d.path / "v1", v1, trust).ok());
  EXPECT_TRUE(client::check_index_trust(d.path / "v3", v3, trust).ok());
  EXPECT_TRUE(client::check_index_trust(d.path / "v3", v3, trust).ok());  // again: fine
  const auto rollback = client::check_index_trust(d.path / "v2", v2, trust);
  EXPECT_EQ(rollback.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(rollback.message().find("rollback"), std::string::npos) << rollback.message();
  // Another index signed as sequence 3: a fork.
  const auto fork = signed_index("fork", "three'", 3);
  const auto forked = client::check_index_trust(d.path / "fork", fork, trust);
  EXPECT_EQ(forked.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(forked.message().find("fork"), std::string::npos);
  // Signed without a sequence: not in a chain.
  const auto loose = signed_index("loose", "loose", 0);
  EXPECT_EQ(client::check_index_trust(d.path / "loose", loose, trust).code(),
            StatusCode::kFailedPrecondition);
  // No pinned key: anything goes (the default for clients that did not opt in).
  EXPECT_TRUE(client::check_index_trust(d.path / "v2", v2, {}).ok());
  // A damaged memory fails closed and is left for the operator to look at.
  write(d.path / "state" / "seen.json", "{\"format\": 1, \"keys\": {\"x\": 5}}");
  EXPECT_EQ(client::check_index_trust(d.path / "v3", v3, trust).code(), StatusCode::kDataLoss);
  write(d.path / "state" / "seen.json", "");
  EXPECT_EQ(client::check_index_trust(d.path / "v3", v3, trust).code(), StatusCode::kDataLoss);
  // A directory where the memory should be: a named error, not an exception.
  fs::create_directories(d.path / "state" / "dir.json");
  EXPECT_FALSE(client::check_index_trust(d.path / "v3", v3,
                                         {d.path / "op.pub", d.path / "state" / "dir.json"})
                   .ok());
  // A fresh memory accepts v2 and then refuses v1.
  const client::IndexTrust fresh{d.path / "op.pub", d.path / "state" / "other.json"};
  EXPECT_TRUE(client::check_index_trust(d.path / "v2", v2, fresh).ok());
  EXPECT_EQ(client::check_index_trust(d.path / "v1", v1, fresh).code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace privsearch::index
