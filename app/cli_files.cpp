#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "app/cli_internal.h"
#include "app/data_dir.h"
#include "app/gtkw.h"
#include "app/suggest.h"
#include "hw_model/core/output_file.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace gpumodel::cli {
namespace {

// The source tree this binary was built from (CMake): no default output lands in it. The scenarios
// runnable by name are the data folder's (app/data_dir.h: the installed ones, else this tree's).
const std::string kSourceDir = GPUMODEL_SOURCE_DIR;
const std::string kScenariosDir = data_dir() + "/scenarios";

// The header comment's first sentence, for a variant's line in --list-scenarios.
std::string first_sentence(const std::string& text) {
  std::istringstream in(text);
  std::string line, comment;
  while (std::getline(in, line) && !line.empty() && line[0] == '#') {
    const size_t b = line.find_first_not_of("# ");
    if (b != std::string::npos) comment += (comment.empty() ? "" : " ") + line.substr(b);
  }
  size_t end = comment.find(". ");
  if (end == std::string::npos) end = comment.size();
  std::string s = comment.substr(0, end);
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s.size() > 110) s = s.substr(0, s.rfind(' ', 107)) + " ...";
  return s;
}

// `scenario = NAME` before the first section, or "".
std::string scenario_of(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string s = line.substr(0, line.find('#'));
    const size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    if (s[b] == '[') return "";
    const size_t eq = s.find('=');
    if (eq == std::string::npos || s.substr(b, eq - b).find("scenario") != 0) continue;
    std::string v = s.substr(eq + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r") + 1);
    return v;
  }
  return "";
}

}  // namespace

std::string read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  const std::string shown = "cannot read " + what + " '" + echo_input(path) + "': ";
  if (!fs::exists(path, ec)) throw ConfigError(shown + "no such file");
  if (!fs::is_regular_file(path, ec)) throw ConfigError(shown + "not a regular file");
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxScenarioFileBytes)
    throw ConfigError(shown + "it holds " + std::to_string(size) + " bytes; allowed: a " + what + " of at most " +
                      std::to_string(kMaxScenarioFileBytes) + " bytes (1 MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(shown + std::strerror(errno));
  // Read no more than the bound, whatever the size said (a file that grows while it is read), in chunks: a
  // buffer of the bound's size would be cleared at every read of a file of a few KiB.
  std::string text;
  std::string chunk(64 * 1024, '\0');
  while (text.size() <= kMaxScenarioFileBytes) {
    in.read(chunk.data(), std::streamsize(std::min(chunk.size(), kMaxScenarioFileBytes + 1 - text.size())));
    text.append(chunk.data(), size_t(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) throw ConfigError(shown + "read error");
  if (text.size() > kMaxScenarioFileBytes)
    throw ConfigError(shown + "it holds more than " + std::to_string(kMaxScenarioFileBytes) + " bytes; allowed: a " +
                      what + " of at most 1 MiB");
  return text;
}

std::vector<ScenarioFile> scenario_files() {
  std::map<std::string, ScenarioFile> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kScenariosDir, ec)) {
    if (e.path().extension() != ".ini" || !e.is_regular_file(ec)) continue;
    std::ifstream in(e.path());
    std::ostringstream text;
    text << in.rdbuf();
    const std::string name = e.path().stem().string();
    found[name] = {name, e.path().string(), scenario_of(text.str()), first_sentence(text.str())};
  }
  std::vector<ScenarioFile> out;
  for (const ScenarioInfo& s : scenario_registry()) {
    if (auto it = found.find(s.name); it != found.end()) {
      out.push_back(it->second);
      out.back().summary = s.summary;
      found.erase(it);
    }
    for (auto it = found.begin(); it != found.end();)
      if (it->second.scenario == s.name) {
        out.push_back(it->second);
        out.back().summary = "(" + s.name + ") " + out.back().summary;
        it = found.erase(it);
      } else {
        ++it;
      }
  }
  for (auto& [name, f] : found) out.push_back(f);  // a file naming no registered scenario: it says so when run
  return out;
}

void list_scenarios() {
  const std::vector<ScenarioFile> files = scenario_files();
  if (files.empty()) {  // the source tree is gone: the drivers, which need a file each
    for (auto& sc : scenario_registry())
      std::cout << std::left << std::setw(26) << sc.name << " " << sc.summary << "\n";
    return;
  }
  for (const ScenarioFile& f : files) std::cout << std::left << std::setw(26) << f.name << " " << f.summary << "\n";
}

std::string scenario_named(const std::string& name) {
  std::error_code ec;
  const bool bare = !name.empty() && name.find('/') == std::string::npos && fs::path(name).extension() != ".ini";
  // A file of that name here is what the user means; a directory of that name (a scenario's source
  // folder, run inside scenarios/) is not.
  if (!bare || fs::is_regular_file(name, ec)) return "";
  // The tree the user stands in (a copy they edit) before the one the binary was built from.
  for (const std::string& dir : {std::string("scenarios"), kScenariosDir}) {
    const std::string path = dir + "/" + name + ".ini";
    if (fs::is_regular_file(path, ec)) return path;
  }
  return "";
}

std::string resolve_scenario_file(const std::string& arg) {
  std::error_code ec;
  const bool bare = !arg.empty() && arg.find('/') == std::string::npos && fs::path(arg).extension() != ".ini";
  if (const std::string named = scenario_named(arg); !named.empty()) return named;
  if (fs::exists(arg, ec) || fs::is_symlink(fs::symlink_status(arg, ec))) return arg;
  // Nothing of that name: the closest runnable names, or for a path the closest .ini beside it.
  std::vector<std::string> names;
  std::string shown;
  if (bare || arg.find('/') == std::string::npos) {
    for (const ScenarioFile& f : scenario_files()) names.push_back(f.name);
    shown = fs::path(arg).extension() == ".ini" ? fs::path(arg).stem().string() : arg;
  } else {
    const fs::path dir = fs::path(arg).parent_path();
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".ini") names.push_back((dir / e.path().filename()).string());
    shown = arg;
  }
  const std::string hint = did_you_mean(suggest(shown, names));
  if (bare)
    throw ConfigError("'" + echo_input(arg) + "' is neither a scenario file nor a scenario name (" + kScenariosDir +
                      "/" + echo_input(arg) + ".ini: no such file; gpumodel --list-scenarios lists the names)" + hint);
  throw ConfigError("cannot read scenario file '" + echo_input(arg) + "': no such file" + hint);
}

// ---------------------------------------------------------------------------------------------------
// Outputs

const std::vector<std::string>& file_options() {
  static const std::vector<std::string> o = {"vcd", "timeline", "results", "presentmon"};
  return o;
}

std::vector<std::string> without_bare_outputs(int argc, const char* const* argv, std::set<std::string>& bare) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool next_is_value = i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1] != '\0');
    if (i > 0 && a.size() > 2 && a.compare(0, 2, "--") == 0 && !next_is_value) {
      const std::string name = a.substr(2);
      if (std::find(file_options().begin(), file_options().end(), name) != file_options().end()) {
        if (!bare.insert(name).second) throw ConfigError("command line: --" + name + " given twice");
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

namespace {

// Why `path` cannot take an output file, or "" if it can. Nothing is created: a run refused later
// leaves no empty file behind. `may_create_dir`: its directory is ./build/, made if missing.
std::string unwritable(const std::string& path, bool may_create_dir = false) {
  if (path.empty()) return "the path is empty";
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  // A symbolic link to nothing: writing would create its target somewhere else, or fail after the run.
  if (!fs::exists(st) && fs::is_symlink(fs::symlink_status(path, ec)))
    return "a symbolic link to '" + fs::read_symlink(path, ec).string() + "', which does not exist";
  if (fs::exists(st)) {
    if (fs::is_directory(st)) return "it is a directory";
    if (::access(path.c_str(), W_OK) != 0) return std::strerror(errno);
    // A device or a pipe is written in place; a regular file is replaced whole, from a file made
    // beside it: its folder must take one (root on a read-only mount or /proc cannot).
    if (!fs::is_regular_file(st)) return "";
    return cannot_create_beside(fs::canonical(path, ec).string());
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (may_create_dir && !fs::exists(dir, ec)) {
    if (::access(".", W_OK) != 0) return "cannot create '" + dir.string() + "': " + std::strerror(errno);
    return "";
  }
  if (!fs::is_directory(dir, ec)) return "no such directory '" + dir.string() + "'";
  if (::access(dir.c_str(), W_OK) != 0) return std::strerror(errno);
  return cannot_create_beside(path);
}

// Whether two paths name one file: the same file if both exist (hard links too), else the same path
// once made absolute, its links resolved and `.` and `..` folded ("x", "./x" and "$PWD/x" are one).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  if (fs::exists(a, ec1) && fs::exists(b, ec2)) return fs::equivalent(a, b, ec1);
  return fs::weakly_canonical(fs::absolute(a, ec1), ec1) == fs::weakly_canonical(fs::absolute(b, ec2), ec2);
}

// Where `path` lies in the source tree: its path from the tree's root, or "" outside the tree or in a
// build directory (build/, build-san/ ...: ignored by git).
std::string in_source_tree(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const fs::path rel = p.lexically_relative(fs::weakly_canonical(kSourceDir, ec));
  if (rel.empty() || *rel.begin() == ".." || rel == ".") return "";
  if (rel.begin()->string().rfind("build", 0) == 0) return "";
  return rel.string();
}

// The source tree's directories of tracked files: no output may be written there. (waveforms/ holds
// the GTKWave save files beside the waveforms users write there; the repository ignores *.vcd.)
const std::set<std::string> kSourceDirs = {
    ".ci",      "app",       "bench",     "docs",   "fuzz",  "hw_model",  "kernel_stub", "monitors",
    "platform", "platforms", "scenarios", "sweeps", "tests", "workbench", "workloads",   ".git"};

// Why an output may not go to `path` in the source tree, or "".
std::string in_tracked_dir(const std::string& path) {
  const std::string rel = in_source_tree(path);
  if (rel.empty()) return "";
  const std::string top = fs::path(rel).begin()->string();
  const bool top_level_file = fs::path(rel).parent_path().empty();
  std::error_code ec;
  // At the top, a new file is the user's own (README's `--results r.json`); an existing file there that
  // is not an output (README.md, CMakeLists.txt, .gitignore) is the project's.
  const std::string ext = fs::path(rel).extension().string();
  if (top_level_file && !(fs::exists(path, ec) && (top[0] == '.' || ext == ".md" || ext == ".txt"))) return "";
  if (!top_level_file && !kSourceDirs.count(top)) return "";
  return "it is in the source tree (" + rel + ")";
}

}  // namespace

void check_output_paths(const po::variables_map& vm, const std::set<std::string>& bare,
                        const std::vector<Input>& inputs, CliRequest& req) {
  const std::string stem = fs::path(req.scenario_file).stem().string();
  struct Out {
    std::string opt, what, suffix;
    std::string* path;
  };
  // In the order the run writes them; each checked against every input and the outputs before it.
  const std::vector<Out> outs = {{"vcd", "VCD waveform", ".vcd", &req.opt.vcd_path},
                                 {"timeline", "Trace Event timeline", ".timeline.json", &req.opt.timeline_path},
                                 {"presentmon", "PresentMon CSV", ".presentmon.csv", &req.opt.presentmon_path},
                                 {"results", "results JSON", ".results.json", &req.results_path}};
  struct Written {
    std::string opt, path;  // opt: "--vcd", or "" for the save file beside the waveform
  };
  std::vector<Written> earlier;
  // One output: writable, outside the source tree, no input of the run, no other output. Messages name
  // it as `head` ("--vcd", or "--vcd 'W'" for the save file) and `object` ('FILE', its GTKWave save file 'G').
  auto check = [&](const std::string& opt, const std::string& head, const std::string& object, const std::string& path,
                   bool defaulted) {
    const std::string shown = opt.empty() ? head + ": " + object + " (written beside it)" : head + " " + object;
    if (const std::string why = unwritable(path, defaulted); !why.empty())
      throw ConfigError(head + ": cannot write " + object + ": " + why);
    for (const Input& in : inputs)
      if (same_file(path, in.path))
        throw ConfigError(shown + " is " + in.what + ", which the run reads; name another file");
    if (const std::string why = in_tracked_dir(path); !why.empty())
      throw ConfigError(head + ": will not write " + object + ": " + why + "; name a file outside it, or under build/");
    for (const Written& e : earlier)
      if (same_file(path, e.path))
        throw ConfigError(opt.empty() ? shown + " is " + e.opt + (e.opt.back() == 's' ? "'" : "'s") + " file '" +
                                            echo_input(e.path) + "'; name one of them otherwise"
                                      : opt + " and " + e.opt + " name the same file '" + echo_input(path) +
                                            "'; name two files");
    earlier.push_back({opt, path});
  };
  for (const Out& o : outs) {
    const bool given = vm.count(o.opt) != 0, defaulted = bare.count(o.opt) != 0;
    if (given && defaulted) throw ConfigError("command line: --" + o.opt + " given twice");
    if (!given && !defaulted) continue;
    const std::string path = given ? vm[o.opt].as<std::string>() : "build/" + stem + o.suffix;
    if (defaulted) {
      req.default_dir = "build";
      std::error_code ec;
      if (fs::exists("build", ec) && !fs::is_directory("build", ec))
        throw ConfigError("--" + o.opt + ": the default '" + path + "' needs a directory 'build', and 'build' is a " +
                          "file; name a FILE: --" + o.opt + " FILE");
      if (const std::string rel = in_source_tree("build"); !rel.empty())
        throw ConfigError("--" + o.opt + ": the default '" + path + "' would be in the source tree (" + rel +
                          "); run from the repository's root or elsewhere, or name a FILE: --" + o.opt + " FILE");
    }
    check("--" + o.opt, "--" + o.opt, "'" + echo_input(path) + "'", path, defaulted);
    *o.path = path;
    req.outputs.emplace_back(o.what, path);
  }
  // The waveform's GTKWave save file, beside it (app/gtkw.h): written after the waveform, listed after it.
  const std::string& vcd = req.opt.vcd_path;
  if (vcd.empty() || !writes_gtkw(vcd)) return;
  const std::string g = gtkw_path_for(vcd);
  if (same_file(g, vcd))
    throw ConfigError("--vcd '" + vcd + "': its GTKWave save file is written beside it as the same name with " +
                      ".gtkw, which is the waveform itself; name the waveform FILE.vcd");
  check("", "--vcd '" + echo_input(vcd) + "'", "its GTKWave save file '" + echo_input(g) + "'", g,
        bare.count("vcd") != 0);
  req.outputs.insert(req.outputs.begin() + 1, {"GTKWave save file", g});
}

void make_default_dir(const CliRequest& req) {
  std::error_code ec;
  if (req.default_dir.empty() || fs::is_directory(req.default_dir, ec)) return;
  if (!fs::create_directories(req.default_dir, ec))
    throw ConfigError("cannot create '" + req.default_dir + "' for the outputs: " + ec.message());
}

}  // namespace gpumodel::cli
