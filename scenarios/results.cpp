#include "scenarios/results.h"

namespace gpumodel {

void Results::bug_check(uint32_t code, const std::vector<uint64_t>& params) {
  if (!bugcheck.is_null()) return;  // the machine stops at the first one
  bugcheck = {{"code", code}, {"params", params}};
}

bool Results::pass() const {
  if (!failures.empty() || !bugcheck.is_null()) return false;
  for (auto& [name, n] : monitors) {
    const bool expected = monitors_expected.count(name) && monitors_expected.at(name);
    if (expected ? n == 0 : n != 0) return false;
  }
  return true;
}

}  // namespace gpumodel
