#include "scenarios/cli.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include <boost/program_options.hpp>

#include "scenarios/scenario.h"

namespace po = boost::program_options;

namespace gpumodel {
namespace {

const char* kUsage =
    "usage: gpumodel SCENARIO.ini [--section.key=value ...] [--seed N] [--vcd FILE] [--results FILE]\n"
    "       gpumodel --list-params\n"
    "       gpumodel --help\n";

// Reads `scenario = NAME` and every `[section] key = value` of an INI file into `ps`.
std::string owners_of(const ParamSpec& s) {
  std::string o;
  for (auto& n : s.owners) o += (o.empty() ? "'" : ", '") + n + "'";
  return (s.owners.size() > 1 ? "scenarios " : "scenario ") + o;
}

std::string load_scenario_file(const std::string& path, ParamSet& ps) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw ConfigError("cannot read scenario file '" + path + "': no such file");
  if (!std::filesystem::is_regular_file(path, ec))
    throw ConfigError("cannot read scenario file '" + path + "': not a regular file");
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read scenario file '" + path + "': " + std::strerror(errno));
  po::options_description keys;
  keys.add_options()("scenario", po::value<std::string>());
  for (auto& [name, spec] : ps.specs()) keys.add_options()(name.c_str(), po::value<std::string>());
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::parse_config_file(in, keys, /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw ConfigError("scenario file '" + path + "': " + e.what());
  }
  std::string scenario;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> values;
  for (auto& o : parsed.options) {
    const std::string& key = o.string_key;
    if (!seen.insert(key).second) throw ConfigError("scenario file '" + path + "': key '" + key + "' given twice");
    if (o.unregistered) {
      throw ConfigError("scenario file '" + path + "': unknown key '" + key +
                        "' (gpumodel --list-params lists every key)");
    }
    const std::string value = o.value.empty() ? "" : o.value.front();
    if (key == "scenario") scenario = value;
    else values.emplace_back(key, value);
  }
  if (scenario.empty()) throw ConfigError("scenario file '" + path + "': missing 'scenario = NAME' before the first section");
  if (!find_scenario(scenario)) {
    std::string known;
    for (auto& s : scenario_registry()) known += (known.empty() ? "" : ", ") + s.name;
    throw ConfigError("scenario file '" + path + "': scenario = '" + scenario + "' is not a scenario; allowed: " + known);
  }
  ps.apply_scenario_defaults(scenario);
  for (auto& [key, value] : values) {
    const ParamSpec& s = ps.spec(key);
    if (!ps.visible_to(s, scenario))
      throw ConfigError("scenario file '" + path + "': key '" + key + "' belongs to " + owners_of(s) +
                        ", not '" + scenario + "'");
    ps.set(key, value, "scenario file '" + path + "'");
  }
  return scenario;
}

void list_params(const ParamSet& ps) {
  auto print = [&](const std::string& owner) {
    for (auto& [name, s] : ps.specs()) {
      if (owner.empty() ? !s.owners.empty() : !ps.visible_to(s, owner) || s.owners.empty()) continue;
      auto own = s.scenario_defaults.find(owner);
      const bool mine = own != s.scenario_defaults.end();
      std::cout << "  " << std::left << std::setw(34) << name << " default "
                << (mine ? own->second.first : s.default_value)
                << (s.unit.empty() || s.kind == ParamKind::Enum || s.kind == ParamKind::Bool ? "" : " " + s.unit)
                << "\n      allowed: " << s.allowed() << "\n      source:  " << (mine ? own->second.second : s.source)
                << "\n";
    }
  };
  std::cout << "Platform parameters (every scenario):\n";
  print("");
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

bool writable(const std::string& path) {
  std::ofstream f(path, std::ios::app);
  return bool(f);
}

int run(int argc, char** argv) {
  ParamSet ps;
  declare_all_params(ps);

  po::options_description opts("options");
  opts.add_options()("help,h", "this text")("list-params", "print every parameter with its default, range and source")(
      "seed", po::value<std::string>(), "random seed (unsigned integer), default 1")(
      "vcd", po::value<std::string>(), "write a VCD waveform to FILE")(
      "results", po::value<std::string>(), "write results as JSON to FILE")(
      "scenario-file", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("scenario-file", -1);
  po::parsed_options parsed(nullptr);
  po::variables_map vm;
  try {
    parsed = po::command_line_parser(argc, argv)
                 .options(opts)
                 .positional(pos)
                 .allow_unregistered()
                 .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                 .run();
    po::store(parsed, vm);
  } catch (const po::error& e) {
    throw ConfigError(std::string("command line: ") + e.what());
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << opts
              << "  --section.key=value   override a parameter of the scenario file\n"
                 "\nExit codes: 0 pass, 1 a check/monitor/bug check failed, 2 bad input.\n";
    return 0;
  }
  if (vm.count("list-params")) {
    list_params(ps);
    return 0;
  }
  const auto files = vm.count("scenario-file") ? vm["scenario-file"].as<std::vector<std::string>>()
                                               : std::vector<std::string>{};
  if (files.size() != 1)
    throw ConfigError(files.empty() ? std::string("no scenario file given (gpumodel --help)")
                                    : "one scenario file expected, got " + std::to_string(files.size()) +
                                          " (write overrides as --section.key=value)");

  RunOptions opt;
  if (vm.count("seed")) {
    const std::string s = vm["seed"].as<std::string>();
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || errno || *end) throw ConfigError("--seed = '" + s + "' is not allowed; allowed: an unsigned 64-bit integer");
    opt.seed = v;
  }
  opt.scenario = load_scenario_file(files.front(), ps);

  for (auto& o : parsed.options) {
    if (!o.unregistered) continue;
    const std::string tok = o.original_tokens.empty() ? o.string_key : o.original_tokens.front();
    if (o.value.empty() || tok.find('=') == std::string::npos)
      throw ConfigError("command line: '" + tok + "' needs a value: --section.key=value");
    const std::string& key = o.string_key;
    if (!ps.known(key)) throw ConfigError("command line: unknown key '" + key + "' (gpumodel --list-params lists every key)");
    const ParamSpec& s = ps.spec(key);
    if (!ps.visible_to(s, opt.scenario))
      throw ConfigError("command line: key '" + key + "' belongs to " + owners_of(s) + ", not '" + opt.scenario + "'");
    ps.set(key, o.value.front(), "command line");
  }
  if (vm.count("vcd")) {
    opt.vcd_path = vm["vcd"].as<std::string>();
    if (!writable(opt.vcd_path)) throw ConfigError("--vcd: cannot write '" + opt.vcd_path + "': " + std::strerror(errno));
  }
  std::string results_path;
  if (vm.count("results")) {
    results_path = vm["results"].as<std::string>();
    if (!writable(results_path)) throw ConfigError("--results: cannot write '" + results_path + "': " + std::strerror(errno));
  }

  // A combination the scenario cannot run is bad input, refused before anything is printed or built.
  if (const ScenarioInfo* info = find_scenario(opt.scenario); info && info->validate) info->validate(ps);

  // Effective configuration.
  const nlohmann::json params = ps.effective(opt.scenario);
  std::cout << "scenario " << opt.scenario << "  seed " << opt.seed << "\n\neffective configuration:\n";
  for (auto& [k, v] : params.items()) std::cout << "  " << std::left << std::setw(34) << k << " " << v.dump() << "\n";

  Results r;
  const sc_core::sc_time end = run_scenario(ps, opt, r);
  const bool pass = r.pass();

  std::cout << "\nresults (simulated " << std::setprecision(10) << to_ns(end) << " ns):\n";
  for (auto& [k, v] : r.metrics.items()) std::cout << "  " << std::left << std::setw(34) << k << " " << fmt_value(v) << "\n";
  for (auto& [name, n] : r.monitors)
    std::cout << "  monitor " << std::left << std::setw(26) << name << " " << n << " violation(s)"
              << (r.monitors_expected.count(name) && r.monitors_expected.at(name) ? " (expected)" : "") << "\n";
  for (auto& f : r.failures) std::cout << "  FAILED: " << f << "\n";
  if (!r.bugcheck.is_null()) std::cout << "  BUG CHECK: " << r.bugcheck.dump() << "\n";
  std::cout << "verdict: " << (pass ? "pass" : "fail") << "\n";

  if (!results_path.empty()) {
    nlohmann::ordered_json j;
    j["scenario"] = opt.scenario;
    j["seed"] = opt.seed;
    j["parameters"] = params;
    j["sim_time_ns"] = to_ns(end);
    j["metrics"] = r.metrics;
    nlohmann::ordered_json mon = nlohmann::ordered_json::object();
    for (auto& [name, n] : r.monitors) {
      mon[name] = {{"violations", n}};
      if (r.monitors_expected.count(name)) mon[name]["expected"] = r.monitors_expected.at(name);
    }
    j["monitors"] = mon;
    j["checks_failed"] = r.failures;
    j["verdict"] = pass ? "pass" : "fail";
    j["bugcheck"] = r.bugcheck;
    j["host"] = r.host;
    std::ofstream out(results_path);
    out << j.dump(2) << "\n";
    if (!out) throw ConfigError("--results: cannot write '" + results_path + "'");
  }
  return pass ? 0 : 1;
}

}  // namespace

int cli_main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << "gpumodel: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace gpumodel
