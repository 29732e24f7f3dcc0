#include "app/platform_file.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli_internal.h"
#include "app/data_dir.h"
#include "app/run.h"
#include "app/sha256.h"
#include "app/suggest.h"

namespace fs = std::filesystem;

namespace gpumodel::cli {
namespace {

const std::string kPlatformsDir = data_dir() + "/platforms";

// The keys of the software and of the run, not of the machine: a platform file leaves them to the
// scenario file (kmd.paging_va_mb, for one, means something only when the user set it).
const std::set<std::string> kNotMachine = {"kmd", "vidsch", "vidmm", "os", "sim", "trace", "monitor"};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool is_path(const std::string& arg) {
  return arg.find('/') != std::string::npos || fs::path(arg).extension() == ".ini";
}

// `where`: the name's origin, for a name that is no platform.
std::string resolve(const std::string& arg, const std::string& where) {
  if (is_path(arg)) return arg;  // read_file says what is wrong with it
  std::error_code ec;
  if (!arg.empty())
    for (const std::string& dir : {std::string("platforms"), kPlatformsDir})
      if (const std::string path = dir + "/" + arg + ".ini"; fs::is_regular_file(path, ec)) return path;
  const std::vector<std::string> names = platform_names();
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError(where + " = '" + echo_input(arg) +
                    "' is not a platform; allowed: " + (list.empty() ? "none found in " + kPlatformsDir : list) +
                    " (gpumodel --list-platforms), or a platform file's path" + did_you_mean(suggest(arg, names)));
}

// The first sentence of the file's leading comment lines.
std::string summary_of(const std::string& text) {
  std::istringstream in(text);
  std::string line, comment;
  while (std::getline(in, line) && !trim(line).empty() && trim(line)[0] == '#') {
    const std::string c = trim(trim(line).substr(1));
    if (!c.empty()) comment += (comment.empty() ? "" : " ") + c;
  }
  const size_t end = comment.find(". ");
  std::string s = comment.substr(0, end);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// Checks one key of a platform file: a platform key of the machine, not an instance key.
void check_key(const ParamSet& ps, const std::string& key, const std::string& where) {
  if (!ps.known(key)) {  // the suggestions: every platform key (a list built only for the message)
    std::vector<std::string> platform_keys;
    for (auto& [name, s] : ps.specs())
      if (s.owners.empty() && !kNotMachine.count(name.substr(0, name.find('.')))) platform_keys.push_back(name);
    throw ConfigError(where + ": unknown key '" + echo_input(key) + "' (gpumodel --list-params lists every key)" +
                      did_you_mean(suggest(key, platform_keys)));
  }
  if (!ps.specs().count(key))
    throw ConfigError(where + ": key '" + key + "' is one instance's (" + ps.class_key_of(key) +
                      "); a platform file sets the class keys, an instance's own value belongs in the scenario file");
  const ParamSpec& s = ps.spec(key);
  if (!s.owners.empty())
    throw ConfigError(where + ": key '" + key + "' belongs to scenario '" + s.owners.front() +
                      "'; a platform file sets platform keys (gpumodel --list-params lists them first)");
  const std::string section = key.substr(0, key.find('.'));
  if (kNotMachine.count(section))
    throw ConfigError(where + ": key '" + key + "' is the " +
                      (section == "sim" || section == "trace" || section == "monitor" ? "run's" : "driver's or OS's") +
                      ", not the machine's; allowed in a platform file: keys of every section but kmd, vidsch, "
                      "vidmm, os, sim, trace and monitor (set it in the scenario file)");
}

// Reads a platform file's lines into its entries, each key checked; values are checked when set.
PlatformFile parse(const std::string& raw, const std::string& path, const ParamSet& ps) {
  const std::string where = "platform file '" + echo_input(path) + "'";
  if (const size_t nul = raw.find('\0'); nul != std::string::npos) {
    const long line = 1 + std::count(raw.begin(), raw.begin() + long(nul), '\n');
    throw ConfigError(where + ": line " + std::to_string(line) + " holds a NUL byte; a platform file is text");
  }
  std::string text = raw.compare(0, 3, "\xEF\xBB\xBF") == 0 ? raw.substr(3) : raw;
  text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
  PlatformFile f;
  f.path = path;
  f.name = fs::path(path).stem().string();
  f.sha256 = sha256_hex(raw);
  f.summary = summary_of(text);
  std::istringstream in(text);
  std::string line, source;  // source: the comment lines above the current line
  std::set<std::string> seen;
  for (long n = 1; std::getline(in, line); ++n) {
    const std::string t = trim(line);
    if (t.empty()) {
      source.clear();
      continue;
    }
    if (t[0] == '#') {
      const std::string c = trim(t.substr(1));
      if (!c.empty()) source += (source.empty() ? "" : " ") + c;
      continue;
    }
    const std::string at = where + ": line " + std::to_string(n) + " '" + echo_input(line) + "'";
    if (t[0] == '[') throw ConfigError(at + ": a platform file writes whole keys (link.gen = 4), no [section]");
    const size_t eq = t.find('=');
    if (eq == std::string::npos) throw ConfigError(at + " is not key = value");
    PlatformEntry e{trim(t.substr(0, eq)), trim(t.substr(eq + 1, t.find('#', eq) - eq - 1)), source, n};
    source.clear();
    check_key(ps, e.key, where);
    if (!seen.insert(e.key).second) throw ConfigError(where + ": key '" + e.key + "' given twice");
    if (e.source.rfind("source:", 0) != 0 && e.source.rfind("assumption:", 0) != 0)
      throw ConfigError(where + ": key '" + e.key + "' has no source: the comment line directly above it must " +
                        "start with 'source:' (where the value comes from) or 'assumption:' (and how uncertain)");
    f.entries.push_back(e);
  }
  return f;
}

}  // namespace

std::vector<std::string> platform_names() {
  std::set<std::string> names;
  std::error_code ec;
  for (const std::string& dir : {std::string("platforms"), kPlatformsDir})
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".ini" && e.is_regular_file(ec)) names.insert(e.path().stem().string());
  return {names.begin(), names.end()};
}

PlatformFile apply_platform_file(const std::string& arg, const std::string& where, ParamSet& ps) {
  const std::string path = resolve(arg, where);
  PlatformFile f = parse(read_file(path, "platform file"), path, ps);
  for (const PlatformEntry& e : f.entries)
    ps.set_platform_default(e.key, e.value, "platform file '" + echo_input(path) + "'");
  return f;
}

namespace {
// Every platform file by name, read and checked against the parameters.
std::vector<PlatformFile> all_platforms() {
  ParamSet ps;
  declare_all_params(ps);
  std::vector<PlatformFile> out;
  for (const std::string& n : platform_names()) out.push_back(apply_platform_file(n, "platform", ps));
  return out;
}
}  // namespace

void list_platforms() {
  for (const PlatformFile& f : all_platforms())
    std::cout << std::left << std::setw(26) << f.name << " " << f.summary
              << (f.name == kDefaultPlatform ? " (the default)" : "") << "\n";
}

void list_platforms_json() {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const PlatformFile& f : all_platforms()) {
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (const PlatformEntry& e : f.entries)
      entries.push_back({{"key", e.key}, {"value", e.value}, {"source", e.source}});
    j.push_back(
        {{"name", f.name}, {"path", f.path}, {"sha256", f.sha256}, {"summary", f.summary}, {"entries", entries}});
  }
  std::cout << j.dump(1) << "\n";
}

}  // namespace gpumodel::cli
