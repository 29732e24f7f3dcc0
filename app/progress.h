// The progress line on stderr while a run simulates (--progress, or a terminal without --quiet).
#pragma once
#include <systemc>

#include "platform/platform.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {

// Runs the simulation up to `limit` in slices of about a fifth of a wall second, with a progress line
// after each. Slicing changes nothing simulated: every event still runs at its time, in order.
void run_with_progress(Platform& p, const ScenarioDriver& driver, const sc_core::sc_time& limit);

// sc_start(duration, SC_EXIT_ON_STARVATION), keeping the OS timers that must not keep a finished run going
// (runtime D3cold's idle deadline, kernel_stub/dxgkrnl/runtime_pm.h): the run stops at the deadline, and the
// timer expires there when anything else is still pending; a run that starves first ends, exactly where it
// would without the timer.
void advance(Platform& p, const sc_core::sc_time& duration);

}  // namespace gpumodel
