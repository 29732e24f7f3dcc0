// libFuzzer target: the scenario loader and the command line's parameter overrides, as gpumodel runs
// them before anything is elaborated (scenarios/cli.h).
//
// Input format: a scenario file's text; optionally a line holding exactly "%%", then override lines
// `section.key=value` (one per line, split at the first '='; a line without '=' is skipped). The target
// calls load_scenario_text, apply_override for each override, the scenario's validate, and
// ParamSet::effective (what the run prints and writes to the results).
//
// Expected: success, or a ConfigError whose message, made printable(), holds no control byte. Anything
// else — another exception type, a crash, a hang, a sanitizer report — is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "app/cli.h"
#include "scenarios/common/scenario.h"

using namespace gpumodel;

namespace {

const ParamSet& declared() {
  static const ParamSet ps = [] {
    ParamSet p;
    declare_all_params(p);
    return p;
  }();
  return ps;
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_scenario_loader: %s: %s\n", what, printable(detail).c_str());
  std::abort();
}

void check_message(const std::string& msg) {
  const std::string shown = printable(msg);
  for (unsigned char c : shown)
    if (c < 0x20 || c == 0x7f) finding("control byte in a printable() message", msg);
  if (msg.empty()) finding("empty ConfigError message", msg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  std::string text = in;
  std::vector<std::pair<std::string, std::string>> overrides;
  // The separator: a line of exactly "%%" (at the start or after a newline).
  size_t sep = in.compare(0, 3, "%%\n") == 0 || in == "%%" ? 0 : in.find("\n%%\n");
  if (sep == std::string::npos && in.size() >= 3 && in.compare(in.size() - 3, 3, "\n%%") == 0) sep = in.size() - 3;
  if (sep != std::string::npos) {
    const size_t body = sep == 0 ? 0 : sep + 1;  // where "%%" starts
    text = in.substr(0, body);
    size_t at = std::min(in.size(), body + 3);
    while (at < in.size()) {
      size_t nl = in.find('\n', at);
      if (nl == std::string::npos) nl = in.size();
      const std::string line = in.substr(at, nl - at);
      if (const size_t eq = line.find('='); eq != std::string::npos)
        overrides.emplace_back(line.substr(0, eq), line.substr(eq + 1));
      at = nl + 1;
    }
  }

  ParamSet ps = declared();
  try {
    const std::string scenario = load_scenario_text(text, "fuzz.ini", ps);
    const ScenarioInfo* info = find_scenario(scenario);
    if (!info) finding("load_scenario_text returned an unknown scenario", scenario);
    std::vector<std::string> seen;
    for (auto& [k, v] : overrides) apply_override(ps, scenario, k, v, seen);
    if (info->validate) info->validate(ps);
    const std::string dump = ps.effective(scenario).dump();
    if (dump.empty()) finding("empty effective configuration", scenario);
  } catch (const ConfigError& e) {
    check_message(e.what());
  } catch (const std::exception& e) {
    finding("unexpected exception", e.what());
  } catch (...) {
    finding("unexpected exception", "not a std::exception");
  }
  return 0;
}
