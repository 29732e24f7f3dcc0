// extremes_sweep: every numeric parameter of every scenario file at its minimum and at its maximum, one
// at a time, on a reduced workload, run through the real gpumodel binary. A legal
// value may fail a scenario's checks, and may be refused (exit 2) when the scenario cannot run the
// combination; it must never crash, hang, blow up memory, or report a negative or NaN figure, and a
// fail must say why. Enum and bool parameters get each of their values once (cheap, same rules).
//
//   extremes_sweep [--gpumodel PATH] [--scenarios DIR] [--jobs N] [--timeout S] [--mem-gib G]
//                  [--only SCENARIO|FILE.ini] [--key KEY] [--numeric-only] [--baselines-only] [--pairwise]
//                  [--verbose] [--dry-run]
//
// --pairwise runs the pairwise sweep instead (tests/sweep/pairwise_sweep.h): every enum and bool key of a
// file with every other, in pairs, over a covering array of tens of runs a file.
// --baselines-only runs each file's reduced run alone: what every swept key is told from, so a model
// change that makes a reduced run fail is found in the test suite, not first in the full sweep.
// Prints one line per finding with the command that reproduces it, then a summary. Exit code 0 iff
// no finding. Parameters and ranges come from the model's own registry (declare_all_params,
// ParamSpec::as_seen_by), so a new parameter is swept without editing this file.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "app/cli.h"
#include "scenarios/common/scenario.h"
#include "tests/sweep/pairwise_sweep.h"
#include "tests/sweep/reduced_runs.h"
#include "tests/sweep/sweep_options.h"
#include "tests/sweep/sweep_run.h"

namespace fs = std::filesystem;
using gpumodel::ParamKind;
using gpumodel::ParamSet;
using gpumodel::ParamSpec;
using namespace sweep;

namespace {

// SystemC prints its banner when its library starts the program unless this is set.
const int kQuietBanner = setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);

std::string int_text(double v) { return std::to_string(static_cast<long long>(v)); }

// The values a parameter is swept through, as `scenario` sees its range.
std::vector<std::pair<std::string, std::string>> sweep_values(const ParamSpec& s, bool numeric_only) {
  std::vector<std::pair<std::string, std::string>> v;
  switch (s.kind) {
    case ParamKind::Int:
      if (!s.choices.empty()) {
        v.push_back({"min", s.choices.front()});
        if (s.choices.size() > 1) v.push_back({"max", s.choices.back()});
      } else {
        v.push_back({"min", int_text(s.min)});
        if (s.max != s.min) v.push_back({"max", int_text(s.max)});
      }
      break;
    case ParamKind::Real:
      v.push_back({"min", real_text(s.min)});
      if (s.max != s.min) v.push_back({"max", real_text(s.max)});
      break;
    case ParamKind::Bool:
      if (!numeric_only) v = {{"value", "false"}, {"value", "true"}};
      break;
    case ParamKind::Enum:
      if (!numeric_only)
        for (auto& c : s.choices) v.push_back({"value", c});
      break;
    case ParamKind::NamedOrForm:  // every named value, and the form's samples (its extremes)
      if (!numeric_only) {
        for (auto& c : s.choices) v.push_back({"value", c});
        for (auto& c : s.form_samples) v.push_back({"form", c});
      }
      break;
    case ParamKind::Path:  // a file that is not there, and a directory where a file is wanted
      if (!numeric_only) v = {{"missing", "/nonexistent/gpumodel-sweep"}, {"directory", "/"}};
      break;
    case ParamKind::Text:  // names (a process, a swap chain): one nothing matches
      if (!numeric_only) v = {{"value", "gpumodel-sweep-no-such-name"}};
      break;
  }
  return v;
}

std::vector<Case> make_cases(const Options& o) {
  ParamSet ps;
  gpumodel::declare_all_params(ps);
  std::vector<Case> cases;
  bool key_known = o.key.empty();
  for (auto& [file, scenario] : scenario_files(o.scenarios)) {
    if (!o.only.empty() && o.only != scenario && o.only != fs::path(file).filename().string() && o.only != file)
      continue;
    const std::vector<std::string> base = {fs::absolute(file).string()};
    if (o.key.empty()) {  // the reduced run itself, so a key's failure is told from the file's
      Case c{file, scenario, {}, "baseline", base};
      for (auto& a : reduced_args(file, scenario, {})) c.args.push_back(a);
      cases.push_back(c);
    }
    if (o.baselines_only) continue;
    for (auto& [name, shared] : ps.specs()) {
      if (!ps.visible_to(shared, scenario) || (!o.key.empty() && name != o.key)) continue;
      if (o.key.empty() && !in_focus(scenario, shared)) continue;
      key_known = true;
      const ParamSpec s = shared.as_seen_by(scenario);
      for (auto& [label, value] : sweep_values(s, o.numeric_only)) {
        Case c{file, scenario, {{name, value}}, label, base};
        c.args.push_back("--" + name + "=" + value);
        for (auto& a : reduced_args(file, scenario, {name})) c.args.push_back(a);
        cases.push_back(c);
      }
    }
  }
  if (o.baselines_only && !o.key.empty()) usage("--baselines-only sweeps no key: drop --key '" + o.key + "'");
  if (!key_known) usage("--key '" + o.key + "' is no parameter of the selected scenarios");
  if (cases.empty()) usage("--only '" + o.only + "' selects no scenario file");
  return cases;
}

}  // namespace

// SystemC's library owns main(); the sweep never elaborates anything.
int sc_main(int argc, char** argv) {
  (void)kQuietBanner;
  const Options o = parse_options(argc, argv);
  if (o.pairwise) return pairwise_sweep(o);
  const std::vector<Case> cases = make_cases(o);
  if (o.dry_run) {
    for (auto& c : cases) std::cout << command_line(o, c) << "\n";
    return 0;
  }
  if (::access(o.gpumodel.c_str(), X_OK) != 0) usage("cannot run gpumodel '" + o.gpumodel + "'");
  const auto t0 = std::chrono::steady_clock::now();
  std::cout << "extremes_sweep: " << cases.size() << " runs, " << o.jobs << " at a time, " << o.timeout_s << " s and "
            << o.mem_gib << " GiB each; gpumodel " << o.gpumodel << "\n"
            << std::flush;
  const std::vector<Verdict> verdicts = run_cases(o, cases);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  size_t counts[4] = {0, 0, 0, 0};
  std::map<std::string, size_t> fail_classes;
  for (auto& v : verdicts) {
    ++counts[int(v.outcome)];
    if (v.outcome == Outcome::FailWithReason) ++fail_classes[reason_class(v.detail)];
  }
  if (!fail_classes.empty()) {
    std::cout << "\nfail reasons (numbers as N):\n";
    for (auto& [why, n] : fail_classes) std::cout << "  " << n << "x " << why << "\n";
  }
  std::cout << "\nslowest runs:\n" << slowest(cases, verdicts, 10);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", wall);
  std::cout << "\nsummary: " << cases.size() << " runs, " << counts[int(Outcome::Pass)] << " pass, "
            << counts[int(Outcome::FailWithReason)] << " fail with a reason, " << counts[int(Outcome::Refused)]
            << " refused (exit 2, naming the key), " << counts[int(Outcome::Finding)] << " findings; " << buf
            << " s wall\n";
  return counts[int(Outcome::Finding)] == 0 ? 0 : 1;
}
