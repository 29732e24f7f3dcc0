// The display's refresh grid from a capture's screen times, fitted over the capture's whole span.
#pragma once
#include <vector>

namespace gpumodel {

struct RefreshFit {
  double period_ms = 0;    // 0: too few screen changes to find it
  double phase_ms = 0;     // a refresh starts at phase + k x period
  double on_grid_pct = 0;  // screen times within 0.5 ms of the grid
};

// A least-squares line through every screen time against its refresh number: the period is the slope,
// so a panel's clock (59.949 Hz rather than 60) is measured over the whole capture, not over a few
// intervals. Refresh numbers come from the intervals between successive screen changes, each a whole
// number of periods of the estimate so far (its first: the smallest common step, the intervals' 10th
// percentile), refined until they no longer change.
RefreshFit fit_refresh(std::vector<double> screen_ms);

}  // namespace gpumodel
