#include "scenarios/presentmon/replay_comparison.h"

#include <cmath>

#include "hw_model/core/params.h"

namespace gpumodel {

ReplayComparison compare_replay(const std::vector<ReplayFrame>& frames, double period_ms, double phase_ms) {
  ReplayComparison c;
  // The refresh a screen time belongs to: a vblank start's own (the nearest grid point), or for an
  // immediate flip the refresh it tore into (the last vblank start at or before it).
  auto refresh = [&](double t, bool immediate) {
    return immediate ? long(std::floor((t - phase_ms) / period_ms)) : std::lround((t - phase_ms) / period_ms);
  };
  // The first vblank at or after t: a frame done exactly at a vblank start makes it.
  auto next_vblank = [&](double t) { return long(std::ceil((t - phase_ms) / period_ms)); };
  for (const ReplayFrame& f : frames) {
    if (!f.settled) continue;
    ++c.settled;
    // Agreement counts the frames both dropped as well as those both displayed.
    c.agree += f.model_screen_ms.has_value() == f.capture_until_ms.has_value();
    if (!f.model_screen_ms || !f.capture_until_ms) continue;
    ++c.compared;
    const long captured = refresh(f.capture_present_ms + *f.capture_until_ms, f.capture_immediate);
    const bool same = refresh(*f.model_screen_ms, f.model_immediate) == captured;
    c.same_refresh += same;
    if (f.capture_render_ms) {
      ++c.baseline_compared;
      c.model_same_on_baseline += same;
      // The naive rule knows neither queue nor tearing: a frame that tore shows a refresh early by it.
      c.baseline_same_refresh += next_vblank(f.capture_present_ms + *f.capture_render_ms) == captured;
    }
    const double until_m = *f.model_screen_ms - f.model_present_ms;
    c.until_error_ms.push_back(std::fabs(until_m - *f.capture_until_ms));
    c.model_until_ms.push_back(until_m);
    c.capture_until_ms.push_back(*f.capture_until_ms);
  }
  return c;
}

std::optional<std::string> replay_verdict(const ReplayComparison& c, double min_pct) {
  if (c.compared == 0 || c.same_refresh == 0)
    return std::string("no frame was shown at the same refresh in both the capture and the model");
  const double m = c.same_refresh_pct();
  if (m < min_pct)
    return "the model shows " + format_number(m) + " % of the frames at the capture's refresh, below " +
           "workload.presentmon_min_agreement_pct = " + format_number(min_pct) + " %";
  // Against the baseline on the frames it has (those whose render time the capture has).
  if (c.baseline_compared && c.model_same_on_baseline < c.baseline_same_refresh)
    return "the model shows " + format_number(100.0 * double(c.model_same_on_baseline) / double(c.baseline_compared)) +
           " % of the frames at the capture's refresh, below the " + format_number(c.baseline_pct()) +
           " % of the naive rule (each frame on the first vblank after its render completed)";
  return std::nullopt;
}

}  // namespace gpumodel
