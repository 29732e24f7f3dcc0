// presentmon_replay's figures, frame by frame: the model's frames against the capture's, on the
// capture's clock. A pure function of the two, so a hand count on a few frames can check it.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace gpumodel {

// One replayed frame, times in ms on the capture's clock.
struct ReplayFrame {
  bool settled = false;                    // the model's frame ran and its fate is known: on screen, or
                                           // overtaken by a later frame that was (not so in a run cut short
                                           // before it reached the panel)
  double model_present_ms = 0;             // the model's Present() call
  std::optional<double> model_screen_ms;   // on screen from (nullopt: never)
  double capture_present_ms = 0;           // the capture's Present() call
  std::optional<double> capture_until_ms;  // from Present() to the screen (nullopt: dropped)
};

struct ReplayComparison {
  uint64_t settled = 0;       // frames the figures are over
  uint64_t compared = 0;      // settled frames both the model and the capture displayed
  uint64_t same_refresh = 0;  // of those, shown at the same refresh
  uint64_t agree = 0;         // settled frames both displayed, or both dropped
  std::vector<double> until_error_ms, model_until_ms, capture_until_ms;  // per compared frame
  double same_refresh_pct() const { return compared ? 100.0 * double(same_refresh) / double(compared) : 0.0; }
  double dropped_agreement_pct() const { return settled ? 100.0 * double(agree) / double(settled) : 0.0; }
};

// `period_ms` and `phase_ms`: the capture's refresh grid (a refresh k starts at phase + k x period).
ReplayComparison compare_replay(const std::vector<ReplayFrame>& frames, double period_ms, double phase_ms);

}  // namespace gpumodel
