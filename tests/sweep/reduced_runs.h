// The reduced runs both sweeps use: per scenario or file, overrides that shrink its workload so a whole
// sweep takes minutes; which keys each file sweeps; every scenario file with its scenario.
#pragma once
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hw_model/core/params.h"

namespace sweep {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The file's reduced-run overrides, in the order given (every file's first, then its scenario's, then
// the file's own; a later one replaces an earlier one's key).
KeyValues reduced_overrides(const std::string& file, const std::string& scenario);

// The same as command-line arguments (--key=value), without the keys a sweep sets itself.
std::vector<std::string> reduced_args(const std::string& file, const std::string& scenario,
                                      const std::set<std::string>& swept);

// Whether `file`'s scenario sweeps key `s`: the files that share another file's driver sweep their own
// keys and their machinery's, not the whole platform again.
bool in_focus(const std::string& scenario, const gpumodel::ParamSpec& s);

// Every scenario file in `dir` with its scenario, sorted; each registered scenario must have one (else
// the usage, exit 2).
KeyValues scenario_files(const std::string& dir);

std::string read_text(const std::string& path);

}  // namespace sweep
