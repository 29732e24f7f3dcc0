#include "hw_model/display/display_timing.h"

#include <algorithm>

#include "hw_model/core/params.h"

namespace gpumodel {

using namespace sc_core;

namespace {
using u128 = unsigned __int128;
constexpr uint64_t kPsPerS = 1000000000000ull;

struct Format {
  const char* name;
  unsigned bytes;
};
// C4: the tier-3 minimum list. 4 B/px for the 8-bit and 10:10:10:2 formats, 8 B/px for FP16 x 4.
const Format kFormats[] = {
    {"R8G8B8A8_UNORM", 4},      {"R8G8B8A8_UNORM_SRGB", 4}, {"B8G8R8A8_UNORM", 4},
    {"B8G8R8A8_UNORM_SRGB", 4}, {"R10G10B10A2_UNORM", 4},   {"R16G16B16A16_FLOAT", 8},
};
}  // namespace

const std::vector<DisplayMode>& display_modes() {
  static const std::vector<DisplayMode> modes = {
      // CTA-861 VIC 16 as encoded in Linux drivers/gpu/drm/drm_edid.c (edid_cea_modes_1):
      // 148.5 MHz, H 1920/88/44/148 (total 2200), V 1080/4/5/36 (total 1125): 60.000 Hz.
      {"1920x1080@60", 148500000, 1920, 88, 44, 148, 1080, 4, 5, 36},
      // CTA-861 VIC 97, same table: 594 MHz, H 3840/176/88/296 (4400), V 2160/8/10/72 (2250): 60 Hz.
      {"3840x2160@60", 594000000, 3840, 176, 88, 296, 2160, 8, 10, 72},
      // VESA CVT reduced blanking v2 (derived): H blank fixed at 80 (FP 8, sync 32, BP 40) -> 2640;
      // V sync 8 and V back porch 6 fixed, the front porch (89) makes up the 460 us minimum V blank
      // -> 1543 lines; clock 2640 x 1543 x 144 rounded down to the 1 kHz step: 586.586 MHz
      // (docs/calibration.md: not 483 MHz, which gives 120 Hz).
      {"2560x1440@144", 586586000, 2560, 8, 32, 40, 1440, 89, 8, 6},
  };
  return modes;
}

std::vector<std::string> display_mode_names() {
  std::vector<std::string> n;
  for (auto& m : display_modes()) n.push_back(m.name);
  return n;
}

const DisplayMode& display_mode(const std::string& name) {
  for (auto& m : display_modes())
    if (m.name == name) return m;
  throw ConfigError("unknown display mode '" + name + "'");
}

std::vector<std::string> display_format_names() {
  std::vector<std::string> n;
  for (auto& f : kFormats) n.push_back(f.name);
  return n;
}

unsigned bytes_per_pixel(const std::string& format) {
  for (auto& f : kFormats)
    if (format == f.name) return f.bytes;
  throw ConfigError("unknown display format '" + format + "'");
}

ScanTiming::ScanTiming(const DisplayMode& mode, unsigned bpp, uint64_t pitch_bytes, sc_time origin)
    : mode_(mode), bpp_(bpp), pitch_(std::max<uint64_t>(pitch_bytes, uint64_t(mode.h_active) * bpp)), origin_(origin) {}

sc_time ScanTiming::ticks_time(uint64_t pixels) const {
  const u128 ps = u128(pixels) * kPsPerS / mode_.pixel_clock_hz;  // floor, from the origin
  return origin_ + sc_time::from_value(uint64_t(ps));
}

uint64_t ScanTiming::ticks(const sc_time& t) const {
  if (t < origin_) return 0;
  // The largest P with floor(P * 1e12 / clk) <= dt, i.e. P * 1e12 < (dt + 1) * clk.
  const u128 dt = (t - origin_).value();
  return uint64_t(((dt + 1) * mode_.pixel_clock_hz - 1) / kPsPerS);
}

sc_time ScanTiming::frame_start(uint64_t n) const {
  return ticks_time((vblank_lines() + n * mode_.v_total()) * uint64_t(mode_.h_total()));
}

sc_time ScanTiming::line_start(uint64_t n, unsigned line) const {
  return ticks_time((vblank_lines() + n * mode_.v_total() + line) * uint64_t(mode_.h_total()));
}

sc_time ScanTiming::vblank_start(uint64_t n) const { return line_start(n, mode_.v_active); }

sc_time ScanTiming::frame_period() const {
  return sc_time::from_value(uint64_t(u128(mode_.h_total()) * mode_.v_total() * kPsPerS / mode_.pixel_clock_hz));
}

sc_time ScanTiming::line_period() const {
  return sc_time::from_value(uint64_t(u128(mode_.h_total()) * kPsPerS / mode_.pixel_clock_hz));
}

sc_time ScanTiming::need_time(uint64_t b) const {
  const uint64_t f = b / frame_bytes(), r = b % frame_bytes();
  const uint64_t line = r / row_bytes(), px = (r % row_bytes()) / bpp_;
  return ticks_time((vblank_lines() + f * mode_.v_total() + line) * uint64_t(mode_.h_total()) + px);
}

uint64_t ScanTiming::consumed(const sc_time& t) const {
  const uint64_t p = ticks(t), lead = uint64_t(vblank_lines()) * mode_.h_total();
  if (p <= lead) return 0;
  const uint64_t frame_px = uint64_t(mode_.h_total()) * mode_.v_total();
  const uint64_t q = p - lead, f = q / frame_px, r = q % frame_px;
  const uint64_t line = r / mode_.h_total(), x = r % mode_.h_total();
  if (line >= mode_.v_active) return (f + 1) * frame_bytes();  // in the vertical blank: frame done
  return f * frame_bytes() + line * row_bytes() + std::min<uint64_t>(x, mode_.h_active) * bpp_;
}

sc_time ScanTiming::time_consumed(uint64_t count) const {
  if (count == 0) return origin_;
  // Byte count-1's pixel must have ended: one tick after its start.
  const uint64_t b = count - 1, f = b / frame_bytes(), r = b % frame_bytes();
  const uint64_t line = r / row_bytes(), px = (r % row_bytes()) / bpp_;
  return ticks_time((vblank_lines() + f * mode_.v_total() + line) * uint64_t(mode_.h_total()) + px + 1);
}

sc_time ScanTiming::active_time(const sc_time& t) const { return ticks_time(consumed(t) / bpp_) - origin_; }

}  // namespace gpumodel
