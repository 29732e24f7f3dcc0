#include "scenarios/presentmon/replay_comparison.h"

#include <cmath>

namespace gpumodel {

ReplayComparison compare_replay(const std::vector<ReplayFrame>& frames, double period_ms, double phase_ms) {
  ReplayComparison c;
  auto refresh = [&](double t) { return std::lround((t - phase_ms) / period_ms); };
  for (const ReplayFrame& f : frames) {
    if (!f.settled) continue;
    ++c.settled;
    // Agreement counts the frames both dropped as well as those both displayed.
    c.agree += f.model_screen_ms.has_value() == f.capture_until_ms.has_value();
    if (!f.model_screen_ms || !f.capture_until_ms) continue;
    ++c.compared;
    c.same_refresh += refresh(*f.model_screen_ms) == refresh(f.capture_present_ms + *f.capture_until_ms);
    const double until_m = *f.model_screen_ms - f.model_present_ms;
    c.until_error_ms.push_back(std::fabs(until_m - *f.capture_until_ms));
    c.model_until_ms.push_back(until_m);
    c.capture_until_ms.push_back(*f.capture_until_ms);
  }
  return c;
}

}  // namespace gpumodel
