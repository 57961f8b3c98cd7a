// The balanced list assignment of a base build (ivf.h, balanced_assignment): every row's best
// list, then its other copies under a cap of entries per list, round by round over its choices.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "index/candidates/ivf.h"

namespace privsearch::index {
namespace {

constexpr std::size_t kBlock = 64;  // documents per block of a list's codes (ivf_format.h)

std::size_t round_up_to_block(std::size_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

// Whether `row` already has a copy in `list` (its placed lists are out[row * spill ..]).
bool holds(const std::vector<std::uint32_t>& out, std::size_t spill, std::size_t row,
           std::size_t placed, std::uint32_t list) {
  const auto* first = out.data() + row * spill;
  return std::find(first, first + placed, list) != first + placed;
}

// Copies no choice had room for: each to the list with the most room that does not hold the row
// yet (ties: the smaller list), rows in order.
void place_leftovers(std::vector<std::uint32_t>& out, std::vector<std::size_t>& placed,
                     std::vector<std::size_t>& fill, std::size_t spill) {
  for (std::size_t row = 0; row < placed.size(); ++row) {
    while (placed[row] < spill) {
      std::uint32_t best = 0;
      bool found = false;
      for (std::uint32_t l = 0; l < fill.size(); ++l) {
        if (holds(out, spill, row, placed[row], l)) continue;
        if (!found || fill[l] < fill[best]) best = l, found = true;
      }
      out[row * spill + placed[row]++] = best;
      ++fill[best];
    }
  }
}

}  // namespace

std::size_t balanced_list_cap(std::span<const std::uint32_t> first_choices, std::size_t lists,
                              std::size_t spill) {
  std::vector<std::size_t> firsts(lists, 0);
  for (const auto l : first_choices) ++firsts[l];
  const std::size_t most = lists == 0 ? 0 : *std::max_element(firsts.begin(), firsts.end());
  const double mean = static_cast<double>(first_choices.size() * spill) /
                      static_cast<double>(std::max<std::size_t>(lists, 1));
  const auto with_slack = static_cast<std::size_t>(std::ceil(mean * 1.02));
  return std::max(round_up_to_block(with_slack), round_up_to_block(most));
}

Result<std::vector<std::uint32_t>> balanced_assignment(const ListChoices& c, std::size_t lists,
                                                       std::size_t spill) {
  if (spill < 1 || spill > c.choices || spill > lists || c.lists.size() != c.rows * c.choices ||
      c.scores.size() != c.lists.size()) {
    return invalid_argument_error(fmt::format(
        "balanced assignment: spill {} with {} choices over {} lists", spill, c.choices, lists));
  }
  std::vector<std::uint32_t> out(c.rows * spill);
  std::vector<std::size_t> placed(c.rows, 1), fill(lists, 0);
  std::vector<std::uint32_t> firsts(c.rows);
  for (std::size_t row = 0; row < c.rows; ++row) {
    firsts[row] = out[row * spill] = c.lists[row * c.choices];
    if (firsts[row] >= lists) return invalid_argument_error("a list choice past the lists");
    ++fill[firsts[row]];
  }
  if (spill == 1) return out;
  const std::size_t cap = balanced_list_cap(firsts, lists, spill);
  std::vector<std::size_t> offers;
  for (std::size_t k = 1; k < c.choices; ++k) {
    offers.clear();
    for (std::size_t row = 0; row < c.rows; ++row) {
      if (placed[row] < spill) offers.push_back(row);
    }
    // Best inner product first; ties by the smaller row (offers are in row order).
    std::stable_sort(offers.begin(), offers.end(), [&](std::size_t a, std::size_t b) {
      return c.scores[a * c.choices + k] > c.scores[b * c.choices + k];
    });
    for (const std::size_t row : offers) {
      const std::uint32_t l = c.lists[row * c.choices + k];
      if (l >= lists) return invalid_argument_error("a list choice past the lists");
      if (fill[l] >= cap || holds(out, spill, row, placed[row], l)) continue;
      out[row * spill + placed[row]++] = l;
      ++fill[l];
    }
  }
  place_leftovers(out, placed, fill, spill);
  return out;
}

}  // namespace privsearch::index
