#include <algorithm>
#include <cmath>
#include <cstdio>

#include "scenarios/presentmon/presentmon.h"

namespace gpumodel {

// PresentMon 2.x's columns exactly as its own gold test data has them (GameTechDev/PresentMon,
// Tests/Gold/test_case_N.csv, written by Tools/create_gold_csvs.cmd: the default metrics with --qpc_time
// --track_frame_type --track_app_timing --track_gpu_video --track_pc_latency): times of day as QPC ticks
// at 10 MHz, intervals in ms. workloads/captures/test_case_5.csv is one; a test compares the two headers.
const char* const PresentMonWriter::kHeader =
    "Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,AllowsTearing,PresentMode,"
    "FrameType,TimeInQPC,MsBetweenSimulationStart,MsBetweenPresents,MsBetweenDisplayChange,MsInPresentAPI,"
    "MsRenderPresentLatency,MsUntilDisplayed,MsPCLatency,CPUStartQPC,MsBetweenAppStart,MsCPUBusy,MsCPUWait,"
    "MsGPULatency,MsGPUTime,MsGPUBusy,MsGPUWait,MsVideoBusy,MsAnimationError,AnimationTime,MsFlipDelay,"
    "MsAllInputToPhotonLatency,MsClickToPhotonLatency,MsInstrumentedLatency";

PresentMonWriter::PresentMonWriter(const std::string& path) : out_(path) { out_.stream() << kHeader << "\n"; }

void PresentMonWriter::close(Results& r) {
  if (!out_.commit() && r.output_error.empty())
    r.output_error = "--presentmon: cannot write '" + out_.path() + "': " + out_.error();
}

namespace {
std::string ms(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", v);
  return b;
}
std::string ms(const std::optional<double>& v) { return v ? ms(*v) : "NA"; }
// A time of day in QPC ticks at 10 MHz (0.1 us), from ms since the recording's start.
std::string qpc(double ms_since_start) { return std::to_string(int64_t(std::llround(ms_since_start * 1e4))); }
// A text field as RFC 4180 writes it: quoted, its quotes doubled, when it holds a comma, a quote or a
// line break (an application's name may), as is otherwise.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void PresentMonWriter::write(const PresentRow& r) {
  const bool shown = r.displayed.has_value();
  std::optional<double> gpu_latency, gpu_time, gpu_wait, between_display;
  if (r.gpu_start) gpu_latency = *r.gpu_start - r.cpu_start;
  if (r.gpu_start && r.gpu_end) gpu_time = *r.gpu_end - *r.gpu_start;
  // Busy is the union of the frame's spans inside [start, end]: at most the time; the difference is
  // clamped at 0 so rounding never prints -0.0000.
  if (gpu_time && r.gpu_busy) gpu_wait = std::max(0.0, *gpu_time - *r.gpu_busy);
  if (shown && last_displayed_) between_display = *r.displayed - *last_displayed_;
  const std::optional<double> app_delta =
      r.next_cpu_start >= 0 ? std::optional<double>(r.next_cpu_start - r.cpu_start) : std::nullopt;
  const std::optional<double> cpu_wait =
      r.next_cpu_start >= 0 ? std::optional<double>(r.next_cpu_start - r.present) : std::nullopt;
  // NA where the model has no such event: simulation and animation markers, PC latency, flip delay,
  // input-to-photon and instrumented latencies.
  out_.stream() << field(r.application) << ',' << r.process_id << ',' << field(r.swap_chain) << ',' << field(r.runtime)
                << ',' << r.sync_interval << ",0," << (r.allows_tearing ? 1 : 0) << ',' << field(r.present_mode)
                << ",Application," << qpc(r.present) << ",NA,"
                << ms(last_present_ ? std::optional<double>(r.present - *last_present_) : std::nullopt) << ','
                << ms(between_display) << ',' << ms(r.present_return - r.present) << ','
                << ms(r.gpu_end ? std::optional<double>(*r.gpu_end - r.present) : std::nullopt) << ','
                << ms(shown ? std::optional<double>(*r.displayed - r.present) : std::nullopt) << ",NA,"
                << qpc(r.cpu_start) << ',' << ms(app_delta) << ',' << ms(r.present - r.cpu_start) << ',' << ms(cpu_wait)
                << ',' << ms(gpu_latency) << ',' << ms(gpu_time) << ',' << ms(r.gpu_busy) << ',' << ms(gpu_wait) << ','
                << ms(r.video_busy) << ",NA,NA,NA,NA,NA,NA\n";
  last_present_ = r.present;
  if (shown) last_displayed_ = r.displayed;
}

}  // namespace gpumodel
