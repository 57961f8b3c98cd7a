// A generated collection for the audit and sweep tests: 300 documents over 10 topics
// ("t<topic>w<word>" tokens, 30 per document), no queries yet.
#pragma once

#include <string>

#include "core/csprng.h"
#include "index/encoders/beir.h"
#include "testing/test_util.h"

namespace privsearch::testing {

inline index::Collection topic_corpus(std::uint64_t seed) {
  index::Collection c;
  Prng p = test_prng(seed);
  for (std::size_t i = 0; i < 300; ++i) {
    std::string text;
    for (int k = 0; k < 30; ++k) {
      text += "t" + std::to_string(i % 10) + "w" + std::to_string(p.uniform_below(20)) + " ";
    }
    c.corpus.push_back({"d" + std::to_string(i), "", text});
    c.doc_index.emplace("d" + std::to_string(i), i);
  }
  return c;
}

}  // namespace privsearch::testing
