// The base of every monitor, and the registry through which each attaches itself to every run.
// A monitor is an independent observer of one document's promises: it attaches to what it observes
// through read-only hooks when it is built (its constructor takes the platform), observes while the
// model runs, and never drives the model; after the run, finish() gives its verdict (violations per
// promise, into Results::monitors) and its results (metrics: the first violations, figures). A violation
// fails the run unless the scenario expects it (Results::monitors_expected).
//
// A new monitor is one class and one registration beside it, in its .cpp:
//   namespace { const MonitorRegistration kRegistered{"tdr_rules", attach_monitor<TdrRulesMonitor>}; }
// Nothing else names it: run_scenario attaches every registered monitor (in name order) to every run.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw_model/core/params.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class Monitor {
 public:
  virtual ~Monitor() = default;
  // After the run: the verdict and the results.
  virtual void finish(Results& r) = 0;
};

struct MonitorInfo {
  std::string name;
  // Builds the monitor on the platform, its hooks attached, before the scenario builds its workload.
  std::function<std::unique_ptr<Monitor>(Platform&)> attach;
  // Declares the monitor's parameters (monitor.*, trace.*). Optional.
  std::function<void(ParamSet&)> declare = nullptr;
};

template <typename M>
std::unique_ptr<Monitor> attach_monitor(Platform& p) {
  return std::make_unique<M>(p);
}

// One static object per monitor, in the monitor's own file (the library is linked whole).
class MonitorRegistration {
 public:
  MonitorRegistration(std::string name, std::function<std::unique_ptr<Monitor>(Platform&)> attach,
                      std::function<void(ParamSet&)> declare = nullptr);
};

// Every registered monitor, in name order.
const std::vector<MonitorInfo>& monitor_registry();
// Every monitor's parameters.
void declare_monitor_params(ParamSet& ps);
// Every registered monitor attached to `p`, in name order.
std::vector<std::unique_ptr<Monitor>> attach_monitors(Platform& p);

}  // namespace gpumodel
