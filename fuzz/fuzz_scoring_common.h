// The small access-private scoring database the scoring_messages target and its corpus share:
// 150 documents of 16 coordinates, the scoring tests' small build options (clusters of 64
// slots, the insecure n = 64 LWE row).
#pragma once

#include "core/check.h"
#include "scoring/build.h"
#include "scoring/scoring_test_util.h"

namespace privsearch::fuzz {

inline scoring::ScoringArtifacts small_scoring_artifacts() {
  index::Matrix x;
  x.rows = 150;
  x.cols = 16;
  for (std::size_t i = 0; i < x.rows * x.cols; ++i) {
    x.data.push_back(static_cast<float>((i * 7919) % 23) / 23.0f - 0.5f);
  }
  auto a = scoring::build_scoring(x, scoring::test_util::test_options(), nullptr);
  PRIVSEARCH_CHECK(a.ok(), "cannot build the fuzz scoring database");
  return std::move(a).value();
}

}  // namespace privsearch::fuzz
