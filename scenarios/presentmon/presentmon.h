// PresentMon's CSV, out and in. PresentMon (Intel, open source) writes one row per present; FrameView,
// CapFrameX and most frame-pacing tools read it. The model writes the PresentMon 2.x columns (with the
// 1.x Ms... names PresentMon 2.x still writes beside them), NA where it knows nothing, and reads
// captures in the 1.x (TimeInSeconds, MsBetweenPresents, MsUntilDisplayed, ...) and 2.x (CPUStartQPC,
// MsCPUBusy, MsGPUBusy, ... or CPUBusy, GPUBusy, DisplayLatency, DisplayedTime) column sets.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw_model/core/output_file.h"
#include "monitors/results.h"

namespace gpumodel {

// One present as the model saw it; times in ms from the start of the recording. nullopt: NA.
struct PresentRow {
  std::string application = "gpumodel.exe", present_mode = "Hardware: Legacy Flip", runtime = "DXGI";
  uint32_t process_id = 1;
  uint64_t swap_chain = 0x1000;
  int sync_interval = 1;
  double cpu_start = 0;        // the frame's CPU work began
  double present = 0;          // Present() was called
  double present_return = 0;   // Present() returned
  double next_cpu_start = -1;  // the next frame's CPU work began (-1: no next frame)
  std::optional<double> gpu_start, gpu_end, gpu_busy, video_busy;
  std::optional<double> displayed;       // the frame's first scanned line on the screen
  std::optional<double> next_displayed;  // the next displayed frame's
};

// Writes rows as they come (nothing kept): the header at open, one line per row; the file appears
// whole at close(), or not at all (hw_model/core/output_file.h).
class PresentMonWriter {
 public:
  static const char* const kHeader;
  explicit PresentMonWriter(const std::string& path);
  bool ok() const { return out_.ok(); }
  void write(const PresentRow& r);
  // Puts the file in place; one that could not be written becomes the run's output error (the run
  // exits 2 and names it), never a file that looks complete.
  void close(Results& r);

 private:
  OutputFile out_;
  std::optional<double> last_present_, last_displayed_;
};

// A capture as read: the presents of every process, in file order.
struct CapturedPresent {
  std::string application, present_mode, swap_chain;
  uint32_t process_id = 0;
  int sync_interval = 1;
  bool dropped = false;
  double present_ms = 0;                     // Present() call, from the capture's start
  double cpu_busy_ms = 0;                    // the frame's CPU work before Present()
  std::optional<double> gpu_busy_ms;         // GPU busy for the frame (2.x), or 1.x msGPUActive
  std::optional<double> render_done_ms;      // from Present() to the GPU's work done (1.x MsUntilRenderComplete)
  std::optional<double> until_displayed_ms;  // from Present() to the screen; nullopt: not displayed
};

struct Capture {
  std::string format;  // "PresentMon 1.x" or "PresentMon 2.x"
  std::vector<CapturedPresent> presents;
};

// Reads a PresentMon CSV; throws ConfigError naming `key` (the parameter that named the file) when it
// cannot be read or lacks the columns the replay needs.
Capture read_presentmon(const std::string& path, const std::string& key);

}  // namespace gpumodel
