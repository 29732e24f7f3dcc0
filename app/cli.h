// The gpumodel command line. Exit codes: 0 pass; 1 a scenario check, a monitor or a bug check failed
// (or the model faulted); 2 bad input, with one message on stderr naming the key or file.
#pragma once
#include <string>
#include <vector>

#include "app/run.h"
#include "hw_model/core/printable.h"  // printable(): messages made safe to print
#include "scenarios/common/implied.h"

namespace gpumodel {

// What a command line asks for, parsed and checked; nothing written, nothing elaborated.
struct CliRequest {
  enum class Action { Help, ListParams, ListParamsJson, ListScenarios, Run } action = Action::Run;
  RunOptions opt;
  std::string scenario_file;    // the file that runs, as found (a bare NAME resolved)
  std::string scenario_sha256;  // its bytes' SHA-256, recorded in the results
  std::string results_path;     // empty: no results file
  bool quiet = false;           // --quiet: no progress line, no line for implied keys or outputs
  std::vector<std::pair<std::string, std::string>> outputs;  // (what, path) of each file the run writes
  std::string default_dir;                                   // "build" when an output defaults there
  std::vector<Implied> implied;                              // keys set because another implies them
};

// Reads a scenario file's text (`scenario = NAME`, then `[section] key = value`) into `ps`, which has
// every parameter declared; `label` names the file in messages. A leading UTF-8 byte-order mark and
// CRLF line ends are accepted; a NUL byte, an unknown or repeated key, a key of another scenario or a
// bad value is a ConfigError. Returns the scenario's name.
std::string load_scenario_text(const std::string& text, const std::string& label, ParamSet& ps);

// Applies one `--section.key=value` override for `scenario`; `seen` holds the keys already overridden
// (a key given twice is a ConfigError, as in a file).
void apply_override(ParamSet& ps, const std::string& scenario, const std::string& key, const std::string& value,
                    std::vector<std::string>& seen);

// Parses a whole command line into `ps` (every parameter declared) and a request: the scenario file
// (or NAME: ./scenarios/NAME.ini, else the source tree's) read, overrides applied, implied keys set, output
// paths (given, or defaulted under ./build/) and the scenario's own constraints checked; ./build/
// created if an output defaults there. Throws ConfigError, with the closest names for a misspelt one.
CliRequest parse_command_line(int argc, const char* const* argv, ParamSet& ps);

int cli_main(int argc, char** argv);

}  // namespace gpumodel
