// ScenarioCheck: what gpumodel's command line says to a file's reduced run with some keys set, before it
// elaborates anything, asked in this process: the file read, the overrides applied, implied keys set
// and the scenario's constraints checked by the same functions parse_command_line calls, about a
// thousand times faster than starting the binary. The pairwise sweep builds its rows with it; the
// binary still runs every row, and a row it refuses that this check took is reported.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "hw_model/core/params.h"
#include "scenarios/common/implied.h"
#include "tests/sweep/reduced_runs.h"

namespace sweep {

class ScenarioCheck {
 public:
  // The file must load (the sweep has loaded every file once already: scenario_files).
  ScenarioCheck(const std::string& file, const std::string& scenario);

  // A key's value in the file's reduced run, as a scenario file writes it, before any implied key.
  std::string base_value(const std::string& key) const;
  // What a run passes on its command line for `assigned`: the keys whose value is not the reduced run's.
  KeyValues overrides(const KeyValues& assigned) const;
  // "" when gpumodel takes the reduced run with `assigned`, keeps each key at its value and starts its
  // adapters. Else the refusal's message (exit 2); prefixed "implied: ", the key another key's value
  // implies away; prefixed "adapter start: ", the driver answers with which the OS fails an adapter's
  // start (a run that stops before any workload: it covers no pair).
  std::string refusal(const KeyValues& assigned) const;

  static constexpr const char* kImplied = "implied: ";
  static constexpr const char* kStart = "adapter start: ";
  size_t evaluated() const { return said_.size(); }  // distinct command lines checked

 private:
  std::string scenario_;
  KeyValues reduced_;            // the file's reduced-run overrides
  gpumodel::ParamSet loaded_;    // the file read, nothing overridden
  gpumodel::ParamSet baseline_;  // and its reduced-run overrides applied
  struct Said {
    std::string refusal;
    std::vector<gpumodel::Implied> implied;
  };
  mutable std::map<std::string, Said> said_;  // by the overrides passed
};

}  // namespace sweep
