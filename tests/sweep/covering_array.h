// CoveringArray: a pairwise (strength 2) covering array: rows of values, one per factor, such that
// every value of every factor meets every value of every other factor in at least one row;
// deterministic. Without a check, each row is completed from nothing by the method of conditional
// expectations (the density algorithm of Bryce and Colbourn, "A density-based greedy algorithm for
// higher strength covering arrays"), which bounds the row count (row_bound). With a check that refuses
// rows the system under test cannot take, each row starts from the uncovered pair whose values have the
// most uncovered pairs left (as AETG starts from the most uncovered value: Cohen et al., "The AETG
// system"), with the other values the check needs for it, if any, and is completed the same way among
// the values the check takes. The pairwise sweep uses it over each scenario's enum and bool keys; it
// knows nothing of gpumodel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sweep {

// A row: one value index per factor, or kUnset where the row leaves the factor as it was (the check
// decides what that means: for the sweep, the scenario file's value).
constexpr int kUnset = -1;
using Row = std::vector<int>;

struct ValuePair {
  size_t a = 0, b = 0;  // factors, a < b
  int va = 0, vb = 0;   // their values
};

class CoveringArray {
 public:
  // "" when the system takes `row` with every set factor at its value; else why not. A row whose set
  // factors the check does not keep (one implied to another value) must be refused too.
  using Check = std::function<std::string(const Row&)>;

  // `sizes[f]`: how many values factor f has (at least 1). Without a check every row is taken.
  explicit CoveringArray(std::vector<int> sizes, Check check = nullptr);

  const std::vector<Row>& rows() const { return rows_; }
  // Values the check refuses alone and with any one other factor's value: no row holds them (each
  // with the check's reason for the value alone).
  struct Refused {
    size_t factor;
    int value;
    std::string why;
  };
  const std::vector<Refused>& refused_values() const { return refused_values_; }
  // Pairs of values not refused one by one that the check refuses together: alone, with what each value
  // needs alone, and with each value that lifted another refusal (see repair). No row holds them.
  struct RefusedPair {
    ValuePair pair;
    std::string why;
  };
  const std::vector<RefusedPair>& refused_pairs() const { return refused_pairs_; }
  size_t checks() const { return checks_; }  // calls of the check
  // A value the check refuses alone but takes with one other value: the first such value (factor,
  // value); else (0, kUnset).
  std::pair<size_t, int> needs(size_t factor, int value) const {
    const auto& lifters = value_needs_[factor][size_t(value)];
    return lifters.empty() ? std::pair<size_t, int>{0, kUnset}
                           : std::pair<size_t, int>{lifters[0].factor, lifters[0].value};
  }

  // Without a check, at most this many rows (the derivation in covering_array.cpp); at least the product
  // of the two largest sizes, which a row cannot beat.
  static size_t row_bound(const std::vector<int>& sizes);

 private:
  struct Value {
    size_t factor;
    int value;  // kUnset: none
  };
  size_t pair_index(size_t a, int va, size_t b, int vb) const;
  bool uncovered(size_t a, int va, size_t b, int vb) const;
  std::string check(const Row& row);
  // Other values that make the check take `row`, refused (`why`) with factors a and b set (a == b: one
  // value) and nothing else. For one value: those that lifted another refusal and lift it; else each
  // value in order, every one that lifts it recorded (unless a refusal in the same words was tried so
  // in vain). For a pair: one of what each value needs alone, or one; a value that lifted another
  // refusal. False if none does.
  bool repair(Row& row, size_t a, size_t b, const std::string& why, std::vector<Value>& needs);
  // Which values the check refuses alone; of those, which other value makes it take them, and which
  // cannot be in any row (recorded as refused, owed no coverage).
  void classify_values();
  // The factors another value needs first, then the rest in order: the rows that take such a value can
  // then take the values that need it.
  void order_factors();
  // Completes `row` one factor at a time, in `order_`, each to the value that maximises the expected
  // number of newly covered pairs were the rest chosen at random, among the values the row can take.
  // `trust`: check only the values refused where placed before and those whose needs the row does not
  // hold, then the whole row once; if refused, grow the row again checking every value.
  void complete(Row& row, bool trust);
  // Whether `row` holds what the classification found f = v needs, alone and with each value it holds.
  bool needs_met(const Row& row, size_t f, int v) const;
  size_t cover(const Row& row);  // marks the row's pairs covered; returns how many were not
  // A row grown from the uncovered pair whose values have the most uncovered pairs left, with what the
  // check needs for it; empty if the check refuses that pair every way tried (then recorded as refused).
  Row seeded_row();

  std::vector<int> sizes_;
  Check check_;
  std::vector<size_t> order_;                   // the order factors are completed in
  std::vector<size_t> offset_;                  // offset_[a * n + b]: where pairs of factors a < b start
  std::vector<char> uncovered_;                 // per pair of values
  std::vector<char> never_;                     // per pair of values: refused every way tried
  std::vector<std::vector<Value>> pair_needs_;  // per pair of values: the other values it needs, if any
  size_t uncovered_count_ = 0;
  std::vector<std::vector<char>> refused_value_;              // [factor][value]: in no row
  std::vector<std::vector<char>> suspect_;                    // [factor][value]: refused where placed: always checked
  std::vector<std::vector<std::vector<Value>>> value_needs_;  // [factor][value]: the values that lift its refusal
  std::vector<Value> repairs_;                                // every value that has lifted a refusal
  std::vector<std::string> unlifted_;                         // refusals of one value no value lifted
  std::vector<Row> rows_;
  std::vector<Refused> refused_values_;
  std::vector<RefusedPair> refused_pairs_;
  size_t checks_ = 0;
  uint64_t lcm_ = 1;  // of the sizes: scores in whole numbers
};

}  // namespace sweep
