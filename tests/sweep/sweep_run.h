// Running sweep cases through the real gpumodel binary and judging each outcome: a legal value may fail
// a scenario's checks (with a reason) or be refused (exit 2, one line naming a key it sets); a crash, a
// hang, a memory blowup, another exit code, a missing or malformed results file, a negative or NaN
// figure, a verdict its exit code contradicts or a fail with no reason is a finding.
#pragma once
#include <string>
#include <vector>

#include "tests/sweep/reduced_runs.h"
#include "tests/sweep/sweep_options.h"

namespace sweep {

struct Case {
  std::string file;      // scenario file
  std::string scenario;  // its scenario
  KeyValues set;         // the keys the sweep sets, with their values; none: the file's reduced run (its baseline)
  std::string label;     // "min", "max", "value" ...; the pairwise sweep's "row N"
  std::vector<std::string> args;  // after the binary, without --results
};

enum class Outcome { Pass, FailWithReason, Refused, Finding };

struct Verdict {
  Outcome outcome = Outcome::Finding;
  std::string detail;  // the finding's symptom, a fail's reason, a refusal's message
  double seconds = 0;  // the run's wall time
};
// The `n` slowest runs, one line each ("  12.3 s  file key=value"): where a sweep's time goes.
std::string slowest(const std::vector<Case>& cases, const std::vector<Verdict>& verdicts, size_t n);

// "baseline", "key=value (label)", or "label: k1=v1 k2=v2".
std::string describe(const Case& c);
// The command that reproduces a case, with a results file in /tmp.
std::string command_line(const Options& o, const Case& c);

// Runs the cases, o.jobs at a time, each with o.timeout_s of wall time and o.mem_gib of address space.
// With `print`, prints each finding as it comes (with its command) and, with --verbose, every run.
std::vector<Verdict> run_cases(const Options& o, const std::vector<Case>& cases, bool print = true);

// A fail reason with its numbers blanked, so a summary groups alike reasons.
std::string reason_class(const std::string& why);

// The shortest decimal text that reads back as exactly `v`; whole numbers without an exponent.
std::string real_text(double v);
std::string shell_quote(const std::string& s);
// One line of at most `max` characters (newlines shown as '|').
std::string one_line(std::string s, size_t max = 300);

}  // namespace sweep
