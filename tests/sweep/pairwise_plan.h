// A file's pairwise sweep before it runs: its enum and bool keys, the covering array over them (built
// with the command line's own checks, ScenarioCheck), the values and pairs the model refuses, and the
// runs: the file's reduced run, each value alone, each row, and one run per reason of refusal.
#pragma once
#include <string>
#include <vector>

#include "tests/sweep/covering_array.h"
#include "tests/sweep/sweep_run.h"

namespace sweep {

struct Factor {
  std::string key;
  std::vector<std::string> values;
};

struct FilePlan {
  std::string file, scenario;
  std::vector<Factor> factors;
  std::vector<Row> rows;
  std::vector<CoveringArray::Refused> refused_values;
  std::vector<CoveringArray::RefusedPair> refused_pairs;
  size_t checks = 0, evaluated = 0;  // the check's calls, and the distinct command lines among them
  double seconds = 0;                // to build the rows

  enum class Kind { Baseline, Single, Row, Probe };
  struct Run {
    Kind kind;
    std::string label;    // "baseline", "alone", "row N", "refused"
    KeyValues passed;     // the keys on its command line
    KeyValues alone;      // Single: the value it runs alone (beside what that value needs)
    size_t row = 0;       // Row: its index in `rows`
    std::string refusal;  // Probe: the check's message
  };
  // The baseline, then (if asked) each value that differs from the file's alone (with the value it
  // needs, if the model refuses it without), then each row passing keys no earlier run passed, then the
  // probes.
  std::vector<Run> runs;
  size_t count(Kind k) const;
};

// `alone`: also each value that differs from the file's alone (--interactions).
FilePlan plan_file(const std::string& file, const std::string& scenario, bool alone);

// A run of `file`'s reduced workload with `set` on its command line.
Case make_case(const std::string& file, const std::string& scenario, const KeyValues& set, const std::string& label);
std::string joined(const KeyValues& kv);  // "k1=v1 k2=v2"
// The file, its keys, rows, the check's work and the refusals, on one line.
std::string plan_line(const FilePlan& p);

}  // namespace sweep
