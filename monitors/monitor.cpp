#include "monitors/monitor.h"

#include <algorithm>

namespace gpumodel {
namespace {
// Filled by the registrations' static initialisers, read after main starts (a function-local static:
// no order of initialisation between files to rely on).
std::vector<MonitorInfo>& registered() {
  static std::vector<MonitorInfo> all;
  return all;
}
}  // namespace

MonitorRegistration::MonitorRegistration(std::string name, std::function<std::unique_ptr<Monitor>(Platform&)> attach,
                                         std::function<void(ParamSet&)> declare) {
  registered().push_back({std::move(name), std::move(attach), std::move(declare)});
}

const std::vector<MonitorInfo>& monitor_registry() {
  // In name order: the link order of the files that register is not part of the program's meaning.
  static const std::vector<MonitorInfo> sorted = [] {
    std::vector<MonitorInfo> v = registered();
    std::sort(v.begin(), v.end(), [](const MonitorInfo& a, const MonitorInfo& b) { return a.name < b.name; });
    return v;
  }();
  return sorted;
}

void declare_monitor_params(ParamSet& ps) {
  for (auto& m : monitor_registry())
    if (m.declare) m.declare(ps);
}

std::vector<std::unique_ptr<Monitor>> attach_monitors(Platform& p) {
  std::vector<std::unique_ptr<Monitor>> all;
  for (auto& m : monitor_registry()) all.push_back(m.attach(p));
  return all;
}

}  // namespace gpumodel
