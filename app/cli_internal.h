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
// .ini), the source tree's scenarios/NAME.ini. Refuses (ConfigError) a name that matches nothing,
// with the closest names. Then reads it.
std::string resolve_scenario_file(const std::string& arg);
// The source tree's scenarios/NAME.ini when `name` is a bare name (no '/', no .ini, no file of that
// name here) with such a file, else "".
std::string scenario_named(const std::string& name);
std::string read_file(const std::string& path);

// The output options that take a FILE and may be given without one.
const std::vector<std::string>& file_options();
// argv without each output option given bare (`--vcd` last, or before another option); their names go
// to `bare` (an option given bare twice is refused).
std::vector<std::string> without_bare_outputs(int argc, const char* const* argv, std::set<std::string>& bare);
// Checks the output paths (--vcd, --timeline, --results, --presentmon), each given or defaulted under
// ./build/, and fills them into `req`. Nothing is created.
void check_output_paths(const boost::program_options::variables_map& vm, const std::set<std::string>& bare,
                        CliRequest& req);
// Creates ./build/ when a default output is there (after every check: a refused run leaves nothing).
void make_default_dir(const CliRequest& req);

}  // namespace gpumodel::cli
