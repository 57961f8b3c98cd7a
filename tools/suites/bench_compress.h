// `privsearch bench compress`: LWE-ciphertext compression with Paillier (ZipPIR section 5.1-5.2):
// single compression per parameter set, packed compression keys, and the batched curve.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct CompressBenchOptions {
  int paillier_bits = 3072;
  std::vector<std::size_t> batch_counts = {1, 2, 5, 10, 20, 50, 71, 100, 150, 200};
  std::size_t runs = 3;
  unsigned threads = 0;  // key encryption; 0 = all cores
};

// Single compression of one LWE set with the plain (unpacked) key.
struct SingleCompression {
  std::string set;
  std::size_t lwe_ciphertext_bytes = 0, compressed_bytes = 0, key_bytes = 0;
  double compress_ms = 0, decrypt_ms = 0, key_encrypt_s = 0;  // medians; key: once
  unsigned key_encrypt_threads = 0;
  bool all_correct = false;
};

// The packed compression key of one set: its size and the time to unpack it.
struct PackedKeyFigures {
  std::string set;
  std::size_t digits_per_ciphertext = 0, packed_key_ciphertexts = 0, packed_key_bytes = 0,
              unpacked_key_bytes = 0;
  double unpack_s = 0;
  bool correct = false;
};

// `lwe_ciphertexts` compressed into as few Paillier ciphertexts as the scale allows.
struct BatchPoint {
  std::size_t lwe_ciphertexts = 0, paillier_ciphertexts = 0, compressed_bytes = 0,
              uncompressed_bytes = 0;
  double compress_s = 0;
  bool correct = false;
};

struct BatchCurve {
  std::size_t per_paillier_ciphertext = 0;
  std::vector<BatchPoint> curve;
};

struct CompressBenchResult {
  nlohmann::json machine;
  int paillier_bits = 0;
  std::size_t paillier_ciphertext_bytes = 0;
  std::vector<SingleCompression> single;
  std::vector<PackedKeyFigures> packed_key;
  std::map<std::string, BatchCurve> batched;  // "<set>_exact" / "<set>_overlap"
  std::optional<double> batch71_into_one_s;   // n = 1400 binary, exact scale
  nlohmann::json to_json() const;
};

Result<CompressBenchResult> run_compress_bench(const CompressBenchOptions& options);

}  // namespace privsearch::tools
