#include "tests/sweep/covering_array.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace sweep {

CoveringArray::CoveringArray(std::vector<int> sizes, Check check) : sizes_(std::move(sizes)), check_(std::move(check)) {
  const size_t n = sizes_.size();
  offset_.assign(n * n, 0);
  size_t total = 0;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      offset_[a * n + b] = total;
      total += size_t(sizes_[a]) * size_t(sizes_[b]);
    }
  uncovered_.assign(total, 1);
  never_.assign(total, 0);
  pair_needs_.assign(total, {});
  uncovered_count_ = total;
  for (int s : sizes_) {
    if (s < 1) throw std::invalid_argument("covering array: a factor with no value");
    lcm_ = std::lcm(lcm_, uint64_t(s));
    if (lcm_ > (uint64_t(1) << 40)) throw std::invalid_argument("covering array: sizes too varied for exact scores");
    refused_value_.push_back(std::vector<char>(size_t(s), 0));
    suspect_.push_back(std::vector<char>(size_t(s), 0));
    value_needs_.push_back(std::vector<std::vector<Value>>(size_t(s)));
  }
  for (size_t f = 0; f < n; ++f) order_.push_back(f);
  if (check_) classify_values();
  while (uncovered_count_ > 0) {
    Row row;
    if (check_) {
      // Each row grows from an uncovered pair, with what it needs (as AETG starts from its most
      // uncovered value): values that need another get rows that take it, where rows grown from nothing
      // would pass them by. A pair's refusal is found when it seeds a row, not tried for every pair.
      order_factors();
      row = seeded_row();
      if (row.empty()) continue;  // its pair is refused every way tried: recorded
    } else {
      row.assign(n, kUnset);
      complete(row, false);
    }
    // A seeded row covers its seed; without a check a row always covers a pair (see row_bound).
    if (cover(row) == 0) throw std::logic_error("covering array: a row covers nothing");
    rows_.push_back(row);
  }
}

size_t CoveringArray::pair_index(size_t a, int va, size_t b, int vb) const {
  if (a > b) {
    std::swap(a, b);
    std::swap(va, vb);
  }
  return offset_[a * sizes_.size() + b] + size_t(va) * size_t(sizes_[b]) + size_t(vb);
}

bool CoveringArray::uncovered(size_t a, int va, size_t b, int vb) const {
  return uncovered_[pair_index(a, va, b, vb)] != 0;
}

std::string CoveringArray::check(const Row& row) {
  if (!check_) return "";
  ++checks_;
  return check_(row);
}

bool CoveringArray::repair(Row& row, size_t a, size_t b, const std::string& why, std::vector<Value>& needs) {
  // Whether `r` with `values` added is taken; none may be on a factor `r` holds, nor on `skip`.
  auto takes = [&](Row& r, const std::vector<Value>& values, size_t skip) {
    for (size_t k = 0; k < values.size(); ++k) {
      const Value& v = values[k];
      if (v.value == kUnset || v.factor == skip || r[v.factor] != kUnset || refused_value_[v.factor][size_t(v.value)] ||
          (k == 1 && v.factor == values[0].factor))
        return false;
    }
    for (auto& v : values) r[v.factor] = v.value;
    const bool ok = check(r).empty();
    for (auto& v : values) r[v.factor] = kUnset;
    return ok;
  };
  if (a == b) {
    // A value alone: the values that lifted another refusal and lift this one; if none does, every value
    // that lifts it, all recorded, so that a pair whose other factor holds one finds another.
    for (auto& v : repairs_)
      if (takes(row, {v}, a)) needs.push_back(v);
    if (!needs.empty()) return true;
    // A refusal with the words of one no value lifted (another value of the same key, refused by the
    // same rule) is not tried against every value again.
    if (std::find(unlifted_.begin(), unlifted_.end(), why) != unlifted_.end()) return false;
    for (size_t g = 0; g < sizes_.size(); ++g)
      for (int w = 0; w < sizes_[g]; ++w)
        if (takes(row, {{g, w}}, a)) needs.push_back({g, w});
    repairs_.insert(repairs_.end(), needs.begin(), needs.end());
    if (needs.empty()) unlifted_.push_back(why);
    return !needs.empty();
  }
  // A pair whose values each need another value alone likely needs one of each, or one of them; else a
  // value that lifted another refusal.
  std::vector<std::vector<Value>> tries;
  const std::vector<Value> none = {{0, kUnset}};
  const std::vector<Value>& lift_a = value_needs_[a][size_t(row[a])].empty() ? none : value_needs_[a][size_t(row[a])];
  const std::vector<Value>& lift_b = value_needs_[b][size_t(row[b])].empty() ? none : value_needs_[b][size_t(row[b])];
  for (auto& x : lift_a)
    for (auto& y : lift_b) tries.push_back({x, y});
  for (auto& x : lift_a) tries.push_back({x});
  for (auto& y : lift_b) tries.push_back({y});
  for (auto& v : repairs_) tries.push_back({v});
  for (auto& values : tries)
    if (takes(row, values, a)) {
      needs = values;
      return true;
    }
  return false;
}

void CoveringArray::classify_values() {
  const size_t n = sizes_.size();
  for (size_t f = 0; f < n; ++f)
    for (int v = 0; v < sizes_[f]; ++v) {
      Row row(n, kUnset);
      row[f] = v;
      const std::string why = check(row);
      if (why.empty()) continue;
      if (repair(row, f, f, why, value_needs_[f][size_t(v)])) continue;
      refused_values_.push_back({f, v, why});
      refused_value_[f][size_t(v)] = 1;
      for (size_t g = 0; g < n; ++g)  // none of its pairs can be covered: none is owed
        for (int w = 0; g != f && w < sizes_[g]; ++w) {
          char& u = uncovered_[pair_index(f, v, g, w)];
          uncovered_count_ -= size_t(u);
          u = 0;
        }
    }
}

void CoveringArray::order_factors() {
  std::vector<char> needed(sizes_.size(), 0);
  for (auto& values : value_needs_)
    for (auto& lifters : values)
      for (auto& v : lifters) needed[v.factor] = 1;
  for (auto& values : pair_needs_)
    for (auto& v : values) needed[v.factor] = 1;
  std::sort(order_.begin(), order_.end());
  std::stable_partition(order_.begin(), order_.end(), [&](size_t f) { return needed[f] != 0; });
}

bool CoveringArray::needs_met(const Row& row, size_t f, int v) const {
  auto held = [&](const Value& n) { return row[n.factor] == n.value; };
  const std::vector<Value>& lifters = value_needs_[f][size_t(v)];
  if (!lifters.empty() && std::none_of(lifters.begin(), lifters.end(), held)) return false;
  for (size_t g = 0; g < row.size(); ++g) {
    const std::vector<Value>& needs = g == f || row[g] == kUnset ? lifters : pair_needs_[pair_index(f, v, g, row[g])];
    if (g != f && row[g] != kUnset && !std::all_of(needs.begin(), needs.end(), held)) return false;
  }
  return true;
}

// Scores are the conditional expectation times the least common multiple of the sizes: whole numbers,
// so equal expectations tie exactly and the lowest value index wins.
void CoveringArray::complete(Row& row, bool trust) {
  const Row start = row;
  const size_t n = sizes_.size();
  for (size_t f : order_) {
    if (row[f] != kUnset) continue;
    std::vector<std::pair<uint64_t, int>> scored;  // (score, value)
    for (int v = 0; v < sizes_[f]; ++v) {
      if (refused_value_[f][size_t(v)]) continue;
      uint64_t score = 0;
      bool never = false;
      for (size_t g = 0; g < n && !never; ++g) {
        if (g == f) continue;
        if (row[g] != kUnset) {
          never = never_[pair_index(f, v, g, row[g])] != 0;
          score += uncovered(f, v, g, row[g]) ? lcm_ : 0;
        } else {
          uint64_t open = 0;
          for (int w = 0; w < sizes_[g]; ++w) open += uncovered(f, v, g, w) ? 1 : 0;
          score += open * (lcm_ / uint64_t(sizes_[g]));
        }
      }
      if (!never) scored.push_back({score, v});
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& x, auto& y) { return x.first > y.first; });
    for (auto& [score, v] : scored) {
      row[f] = v;
      // Trusted, a value whose lifters the row holds none of is passed by, as the check would refuse it
      // but for a combination no refusal has shown yet.
      const bool lifted = value_needs_[f][size_t(v)].empty() ||
                          std::any_of(value_needs_[f][size_t(v)].begin(), value_needs_[f][size_t(v)].end(),
                                      [&](const Value& n) { return row[n.factor] == n.value; });
      if (trust && !lifted) {
        row[f] = kUnset;
        continue;
      }
      if ((trust && !suspect_[f][size_t(v)] && needs_met(row, f, v)) || check(row).empty()) break;
      suspect_[f][size_t(v)] = 1;  // refused here: checked wherever placed from now on
      row[f] = kUnset;             // the next best, or the factor left as it was
    }
  }
  // Values placed unchecked have met no refusal yet; the whole row is checked once. If refused, the row
  // is grown again with every value checked (which marks the values refused in it).
  if (trust && !check(row).empty()) {
    row = start;
    complete(row, false);
  }
}

size_t CoveringArray::cover(const Row& row) {
  size_t fresh = 0;
  for (size_t a = 0; a < row.size(); ++a)
    for (size_t b = a + 1; b < row.size(); ++b) {
      if (row[a] == kUnset || row[b] == kUnset) continue;
      char& u = uncovered_[pair_index(a, row[a], b, row[b])];
      fresh += size_t(u);
      u = 0;
    }
  uncovered_count_ -= fresh;
  return fresh;
}

Row CoveringArray::seeded_row() {
  const size_t n = sizes_.size();
  std::vector<std::vector<size_t>> open(n);  // [factor][value]: its uncovered pairs
  for (size_t f = 0; f < n; ++f) open[f].assign(size_t(sizes_[f]), 0);
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b)
      for (int va = 0; va < sizes_[a]; ++va)
        for (int vb = 0; vb < sizes_[b]; ++vb)
          if (uncovered(a, va, b, vb)) {
            ++open[a][size_t(va)];
            ++open[b][size_t(vb)];
          }
  size_t best = 0;
  ValuePair seed;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b)
      for (int va = 0; va < sizes_[a]; ++va)
        for (int vb = 0; vb < sizes_[b]; ++vb)
          if (uncovered(a, va, b, vb) && open[a][size_t(va)] + open[b][size_t(vb)] > best) {
            best = open[a][size_t(va)] + open[b][size_t(vb)];
            seed = {a, b, va, vb};
          }
  if (best == 0) throw std::logic_error("covering array: no uncovered pair to seed a row with");
  Row row(n, kUnset);
  row[seed.a] = seed.va;
  row[seed.b] = seed.vb;
  const size_t i = pair_index(seed.a, seed.va, seed.b, seed.vb);
  const std::string why = check(row);
  if (!why.empty()) {
    if (!repair(row, seed.a, seed.b, why, pair_needs_[i])) {
      never_[i] = 1;
      uncovered_[i] = 0;
      --uncovered_count_;
      refused_pairs_.push_back({seed, why});
      return {};
    }
    for (auto& v : pair_needs_[i]) row[v.factor] = v.value;
  }
  complete(row, true);
  return row;
}

// Without a check, each row covers at least U/m of the U pairs still uncovered, m the product of the
// two largest sizes: a row drawn at random holds each uncovered pair with probability 1/(|Va| |Vb|) >=
// 1/m, so its expected count is >= U/m; choosing each factor's value to maximise the expectation given
// the values already chosen never lowers it, so the completed row's count (the expectation once every
// value is chosen) is >= U/m too. After N rows at most P (1 - 1/m)^N of the P pairs are left, and a
// count below 1 is 0: the first N with P (1 - 1/m)^N < 1 is a bound.
size_t CoveringArray::row_bound(const std::vector<int>& sizes) {
  if (sizes.size() < 2) return 0;
  std::vector<int> s = sizes;
  std::sort(s.rbegin(), s.rend());
  const double m = double(s[0]) * double(s[1]);
  double pairs = 0;
  for (size_t a = 0; a < s.size(); ++a)
    for (size_t b = a + 1; b < s.size(); ++b) pairs += double(s[a]) * double(s[b]);
  size_t n = 0;
  for (double left = pairs; left >= 1; left *= 1 - 1 / m) ++n;
  return n;
}

}  // namespace sweep
