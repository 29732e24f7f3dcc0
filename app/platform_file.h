// Platform files (platforms/NAME.ini): a named machine as values of the platform keys, each value with
// its source. A scenario file names one (`platform = NAME`, desktop_gen4 when it names none); the
// command line's --platform=NAME|PATH picks another. Precedence: the built-in defaults < the platform
// file < the scenario file's own keys < the command line's overrides.
//
// A platform file, line by line: blank, a `#` comment, or `section.key = value` (whole keys, no
// [section]); the comment lines directly above a key (no blank line between) are its source and must
// start with `source:` or `assumption:`. The file's first comment lines describe it (their first
// sentence is its line in --list-platforms).
#pragma once
#include <string>
#include <vector>

#include "hw_model/core/params.h"

namespace gpumodel::cli {

// The platform a scenario file that names none runs on: the built-in defaults, written out.
inline const std::string kDefaultPlatform = "desktop_gen4";

struct PlatformEntry {
  std::string key, value, source;
  long line = 0;
};

struct PlatformFile {
  std::string name;     // the file's stem
  std::string path;     // as found
  std::string sha256;   // of its bytes
  std::string summary;  // the first sentence of its leading comment
  std::vector<PlatformEntry> entries;
};

// The names of the platform files in ./platforms/ and the source tree's platforms/, sorted.
std::vector<std::string> platform_names();

// The platform file `arg` names: a path (it holds '/' or ends in .ini) as given, read as it is; a name:
// ./platforms/NAME.ini under the working directory, else the source tree's platforms/NAME.ini. Its
// bytes read (at most kMaxScenarioFileBytes) and every line checked; then each value set in `ps` as the
// platform's default (ParamSet::set_platform_default). `where` heads a message about the name ("--platform",
// "scenario file 'F': platform"). Any fault is a ConfigError naming the file and the key.
PlatformFile apply_platform_file(const std::string& arg, const std::string& where, ParamSet& ps);

// --list-platforms: one line a platform, its name and description.
void list_platforms();
// --list-platforms-json, for tools (the docs generator): [{name, path, sha256, summary, entries: [{key,
// value, source}]}].
void list_platforms_json();

}  // namespace gpumodel::cli
