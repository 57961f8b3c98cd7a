#include "scoring/answer.h"

#include "pir/lwe/lwe64.h"

namespace privsearch::scoring {

std::string answer_private_queries(const ScoringMatrix& matrix,
                                   std::span<const std::uint64_t> queries, std::size_t m) {
  const auto answers = pir::lwe64_answer(matrix.data.data(), matrix.rows, matrix.stride, queries, m,
                                         static_cast<int>(matrix.query_drop_bits));
  return pack_answers(answers, matrix.answer_bits);
}

}  // namespace privsearch::scoring
