// The pairwise sweep's covering array (tests/sweep/covering_array.h), on synthetic factor sets: every
// pair of values of every two factors in some row, counted here from the rows alone, never from the
// generator's own bookkeeping; the row count within the bound covering_array.cpp derives.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <tuple>

#include "tests/sweep/covering_array.h"

using sweep::CoveringArray;
using sweep::kUnset;
using sweep::Row;

namespace {

using Pair = std::tuple<size_t, int, size_t, int>;  // factor a < factor b, their values

// The pairs some row holds with both factors set.
std::set<Pair> pairs_in(const std::vector<Row>& rows) {
  std::set<Pair> held;
  for (auto& row : rows)
    for (size_t a = 0; a < row.size(); ++a)
      for (size_t b = a + 1; b < row.size(); ++b)
        if (row[a] != kUnset && row[b] != kUnset) held.insert({a, row[a], b, row[b]});
  return held;
}

std::vector<Pair> all_pairs(const std::vector<int>& sizes) {
  std::vector<Pair> all;
  for (size_t a = 0; a < sizes.size(); ++a)
    for (size_t b = a + 1; b < sizes.size(); ++b)
      for (int va = 0; va < sizes[a]; ++va)
        for (int vb = 0; vb < sizes[b]; ++vb) all.push_back({a, va, b, vb});
  return all;
}

std::string text(const Pair& p) {
  std::ostringstream s;
  s << "factor " << std::get<0>(p) << " = " << std::get<1>(p) << " with factor " << std::get<2>(p) << " = "
    << std::get<3>(p);
  return s.str();
}

}  // namespace

TEST_CASE("pairwise covering array: every pair of values of every two factors is in a row, within the derived bound",
          "[H4][sweep]") {
  std::vector<int> scenario_like(40, 2);  // a scenario's bools, and its enums of 3 to 5 values
  for (int s : {3, 3, 4, 5}) scenario_like.push_back(s);
  const std::vector<std::vector<int>> sets = {
      {2, 2, 2},    std::vector<int>(12, 2), {3, 3, 3, 3}, {5, 4, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2}, {1, 3, 2}, {2, 6},
      scenario_like};
  for (auto& sizes : sets) {
    INFO("sizes " << sizes.size() << " factors, the first " << sizes[0]);
    const CoveringArray ca(sizes);
    const auto& rows = ca.rows();
    for (auto& row : rows) {  // a whole row: every factor at one of its values
      REQUIRE(row.size() == sizes.size());
      for (size_t f = 0; f < row.size(); ++f) REQUIRE((row[f] >= 0 && row[f] < sizes[f]));
    }
    const std::set<Pair> held = pairs_in(rows);
    for (auto& p : all_pairs(sizes)) {
      INFO(text(p));
      CHECK(held.count(p) == 1);
    }
    std::vector<int> s = sizes;
    std::sort(s.rbegin(), s.rend());
    CHECK(rows.size() >= size_t(s[0] * s[1]));  // each pair of the two largest factors' values needs its own row
    CHECK(rows.size() <= CoveringArray::row_bound(sizes));
    CHECK(ca.refused_values().empty());
    CHECK(ca.refused_pairs().empty());
    CHECK(ca.checks() == 0);
    CHECK(CoveringArray(sizes).rows() == rows);  // deterministic
  }
  // Three bools: the greedy reaches the minimum, 4; 40 bools and four enums in tens, not thousands.
  CHECK(CoveringArray({2, 2, 2}).rows().size() == 4);
  CHECK(CoveringArray(scenario_like).rows().size() <= 30);
}

TEST_CASE("pairwise covering array: the bound is the first row count that leaves less than one pair", "[H4][sweep]") {
  // Two bools: m = 4, P = 4 pairs; 4 (3/4)^4 = 1.27, 4 (3/4)^5 = 0.95: 5 rows.
  CHECK(CoveringArray::row_bound({2, 2}) == 5);
  // Forty bools: P = 780 x 4 = 3,120; 3,120 (3/4)^27 = 1.3, (3/4)^28 gives 0.98: 28 rows.
  CHECK(CoveringArray::row_bound(std::vector<int>(40, 2)) == 28);
  CHECK(CoveringArray::row_bound({7}) == 0);  // one factor: no pair
}

// A check as the sweep's: an unset factor keeps value 0 (the file's). Factor 0's value 2 is refused
// however the rest is set; 1 = 1 with 2 = 1 only runs with 3 = 1; 0 = 1 with 3 = 0 never runs.
TEST_CASE(
    "pairwise covering array: a check's refusals are kept out and reported, a pair a third value makes possible is "
    "covered with it",
    "[H4][sweep]") {
  const std::vector<int> sizes = {3, 2, 2, 2};
  auto value = [](const Row& r, size_t f) { return r[f] == kUnset ? 0 : r[f]; };
  auto refusal = [&](const Row& r) -> std::string {
    if (value(r, 0) == 2) return "f0 = 2 never runs";
    if (value(r, 1) == 1 && value(r, 2) == 1 && value(r, 3) != 1) return "f1 = 1 with f2 = 1 needs f3 = 1";
    if (value(r, 0) == 1 && value(r, 3) == 0) return "f0 = 1 with f3 = 0 never runs";
    return "";
  };
  const CoveringArray ca(sizes, refusal);
  for (auto& row : ca.rows()) CHECK(refusal(row) == "");
  const std::set<Pair> held = pairs_in(ca.rows());
  for (auto& p : all_pairs(sizes)) {
    INFO(text(p));
    const bool never = (std::get<0>(p) == 0 && std::get<1>(p) == 2) || p == Pair{0, 1, 3, 0};
    CHECK(held.count(p) == (never ? 0 : 1));
  }
  REQUIRE(ca.refused_values().size() == 1);
  CHECK(ca.refused_values()[0].factor == 0);
  CHECK(ca.refused_values()[0].value == 2);
  CHECK(ca.refused_values()[0].why == "f0 = 2 never runs");
  REQUIRE(ca.refused_pairs().size() == 1);
  const auto& rp = ca.refused_pairs()[0];
  CHECK(Pair{rp.pair.a, rp.pair.va, rp.pair.b, rp.pair.vb} == Pair{0, 1, 3, 0});
  CHECK(rp.why == "f0 = 1 with f3 = 0 never runs");
  CHECK(ca.checks() > 0);
}
