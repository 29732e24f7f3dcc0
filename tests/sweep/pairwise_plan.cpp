#include "tests/sweep/pairwise_plan.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include "app/cli.h"
#include "scenarios/common/scenario.h"
#include "tests/sweep/scenario_check.h"

namespace fs = std::filesystem;
using gpumodel::ParamKind;
using gpumodel::ParamSet;
using gpumodel::ParamSpec;

namespace sweep {

namespace {

// The enum and bool keys a file sweeps (those of the extremes sweep), each with its values as the
// file's scenario sees them; a key with one value has nothing to pair. display.mode (named modes or
// WxH@R) is a number in disguise: the extremes sweep takes it to its extremes.
std::vector<Factor> factors_of(const std::string& scenario) {
  ParamSet ps;
  gpumodel::declare_all_params(ps);
  std::vector<Factor> factors;
  for (auto& [name, shared] : ps.specs()) {
    if (!ps.visible_to(shared, scenario) || !in_focus(scenario, shared)) continue;
    const ParamSpec s = shared.as_seen_by(scenario);
    if (s.kind == ParamKind::Bool) factors.push_back({name, {"false", "true"}});
    if (s.kind == ParamKind::Enum && s.choices.size() > 1) factors.push_back({name, s.choices});
  }
  return factors;
}

KeyValues assigned(const std::vector<Factor>& factors, const Row& row) {
  KeyValues kv;
  for (size_t f = 0; f < factors.size(); ++f)
    if (row[f] != kUnset) kv.push_back({factors[f].key, factors[f].values[size_t(row[f])]});
  return kv;
}

size_t implied_away(const FilePlan& p) {
  size_t n = 0;
  for (auto& r : p.refused_values) n += r.why.rfind(ScenarioCheck::kImplied, 0) == 0 ? 1 : 0;
  for (auto& r : p.refused_pairs) n += r.why.rfind(ScenarioCheck::kImplied, 0) == 0 ? 1 : 0;
  return n;
}

}  // namespace

size_t FilePlan::count(Kind k) const {
  size_t n = 0;
  for (auto& r : runs) n += r.kind == k ? 1 : 0;
  return n;
}

FilePlan plan_file(const std::string& file, const std::string& scenario, bool alone) {
  const auto t0 = std::chrono::steady_clock::now();
  FilePlan p;
  p.file = file;
  p.scenario = scenario;
  p.factors = factors_of(scenario);
  const ScenarioCheck check(file, scenario);
  std::vector<int> sizes;
  for (auto& f : p.factors) sizes.push_back(int(f.values.size()));
  const CoveringArray ca(sizes, [&](const Row& row) { return check.refusal(assigned(p.factors, row)); });
  p.rows = ca.rows();
  p.refused_values = ca.refused_values();
  p.refused_pairs = ca.refused_pairs();
  p.checks = ca.checks();
  p.evaluated = check.evaluated();
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  using Kind = FilePlan::Kind;
  p.runs.push_back({Kind::Baseline, "baseline", {}, {}, 0, ""});
  std::set<std::string> seen = {""};  // a run that passes no key is the baseline
  // Each value alone tells a row's fail that one of its values gives by itself from one that needs two.
  for (size_t f = 0; f < p.factors.size() && alone; ++f)
    for (int v = 0; v < int(p.factors[f].values.size()); ++v) {
      const KeyValues value = {{p.factors[f].key, p.factors[f].values[size_t(v)]}};
      bool refused = false;
      for (auto& r : p.refused_values) refused = refused || (r.factor == f && r.value == v);
      if (refused || check.overrides(value).empty()) continue;
      KeyValues with = value;
      const auto [g, w] = ca.needs(f, v);
      if (w != kUnset) with.push_back({p.factors[g].key, p.factors[g].values[size_t(w)]});
      const KeyValues passed = check.overrides(with);
      if (seen.insert(joined(passed)).second) p.runs.push_back({Kind::Single, "alone", passed, value, 0, ""});
    }
  for (size_t r = 0; r < p.rows.size(); ++r) {
    const KeyValues passed = check.overrides(assigned(p.factors, p.rows[r]));
    if (seen.insert(joined(passed)).second)
      p.runs.push_back({Kind::Row, "row " + std::to_string(r + 1), passed, {}, r, ""});
  }
  // One run per kind of refusal: the binary must refuse what the check refused, exit 2, one line, and
  // fail the adapter start the check saw fail. A key implied away is no refusal: the binary runs it
  // with the implied value.
  std::set<std::string> probed;
  auto probe = [&](const KeyValues& kv, const std::string& why) {
    if (why.rfind(ScenarioCheck::kImplied, 0) == 0 || !probed.insert(reason_class(why)).second) return;
    const bool start = why.rfind(ScenarioCheck::kStart, 0) == 0;
    p.runs.push_back({Kind::Probe, start ? "start fails" : "refused", check.overrides(kv), {}, 0, why});
  };
  for (auto& r : p.refused_values)
    probe({{p.factors[r.factor].key, p.factors[r.factor].values[size_t(r.value)]}}, r.why);
  for (auto& r : p.refused_pairs)
    probe({{p.factors[r.pair.a].key, p.factors[r.pair.a].values[size_t(r.pair.va)]},
           {p.factors[r.pair.b].key, p.factors[r.pair.b].values[size_t(r.pair.vb)]}},
          r.why);
  return p;
}

Case make_case(const std::string& file, const std::string& scenario, const KeyValues& set, const std::string& label) {
  Case c{file, scenario, set, label, {fs::absolute(file).string()}};
  std::set<std::string> keys;
  for (auto& [k, v] : set) {
    c.args.push_back("--" + k + "=" + v);
    keys.insert(k);
  }
  for (auto& a : reduced_args(file, scenario, keys)) c.args.push_back(a);
  return c;
}

std::string joined(const KeyValues& kv) {
  std::string s;
  for (auto& [k, v] : kv) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string plan_line(const FilePlan& p) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", p.seconds);
  return fs::path(p.file).filename().string() + ": " + std::to_string(p.factors.size()) + " keys, " +
         std::to_string(p.count(FilePlan::Kind::Row)) + " rows and " + std::to_string(p.count(FilePlan::Kind::Single)) +
         " values alone; " + std::to_string(p.checks) + " checks (" + std::to_string(p.evaluated) + " distinct) in " +
         secs + " s; " + std::to_string(p.refused_values.size()) + " values and " +
         std::to_string(p.refused_pairs.size()) + " pairs refused (" + std::to_string(implied_away(p)) +
         " of them implied away)";
}

}  // namespace sweep
