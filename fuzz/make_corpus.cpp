// Writes a seed corpus for every decoder fuzz target: valid objects from the fuzz params plus
// a few near-misses (truncated, wrong type). Run: make_corpus <fuzz/corpus dir>.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/galois_keys.h"
#include "ckks/serialization.h"
#include "fuzz_common.h"
#include "fuzz_pir_common.h"
#include "fuzz_scoring_common.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/signing_key.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/encoders/glove_encoder.h"
#include "index/encoders/word_vectors.h"
#include "pir/hintless/client/client.h"
#include "pir/hintless/server.h"
#include "pir/lwe/lwe64.h"
#include "protocol/privsearch.pb.h"
#include "rerank/client/packed_scores.h"
#include "rerank/client/scores.h"
#include "rerank/messages.h"
#include "rerank/packed.h"
#include "rerank/packed_response.h"
#include "scoring/layout.h"

namespace {
void write(const std::filesystem::path& dir, const std::string& name,
           const std::vector<std::uint8_t>& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}
// A selector byte (which decoder a multi-decoder target runs) followed by the file.
std::vector<std::uint8_t> with(std::uint8_t selector, const std::vector<std::uint8_t>& body) {
  std::vector<std::uint8_t> b{selector};
  b.insert(b.end(), body.begin(), body.end());
  return b;
}
std::vector<std::uint8_t> truncated(std::vector<std::uint8_t> b, std::size_t keep) {
  b.resize(std::min(keep, b.size()));
  return b;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace privsearch;
  using namespace privsearch::ckks;
  if (argc != 2) return 2;
  const std::filesystem::path root = argv[1];
  const Params& params = fuzz::fuzz_params();
  Prng prng = Prng::from_seed(Seed{}, 777);
  const Encoder enc = *Encoder::create(params);
  const KeyGenerator kg(params);
  const SecretKey sk = kg.create_secret_key(prng);
  const PublicKey pk = *kg.create_public_key(sk, prng);
  const Encryptor encryptor(params);
  const std::vector<double> v = {0.5, -0.25, 0.75};

  write(root / "ckks_params", "valid", serialize_params(params));
  write(root / "ckks_params", "paper", serialize_params(*Params::create(paper_n8192_literal())));
  write(root / "ckks_params", "truncated", truncated(serialize_params(params), 30));

  const auto pt = *enc.encode(v, 1, 1e9);
  write(root / "ckks_plaintext", "valid", serialize_plaintext(params, pt));
  write(root / "ckks_plaintext", "truncated", truncated(serialize_plaintext(params, pt), 60));

  for (std::size_t level = 0; level <= params.max_level(); ++level) {
    const auto p = *enc.encode(v, level, 1e9);
    const auto ct = *encryptor.encrypt_symmetric(sk, p, prng);
    write(root / "ckks_ciphertext", "seeded_l" + std::to_string(level),
          *serialize_ciphertext(params, ct, CiphertextForm::kSeeded));
    write(root / "ckks_ciphertext", "full_l" + std::to_string(level),
          *serialize_ciphertext(params, ct, CiphertextForm::kFull));
  }
  write(root / "ckks_ciphertext", "wrong_type", serialize_plaintext(params, pt));

  write(root / "ckks_public_key", "valid", serialize_public_key(params, pk));
  write(root / "ckks_public_key", "truncated", truncated(serialize_public_key(params, pk), 100));
  const std::vector<int> steps = {1, 5};
  const auto gk = *kg.create_galois_keys(sk, steps, true, prng);
  write(root / "ckks_galois_keys", "valid", serialize_galois_keys(params, gk));
  write(root / "ckks_galois_keys", "truncated", truncated(serialize_galois_keys(params, gk), 200));

  const auto ct0 = *encryptor.encrypt_symmetric(sk, *enc.encode(v, 0, 1e9), prng);
  for (double bits : {8.0, 16.0}) {
    const auto c = *compact(params, ct0, CompactOptions{1.0, bits});
    write(root / "ckks_compact", "valid_" + std::to_string(static_cast<int>(bits)),
          serialize_compact(c));
  }
  {
    using namespace privsearch::rerank;
    const auto layout = *make_layout(params, Kernel::kFast, 5, 3);
    const std::vector<double> z = {0.1, 0.2, 0.3, 0.4, 0.5};
    const auto q = *encrypt_query(layout, params, sk, z, prng);
    const auto req = request_for_layout(params, layout,
                                        *serialize_ciphertext(params, q, CiphertextForm::kSeeded));
    write(root / "rerank_messages", "request", serialize_request(req));
    RerankResponse resp{
        params.id(), Kernel::kFast,
        5,           layout.period(),
        3,           layout.slot_map(),
        true,        {serialize_compact(*compact(params, ct0, CompactOptions{1.0, 8.0}))}};
    write(root / "rerank_messages", "response", serialize_response(resp));

    // rerank_packed: a real packed-kernel response at the fuzz preset, and its truncation.
    const Params& pp = fuzz::fuzz_packed_params();
    const auto playout =
        *make_layout(pp, Kernel::kPacked, fuzz::kFuzzPackedDim, fuzz::kFuzzPackedK);
    const KeyGenerator pkg(pp);
    const SecretKey psk = pkg.create_secret_key(prng);
    const auto pkeys = *make_rotation_keys(playout, pkg, psk, prng);
    const auto pq = *encrypt_packed_query(playout, pp, psk, z, prng);
    const std::vector<float> prows(fuzz::kFuzzPackedDim * fuzz::kFuzzPackedK, 0.25f);
    const auto pout = *evaluate_packed_kernel(playout, Evaluator(pp), pkeys, pq, prows);
    const auto packed = serialize_packed(
        *compact_packed(pp, pout.outputs[0], packed_positions(playout, 0), {1.0, 12.0}));
    write(root / "rerank_packed", "valid", packed);
    write(root / "rerank_packed", "truncated", truncated(packed, 60));
    write(root / "rerank_messages", "packed_response",
          serialize_response(RerankResponse{pp.id(),
                                            Kernel::kPacked,
                                            fuzz::kFuzzPackedDim,
                                            playout.period(),
                                            fuzz::kFuzzPackedK,
                                            {},
                                            true,
                                            {packed}}));

    // protocol_messages: selector byte + protobuf request (see fuzz_protocol_messages.cpp).
    auto as_string = [](const std::vector<std::uint8_t>& b) {
      return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    };
    auto framed = [](char selector, const std::string& body) {
      const std::string framed_bytes = std::string(1, selector) + body;
      return std::vector<std::uint8_t>(framed_bytes.begin(), framed_bytes.end());
    };
    privsearch::v1::UploadKeysRequest up;
    up.set_params_id(as_string({params.id().begin(), params.id().end()}));
    const auto rk = *make_rotation_keys(layout, kg, sk, prng);
    up.set_galois_keys(as_string(serialize_galois_keys(params, rk)));
    write(root / "protocol_messages", "upload", framed(0, up.SerializeAsString()));
    privsearch::v1::RerankRequest rr;
    rr.set_key_id(as_string(std::vector<std::uint8_t>(32, 7)));
    rr.set_artifact_version("fuzz");
    for (std::uint64_t id : {1, 4, 7}) rr.add_candidate_ids(id);
    rr.set_query(as_string(serialize_request(req)));
    write(root / "protocol_messages", "rerank", framed(1, rr.SerializeAsString()));
    rr.set_artifact_version("other");
    write(root / "protocol_messages", "rerank_wrong_version", framed(1, rr.SerializeAsString()));
  }
  {
    // PIR decoders: selector byte + message.
    auto sel = [](std::uint8_t selector, const std::vector<std::uint8_t>& body) {
      std::vector<std::uint8_t> out(body.size() + 1, selector);
      std::copy(body.begin(), body.end(), out.begin() + 1);
      return out;
    };
    Prng kprng = Prng::from_seed(Seed{3});
    const auto kp = *pir::paillier_keygen(256, kprng, 1, true);
    write(root / "pir_paillier", "public_key", sel(0, kp.public_key.serialize()));
    write(root / "pir_paillier", "public_key_truncated",
          sel(0, truncated(kp.public_key.serialize(), 20)));
    write(root / "pir_paillier", "private_key", sel(1, kp.private_key.serialize()));
    const auto ct = *kp.public_key.encrypt(12345, kprng);
    write(root / "pir_paillier", "ciphertext", sel(2, kp.public_key.ciphertext_to_bytes(ct)));
    auto& f = fuzz::pir_fixture();
    write(root / "pir_zippir", "info", sel(0, f.server->info().serialize()));
    write(root / "pir_zippir", "setup", sel(1, f.client->setup_message()));
    write(root / "pir_zippir", "query", sel(2, f.query));
    write(root / "pir_zippir", "query_truncated", sel(2, truncated(f.query, f.query.size() / 2)));
    write(root / "pir_zippir", "hint", sel(3, f.hint));
    write(root / "pir_zippir", "response", sel(4, f.response));
    write(root / "pir_zippir", "response_truncated", sel(4, truncated(f.response, 40)));
    write(root / "pir_zippir", "stored_hint", sel(5, f.stored_hint));
    write(root / "pir_zippir", "stored_hint_truncated",
          sel(5, truncated(f.stored_hint, f.stored_hint.size() - 7)));
    // pir_zippir_parts: a count byte, then u16 length + bytes per part.
    auto parts_input = [](const std::vector<std::vector<std::uint8_t>>& parts) {
      std::vector<std::uint8_t> out{static_cast<std::uint8_t>(parts.size() - 1)};
      for (const auto& p : parts) {
        out.push_back(static_cast<std::uint8_t>(p.size() & 0xff));
        out.push_back(static_cast<std::uint8_t>(p.size() >> 8));
        out.insert(out.end(), p.begin(), p.end());
      }
      return out;
    };
    const auto& p = f.parts;
    write(root / "pir_zippir_parts", "genuine", parts_input({p[0], p[1], p[2]}));
    write(root / "pir_zippir_parts", "reordered", parts_input({p[2], p[0], p[1]}));
    write(root / "pir_zippir_parts", "missing", parts_input({p[0], p[2]}));
    write(root / "pir_zippir_parts", "overlap", parts_input({p[0], p[1], p[1], p[2]}));
    write(root / "pir_zippir_parts", "truncated", parts_input({p[0], truncated(p[1], 30), p[2]}));
    write(root / "pir_zippir_parts", "single_response", parts_input({f.response}));
  }
  {
    // pir_hintless: selector (0 query, 1 response, 2 public info) + bytes, d = 256, 50 x 64 B.
    using namespace privsearch::pir::hintless;
    const auto hp = *find_hintless_params("insecure-test-ypir-sp-d256", true);
    const auto shape = *choose_hintless_shape(hp, 50, 64);
    std::vector<std::uint8_t> record(64, 9);
    const auto server = std::move(*HintlessServer::create(
        hp, shape, [&record](std::size_t) { return std::span<const std::uint8_t>(record); }));
    const auto client = *HintlessClient::create(hp, shape);
    Prng hprng = Prng::from_seed(Seed{}, 34);
    auto made = *client.make_query(7, hprng);
    const auto query = encode_query(hp, made.first);
    const auto response = encode_response(hp, (*server->answer(std::span(&made.first, 1)))[0]);
    const auto info = encode_public_info(hp, shape);
    const auto dir = root / "pir_hintless";
    write(dir, "query", with(0, query));
    write(dir, "query_truncated", with(0, truncated(query, query.size() - 3)));
    write(dir, "query_header_only", with(0, truncated(query, 16)));
    write(dir, "response", with(1, response));
    write(dir, "response_truncated", with(1, truncated(response, 100)));
    write(dir, "info", with(2, info));
    write(dir, "info_truncated", with(2, truncated(info, 20)));
  }
  {
    // index_word_vectors: selector byte + file (0 JSON, 1 binary vectors, 2 glove artifact).
    auto file_bytes = [](const std::filesystem::path& p) {
      std::ifstream in(p, std::ios::binary);
      return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), {});
    };
    const std::string json =
        R"({"precision":8,"dimensions":3,"words":["alpha"],"vectors":{"alpha":[1,0,0,1,0],)"
        R"("be\"ta":[0,1,0,1,1]},"unkVector":[0,0,0,-1]})";
    const auto dir = root / "index_word_vectors";
    write(dir, "json", with(0, std::vector<std::uint8_t>(json.begin(), json.end())));
    write(dir, "json_truncated",
          with(0, std::vector<std::uint8_t>(json.begin(), json.begin() + 60)));
    const auto tmp = std::filesystem::temp_directory_path() / "privsearch-make-corpus-wv";
    std::filesystem::create_directories(tmp);
    index::WordVectors fixed(3, {"alpha", "beta", "gamma"}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
    (void)fixed.save(tmp / "fixed.pswv");
    const auto vec = file_bytes(tmp / "fixed.pswv");
    write(dir, "vectors", with(1, vec));
    write(dir, "vectors_truncated", with(1, truncated(vec, 30)));
    const std::vector<index::Document> docs = {{"a", "alpha", "beta"}, {"b", "gamma", "alpha"}};
    const auto fitted =
        *index::fit_and_encode_glove(docs, tmp / "fixed.pswv", index::GloveWeighting::kSif);
    (void)fitted.encoder.save(tmp / "enc.bin");
    const auto art = file_bytes(tmp / "enc.bin");
    write(dir, "artifact", with(2, art));
    write(dir, "artifact_truncated", with(2, truncated(art, art.size() - 5)));
    std::filesystem::remove_all(tmp);
  }
  {
    // scoring_messages: selector byte + body (0 layout, 1 matrix, 2 hint, 3 PrivateScoreRequest,
    // 4 a provider answer). The same small database as the target (150 documents, 16 dims).
    const auto a = fuzz::small_scoring_artifacts();
    const auto dir = root / "scoring_messages";
    const auto layout = scoring::serialize_layout(a.layout);
    const auto matrix = scoring::serialize_matrix(a.matrix);
    const auto hint = scoring::serialize_hint(a.hint);
    write(dir, "layout", with(0, layout));
    write(dir, "layout_truncated", with(0, truncated(layout, layout.size() / 2)));
    write(dir, "matrix", with(1, matrix));
    write(dir, "matrix_truncated", with(1, truncated(matrix, 20)));
    write(dir, "hint", with(2, hint));
    write(dir, "hint_truncated", with(2, truncated(hint, hint.size() - 3)));
    v1::PrivateScoreRequest req;
    req.set_artifact_version("fuzz");
    req.set_queries(2);
    req.set_ciphertexts(std::string(
        2 * a.matrix.stride * pir::lwe64_entry_bytes(static_cast<int>(a.matrix.query_drop_bits)),
        '\x01'));
    std::string wire = req.SerializeAsString();
    write(dir, "request", with(3, std::vector<std::uint8_t>(wire.begin(), wire.end())));
    req.set_queries(3);
    wire = req.SerializeAsString();
    write(dir, "request_wrong_m", with(3, std::vector<std::uint8_t>(wire.begin(), wire.end())));
    const std::size_t answer_bytes =
        scoring::packed_answer_bytes(2 * a.matrix.rows, a.matrix.answer_bits);
    write(dir, "answer", with(4, std::vector<std::uint8_t>(answer_bytes, 0x5a)));
    write(dir, "answer_short", with(4, std::vector<std::uint8_t>(answer_bytes - 2, 0x5a)));
  }
  {
    // index_manifest: selector byte + file (0 manifest.sig, 1 manifest.json); signed with the
    // RFC 8032 TEST 1 key so the corpus is reproducible.
    const auto tmp = std::filesystem::temp_directory_path() / "privsearch-corpus-manifest";
    std::filesystem::create_directories(tmp);
    std::ofstream(tmp / "pq.bin", std::ios::binary) << "codes";
    index::Manifest m;
    m.collection = "corpus";
    m.encoder_id = "test";
    m.documents = 3;
    m.input_dim = 8;
    m.dim = 4;
    m.pq_m = 2;
    m.seed = 1;
    m.sequence = 2;
    m.parent_version = std::string(64, 'c');
    m.artifacts = {{"pq", "pq.bin", 0, ""}};
    if (!index::write_manifest(tmp, m).ok()) return 1;
    std::ifstream in(tmp / "manifest.json", std::ios::binary);
    const std::string manifest((std::istreambuf_iterator<char>(in)), {});
    std::filesystem::remove_all(tmp);
    const std::vector<std::uint8_t> secret = {0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60,
                                              0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
                                              0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19,
                                              0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};
    const auto key = *index::Ed25519SigningKey::from_secret_for_tests(secret);
    const auto sig = index::serialize_manifest_signature(index::sign_manifest(m, key));
    const auto dir = root / "index_manifest";
    const std::vector<std::uint8_t> sig_bytes(sig.begin(), sig.end());
    const std::vector<std::uint8_t> man_bytes(manifest.begin(), manifest.end());
    write(dir, "signature", with(0, sig_bytes));
    write(dir, "signature_truncated", with(0, truncated(sig_bytes, sig_bytes.size() / 2)));
    write(dir, "manifest", with(1, man_bytes));
    write(dir, "manifest_truncated", with(1, truncated(man_bytes, man_bytes.size() - 10)));
  }
  {
    // index_ivf: selector byte + input (0 ivf.bin, 1 a list segment); a small seeded index of
    // 300 documents in 3 lists (d' = 4, M = 2).
    const auto tmp = std::filesystem::temp_directory_path() / "privsearch-corpus-ivf";
    std::filesystem::create_directories(tmp);
    index::Matrix x;
    x.rows = 300;
    x.cols = 4;
    for (std::size_t i = 0; i < 300 * 4; ++i) {
      x.data.push_back(static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f);
    }
    index::PqOptions po;
    po.m = 2;
    const auto pq = index::build_pq(x, po);
    index::IvfOptions io;
    io.lists = 3;
    if (!pq.ok() || !index::build_ivf(x, *pq, io, tmp).ok()) return 1;
    const auto directory = *index::read_file_bytes(tmp / index::kIvfFile);
    const auto lists = *index::read_file_bytes(tmp / index::kIvfListsFile);
    const auto ivf = *index::parse_ivf(directory, "corpus");
    std::filesystem::remove_all(tmp);
    const auto& ref = ivf.directory[0];
    const std::vector<std::uint8_t> segment(
        lists.begin() + static_cast<std::ptrdiff_t>(ref.offset),
        lists.begin() + static_cast<std::ptrdiff_t>(ref.offset + ref.bytes));
    const auto dir = root / "index_ivf";
    write(dir, "directory", with(0, directory));
    write(dir, "directory_truncated", with(0, truncated(directory, directory.size() - 7)));
    write(dir, "segment", with(1, segment));
    write(dir, "segment_truncated", with(1, truncated(segment, segment.size() - 64)));
    // 2: an update's delta directory (20 documents appended to this index); 3: tombstones.
    index::Matrix added{20, 4, std::vector<float>(x.data.begin(), x.data.begin() + 80)};
    const auto assignment = *index::assign_to_lists(ivf.centroids, ivf.route_dim, ivf.spill, added);
    index::PqArtifact codes;
    codes.codebook = ivf.codebook;
    codes.count = 20;
    codes.codes = *index::pq_encode(ivf.codebook, added);
    std::filesystem::create_directories(tmp);
    if (!index::write_ivf_delta(ivf, 1, assignment, codes, tmp).ok()) return 1;
    const auto delta = *index::read_file_bytes(tmp / "ivf_delta.1.bin");
    std::filesystem::remove_all(tmp);
    write(dir, "delta", with(2, delta));
    write(dir, "delta_truncated", with(2, truncated(delta, delta.size() - 5)));
    const std::vector<std::uint32_t> gone{3, 17, 250};
    const auto tombstones = index::encode_tombstones(1, gone);
    write(dir, "tombstones", with(3, tombstones));
    write(dir, "tombstones_truncated", with(3, truncated(tombstones, tombstones.size() - 2)));
    // 4: list 0's PIR record: u16 segment size, the segment, 100 zero bytes of padding; and
    // the same with a non-zero padding byte.
    std::vector<std::uint8_t> record{static_cast<std::uint8_t>(segment.size() & 0xff),
                                     static_cast<std::uint8_t>(segment.size() >> 8)};
    record.insert(record.end(), segment.begin(), segment.end());
    record.resize(record.size() + 100, 0);
    write(dir, "list_record", with(4, record));
    record.back() = 1;
    write(dir, "list_record_dirty_padding", with(4, record));
  }
  return 0;
}
