// cvt_modes: prints the timing the model uses for each display.mode argument, one line each:
//   MODE CLOCK_HZ H_FRONT H_SYNC H_BACK V_FRONT V_SYNC V_BACK TIMING (e.g. "CTA-861 VIC 16", "CVT-RBv2")
// or `MODE refused: WHY`. With no argument, every named mode. crosscheck.py compares the lines with
// edid-decode's and xcvt's; the unit tests do not need either tool.
#include <cstdio>
#include <string>
#include <vector>

#include "hw_model/core/params.h"
#include "hw_model/display/display_timing.h"

// SystemC's library supplies main() and calls sc_main.
int sc_main(int argc, char** argv) {
  std::vector<std::string> modes(argv + 1, argv + argc);
  if (modes.empty()) modes = gpumodel::display_mode_names();
  for (const std::string& s : modes) {
    try {
      const gpumodel::DisplayMode m = gpumodel::display_mode(s);
      std::printf("%s %llu %u %u %u %u %u %u %s\n", s.c_str(), (unsigned long long)m.pixel_clock_hz, m.h_front,
                  m.h_sync, m.h_back, m.v_front, m.v_sync, m.v_back, m.timing.c_str());
    } catch (const gpumodel::ConfigError& e) {
      std::printf("%s refused: %s\n", s.c_str(), e.what());
    }
  }
  return 0;
}
