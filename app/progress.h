// The progress line on stderr while a run simulates (--progress, or a terminal without --quiet).
#pragma once
#include <systemc>

#include "platform/platform.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {

// Runs the simulation up to `limit` in slices of about a fifth of a wall second, with a progress line
// after each. Slicing changes nothing simulated: every event still runs at its time, in order.
void run_with_progress(const Platform& p, const ScenarioDriver& driver, const sc_core::sc_time& limit);

}  // namespace gpumodel
