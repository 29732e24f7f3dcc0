// presentmon_replay's figures, frame by frame: the model's frames against the capture's, on the
// capture's clock. A pure function of the two, so a hand count on a few frames can check it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpumodel {

// One replayed frame, times in ms on the capture's clock.
struct ReplayFrame {
  bool settled = false;                     // the model's frame ran and its fate is known: on screen, or
                                            // overtaken by a later frame that was (not so in a run cut short
                                            // before it reached the panel)
  double model_present_ms = 0;              // the model's Present() call
  std::optional<double> model_screen_ms;    // on screen from (nullopt: never)
  double capture_present_ms = 0;            // the capture's Present() call
  std::optional<double> capture_until_ms;   // from Present() to the screen (nullopt: dropped)
  std::optional<double> capture_render_ms;  // from Present() to the GPU's work done (nullopt: not captured)
  // An immediate flip (tearing) in the capture, in the model: on screen mid-refresh, from the tear; its
  // refresh is the one it tore into. A vsync'd flip is on screen from a vblank start, its refresh the
  // one that starts there.
  bool capture_immediate = false, model_immediate = false;
};

struct ReplayComparison {
  uint64_t settled = 0;       // frames the figures are over
  uint64_t compared = 0;      // settled frames both the model and the capture displayed
  uint64_t same_refresh = 0;  // of those, shown at the same refresh
  uint64_t agree = 0;         // settled frames both displayed, or both dropped
  // The naive baseline over the compared frames whose render time the capture has: each frame on the
  // first vblank after its render completed (Present() + its render time), without any queue or tearing
  // (a frame that tore was on screen in the refresh before: PresentMon 1.x gives a torn frame's screen
  // time as its render complete, so a rule that knew tearing would be the capture itself).
  uint64_t baseline_compared = 0, baseline_same_refresh = 0;
  uint64_t model_same_on_baseline = 0;                                   // the model's same-refresh frames among those
  std::vector<double> until_error_ms, model_until_ms, capture_until_ms;  // per compared frame
  double same_refresh_pct() const { return compared ? 100.0 * double(same_refresh) / double(compared) : 0.0; }
  double baseline_pct() const {
    return baseline_compared ? 100.0 * double(baseline_same_refresh) / double(baseline_compared) : 0.0;
  }
  double dropped_agreement_pct() const { return settled ? 100.0 * double(agree) / double(settled) : 0.0; }
};

// `period_ms` and `phase_ms`: the capture's refresh grid (a refresh k starts at phase + k x period).
ReplayComparison compare_replay(const std::vector<ReplayFrame>& frames, double period_ms, double phase_ms);

// The replay's verdict on the comparison: nullopt when it passes, else why not. It fails when no frame
// was compared, when the model's same-refresh agreement is below `min_pct` or below the baseline's
// (a model that explains less than the naive rule explains nothing).
std::optional<std::string> replay_verdict(const ReplayComparison& c, double min_pct);

}  // namespace gpumodel
