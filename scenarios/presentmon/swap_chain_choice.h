// Which of a capture's swap chains presentmon_replay replays: a process by its ProcessID (the name is a
// shortcut for a name only one process has), and its swap chain.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/presentmon/presentmon.h"

namespace gpumodel {

// The present modes the model replays (PresentMon's PresentMode column): the display engine scans the
// app's own buffer out and flips to the next at a vblank, with no composition in between. Legacy flip:
// the app owns the screen (full screen); independent flip: DWM handed a flip-model window the screen;
// hardware composed independent flip: the same on a hardware overlay plane (Microsoft Learn, "DXGI flip
// model"; PresentMon's console documentation of the PresentMode column).
const std::vector<std::string>& replayed_present_modes();
bool replayed_present_mode(const std::string& mode);
// "Hardware: Legacy Flip, Hardware: Independent Flip, Hardware Composed: Independent Flip".
std::string replayed_present_modes_text();

struct SwapChainChoice {
  uint32_t process_id = 0;
  uint32_t application = 0, swap_chain = 0;  // indexes into Capture::names
  uint64_t hardware_flips = 0;               // its presents in a replayed mode
};

// `pid` 0: none given; `name` and `swap_chain` "": none given. `file` names the capture in messages.
// Refused (ConfigError, exit 2), naming the key and what is allowed: a PID, name or swap chain the
// capture does not have; a name (or, with neither PID nor name, a swap chain address) that more than
// one process has, naming their PIDs; a PID and a name that disagree. With no PID: the process with the
// most hardware flips (the first in the file on a tie). Its swap chain, unless given: the one with the
// most hardware flips (the first on a tie), so one without any (a GDI copy) is never taken over one
// that has them.
SwapChainChoice choose_swap_chain(const Capture& cap, uint64_t pid, const std::string& name,
                                  const std::string& swap_chain, const std::string& file);

}  // namespace gpumodel
