#include "pir/zippir/zippir.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>

#include "pir/paillier/bigint.h"
#include "pir/zippir/hint_engine.h"
#include "pir/zippir/rns.h"
#include "testing/zippir_test_params.h"

namespace privsearch::pir {
namespace {

using testing::zippir_test_params;

TEST(ZipPirParams, PaperShapeFigures) {
  ZipPirParams p;
  p.lwe = *find_lwe_params("zippir-n1400-binary");
  ASSERT_TRUE(p.validate().ok());
  EXPECT_EQ(p.slots_per_plaintext(), 180u);  // floor((3071 - log2 1402) / 17)
  auto shape = *choose_database_shape(65536, 16384);
  EXPECT_EQ(p.packed_rows(shape), 92u);
  EXPECT_LT(p.correctness_log2(shape.columns), -60.0);
  // b = 12 leaves too little margin and is refused by the bound.
  ZipPirParams small = p;
  small.hint_bits = 12;
  EXPECT_GT(small.correctness_log2(shape.columns), kZipPirMaxFailureLog2);
  ZipPirParams ternary = p;
  ternary.lwe = *find_lwe_params("hintless-n1400-ternary");
  EXPECT_EQ(ternary.validate().code(), StatusCode::kInvalidArgument);
  ZipPirParams weak = p;
  weak.paillier_bits = 1024;
  EXPECT_EQ(weak.validate().code(), StatusCode::kInvalidArgument);
}

TEST(Rns, MatvecAndCrtEqualBigIntegerArithmetic) {
  Prng prng = Prng::from_seed(Seed{1});
  mpz_class n = random_bits(512, prng);
  mpz_setbit(n.get_mpz_t(), 511);
  const std::size_t rows = 7, cols = 37, pbits = 480;
  auto basis = RnsBasis::create(pbits + 512 + 6, n);
  ASSERT_TRUE(basis.ok());
  const std::size_t L = basis->size();
  std::vector<mpz_class> p(rows * cols), x(cols);
  std::vector<std::uint32_t> p_rns(L * rows * cols), x_rns(L * cols), out(L * rows), tmp(L);
  auto words_of = [&](const mpz_class& v) {
    std::vector<std::uint32_t> w(basis->input_words(), 0);
    std::size_t count = 0;
    mpz_export(w.data(), &count, -1, 4, 0, 0, v.get_mpz_t());
    return w;
  };
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      p[i * cols + j] = random_bits(pbits, prng);
      basis->to_rns(words_of(p[i * cols + j]), tmp.data());
      for (std::size_t l = 0; l < L; ++l) p_rns[(l * rows + i) * cols + j] = tmp[l];
    }
  }
  for (std::size_t j = 0; j < cols; ++j) {
    x[j] = random_below(n, prng);
    basis->to_rns(words_of(x[j]), tmp.data());
    for (std::size_t l = 0; l < L; ++l) x_rns[l * cols + j] = tmp[l];
    // Residues equal GMP's.
    for (std::size_t l = 0; l < L; ++l) {
      EXPECT_EQ(tmp[l], mpz_fdiv_ui(x[j].get_mpz_t(), basis->primes()[l]));
    }
  }
  // The batched (AVX-512 when available) conversion equals the scalar one.
  std::vector<std::uint32_t> all_words;
  for (std::size_t j = 0; j < cols; ++j) {
    const auto w = words_of(x[j]);
    all_words.insert(all_words.end(), w.begin(), w.end());
  }
  std::vector<std::uint32_t> x_many(L * cols);
  basis->to_rns_many(all_words, cols, x_many.data());
  EXPECT_EQ(x_many, x_rns);
  rns_matvec(basis->primes(), p_rns.data(), rows, cols, x_rns.data(), out.data());
  std::vector<std::uint32_t> out2(L * rows);
  rns_matvec_scalar(basis->primes(), p_rns.data(), rows, cols, x_rns.data(), out2.data());
  EXPECT_EQ(out, out2);
  for (std::size_t i = 0; i < rows; ++i) {
    mpz_class v = 0;
    for (std::size_t j = 0; j < cols; ++j) v += p[i * cols + j] * x[j];
    EXPECT_EQ(basis->crt_exact(out.data() + i, rows), v);
    EXPECT_EQ(basis->crt_mod(out.data() + i, rows), mpz_class(v % n));
  }
}

TEST(HintEngine, FourRussiansEqualsMultiExponentiation) {
  Prng prng = Prng::from_seed(Seed{2});
  auto kp = *paillier_keygen(512, prng, 1, true);
  for (int bits : {16, 13}) {
    const std::size_t rows = 21, n = 9, slots = 4;
    std::vector<std::uint32_t> e(rows * n);
    for (auto& v : e) v = static_cast<std::uint32_t>(prng.next_u64() & ((1u << bits) - 1));
    e[5] = 0;
    std::vector<std::uint8_t> seed(16, 3);
    const auto ck = expand_compression_randomness(kp.public_key, seed, 0, n);
    HintEngineStats stats;
    const auto fast =
        compute_compressed_hint(kp.public_key, ck, e, rows, n, slots, bits, 2, &stats);
    const auto ref = compute_compressed_hint_reference(kp.public_key, ck, e, rows, n, slots, bits);
    ASSERT_EQ(fast.size(), 6u);
    EXPECT_EQ(fast, ref);
    EXPECT_GT(stats.products, 0u);
  }
}

TEST(HintEngine, RandomnessDependsOnSeedAndIndex) {
  Prng prng = Prng::from_seed(Seed{3});
  auto kp = *paillier_keygen(512, prng, 1, true);
  std::vector<std::uint8_t> seed(16, 1), other(16, 2);
  const auto a = expand_compression_randomness(kp.public_key, seed, 0, 4);
  EXPECT_EQ(a, expand_compression_randomness(kp.public_key, seed, 0, 4));
  EXPECT_NE(a, expand_compression_randomness(kp.public_key, seed, 1, 4));
  EXPECT_NE(a, expand_compression_randomness(kp.public_key, other, 0, 4));
  for (const auto& c : a) EXPECT_TRUE(kp.public_key.validate_ciphertext(c).ok());
}

struct Fixture {
  std::unique_ptr<ZipPirServer> server;
  std::optional<ZipPirClient> client;
  std::uint64_t id = 0;
  LweDatabase* db = nullptr;
};

Fixture make(std::size_t records, std::size_t bytes, std::size_t target_rows, Prng& prng,
             std::vector<std::vector<std::uint8_t>>& expected, int hint_bits = 16) {
  auto shape = *choose_database_shape(records, bytes, target_rows);
  auto db = *LweDatabase::create(shape);
  db.fill_pseudorandom(records * 31 + bytes);
  expected.clear();
  for (std::size_t i = 0; i < records; ++i) expected.push_back(db.record(i));
  Fixture f;
  auto server = ZipPirServer::create(zippir_test_params(512, hint_bits), std::move(db),
                                     Prng::random_seed(), 2);
  EXPECT_TRUE(server.ok()) << server.status().to_string();
  f.server = std::move(server).value();
  auto info = ZipPirPublicInfo::deserialize(f.server->info().serialize(), true);
  EXPECT_TRUE(info.ok());
  auto client = ZipPirClient::create(*info, prng);
  EXPECT_TRUE(client.ok());
  f.client.emplace(std::move(client).value());
  auto id = f.server->register_client(f.client->setup_message());
  EXPECT_TRUE(id.ok());
  f.id = *id;
  EXPECT_EQ(f.id, f.client->client_id());
  return f;
}

// PIR recovers every record of small random databases of several shapes and record sizes.
TEST(ZipPir, RecoversEveryRecord) {
  Prng prng = Prng::from_seed(Seed{4});
  struct Case {
    std::size_t records, bytes, target;
    int bits;
  };
  for (const Case c :
       {Case{12, 40, 120, 16}, Case{30, 7, 21, 16}, Case{5, 300, 300, 14}, Case{64, 1, 16, 16}}) {
    std::vector<std::vector<std::uint8_t>> expected;
    Fixture f = make(c.records, c.bytes, c.target, prng, expected, c.bits);
    ASSERT_TRUE(f.server->precompute(f.id, 0, c.records, 2).ok());
    EXPECT_EQ(f.server->client_state_bytes(f.id), c.records * f.server->state_bytes_per_query());
    for (std::size_t i = 0; i < c.records; ++i) {
      std::optional<ZipPirPendingQuery> pending;
      auto q = f.client->query(i, prng, pending);
      ASSERT_TRUE(q.ok()) << q.status().to_string();
      auto resp = f.server->answer(*q);
      ASSERT_TRUE(resp.ok()) << resp.status().to_string();
      auto rec = f.client->extract(*pending, *resp, static_cast<unsigned>(i % 3 + 1));
      ASSERT_TRUE(rec.ok()) << rec.status().to_string();
      EXPECT_EQ(*rec, expected[i]) << "record " << i << " of " << c.records << "x" << c.bytes;
      // The hint of an index is used once.
      EXPECT_EQ(f.server->answer(*q).status().code(), StatusCode::kFailedPrecondition);
    }
    EXPECT_EQ(f.server->client_state_bytes(f.id), 0u);
  }
}

// One client, many threads (Python releases the GIL): concurrent queries are serialized by the
// client's OwnerLock, so every query index and its one-time offsets are used exactly once (two
// queries under one index would let the provider subtract them and read both records), and
// every record comes back right.
TEST(ZipPir, ConcurrentQueriesUseEveryIndexOnce) {
  Prng prng = Prng::from_seed(Seed{6});
  std::vector<std::vector<std::uint8_t>> expected;
  constexpr std::size_t kRecords = 24;
  Fixture f = make(kRecords, 16, 64, prng, expected);
  ASSERT_TRUE(f.server->precompute(f.id, 0, kRecords, 2).ok());
  std::vector<std::optional<ZipPirPendingQuery>> pending(kRecords);
  std::vector<std::vector<std::uint8_t>> queries(kRecords);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      Prng own = Prng::create();
      for (std::size_t i = t; i < kRecords; i += 6) {
        auto q = f.client->query(i, own, pending[i]);
        if (q.ok()) queries[i] = std::move(q).value();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::uint64_t> indices;
  for (std::size_t i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(pending[i].has_value()) << "query " << i << " failed";
    indices.insert(pending[i]->query_index());
  }
  EXPECT_EQ(indices.size(), kRecords);  // no index twice
  EXPECT_EQ(*indices.rbegin(), kRecords - 1);
  for (std::size_t i = 0; i < kRecords; ++i) {
    auto resp = f.server->answer(queries[i]);
    ASSERT_TRUE(resp.ok()) << resp.status().to_string();
    auto rec = f.client->extract(*pending[i], *resp);
    ASSERT_TRUE(rec.ok()) << rec.status().to_string();
    EXPECT_EQ(*rec, expected[i]) << "record " << i;
  }
}

// fork(): a ZipPIR client's offsets and query indices are shared with a forked child, so the
// child refuses to query (two processes under one index would leak both records).
TEST(ZipPir, AForkedChildRefusesToQuery) {
  Prng prng = Prng::from_seed(Seed{9});
  std::vector<std::vector<std::uint8_t>> expected;
  Fixture f = make(12, 16, 64, prng, expected);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::optional<ZipPirPendingQuery> pending;
    Prng own = Prng::create();
    const auto q = f.client->query(1, own, pending);
    ::_exit(!q.ok() && q.status().code() == StatusCode::kFailedPrecondition ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The parent still queries.
  ASSERT_TRUE(f.server->precompute(f.id, 0, 1, 1).ok());
  std::optional<ZipPirPendingQuery> pending;
  EXPECT_TRUE(f.client->query(1, prng, pending).ok());
}

// A response with one damaged packed row is refused the same way whichever row it is, the
// record's own rows or any other (no selective-failure channel).
TEST(ZipPir, EveryPackedRowIsValidatedNotOnlyTheRecords) {
  Prng prng = Prng::from_seed(Seed{7});
  std::vector<std::vector<std::uint8_t>> expected;
  Fixture f = make(12, 40, 120, prng, expected);
  ASSERT_TRUE(f.server->precompute(f.id, 0, 12, 2).ok());
  std::optional<ZipPirPendingQuery> pending;
  auto q = f.client->query(0, prng, pending);
  ASSERT_TRUE(q.ok());
  auto resp = f.server->answer(*q);
  ASSERT_TRUE(resp.ok());
  ASSERT_TRUE(f.client->extract(*pending, *resp).ok());
  // Damage the last packed row (record 0 lives in the first): every byte 0xff is above N^2.
  auto damaged = *resp;
  const std::size_t item = f.server->info().params.paillier_bits / 4;  // a ciphertext mod N^2
  ASSERT_GT(damaged.size(), item);
  std::fill(damaged.end() - static_cast<std::ptrdiff_t>(item), damaged.end(), 0xff);
  const auto refused = f.client->extract(*pending, damaged);
  EXPECT_EQ(refused.status().code(), StatusCode::kDataLoss) << refused.status().to_string();
}

TEST(ZipPir, ClientStorageVariant) {
  Prng prng = Prng::from_seed(Seed{5});
  std::vector<std::vector<std::uint8_t>> expected;
  Fixture f = make(20, 16, 64, prng, expected);
  ASSERT_TRUE(f.server->precompute(f.id, 0, 1, 2).ok());
  auto hint = f.server->export_hint(f.id, 0);
  ASSERT_TRUE(hint.ok());
  EXPECT_EQ(f.server->client_state_bytes(f.id), 0u);  // the client holds it now
  ASSERT_TRUE(f.client->store_hint(*hint).ok());
  std::optional<ZipPirPendingQuery> pending;
  auto q = f.client->query(13, prng, pending);
  ASSERT_TRUE(q.ok());
  auto resp = f.server->answer(*q);
  ASSERT_TRUE(resp.ok());
  auto rec = f.client->extract(*pending, *resp);
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  EXPECT_EQ(*rec, expected[13]);
}

// Hint work cancelled (a stopping service sets the flag; minutes of CPU at real sizes) stores
// nothing and says so; the same index is computed normally afterwards and answers.
TEST(ZipPir, CancelledHintWorkStoresNothing) {
  Prng prng = Prng::from_seed(Seed{8});
  std::vector<std::vector<std::uint8_t>> expected;
  Fixture f = make(20, 16, 64, prng, expected);
  const std::atomic<bool> cancelled{true}, running{false};
  const auto refused = f.server->precompute(f.id, 0, 1, 2, &cancelled);
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable) << refused.to_string();
  EXPECT_EQ(f.server->client_state_bytes(f.id), 0u);
  EXPECT_TRUE(f.server->ready_indices(f.id).empty());
  EXPECT_EQ(f.server->compute_hint(f.id, 0, 1, &cancelled).status().code(),
            StatusCode::kUnavailable);
  ASSERT_TRUE(f.server->precompute(f.id, 0, 1, 2, &running).ok());
  std::optional<ZipPirPendingQuery> pending;
  auto q = f.client->query(7, prng, pending);
  ASSERT_TRUE(q.ok());
  auto rec = f.client->extract(*pending, *f.server->answer(*q));
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  EXPECT_EQ(*rec, expected[7]);
}

TEST(ZipPir, RejectsBadMessages) {
  Prng prng = Prng::from_seed(Seed{6});
  std::vector<std::vector<std::uint8_t>> expected;
  Fixture f = make(10, 8, 20, prng, expected);
  // Unknown client, no hint, tampered and truncated queries.
  std::optional<ZipPirPendingQuery> pending;
  auto q = f.client->query(3, prng, pending);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(f.server->answer(*q).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(f.server->precompute(f.id, 0, 1, 1).ok());
  for (std::size_t cut : {0u, 4u, 20u, 100u}) {
    EXPECT_FALSE(f.server->answer(std::span(*q).first(std::min(cut, q->size()))).ok());
  }
  EXPECT_FALSE(f.server->answer(std::span(*q).first(q->size() - 1)).ok());
  auto bad_id = *q;
  bad_id[5] ^= 1;  // params id
  EXPECT_EQ(f.server->answer(bad_id).status().code(), StatusCode::kFailedPrecondition);
  auto other_client = *q;
  other_client[13] ^= 1;  // client id
  EXPECT_EQ(f.server->answer(other_client).status().code(), StatusCode::kNotFound);
  auto big_offset = *q;
  const std::size_t off0 = 4 + 1 + 8 + 8 + 8;
  for (std::size_t k = 0; k < 64; ++k) big_offset[off0 + k] = 0xff;  // ck_o[0] >= N
  EXPECT_EQ(f.server->answer(big_offset).status().code(), StatusCode::kDataLoss);
  // The server keeps serving: the genuine query still works.
  auto resp = f.server->answer(*q);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(*f.client->extract(*pending, *resp), expected[3]);
  // Damaged responses.
  EXPECT_FALSE(f.client->extract(*pending, std::span(*resp).first(resp->size() - 1)).ok());
  auto wrong_mode = *resp;
  wrong_mode[4 + 1 + 8 + 8] = 9;
  EXPECT_EQ(f.client->extract(*pending, wrong_mode).status().code(), StatusCode::kDataLoss);
  // The framing check alone: fits, another database, another version, wrong kind, truncated.
  const std::uint64_t pid = f.server->info().params_id();
  EXPECT_TRUE(check_message_framing(*q, ZipPirMessageKind::kQuery, pid).ok());
  EXPECT_EQ(check_message_framing(bad_id, ZipPirMessageKind::kQuery, pid).code(),
            StatusCode::kFailedPrecondition);
  auto other_version = *q;
  other_version[4] = 2;
  EXPECT_EQ(check_message_framing(other_version, ZipPirMessageKind::kQuery, pid).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(check_message_framing(*q, ZipPirMessageKind::kSetup, pid).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(check_message_framing(std::span(*q).first(10), ZipPirMessageKind::kQuery, pid).code(),
            StatusCode::kDataLoss);
  // Setup validation: wrong params id, truncated, bad N.
  auto setup = f.client->setup_message();
  EXPECT_TRUE(check_message_framing(setup, ZipPirMessageKind::kSetup, pid).ok());
  EXPECT_FALSE(f.server->register_client(std::span(setup).first(setup.size() - 1)).ok());
  auto even = setup;
  even[4 + 1 + 8] &= 0xfe;  // N even
  EXPECT_EQ(f.server->register_client(even).status().code(), StatusCode::kInvalidArgument);
  // Record index out of range.
  std::optional<ZipPirPendingQuery> p2;
  EXPECT_EQ(f.client->query(10, prng, p2).status().code(), StatusCode::kOutOfRange);
  // Info round trip refuses insecure params unless allowed, and damaged bytes.
  const auto info = f.server->info().serialize();
  EXPECT_EQ(ZipPirPublicInfo::deserialize(info).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ZipPirPublicInfo::deserialize(std::span(info).first(info.size() - 2), true).ok());
}

TEST(ZipPir, ServerLimits) {
  auto shape = *choose_database_shape(4, 4, 8);
  auto db = *LweDatabase::create(shape);
  ZipPirServerLimits limits;
  limits.max_clients = 1;
  limits.max_queued_queries = 2;
  auto server = *ZipPirServer::create(zippir_test_params(), std::move(db), Seed{}, 1, limits);
  Prng prng = Prng::from_seed(Seed{7});
  auto c1 = *ZipPirClient::create(server->info(), prng);
  auto c2 = *ZipPirClient::create(server->info(), prng);
  auto id = server->register_client(c1.setup_message());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(server->register_client(c2.setup_message()).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(server->precompute(*id, 0, 3, 1).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(server->precompute(12345, 0, 1, 1).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace privsearch::pir

namespace privsearch::pir {
namespace {

TEST(ZipPir, RetainedHintAnswersOnlyIdenticalRetries) {
  auto shape = *choose_database_shape(8, 8, 16);
  auto db = *LweDatabase::create(shape);
  db.fill_pseudorandom(3);
  std::vector<std::uint8_t> want = db.record(5);
  ZipPirServerLimits limits;
  limits.retain_hints_for_retries = true;
  auto server = *ZipPirServer::create(zippir_test_params(), std::move(db), Seed{9}, 1, limits);
  Prng prng = Prng::from_seed(Seed{8});
  auto client = *ZipPirClient::create(server->info(), prng);
  auto id = *server->register_client(client.setup_message());
  ASSERT_TRUE(server->precompute(id, 0, 1, 1).ok());
  std::optional<ZipPirPendingQuery> pending;
  auto q = *client.query(5, prng, pending);
  auto r1 = server->answer(q);
  auto r2 = server->answer(q);  // a retry after a lost response
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(*client.extract(*pending, *r2), want);
  auto other = q;
  other.back() ^= 1;  // a different query under the same index
  EXPECT_EQ(server->answer(other).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace privsearch::pir

namespace privsearch::pir {
namespace {

// Found by the fuzz replay: a repeated setup message used to reset the client's hints.
TEST(ZipPir, RepeatedSetupKeepsHints) {
  Prng prng = Prng::from_seed(Seed{10});
  std::vector<std::vector<std::uint8_t>> expected;
  Fixture f = make(6, 4, 8, prng, expected);
  ASSERT_TRUE(f.server->precompute(f.id, 0, 1, 1).ok());
  EXPECT_EQ(*f.server->register_client(f.client->setup_message()), f.id);
  EXPECT_EQ(f.server->client_state_bytes(f.id), f.server->state_bytes_per_query());
}

}  // namespace
}  // namespace privsearch::pir

namespace privsearch::pir {
namespace {

// A setup whose seed was altered in transit registers a different client: the genuine client's
// queries are then refused (unknown client) instead of being answered with the wrong hints.
TEST(ZipPir, TamperedSetupSeedIsADifferentClient) {
  auto shape = *choose_database_shape(6, 4, 8);
  auto db = *LweDatabase::create(shape);
  auto server = *ZipPirServer::create(zippir_test_params(), std::move(db), Seed{4}, 1);
  Prng prng = Prng::from_seed(Seed{11});
  auto client = *ZipPirClient::create(server->info(), prng);
  auto setup = client.setup_message();
  setup.back() ^= 0x40;  // last byte of the seed
  auto id = server->register_client(setup);
  ASSERT_TRUE(id.ok());
  EXPECT_NE(*id, client.client_id());
  ASSERT_TRUE(server->precompute(*id, 0, 1, 1).ok());
  std::optional<ZipPirPendingQuery> pending;
  auto q = client.query(2, prng, pending);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(server->answer(*q).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace privsearch::pir

namespace privsearch::pir {
namespace {

// Real-world records are structured: byte positions that are zero in every record (length-field
// high bytes, padding) make rows of H zero. At n = 1400 their slot carry (|s| instead of |s|/2)
// exceeds the decoding margin unless the public hint mask keeps E uniform; this test fails
// without the mask.
TEST(ZipPir, StructuredRecordsAtRealLweDimension) {
  auto shape = *choose_database_shape(8, 64, 64);
  auto db = *LweDatabase::create(shape);
  std::vector<std::vector<std::uint8_t>> expected;
  for (std::size_t i = 0; i < 8; ++i) {
    std::vector<std::uint8_t> rec(64, 0);
    const std::string text = "document " + std::to_string(i) + " says hello";
    rec[0] = static_cast<std::uint8_t>(text.size());  // bytes 1..3 stay zero in every record
    std::copy(text.begin(), text.end(), rec.begin() + 4);
    ASSERT_TRUE(db.set_record(i, rec).ok());
    expected.push_back(rec);
  }
  ZipPirParams params;
  params.lwe = *find_lwe_params("zippir-n1400-binary");
  params.paillier_bits = 512;
  params.allow_insecure = true;
  auto server = *ZipPirServer::create(params, std::move(db), Seed{12}, 2);
  Prng prng = Prng::from_seed(Seed{13});
  auto client = *ZipPirClient::create(server->info(), prng);
  auto id = *server->register_client(client.setup_message());
  ASSERT_TRUE(server->precompute(id, 0, 8, 2).ok());
  for (std::size_t i = 0; i < 8; ++i) {
    std::optional<ZipPirPendingQuery> pending;
    auto q = *client.query(i, prng, pending, 2);
    auto resp = server->answer(q);
    ASSERT_TRUE(resp.ok());
    EXPECT_EQ(*client.extract(*pending, *resp, 2), expected[i]) << i;
  }
}

}  // namespace
}  // namespace privsearch::pir
