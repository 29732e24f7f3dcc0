#include "app/cli.h"
#include "app/gtkw.h"
#include "app/sha256.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include <boost/program_options.hpp>

#include "app/cli_internal.h"
#include "app/data_dir.h"
#include "app/platform_file.h"
#include "app/suggest.h"
#include "hw_model/core/output_file.h"

namespace po = boost::program_options;

namespace gpumodel {
namespace {

const char* kUsage =
    "usage: gpumodel SCENARIO.ini|NAME [--platform=NAME|FILE] [--section.key=value ...] [--seed N] [--vcd [FILE]]\n"
    "                [--timeline [FILE]] [--results [FILE]] [--presentmon [FILE.csv]] [--quiet]\n"
    "       gpumodel --list-scenarios | --list-platforms | --list-params | --list-params-json | --help\n"
    "       gpumodel sweep SWEEP.ini [...]     a parameter sweep, local or on Slurm (sweep --help)\n"
    "       gpumodel plot MERGED.csv [...]     a metric against an axis, PNG and SVG (plot --help)\n"
    "       gpumodel compare A.json B.json     per-metric regression gate (compare --help)\n"
    "       gpumodel sensitivity NAME --metric M  which assumptions decide a figure (sensitivity --help)\n";

std::string owners_of(const ParamSpec& s) {
  std::string o;
  for (auto& n : s.owners) o += (o.empty() ? "'" : ", '") + n + "'";
  return (s.owners.size() > 1 ? "scenarios " : "scenario ") + o;
}

// "; did you mean ..." for an unknown key: among the keys `scenario` has ("" every key), with a key
// = value of an enum for a shared word (c6: cpu.idle_state=C6) and, for an instance key
// (gpu.node1.reset_n), the keys of that instance; failing those, other scenarios' keys, saying whose.
// `dashes` shows them as options (--cpu.c6_exit_ns).
std::string key_hint(const ParamSet& ps, const std::string& scenario, const std::string& key, bool dashes = false,
                     const std::vector<std::string>& options = {}) {
  // A setting's documented name (the registry's TdrDelay, with or without a section): its key.
  if (const auto [doc, k] = ps.documented_as(key); !k.empty())
    return did_you_mean({(dashes ? "--" : "") + k}, {" (" + doc + ")"});
  const size_t last = key.rfind('.');
  const std::string instance = last != std::string::npos && key.find('.') != last ? key.substr(0, last + 1) : "";
  for (const bool others : {false, true}) {
    std::vector<Candidate> c;
    for (const std::string& o : options) c.push_back({o, false});
    std::map<std::string, std::string> whose;
    for (auto& [name, spec] : ps.specs()) {
      const bool mine = scenario.empty() || ps.visible_to(spec, scenario);
      if (mine == others) continue;
      c.push_back({name, false});
      if (others) whose[name] = " (" + owners_of(spec) + ")";
      for (const std::string& v :
           spec.kind == ParamKind::Enum ? spec.as_seen_by(scenario).choices : std::vector<std::string>{})
        c.push_back({name + "=" + v, true});
      if (!instance.empty() && !others)
        if (const std::string k = instance + name.substr(name.find('.') + 1); ps.known(k)) c.push_back({k, false});
    }
    const std::vector<std::string> found = suggest(key, c);
    if (found.empty()) continue;
    std::vector<std::string> shown, notes;
    for (const std::string& f : found) {
      const bool option = std::find(options.begin(), options.end(), f) != options.end();
      shown.push_back((dashes || option ? "--" : "") + f);
      notes.push_back(whose.count(f) ? whose.at(f) : "");
    }
    return did_you_mean(shown, notes);
  }
  return "";
}

// ps.set, with "; did you mean" for an enum or boolean value that is close to an allowed one.
void set_value(ParamSet& ps, const std::string& scenario, const std::string& key, const std::string& value,
               const std::string& origin) {
  try {
    ps.set(key, value, origin);
  } catch (const ConfigError& e) {
    const ParamSpec s = ps.spec(key).as_seen_by(scenario);
    // A named-or-form value (display.mode) that is no valid form: the named modes nearest to what it says.
    if (s.kind == ParamKind::NamedOrForm) {
      // The value written as the form is (lower case, no spaces, no "hz"): a mode the user meant exactly.
      std::string form;
      for (char c : value)
        if (c != ' ') form += char(std::tolower(static_cast<unsigned char>(c)));
      if (const size_t hz = form.rfind("hz"); hz != std::string::npos && hz + 2 == form.size()) form.erase(hz);
      const bool named = std::find(s.choices.begin(), s.choices.end(), form) != s.choices.end();
      if (form != value && (named || (s.accept && s.accept(form).empty())))
        throw ConfigError(e.what() + did_you_mean({form}));
      throw ConfigError(e.what() + did_you_mean(nearest_modes(value, s.choices)));
    }
    const std::vector<std::string> allowed = s.kind == ParamKind::Enum   ? s.choices
                                             : s.kind == ParamKind::Bool ? std::vector<std::string>{"true", "false"}
                                                                         : std::vector<std::string>{};
    throw ConfigError(e.what() + did_you_mean(suggest(value, allowed)));
  }
}

}  // namespace

std::string load_scenario_text(const std::string& raw, const std::string& label, ParamSet& ps,
                               const std::string& platform_arg, PlatformRecord* used) {
  const std::string where = "scenario file '" + echo_input(label) + "'";
  if (const size_t nul = raw.find('\0'); nul != std::string::npos) {
    const long line = 1 + std::count(raw.begin(), raw.begin() + long(nul), '\n');
    throw ConfigError(where + ": line " + std::to_string(line) + " holds a NUL byte; a scenario file is text");
  }
  // Editors on Windows write a byte-order mark and CRLF line ends; both mean plain text.
  std::string text = raw.compare(0, 3, "\xEF\xBB\xBF") == 0 ? raw.substr(3) : raw;
  text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
  // Every line is blank, a comment, [section] or key = value, as Boost reads them ('#' starts a
  // comment). Checked here, with the line number: Boost's own message for a bad line substitutes the
  // line into a "%invalid_line%" template and loops forever when the line holds that placeholder.
  {
    std::istringstream lines(text);
    std::string line;
    for (long n = 1; std::getline(lines, line); ++n) {
      std::string s = line.substr(0, line.find('#'));
      const size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
      s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
      if (s.empty() || (s.front() == '[' && s.back() == ']') || s.find('=') != std::string::npos) continue;
      throw ConfigError(where + ": line " + std::to_string(n) + " '" + echo_input(line) +
                        "' is neither [section] nor key = value");
    }
  }
  std::istringstream in(text);
  po::options_description keys;
  keys.add_options()("scenario", po::value<std::string>());
  keys.add_options()("platform", po::value<std::string>());
  for (auto& [name, spec] : ps.specs()) keys.add_options()(name.c_str(), po::value<std::string>());
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::parse_config_file(in, keys, /*allow_unregistered=*/true);
  } catch (const po::invalid_syntax& e) {  // (not e.what(): see above)
    throw ConfigError(where + ": malformed (boost::program_options syntax error " + std::to_string(int(e.kind())) +
                      ")");
  } catch (const po::error& e) {
    throw ConfigError(where + ": " + e.what());
  }
  std::string scenario, platform;
  bool platform_given = false;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> values;
  for (auto& o : parsed.options) {
    const std::string& key = o.string_key;
    if (!seen.insert(key).second) throw ConfigError(where + ": key '" + echo_input(key) + "' given twice");
    if (o.unregistered && !ps.known(key))  // an instance key ([gpu.node1] reset_ns) is known, not registered
      throw ConfigError(where + ": unknown key '" + echo_input(key) + "' (gpumodel --list-params lists every key)" +
                        key_hint(ps, find_scenario(scenario) ? scenario : "", key));
    const std::string value = o.value.empty() ? "" : o.value.front();
    if (key == "scenario")
      scenario = value;
    else if (key == "platform")
      platform = value, platform_given = true;
    else
      values.emplace_back(key, value);
  }
  if (scenario.empty()) throw ConfigError(where + ": missing 'scenario = NAME' before the first section");
  if (!find_scenario(scenario)) {
    std::string known;
    for (auto& s : scenario_registry()) known += (known.empty() ? "" : ", ") + s.name;
    std::vector<std::string> names;
    for (auto& s : scenario_registry()) names.push_back(s.name);
    throw ConfigError(where + ": scenario = '" + echo_input(scenario) + "' is not a scenario; allowed: " + known +
                      did_you_mean(suggest(scenario, names)));
  }
  if (platform_given && platform.empty())
    throw ConfigError(where + ": platform = '' is empty; allowed: a platform's name (gpumodel --list-platforms) or " +
                      "a platform file's path, or no 'platform =' line for " + cli::kDefaultPlatform);
  ps.apply_scenario_defaults(scenario);
  // The platform's values under the file's own keys: the command line's platform, else the file's.
  // A relative path in the file is taken from the file's folder, as a path key's value is.
  const bool file_path =
      !platform.empty() && platform[0] != '/' && label.find('/') != std::string::npos &&
      (platform.find('/') != std::string::npos || std::filesystem::path(platform).extension() == ".ini");
  const std::string chosen = !platform_arg.empty() ? platform_arg
                             : platform.empty()    ? cli::kDefaultPlatform
                             : file_path           ? label.substr(0, label.rfind('/') + 1) + platform
                                                   : platform;
  const cli::PlatformFile pf =
      cli::apply_platform_file(chosen, !platform_arg.empty() ? "--platform" : where + ": platform", ps);
  if (used) {
    *used = {pf.name, pf.path, pf.sha256, {}};
    for (const cli::PlatformEntry& e : pf.entries) used->keys.push_back(e.key);
  }
  for (auto& [key, value] : values) {
    const ParamSpec& s = ps.spec(key);
    if (!ps.visible_to(s, scenario))
      throw ConfigError(where + ": key '" + key + "' belongs to " + owners_of(s) + ", not '" + scenario + "'");
    // A relative path in a scenario file is taken from the file's folder.
    if (s.kind == ParamKind::Path && !value.empty() && value[0] != '/' && label.find('/') != std::string::npos)
      ps.set(key, label.substr(0, label.rfind('/') + 1) + value, where);
    else
      set_value(ps, scenario, key, value, where);
  }
  return scenario;
}

void apply_override(ParamSet& ps, const std::string& scenario, const std::string& key, const std::string& value,
                    std::vector<std::string>& seen) {
  if (!ps.known(key))
    throw ConfigError("command line: unknown key '" + echo_input(key) + "' (gpumodel --list-params lists every key)" +
                      key_hint(ps, scenario, key, true));
  if (std::find(seen.begin(), seen.end(), key) != seen.end())
    throw ConfigError("command line: key '" + key + "' given twice");
  seen.push_back(key);
  const ParamSpec& s = ps.spec(key);
  if (!ps.visible_to(s, scenario))
    throw ConfigError("command line: key '" + key + "' belongs to " + owners_of(s) + ", not '" + scenario + "'");
  set_value(ps, scenario, key, value, "command line");
}

namespace {

nlohmann::ordered_json param_json(const ParamSpec& s) {
  static const char* kKinds[] = {"int", "real", "bool", "enum", "path", "text", "named_or_form"};
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["kind"] = kKinds[int(s.kind)];
  j["default"] = s.default_value;
  j["unit"] = s.unit;
  j["allowed"] = s.allowed();
  j["source"] = s.source;
  return j;
}

// The same as list_params, for tools (the docs/ generator): {"platform": [...], "scenarios": [{"name",
// "summary", "params": [...]}]}; each parameter {name, kind, default, unit, allowed, source}.
void list_params_json(const ParamSet& ps) {
  nlohmann::ordered_json j;
  j["platform"] = nlohmann::ordered_json::array();
  for (auto& [name, s] : ps.specs())
    if (s.owners.empty()) j["platform"].push_back(param_json(s));
  j["scenarios"] = nlohmann::ordered_json::array();
  for (auto& sc : scenario_registry()) {
    nlohmann::ordered_json e{{"name", sc.name}, {"summary", sc.summary}, {"params", nlohmann::ordered_json::array()}};
    for (auto& [name, s] : ps.specs())
      if (!s.owners.empty() && ps.visible_to(s, sc.name)) e["params"].push_back(param_json(s.as_seen_by(sc.name)));
    j["scenarios"].push_back(e);
  }
  std::cout << j.dump(1) << "\n";
}

void list_params(const ParamSet& ps) {
  auto print = [&](const std::string& owner) {
    for (auto& [name, shared] : ps.specs()) {
      if (owner.empty() ? !shared.owners.empty() : !ps.visible_to(shared, owner) || shared.owners.empty()) continue;
      const ParamSpec s = shared.as_seen_by(owner);
      std::cout << "  " << std::left << std::setw(34) << name << " default " << s.default_value
                << (s.unit.empty() || s.kind == ParamKind::Enum || s.kind == ParamKind::Bool ||
                            s.kind == ParamKind::Path || s.kind == ParamKind::NamedOrForm
                        ? ""
                        : " " + s.unit)
                << "\n      allowed: " << s.allowed() << "\n      source:  " << s.source << "\n";
    }
  };
  std::cout << "Platform parameters (every scenario):\n";
  print("");
  std::cout << "\n" << ps.instance_help();
  for (auto& sc : scenario_registry()) {
    std::cout << "\nScenario " << sc.name << " (" << sc.summary << "):\n";
    print(sc.name);
  }
}

std::string fmt_value(const nlohmann::ordered_json& v) {
  if (v.is_number_float()) {
    std::ostringstream os;
    os << std::setprecision(10) << v.get<double>();
    return os.str();
  }
  return v.dump();
}

}  // namespace

namespace {

po::options_description cli_options() {
  po::options_description opts("options");
  opts.add_options()("help,h", "this text")("list-params", "print every parameter with its default, range and source")(
      "list-params-json", "")("list-scenarios", "")("list-platforms", "")("list-platforms-json", "")(
      "platform", po::value<std::string>(), "the platform: a name or a platform file")(
      "seed", po::value<std::string>(), "random seed (unsigned integer), default 1")("vcd", po::value<std::string>(),
                                                                                     "write a VCD waveform to FILE")(
      "timeline", po::value<std::string>(), "write a Trace Event JSON timeline to FILE")("quiet", "")("progress", "")(
      "results", po::value<std::string>(), "write results as JSON to FILE")(
      "presentmon", po::value<std::string>(), "write one PresentMon 2.x CSV row per present to FILE")(
      "scenario-file", po::value<std::vector<std::string>>(), "");
  return opts;
}

// The options Boost knows, stored in `vm`; the rest (parameter overrides, unknown options) stay in the
// returned options as unregistered.
// An output option given bare (`--vcd` last or before another option) is left out and named in `bare`.
po::parsed_options parse_options(int argc, const char* const* argv, po::variables_map& vm,
                                 std::set<std::string>& bare) {
  const po::options_description opts = cli_options();
  po::positional_options_description pos;
  pos.add("scenario-file", -1);
  po::parsed_options parsed(nullptr);
  std::vector<std::string> args = cli::without_bare_outputs(argc, argv, bare);
  args.erase(args.begin());  // the program's name
  try {
    parsed = po::command_line_parser(args)
                 .options(opts)
                 .positional(pos)
                 .allow_unregistered()
                 .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                 .run();
    po::store(parsed, vm);
  } catch (const po::error& e) {
    throw ConfigError(std::string("command line: ") + e.what());
  }
  return parsed;
}

// --help and the --list-* options: an action that runs nothing. Run otherwise.
CliRequest::Action listing_action(const po::variables_map& vm) {
  if (vm.count("help")) return CliRequest::Action::Help;
  if (vm.count("list-params")) return CliRequest::Action::ListParams;
  if (vm.count("list-params-json")) return CliRequest::Action::ListParamsJson;
  if (vm.count("list-scenarios")) return CliRequest::Action::ListScenarios;
  if (vm.count("list-platforms")) return CliRequest::Action::ListPlatforms;
  if (vm.count("list-platforms-json")) return CliRequest::Action::ListPlatformsJson;
  return CliRequest::Action::Run;
}

std::string the_scenario_file(const po::variables_map& vm) {
  const auto files =
      vm.count("scenario-file") ? vm["scenario-file"].as<std::vector<std::string>>() : std::vector<std::string>{};
  // `gpumodel --vcd fence_signal`: the output option took the scenario as its FILE.
  for (const std::string& o : cli::file_options()) {
    const std::string v = files.empty() && vm.count(o) ? vm[o].as<std::string>() : "";
    const bool named = v.size() > 4 && v.compare(v.size() - 4, 4, ".ini") == 0;
    if (named || !cli::scenario_named(v).empty())
      throw ConfigError("no scenario file given: --" + o + " took '" + echo_input(v) +
                        "' as its FILE; name the scenario first (gpumodel " + echo_input(v) + " --" + o +
                        "), or write --" + o + "=FILE");
  }
  if (files.size() != 1)
    throw ConfigError(files.empty() ? std::string("no scenario file given (gpumodel --help)")
                                    : "one scenario file expected, got " + std::to_string(files.size()) +
                                          " (write overrides as --section.key=value)");
  return files.front();
}

// The parameters' integer grammar: decimal without a leading zero, or 0x.. hexadecimal.
uint64_t parse_seed(const std::string& s) {
  const std::string why = integer_grammar(s);
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = why.empty() && s[0] != '-' ? std::strtoull(s.c_str(), &end, hex ? 16 : 10) : 0;
  if (!why.empty() || s[0] == '-' || errno)
    throw ConfigError("--seed = '" + echo_input(s) + "' " + (why.empty() ? std::string("is out of range") : why) +
                      "; allowed: an unsigned 64-bit integer, decimal or 0x.. hexadecimal");
  return v;
}

// Every --section.key=value of the command line, applied over the scenario file.
void apply_overrides(const po::parsed_options& parsed, const std::string& scenario, ParamSet& ps) {
  std::vector<std::string> seen;
  for (auto& o : parsed.options) {
    if (!o.unregistered) continue;
    const std::string tok = o.original_tokens.empty() ? o.string_key : o.original_tokens.front();
    if (o.string_key.find('.') == std::string::npos)  // not a parameter: an option gpumodel lacks
      throw ConfigError("command line: unknown option '" + echo_input(tok) + "' (gpumodel --help lists the options)" +
                        key_hint(ps, scenario, o.string_key, true,
                                 {"help", "list-params", "list-params-json", "list-scenarios", "list-platforms",
                                  "platform", "seed", "quiet", "vcd", "timeline", "results", "presentmon"}));
    if (o.value.empty() || tok.find('=') == std::string::npos)
      throw ConfigError("command line: '" + echo_input(tok) + "' needs a value: --section.key=value");
    apply_override(ps, scenario, o.string_key, o.value.front(), seen);
  }
}

}  // namespace

CliRequest parse_command_line(int argc, const char* const* argv, ParamSet& ps) {
  po::variables_map vm;
  std::set<std::string> bare;
  const po::parsed_options parsed = parse_options(argc, argv, vm, bare);
  CliRequest req;
  req.action = listing_action(vm);
  if (req.action != CliRequest::Action::Run) return req;
  const std::string file = the_scenario_file(vm);
  if (vm.count("seed")) req.opt.seed = parse_seed(vm["seed"].as<std::string>());
  req.scenario_file = cli::resolve_scenario_file(file);
  const std::string text = cli::read_file(req.scenario_file);
  req.scenario_sha256 = sha256_hex(text);
  if (vm.count("platform") && vm["platform"].as<std::string>().empty())
    throw ConfigError(
        "--platform = '' is empty; allowed: a platform's name (gpumodel --list-platforms) or a "
        "platform file's path");
  req.opt.scenario = load_scenario_text(text, req.scenario_file, ps,
                                        vm.count("platform") ? vm["platform"].as<std::string>() : "", &req.platform);
  apply_overrides(parsed, req.opt.scenario, ps);
  if (vm.count("quiet") && vm.count("progress"))
    throw ConfigError("--quiet and --progress contradict each other; give one");
  // The progress line: on a terminal unless --quiet; --progress forces it (a log file, a test).
  req.opt.progress = vm.count("progress") || (!vm.count("quiet") && ::isatty(2));
  req.quiet = vm.count("quiet") != 0;
  // Every file the run reads: no output may be one of them.
  std::vector<cli::Input> inputs = {{"the scenario file", req.scenario_file}, {"the platform file", req.platform.file}};
  for (auto& [name, spec] : ps.specs())
    if (spec.kind == ParamKind::Path && ps.visible_to(spec, req.opt.scenario) && !ps.get_path(name).empty())
      inputs.push_back({"the input " + name + " = '" + echo_input(ps.get_path(name)) + "'", ps.get_path(name)});
  cli::check_output_paths(vm, bare, inputs, req);
  if (!req.opt.presentmon_path.empty() && !find_scenario(req.opt.scenario)->presents) {
    std::string those;
    for (const ScenarioInfo& i : scenario_registry())
      if (i.presents) those += (those.empty() ? "" : ", ") + i.name;
    throw ConfigError("--presentmon: scenario '" + req.opt.scenario + "' presents no frames; allowed with " + those);
  }
  // A key another implies, set unless the user set it; then a combination the scenario cannot run is
  // bad input, refused before anything is printed, built or created.
  req.implied = apply_implications(ps, req.opt.scenario);
  try {
    validate_scenario(ps, req.opt.scenario);
  } catch (const ConfigError& e) {
    // A refusal that an implied key led to names the key the user gave, and one that names a value of the
    // platform file says so, so the message says what to change.
    std::string why = e.what();
    for (const Implied& i : req.implied)
      why += "; " + i.key + " = " + i.value + " was implied by " + i.because + " (set " + i.key + " to choose)";
    for (const std::string& k : req.platform.keys)
      if (!ps.was_set(k) && std::string(e.what()).find(k + " = ") != std::string::npos)
        why += "; " + k + " = " + value_text(ps, k) + " is the platform " + req.platform.name + "'s (" +
               req.platform.file + "): choose another with --platform, or set " + k + " in the scenario file";
    throw ConfigError(why);
  }
  cli::make_default_dir(req);
  return req;
}

namespace {

void print_help() {
  std::cout << kUsage << "\n"
            << "options:\n"
               "  -h [ --help ]          this text\n"
               "  --list-scenarios       every NAME gpumodel NAME runs, one line each\n"
               "  --list-platforms       every platform --platform=NAME selects, one line each\n"
               "  --list-params          print every parameter with its default, range and source\n"
               "  --list-params-json     the same as JSON, for tools\n"
               "  --list-platforms-json  every platform file's keys, values and sources as JSON, for tools\n"
               "  --seed N               random seed (unsigned integer), default 1\n"
               "  --vcd [FILE]           write a VCD waveform to FILE and its GTKWave save file beside it (FILE's\n"
               "                         extension replaced by .gtkw: run.vcd -> run.gtkw)\n"
               "  --timeline [FILE]      write a timeline to FILE: Trace Event JSON (Chrome DevTools Performance\n"
               "                         panel \"Load profile\", ui.perfetto.dev, speedscope: each reads it locally)\n"
               "  --quiet                no progress line, no line for implied keys or outputs written\n"
               "  --results [FILE]       write results as JSON to FILE\n"
               "  --presentmon [FILE]    write one PresentMon 2.x CSV row per present (scenarios that present)\n"
               "  --platform=NAME|FILE   the platform (./platforms/NAME.ini, else the source tree's), in place\n"
               "                         of the scenario file's `platform =` (default desktop_gen4)\n"
               "  --section.key=value    override a parameter of the scenario file\n"
               "\nNAME runs ./scenarios/NAME.ini where there is one, else the source tree's scenarios/NAME.ini\n"
               "(--list-scenarios lists the names); the run prints, and the results record, the file that ran\n"
               "and its SHA-256, and the platform's.\n"
               "A key's value: the built-in default, under the platform file's, under the scenario file's,\n"
               "under the command line's.\n"
               "Without FILE, an output goes to ./build/NAME.vcd, .timeline.json, .results.json or\n"
               ".presentmon.csv under the working directory (NAME: the scenario file's; build/ made if\n"
               "missing); never into the source tree. A key another key implies (xfence.scenario =\n"
               "2a: igpu.kmd_native_gpu_fence = never) is set unless given; the results list it under\n"
               "\"implied\".\n"
               "\nExit codes: 0 pass, 1 a check/monitor/bug check failed, 2 bad input.\n";
}

void print_configuration(const CliRequest& req, const nlohmann::json& params) {
  const RunOptions& opt = req.opt;
  std::cout << "scenario " << opt.scenario << "  seed " << opt.seed << "\nscenario file "
            << printable(req.scenario_file) << "  sha256 " << req.scenario_sha256 << "\nplatform "
            << printable(req.platform.name) << "  file " << printable(req.platform.file) << "  sha256 "
            << req.platform.sha256 << "\n\neffective configuration:\n";
  for (auto& [k, v] : params.items())
    std::cout << "  " << std::left << std::setw(34) << k << " "
              << v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

// The results table on stdout, the verdict last.
void print_results(const Results& r, const sc_core::sc_time& end, bool pass) {
  std::cout << "\nresults (simulated " << std::setprecision(10) << to_ns(end) << " ns):\n";
  for (auto& [k, v] : r.metrics.items()) {
    if (!v.is_object()) {
      std::cout << "  " << std::left << std::setw(34) << k << " " << fmt_value(v) << "\n";
      continue;
    }
    // A structured metric, a line per member; a residency (fractions of the time) as percentages.
    const bool residency = k.size() >= 9 && k.compare(k.size() - 9, 9, "residency") == 0;
    for (auto& [sub, x] : v.items()) {
      std::cout << "  " << std::left << std::setw(34) << (k + "." + sub) << " ";
      if (residency && x.is_number()) {
        std::cout << std::fixed << std::setprecision(2) << x.get<double>() * 100 << " %" << std::defaultfloat << "\n";
      } else {
        std::cout << fmt_value(x) << "\n";
      }
    }
  }
  for (auto& [k, why] : r.absent.items())
    std::cout << "  " << std::left << std::setw(34) << k << " absent: " << why.get<std::string>() << "\n";
  for (auto& [name, n] : r.monitors)
    std::cout << "  monitor " << std::left << std::setw(26) << name << " " << n << " violation(s)"
              << (r.monitors_expected.count(name) && r.monitors_expected.at(name) ? " (expected)" : "") << "\n";
  if (!r.incomplete.empty()) std::cout << "  INCOMPLETE: " << r.incomplete << "\n";
  for (auto& f : r.why_failed()) std::cout << "  FAILED: " << f << "\n";
  std::cout << "verdict: " << (pass ? "pass" : "fail") << "\n";
}

// The --results file; false (with the message on stderr) if it cannot be written.
bool write_results_file(const CliRequest& req, const nlohmann::json& params, const Results& r,
                        const sc_core::sc_time& end, bool pass) {
  const RunOptions& opt = req.opt;
  const std::string& results_path = req.results_path;
  nlohmann::ordered_json j;
  j["scenario"] = opt.scenario;
  j["scenario_file"] = {{"path", printable(req.scenario_file)}, {"sha256", req.scenario_sha256}};
  j["platform"] = {
      {"name", printable(req.platform.name)}, {"path", printable(req.platform.file)}, {"sha256", req.platform.sha256}};
  j["seed"] = opt.seed;
  j["parameters"] = params;
  j["sim_time_ns"] = to_ns(end);
  j["metrics"] = r.metrics;
  if (!r.absent.empty()) j["absent"] = r.absent;
  if (!r.incomplete.empty()) j["incomplete"] = r.incomplete;
  if (!r.events.empty()) j["events"] = r.events_json();
  nlohmann::ordered_json mon = nlohmann::ordered_json::object();
  for (auto& [name, n] : r.monitors) {
    mon[name] = {{"violations", n}};
    if (r.monitors_expected.count(name)) mon[name]["expected"] = r.monitors_expected.at(name);
  }
  j["monitors"] = mon;
  j["checks_failed"] = r.failures;
  j["verdict"] = pass ? "pass" : "fail";
  j["why_failed"] = r.why_failed();
  j["bugcheck"] = r.bugcheck;
  if (r.bugcheck_expected) j["bugcheck_expected"] = r.bugcheck_expected;
  j["host"] = r.host;
  if (!req.implied.empty()) {
    nlohmann::ordered_json imp = nlohmann::ordered_json::object();
    for (const Implied& i : req.implied) imp[i.key] = {{"value", i.value}, {"because", i.because}};
    j["implied"] = imp;
  }
  OutputFile out(results_path);
  // Text the run carries from its inputs is escaped where it enters (a path's or a capture's bytes);
  // should any invalid UTF-8 remain, it is replaced here rather than thrown after the run.
  out.stream() << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out.commit()) {
    std::cerr << "gpumodel: " << printable("--results: cannot write '" + results_path + "': " + out.error()) << "\n";
    return false;
  }
  return true;
}

int run(int argc, char** argv) {
  ParamSet ps;
  declare_all_params(ps);
  const CliRequest req = parse_command_line(argc, argv, ps);
  switch (req.action) {
    case CliRequest::Action::Help: print_help(); return 0;
    case CliRequest::Action::ListParams: list_params(ps); return 0;
    case CliRequest::Action::ListParamsJson: list_params_json(ps); return 0;
    case CliRequest::Action::ListScenarios: cli::list_scenarios(); return 0;
    case CliRequest::Action::ListPlatforms: cli::list_platforms(); return 0;
    case CliRequest::Action::ListPlatformsJson: cli::list_platforms_json(); return 0;
    case CliRequest::Action::Run: break;
  }
  const RunOptions& opt = req.opt;
  if (!req.quiet)
    for (const Implied& i : req.implied)
      std::cerr << "gpumodel: "
                << printable(i.key + " = " + i.value + ", implied by " + i.because + " (set " + i.key +
                             " to choose otherwise)")
                << "\n";
  const nlohmann::json params = ps.effective(opt.scenario);
  print_configuration(req, params);

  Results r;
  const sc_core::sc_time end = run_scenario(ps, opt, r);
  if (!r.output_error.empty()) {
    std::cerr << "gpumodel: " << printable(r.output_error) << "\n";
    return 2;
  }
  const bool pass = r.pass();
  print_results(r, end, pass);
  if (!req.results_path.empty() && !write_results_file(req, params, r, end, pass)) return 2;
  if (!req.quiet)
    for (auto& [what, path] : req.outputs) std::cout << "wrote " << path << " (" << what << ")\n";
  return pass ? 0 : 1;
}

}  // namespace

namespace {
// `gpumodel sweep|plot|compare ...`: the workbench's tools, Python scripts in the data folder's
// workbench/ (app/data_dir.h; Debian's python3, standard library only). They run this same binary:
// GPUMODEL_BIN.
int run_tool(const std::string& tool, int argc, char** argv) {
  const std::string script = data_dir() + "/workbench/" + tool + ".py";
  if (::access(script.c_str(), R_OK) != 0) {
    std::cerr << "gpumodel: " << tool << ": cannot read '" << script << "': " << std::strerror(errno) << "\n";
    return 2;
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (!self.empty()) ::setenv("GPUMODEL_BIN", self.c_str(), 1);
  std::vector<char*> args{const_cast<char*>("python3"), const_cast<char*>(script.c_str())};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execvp("python3", args.data());
  std::cerr << "gpumodel: " << tool << ": cannot run python3: " << std::strerror(errno) << "\n";
  return 2;
}
}  // namespace

int cli_main(int argc, char** argv) {
  if (argc >= 2) {
    const std::string a = argv[1];
    if (a == "sweep" || a == "plot" || a == "compare" || a == "sensitivity") return run_tool(a, argc, argv);
  }
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << "gpumodel: " << printable(e.what()) << "\n";
    return 2;
  }
}

}  // namespace gpumodel
