// Display modes, pixel formats and the scan-out timing arithmetic (C6, C4).
//
// A mode is the CTA-861 / CVT timing of one video format; ScanTiming turns it into exact times: every
// instant is floor(pixels * 1e12 / pixel_clock_hz) picoseconds after the origin, computed in 128 bits
// from the pixel count since the origin (line times are never accumulated, so no rounding drifts).
//
// The origin is the start of a vertical blank (the engine is enabled there, so it can prefetch before
// frame 0): frame n's first active line starts (vblank_lines + n * v_total) * h_total pixels after it.
// The scan-out stream is the frames' active pixels back to back, row after row; its byte b is consumed
// (needed) when its pixel starts and counted as consumed once that pixel has ended. Nothing is consumed
// during horizontal or vertical blanking.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

namespace gpumodel {

struct DisplayMode {
  std::string name;
  uint64_t pixel_clock_hz;
  unsigned h_active, h_front, h_sync, h_back;
  unsigned v_active, v_front, v_sync, v_back;
  std::string timing;  // where the numbers come from: "CTA-861 VIC 16", "CVT-RBv2"
  unsigned h_total() const { return h_active + h_front + h_sync + h_back; }
  unsigned v_total() const { return v_active + v_front + v_sync + v_back; }
  double refresh_hz() const { return double(pixel_clock_hz) / (double(h_total()) * v_total()); }
};

// The named modes (docs/display.md "Modes"): 1280x720, 1920x1080, 2560x1440 and 3840x2160 at 30, 60,
// 120 and 144 Hz, each a CTA-861 timing where one exists, else VESA CVT reduced blanking.
const std::vector<DisplayMode>& display_modes();
std::vector<std::string> display_mode_names();
// A named mode, or a `WxH@R[-rb1|-rb2]` text (display_mode_form) computed by cvt_reduced_blanking:
// plain WxH@R is RBv2, -rb1 asks for RBv1. ConfigError when it is neither.
DisplayMode display_mode(const std::string& name);
// What is wrong with `text` as a WxH@R[-rb1|-rb2] mode ("" when it is one); named modes aside.
std::string display_mode_form_error(const std::string& text);
extern const char* const kDisplayModeForm;  // the form, as parameter help and messages state it

// VESA Coordinated Video Timings, reduced blanking (CVT 1.2 RBv1 and RBv2) for `h_pixels` x `v_lines`
// progressive at `refresh_hz`, without margins and (RBv2) without the 1000/1001 video-optimised rate.
// Computed in integers: the spreadsheet's steps with exact rationals, so a pixel clock that is an exact
// multiple of the clock step is not lost to a floating-point floor. RBv1 wants h_pixels a multiple of 8.
enum class CvtReducedBlanking { V1, V2 };
DisplayMode cvt_reduced_blanking(unsigned h_pixels, unsigned v_lines, unsigned refresh_hz, CvtReducedBlanking v);

// CASO support (C4), the tier-3 minimum scan-out format list.
std::vector<std::string> display_format_names();
unsigned bytes_per_pixel(const std::string& format);  // ConfigError when unknown

class ScanTiming {
 public:
  ScanTiming(const DisplayMode& mode, unsigned bytes_per_pixel, uint64_t pitch_bytes, sc_core::sc_time origin);

  const DisplayMode& mode() const { return mode_; }
  unsigned bpp() const { return bpp_; }
  uint64_t pitch_bytes() const { return pitch_; }
  sc_core::sc_time origin() const { return origin_; }
  uint64_t row_bytes() const { return uint64_t(mode_.h_active) * bpp_; }
  uint64_t frame_bytes() const { return row_bytes() * mode_.v_active; }
  unsigned vblank_lines() const { return mode_.v_total() - mode_.v_active; }

  sc_core::sc_time frame_start(uint64_t n) const;  // frame n's first active line
  sc_core::sc_time line_start(uint64_t n, unsigned line) const;
  sc_core::sc_time vblank_start(uint64_t n) const;  // after frame n's last active line
  sc_core::sc_time frame_period() const;            // floor(h_total * v_total px)
  sc_core::sc_time line_period() const;             // floor(h_total px)
  // The time the beam starts the pixel holding stream byte b (frames back to back).
  sc_core::sc_time need_time(uint64_t stream_byte) const;
  // Stream bytes whose pixel has ended by t (pixel granularity).
  uint64_t consumed(const sc_core::sc_time& t) const;
  // The earliest time at which consumed() >= count (count 0: the origin).
  sc_core::sc_time time_consumed(uint64_t count) const;
  // Time the beam spent on active pixels by t: exactly consumed(t) / bpp pixels.
  sc_core::sc_time active_time(const sc_core::sc_time& t) const;

  // Pixel clock ticks (pixel boundaries) passed by t since the origin; ticks_time is its inverse.
  uint64_t ticks(const sc_core::sc_time& t) const;
  sc_core::sc_time ticks_time(uint64_t pixels) const;

 private:
  DisplayMode mode_;
  unsigned bpp_;
  uint64_t pitch_;
  sc_core::sc_time origin_;
  // 1e12 / pixel_clock_hz in lowest terms (ps_num_ / ps_den_): the conversions in 64 bits where the
  // products fit, 128 bits beyond. Exact either way; the scan-out asks several times a request.
  uint64_t ps_num_, ps_den_, max_pixels_, max_ps_;
};

}  // namespace gpumodel
