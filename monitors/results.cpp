#include "monitors/results.h"

#include <algorithm>
#include <cstdio>

namespace gpumodel {

void Results::bug_check(uint32_t code, const std::vector<uint64_t>& params) {
  if (!bugcheck.is_null()) return;  // the machine stops at the first one
  bugcheck = {{"code", code}, {"params", params}};
}

nlohmann::ordered_json Results::events_json() const {
  std::vector<RunEvent> sorted = events;
  std::stable_sort(sorted.begin(), sorted.end(), [](const RunEvent& a, const RunEvent& b) { return a.ps < b.ps; });
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (auto& e : sorted) {
    nlohmann::ordered_json x{{"name", e.name}, {"ps", e.ps}, {"in_view", e.in_view}};
    if (!e.trace.empty()) x["trace"] = e.trace;
    j.push_back(x);
  }
  return j;
}

std::vector<std::string> Results::why_failed() const {
  std::vector<std::string> why = failures;
  for (auto& [name, n] : monitors) {
    const bool expected = monitors_expected.count(name) && monitors_expected.at(name);
    if (expected && n == 0)
      why.push_back("monitor " + name + " expected a violation (the scenario injects the fault) and saw none");
    if (!expected && n != 0) why.push_back("monitor " + name + ": " + std::to_string(n) + " violation(s)");
  }
  if (!bugcheck.is_null() && !expected_bugcheck()) why.push_back("bug check " + bugcheck.dump());
  if (bugcheck_expected != 0 && bugcheck.is_null()) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%X", unsigned(bugcheck_expected));
    why.push_back(std::string("expected bug check ") + code +
                  " (the scenario injects its cause) and the OS did not bug check");
  }
  return why;
}

}  // namespace gpumodel
