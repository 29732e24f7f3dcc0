// The gpumodel command line. Exit codes: 0 pass; 1 a scenario check, a monitor or a bug check failed
// (or the model faulted); 2 bad input, with one message on stderr naming the key or file.
#pragma once
#include <string>
#include <vector>

#include "app/run.h"
#include "hw_model/core/printable.h"  // printable(): messages made safe to print
#include "scenarios/common/implied.h"

namespace gpumodel {

// The platform a run used (app/platform_file.h): its name, its file as found, that file's SHA-256, and
// the keys it set.
struct PlatformRecord {
  std::string name, file, sha256;
  std::vector<std::string> keys;
};

// What a command line asks for, parsed and checked; nothing written, nothing elaborated.
struct CliRequest {
  enum class Action {
    Help,
    ListParams,
    ListParamsJson,
    ListScenarios,
    ListPlatforms,
    ListPlatformsJson,
    Run
  } action = Action::Run;
  RunOptions opt;
  std::string scenario_file;    // the file that runs, as found (a bare NAME resolved)
  std::string scenario_sha256;  // its bytes' SHA-256, recorded in the results
  PlatformRecord platform;      // the platform file under the scenario file's keys, recorded as it is
  std::string results_path;     // empty: no results file
  bool quiet = false;           // --quiet: no progress line, no line for implied keys or outputs
  std::vector<std::pair<std::string, std::string>> outputs;  // (what, path) of each file the run writes
  std::string default_dir;                                   // "build" when an output defaults there
  std::vector<Implied> implied;                              // keys set because another implies them
};

// Reads a scenario file's text (`scenario = NAME`, optionally `platform = NAME|PATH`, then `[section]
// key = value`) into `ps`, which has every parameter declared; `label` names the file in messages. The
// platform's values come first, under the file's keys: `platform_arg` (the command line's --platform)
// when given, else the file's `platform =` (a relative path taken from the file's folder), else
// desktop_gen4; `used`, when given, records which. A leading UTF-8 byte-order mark and CRLF line ends
// are accepted; a NUL byte, an unknown or repeated key, a key of another scenario, a bad value or a
// bad platform is a ConfigError. Returns the scenario's name.
std::string load_scenario_text(const std::string& text, const std::string& label, ParamSet& ps,
                               const std::string& platform_arg = "", PlatformRecord* used = nullptr);

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
