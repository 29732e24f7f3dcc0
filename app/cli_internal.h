// The command line's parts that deal with files (app/cli_files.cpp): which scenario file an argument
// names, and where outputs go. Internal to the app library.
#pragma once
#include <set>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "app/cli.h"

namespace gpumodel::cli {

// A scenario file runnable by name: the source tree's scenarios/NAME.ini, `scenario =` naming its driver.
struct ScenarioFile {
  std::string name, path, scenario, summary;
};
// Every such file: each registered scenario's own file first (registry order), its variants after it.
std::vector<ScenarioFile> scenario_files();
// --list-scenarios: one line a runnable name.
void list_scenarios();

// The scenario file an argument names: an existing path as given; else, for a bare name (no '/', no
// .ini), ./scenarios/NAME.ini under the working directory, else the source tree's scenarios/NAME.ini. Refuses
// (ConfigError) a name that matches nothing, with the closest names. Then reads it.
std::string resolve_scenario_file(const std::string& arg);
// ./scenarios/NAME.ini, else the source tree's scenarios/NAME.ini, when `name` is a bare name (no '/',
// no .ini, no file of that name here) with such a file; else "".
std::string scenario_named(const std::string& name);
// A scenario file is text of a few kilobytes (the shipped ones are under 2 KB): one over 1 MiB is
// refused before it is read, so a device or a runaway file cannot fill the memory.
constexpr size_t kMaxScenarioFileBytes = 1 << 20;
// The scenario file's bytes (or a platform file's: `what` names it in messages): a regular file of at
// most kMaxScenarioFileBytes, else a ConfigError.
std::string read_file(const std::string& path, const std::string& what = "scenario file");

// The output options that take a FILE and may be given without one.
const std::vector<std::string>& file_options();
// argv without each output option given bare (`--vcd` last, or before another option); their names go
// to `bare` (an option given bare twice is refused).
std::vector<std::string> without_bare_outputs(int argc, const char* const* argv, std::set<std::string>& bare);
// A file the run reads: what it is in messages ("the scenario file", "workload.file's file"), its path.
struct Input {
  std::string what, path;
};
// Checks the output paths (--vcd and its GTKWave save file, --timeline, --presentmon, --results), each
// given or defaulted under ./build/, and fills them into `req`: each must be writable (a file can be
// made beside it), outside the source tree, none of `inputs` and no other output, compared by identity
// (links followed, hard links too; a file not yet made by the path it will have). Nothing is created.
void check_output_paths(const boost::program_options::variables_map& vm, const std::set<std::string>& bare,
                        const std::vector<Input>& inputs, CliRequest& req);
// Creates ./build/ when a default output is there (after every check: a refused run leaves nothing).
void make_default_dir(const CliRequest& req);

}  // namespace gpumodel::cli
