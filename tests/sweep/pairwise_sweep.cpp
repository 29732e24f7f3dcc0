#include "tests/sweep/pairwise_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <unistd.h>

#include "tests/sweep/pairwise_plan.h"
#include "tests/sweep/scenario_check.h"

namespace fs = std::filesystem;

namespace sweep {

namespace {

using Kind = FilePlan::Kind;

// A finding's reduction stops after this many runs and reports the smallest row it reached: a hang
// costs a whole timeout a run.
constexpr size_t kMaxReductionRuns = 60;

// What a run gave, as a reduction must reproduce it: a finding of one kind ("timeout", "killed by
// signal N (Aborted)"), or a fail for one reason (its numbers blanked).
struct Symptom {
  Outcome outcome;
  std::string what;
  bool operator==(const Symptom& o) const { return outcome == o.outcome && what == o.what; }
};

Symptom symptom_of(const Verdict& v) {
  const std::string c = reason_class(v.detail);
  if (v.outcome == Outcome::Finding) return {v.outcome, c.substr(0, c.find_first_of(":;"))};
  return {v.outcome, v.outcome == Outcome::FailWithReason ? c : ""};
}

// Zeller's ddmin over a row's keys: the smallest set of them (none can be dropped) whose run still gives
// the same symptom. Each round's candidates run in one batch, in parallel; the first that reproduces,
// in order, is taken, so the result does not depend on which run ends first.
KeyValues reduce(const Options& o, const Case& row, const Symptom& symptom, size_t& runs) {
  KeyValues d = row.set;
  size_t n = 2;
  while (d.size() >= 2 && runs < kMaxReductionRuns) {
    std::vector<KeyValues> chunks(n);
    for (size_t i = 0; i < d.size(); ++i) chunks[i * n / d.size()].push_back(d[i]);
    std::vector<KeyValues> candidates = chunks;
    if (n > 2)  // with two chunks each one's complement is the other
      for (size_t c = 0; c < n; ++c) {
        KeyValues rest;
        for (size_t j = 0; j < n; ++j)
          if (j != c) rest.insert(rest.end(), chunks[j].begin(), chunks[j].end());
        candidates.push_back(rest);
      }
    std::vector<Case> cases;
    for (auto& kv : candidates) cases.push_back(make_case(row.file, row.scenario, kv, "reduced"));
    const std::vector<Verdict> v = run_cases(o, cases, false);
    runs += cases.size();
    size_t hit = candidates.size();
    for (size_t i = 0; i < v.size() && hit == candidates.size(); ++i)
      if (symptom_of(v[i]) == symptom) hit = i;
    if (hit < n) {
      d = chunks[hit];
      n = 2;
    } else if (hit < candidates.size()) {
      d = candidates[hit];
      n = std::max<size_t>(n - 1, 2);
    } else if (n >= d.size()) {
      break;
    } else {
      n = std::min(2 * n, d.size());
    }
  }
  return d;
}

struct Found {
  std::string file;
  KeyValues keys;  // reduced
  Symptom symptom;
  std::string detail, command;
  std::vector<std::string> rows;  // the rows that gave it
};

}  // namespace

int pairwise_sweep(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<FilePlan> plans;
  for (auto& [file, scenario] : scenario_files(o.scenarios))
    if (o.only.empty() || o.only == scenario || o.only == fs::path(file).filename().string() || o.only == file)
      plans.push_back(plan_file(file, scenario, o.interactions));
  if (plans.empty()) usage("--only '" + o.only + "' selects no scenario file");
  std::vector<Case> cases;
  std::vector<std::pair<size_t, size_t>> whose;  // (plan, run) of each case
  for (size_t p = 0; p < plans.size(); ++p)
    for (size_t r = 0; r < plans[p].runs.size(); ++r) {
      cases.push_back(make_case(plans[p].file, plans[p].scenario, plans[p].runs[r].passed, plans[p].runs[r].label));
      whose.push_back({p, r});
    }
  auto run_of = [&](size_t i) -> const FilePlan::Run& { return plans[whose[i].first].runs[whose[i].second]; };
  if (o.dry_run) {
    for (auto& c : cases) std::cout << command_line(o, c) << "\n";
    for (auto& p : plans) std::cerr << plan_line(p) << "\n";
    return 0;
  }
  if (::access(o.gpumodel.c_str(), X_OK) != 0) usage("cannot run gpumodel '" + o.gpumodel + "'");
  std::cout << "extremes_sweep --pairwise: " << cases.size() << " runs over " << plans.size() << " files, " << o.jobs
            << " at a time, " << o.timeout_s << " s and " << o.mem_gib << " GiB each; gpumodel " << o.gpumodel << "\n"
            << std::flush;
  std::vector<Verdict> verdicts = run_cases(o, cases);
  auto print_finding = [&](size_t i, const std::string& what) {
    std::cout << "FINDING " << fs::path(cases[i].file).filename().string() << " " << describe(cases[i]) << ": " << what
              << "\n  reproduce: " << command_line(o, cases[i]) << "\n";
  };

  // A probe the binary ran is the check disagreeing with it; one of a failed adapter start that runs
  // on (the file starts no adapter so) only cost its rows values that do not matter to it: noted. A row
  // the binary refused is a row the check took: its pairs may be covered nowhere else.
  std::vector<size_t> refused_rows, starts_not_failed;
  std::map<std::pair<size_t, std::string>, std::string> alone_fails;  // (plan, "key=value") -> its fail reason
  for (size_t i = 0; i < cases.size(); ++i) {
    const FilePlan::Run& run = run_of(i);
    Verdict& v = verdicts[i];
    const bool start = run.refusal.rfind(ScenarioCheck::kStart, 0) == 0;
    if (run.kind == Kind::Probe && start && v.outcome != Outcome::Finding &&
        (v.outcome != Outcome::FailWithReason || v.detail.find("adapter start failed") == std::string::npos))
      starts_not_failed.push_back(i);
    if (run.kind == Kind::Probe && !start && (v.outcome == Outcome::Pass || v.outcome == Outcome::FailWithReason)) {
      v = {Outcome::Finding, "the sweep's check refused it (" + one_line(run.refusal, 200) +
                                 ") but gpumodel ran it: " + (v.detail.empty() ? "pass" : v.detail)};
      print_finding(i, v.detail);
    }
    if (run.kind == Kind::Row && v.outcome == Outcome::Refused) refused_rows.push_back(i);
    if (run.kind == Kind::Single && v.outcome == Outcome::FailWithReason)
      alone_fails[{whose[i].first, joined(run.alone)}] = reason_class(v.detail);
  }

  // Each row that is a finding is reduced to the keys it needs, unless one already reduced holds in it.
  // With --interactions, so is each row that fails for a reason none of its values gives alone: one
  // that one gives is that value's fail (the extremes sweep's); one none gives needed two or more. A
  // fail with a reason is no finding: those are listed for review.
  std::vector<Found> found;
  size_t reduction_runs = 0, explained = 0, by_one = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const FilePlan::Run& run = run_of(i);
    const Symptom symptom = symptom_of(verdicts[i]);
    const bool fails = symptom.outcome == Outcome::FailWithReason;
    if (run.kind != Kind::Row || !(symptom.outcome == Outcome::Finding || (fails && o.interactions))) continue;
    if (fails && std::any_of(run.passed.begin(), run.passed.end(), [&](auto& kv) {
          auto it = alone_fails.find({whose[i].first, kv.first + "=" + kv.second});
          return it != alone_fails.end() && it->second == symptom.what;
        })) {
      ++explained;
      continue;
    }
    const std::set<std::pair<std::string, std::string>> row(run.passed.begin(), run.passed.end());
    auto known = std::find_if(found.begin(), found.end(), [&](const Found& f) {
      return f.file == cases[i].file && f.symptom == symptom &&
             std::all_of(f.keys.begin(), f.keys.end(), [&](auto& kv) { return row.count(kv) != 0; });
    });
    if (known != found.end()) {
      known->rows.push_back(run.label);
      continue;
    }
    size_t runs = 0;
    const KeyValues keys = reduce(o, cases[i], symptom, runs);
    reduction_runs += runs;
    by_one += fails && keys.size() < 2 ? 1 : 0;  // one key gives it after all (with what it needs, say)
    const Case minimal = make_case(cases[i].file, cases[i].scenario, keys, "reduced");
    std::cout << "  " << run.label << " reduced to " << joined(keys) << " (" << runs
              << " runs)\n  reproduce: " << command_line(o, minimal) << "\n"
              << std::flush;
    found.push_back({cases[i].file, keys, symptom, verdicts[i].detail, command_line(o, minimal), {run.label}});
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // ---- the report ----
  size_t counts[4] = {0, 0, 0, 0};
  std::map<std::string, size_t> fail_classes, refusal_classes;
  for (size_t i = 0; i < cases.size(); ++i) {
    ++counts[int(verdicts[i].outcome)];
    if (verdicts[i].outcome == Outcome::FailWithReason) ++fail_classes[reason_class(verdicts[i].detail)];
  }
  std::cout << "\nper file: enum and bool keys; rows and values run alone; the check's calls and time to build "
               "the rows; values and pairs refused or implied away\n";
  size_t total_rows = 0, total_alone = 0, refused_values = 0, refused_pairs = 0;
  const FilePlan *fewest = &plans[0], *most = &plans[0];
  for (auto& p : plans) {
    for (auto& r : p.refused_values) ++refusal_classes[reason_class(r.why)];
    for (auto& r : p.refused_pairs) ++refusal_classes[reason_class(r.why)];
    refused_values += p.refused_values.size();
    refused_pairs += p.refused_pairs.size();
    total_rows += p.count(Kind::Row);
    total_alone += p.count(Kind::Single);
    if (p.count(Kind::Row) < fewest->count(Kind::Row)) fewest = &p;
    if (p.count(Kind::Row) > most->count(Kind::Row)) most = &p;
    std::cout << "  " << plan_line(p) << "\n";
  }
  if (!refusal_classes.empty()) {
    std::cout << "\nrefused combinations by reason (numbers as N; legal: the model documents them as impossible, "
                 "or its OS fails the adapter start with them):\n";
    for (auto& [why, n] : refusal_classes) std::cout << "  " << n << "x " << why << "\n";
  }
  if (!fail_classes.empty()) {
    std::cout << "\nfail reasons (numbers as N):\n";
    for (auto& [why, n] : fail_classes) std::cout << "  " << n << "x " << why << "\n";
  }
  if (!starts_not_failed.empty()) {
    std::cout << "\nadapter starts the check saw fail that ran on (the file starts no adapter so: its rows lost "
                 "values that do not matter to it):\n";
    for (size_t i : starts_not_failed)
      std::cout << "  " << fs::path(cases[i].file).filename().string() << " " << joined(cases[i].set) << ": "
                << (verdicts[i].detail.empty() ? "pass" : verdicts[i].detail) << "\n";
  }
  if (!refused_rows.empty()) {
    std::cout << "\nrows refused by gpumodel that the sweep's check took (their pairs may be covered by no run):\n";
    for (size_t i : refused_rows)
      std::cout << "  " << fs::path(cases[i].file).filename().string() << " " << cases[i].label << ": "
                << verdicts[i].detail << "\n  reproduce: " << command_line(o, cases[i]) << "\n";
  }
  auto list = [&](bool findings, const std::string& title) {
    bool any = false;
    for (auto& f : found) {
      const bool fail = f.symptom.outcome == Outcome::FailWithReason;
      if (fail == findings || (fail && f.keys.size() < 2)) continue;
      if (!any) std::cout << "\n" << title << "\n";
      any = true;
      std::string rows;
      for (auto& r : f.rows) rows += (rows.empty() ? "" : ", ") + r;
      std::cout << "  " << fs::path(f.file).filename().string() << " " << joined(f.keys) << " (" << rows
                << "): " << f.detail << "\n    reproduce: " << f.command << "\n";
    }
  };
  list(true, "pairwise findings, each reduced to the keys it needs:");
  list(false,
       "fails no key gives alone, each reduced to the keys it needs (for review: a fail with a reason is no "
       "finding):");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", wall);
  std::cout << "\nrows per file: min " << fewest->count(Kind::Row) << " (" << fs::path(fewest->file).filename().string()
            << "), max " << most->count(Kind::Row) << " (" << fs::path(most->file).filename().string() << "), total "
            << total_rows << "; " << refused_values << " values and " << refused_pairs << " pairs refused, "
            << refused_rows.size() << " rows refused by gpumodel; " << reduction_runs << " runs reducing\n";
  if (o.interactions)
    std::cout << total_alone << " values alone; " << explained << " row fails a value gives alone, " << by_one
              << " reduced to one key after all\n";
  std::cout << "slowest runs:\n" << slowest(cases, verdicts, 10);
  std::cout << "summary: " << cases.size() << " runs, " << counts[int(Outcome::Pass)] << " pass, "
            << counts[int(Outcome::FailWithReason)] << " fail with a reason, " << counts[int(Outcome::Refused)]
            << " refused (exit 2, naming a key), " << counts[int(Outcome::Finding)] << " findings; " << buf
            << " s wall\n";
  return counts[int(Outcome::Finding)] == 0 ? 0 : 1;
}

}  // namespace sweep
