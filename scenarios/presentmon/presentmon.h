// PresentMon's CSV, out and in. PresentMon (Intel, open source) writes one row per present; FrameView,
// CapFrameX and most frame-pacing tools read it. The model writes PresentMon 2.x's column set as its own
// gold test data has it (presentmon_writer.cpp), NA where it knows nothing, and reads
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
  std::string swap_chain = "0x0000000000001000";  // as PresentMon writes it (a replay: the capture's text)
  int sync_interval = 1;
  bool allows_tearing = false;
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

// A capture as read: the presents of every process, in file order. Names (Application, PresentMode,
// SwapChainAddress) are kept once each, as the file's bytes (they need not be UTF-8: escape them with
// printable() before they reach the results), and each present holds their indexes: a capture of 10^6
// rows takes about 100 bytes a present.
struct CapturedPresent {
  uint32_t application = 0, present_mode = 0, swap_chain = 0;  // indexes into Capture::names
  uint32_t process_id = 0;
  int sync_interval = 1;
  bool allows_tearing = false;  // AllowsTearing: DXGI_PRESENT_ALLOW_TEARING (an immediate flip at sync interval 0)
  bool dropped = false;
  double present_ms = 0;              // Present() call, from the capture's start
  double cpu_busy_ms = 0;             // the frame's CPU work before Present()
  std::optional<double> gpu_busy_ms;  // GPU busy for the frame (2.x), or 1.x msGPUActive
  // From Present() to the GPU's work for the frame done: 1.x MsUntilRenderComplete, 2.x
  // MsRenderPresentLatency (PresentMon's console documentation); negative where the work was done first.
  std::optional<double> render_done_ms;
  std::optional<double> until_displayed_ms;  // from Present() to the screen; nullopt: not displayed
};

struct Capture {
  std::string format;  // "PresentMon 1.x" or "PresentMon 2.x"
  std::vector<std::string> names;
  std::vector<CapturedPresent> presents;
  const std::string& name(uint32_t i) const { return names[i]; }
};

// The most a capture may hold: 2 x 10^6 rows (a replay of workload.frames' bound, 10^6 frames, beside
// as many presents of other processes), in at most 512 MiB (10^6 of the model's own rows take about
// 230 MB; PresentMon 2.x with every column writes under 500 bytes a row). Memory stays under about
// 200 MB. workload.presentmon's description documents both.
constexpr uint64_t kCaptureMaxBytes = uint64_t(512) << 20;
constexpr uint64_t kCaptureMaxRows = 2000000;

// Reads a PresentMon CSV (RFC 4180; a regular file within kCaptureMaxBytes and kCaptureMaxRows); throws ConfigError
// naming `key` (the parameter that named the file) when it cannot be read, lacks the columns the
// replay needs, or holds a value the replay cannot take, with the row and the column: a number that is
// not finite, a negative time, a swap chain's presents out of time order.
Capture read_presentmon(const std::string& path, const std::string& key);
// The same from text (`label` names it in messages, as the path would).
Capture parse_presentmon(const std::string& text, const std::string& label, const std::string& key);

}  // namespace gpumodel
