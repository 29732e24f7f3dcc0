#include "hw_model/display/display_timing.h"

#include <algorithm>
#include <limits>
#include <numeric>

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

// The named modes. CTA-861 (A DTV Profile for Uncompressed High Speed Digital Interfaces) timings as
// Linux drivers/gpu/drm/drm_edid.c encodes its VIC table (edid_cea_modes_1); the others VESA CVT
// reduced blanking: RBv1 at 60 and 120 Hz, the multiples of 60 Hz at which CVT 1.1 defined reduced
// blanking and VESA DMT publishes RBv1 timings (2560x1440@60 is the 241.5 MHz timing 1440p60 monitors
// carry); RBv2 (CVT 1.2) at 30 and 144 Hz, which RBv1 does not cover, with its 80-pixel H blank and
// 1 kHz clock step. tests/test_display_modes.cpp checks each against its published value.
const std::vector<DisplayMode>& display_modes() {
  static const std::vector<DisplayMode> modes = {
      // 74.25 MHz, H 1280/1760/40/220 (3300), V 720/5/5/20 (750): 30 Hz.
      {"1280x720@30", 74250000, 1280, 1760, 40, 220, 720, 5, 5, 20, "CTA-861 VIC 62"},
      // 74.25 MHz, H 1280/110/40/220 (1650), V 720/5/5/20 (750): 60 Hz.
      {"1280x720@60", 74250000, 1280, 110, 40, 220, 720, 5, 5, 20, "CTA-861 VIC 4"},
      // VIC 4's raster at twice the clock: 148.5 MHz, 120 Hz.
      {"1280x720@120", 148500000, 1280, 110, 40, 220, 720, 5, 5, 20, "CTA-861 VIC 47"},
      // No CTA-861 720p at 144 Hz. RBv2: 1360 x 772 x 144 = 151.18848 MHz, floored to 1 kHz.
      {"1280x720@144", 151188000, 1280, 8, 32, 40, 720, 38, 8, 6, "CVT-RBv2"},
      // 74.25 MHz, H 1920/88/44/148 (2200), V 1080/4/5/36 (1125): 30 Hz.
      {"1920x1080@30", 74250000, 1920, 88, 44, 148, 1080, 4, 5, 36, "CTA-861 VIC 34"},
      // 148.5 MHz, the same raster: 60.000 Hz.
      {"1920x1080@60", 148500000, 1920, 88, 44, 148, 1080, 4, 5, 36, "CTA-861 VIC 16"},
      // 297 MHz, the same raster: 120 Hz.
      {"1920x1080@120", 297000000, 1920, 88, 44, 148, 1080, 4, 5, 36, "CTA-861 VIC 63"},
      // RBv2: 2000 x 1157 x 144 = 333.216 MHz.
      {"1920x1080@144", 333216000, 1920, 8, 32, 40, 1080, 63, 8, 6, "CVT-RBv2"},
      // No CTA-861 timing at 2560x1440. RBv2: 2640 x 1461 x 30 = 115.7112 MHz, floored to 1 kHz.
      {"2560x1440@30", 115711000, 2560, 8, 32, 40, 1440, 7, 8, 6, "CVT-RBv2"},
      // RBv1: H blank 160 (48/32/80), V front porch 3, vsync 5 (16:9), 2720 x 1481 x 60 = 241.6992 MHz,
      // floored to 0.25 MHz: 241.5 MHz, 59.951 Hz.
      {"2560x1440@60", 241500000, 2560, 48, 32, 80, 1440, 3, 5, 33, "CVT-RBv1"},
      // RBv1: 2720 x 1525 x 120 = 497.76 MHz -> 497.75 MHz (RBv2 would give 483.12 MHz).
      {"2560x1440@120", 497750000, 2560, 48, 32, 80, 1440, 3, 5, 77, "CVT-RBv1"},
      // RBv2: H blank 80 (8/32/40); V sync 8 and V back porch 6 fixed, the front porch (89) makes up
      // the 460 us minimum V blank -> 1543 lines; 2640 x 1543 x 144 = 586.58688 MHz -> 586.586 MHz
      // (not 483 MHz, which gives 120 Hz).
      {"2560x1440@144", 586586000, 2560, 8, 32, 40, 1440, 89, 8, 6, "CVT-RBv2"},
      // 297 MHz, H 3840/176/88/296 (4400), V 2160/8/10/72 (2250): 30 Hz.
      {"3840x2160@30", 297000000, 3840, 176, 88, 296, 2160, 8, 10, 72, "CTA-861 VIC 95"},
      // 594 MHz, the same raster: 60 Hz.
      {"3840x2160@60", 594000000, 3840, 176, 88, 296, 2160, 8, 10, 72, "CTA-861 VIC 97"},
      // 1188 MHz, the same raster: 120 Hz.
      {"3840x2160@120", 1188000000, 3840, 176, 88, 296, 2160, 8, 10, 72, "CTA-861 VIC 118"},
      // No CTA-861 2160p at 144 Hz. RBv2: 3920 x 2314 x 144 = 1306.20672 MHz -> 1306.206 MHz (RBv1 would
      // need 1332.75 MHz; either is beyond DisplayPort HBR3's uncompressed 8-bit RGB, which such panels
      // reach with DSC).
      {"3840x2160@144", 1306206000, 3840, 8, 32, 40, 2160, 140, 8, 6, "CVT-RBv2"},
  };
  return modes;
}

std::vector<std::string> display_mode_names() {
  std::vector<std::string> n;
  for (auto& m : display_modes()) n.push_back(m.name);
  return n;
}

const char* const kDisplayModeForm =
    "WxH@R[-rb1|-rb2] (integers: W 320..7680 pixels, H 200..4320 lines, R 24..240 Hz), VESA CVT reduced "
    "blanking: RBv2, or RBv1 with -rb1 (W a multiple of 8)";

namespace {
constexpr unsigned kMinW = 320, kMaxW = 7680, kMinH = 200, kMaxH = 4320, kMinR = 24, kMaxR = 240;
// The engine's kPixelClock register holds the clock in Hz in 32 bits.
constexpr uint64_t kMaxPixelClockHz = 0xFFFFFFFFull;

struct ModeForm {
  unsigned w = 0, h = 0, r = 0;
  CvtReducedBlanking v = CvtReducedBlanking::V2;
};

// Digits without a leading zero, at most 5 of them, from i; i moves past them.
bool number_at(const std::string& t, size_t& i, unsigned& out) {
  const size_t b = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == b || i - b > 5 || (t[b] == '0' && i - b > 1)) return false;
  out = unsigned(std::stoul(t.substr(b, i - b)));
  return true;
}

// "" and the parsed form, or what is wrong with it.
std::string parse_form(const std::string& t, ModeForm& f) {
  size_t i = 0;
  const std::string not_form = "is neither a named mode nor of the form WxH@R[-rb1|-rb2]";
  if (!number_at(t, i, f.w) || i >= t.size() || t[i++] != 'x') return not_form;
  if (!number_at(t, i, f.h) || i >= t.size() || t[i++] != '@') return not_form;
  if (!number_at(t, i, f.r)) return not_form;
  const std::string rest = t.substr(i);
  if (rest == "-rb1")
    f.v = CvtReducedBlanking::V1;
  else if (!rest.empty() && rest != "-rb2")
    return not_form;
  auto outside = [](const char* what, unsigned v, unsigned lo, unsigned hi, const char* unit) {
    return std::string("has a ") + what + " of " + std::to_string(v) + unit + ", outside " + std::to_string(lo) + ".." +
           std::to_string(hi) + unit;
  };
  if (f.w < kMinW || f.w > kMaxW) return outside("width", f.w, kMinW, kMaxW, " pixels");
  if (f.h < kMinH || f.h > kMaxH) return outside("height", f.h, kMinH, kMaxH, " lines");
  if (f.r < kMinR || f.r > kMaxR) return outside("refresh rate", f.r, kMinR, kMaxR, " Hz");
  if (f.v == CvtReducedBlanking::V1 && f.w % 8)
    return "has a width of " + std::to_string(f.w) +
           ", not a multiple of 8 as CVT-RBv1 wants (its 8-pixel character cell; RBv2 takes any width)";
  const DisplayMode m = cvt_reduced_blanking(f.w, f.h, f.r, f.v);
  if (m.pixel_clock_hz > kMaxPixelClockHz)
    return "needs a " + std::to_string(m.pixel_clock_hz / 1000) +
           " kHz pixel clock, above the 4294967.295 kHz the display engine's 32-bit kPixelClock register holds";
  return "";
}

// VESA CVT's vertical sync width for RBv1, by aspect ratio: a format is W:H when W is H x W/H rounded
// down to the 8-pixel cell (so 1360x768 is 16:9, as VESA DMT's CVT-RBv1 1360x768@120 with its 5-line
// sync shows).
unsigned cvt_v1_vsync(unsigned w, unsigned h) {
  struct Ratio {
    unsigned a, b, lines;
  };
  static const Ratio kRatios[] = {{4, 3, 4}, {16, 9, 5}, {16, 10, 6}, {5, 4, 7}, {15, 9, 7}};
  for (const Ratio& r : kRatios)
    if (w == uint64_t(h) * r.a / (uint64_t(r.b) * 8) * 8) return r.lines;
  return 10;  // any other aspect ratio
}
}  // namespace

DisplayMode cvt_reduced_blanking(unsigned h_pixels, unsigned v_lines, unsigned refresh_hz, CvtReducedBlanking v) {
  const bool v1 = v == CvtReducedBlanking::V1;
  // RB_MIN_V_BLANK = 460 us. H_PERIOD_EST = (1e6 / R - 460) / V_LINES us, so
  // VBI_LINES = ROUNDDOWN(460 / H_PERIOD_EST) + 1 = floor(460 R V / (1e6 - 460 R)) + 1, exactly.
  const uint64_t r = refresh_hz, vl = v_lines;
  const uint64_t vbi_lines = 460 * r * vl / (1000000 - 460 * r) + 1;
  // RBv1: V front porch 3, V sync by aspect ratio, V back porch at least 7 (CVT 1.2 / 2.0 MIN_V_BPORCH);
  // RBv2: V front porch at least 1, V sync 8, V back porch 6, both fixed.
  const unsigned v_front_min = v1 ? 3 : 1, v_sync = v1 ? cvt_v1_vsync(h_pixels, v_lines) : 8, v_back_min = v1 ? 7 : 6;
  const uint64_t v_blank = std::max<uint64_t>(vbi_lines, v_front_min + v_sync + v_back_min);
  // RBv1: H blank 160 = front 48 + sync 32 + back 80; RBv2: 80 = 8 + 32 + 40.
  const unsigned h_front = v1 ? 48 : 8, h_sync = 32, h_back = v1 ? 80 : 40;
  const uint64_t h_total = h_pixels + h_front + h_sync + h_back, v_total = vl + v_blank;
  // ACT_PIXEL_FREQ = CLOCK_STEP x ROUNDDOWN(R x TOTAL_V_LINES x TOTAL_PIXELS / CLOCK_STEP): 0.25 MHz
  // (RBv1), 0.001 MHz (RBv2).
  const uint64_t step = v1 ? 250000 : 1000;
  DisplayMode m;
  m.name = std::to_string(h_pixels) + "x" + std::to_string(v_lines) + "@" + std::to_string(refresh_hz) +
           (v1 ? "-rb1" : "-rb2");
  m.pixel_clock_hz = r * v_total * h_total / step * step;
  m.h_active = h_pixels;
  m.h_front = h_front;
  m.h_sync = h_sync;
  m.h_back = h_back;
  m.v_active = v_lines;
  m.v_sync = v_sync;
  // RBv1 puts the extra lines in the back porch, RBv2 in the front porch.
  m.v_front = v1 ? v_front_min : unsigned(v_blank) - v_sync - v_back_min;
  m.v_back = v1 ? unsigned(v_blank) - v_front_min - v_sync : v_back_min;
  m.timing = v1 ? "CVT-RBv1" : "CVT-RBv2";
  return m;
}

std::string display_mode_form_error(const std::string& text) {
  ModeForm f;
  return parse_form(text, f);
}

DisplayMode display_mode(const std::string& name) {
  for (auto& m : display_modes())
    if (m.name == name) return m;
  ModeForm f;
  const std::string why = parse_form(name, f);
  if (!why.empty()) throw ConfigError("display mode '" + echo_input(name) + "' " + why);
  DisplayMode m = cvt_reduced_blanking(f.w, f.h, f.r, f.v);
  m.name = name;
  return m;
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
    : mode_(mode),
      bpp_(bpp),
      pitch_(std::max<uint64_t>(pitch_bytes, uint64_t(mode.h_active) * bpp)),
      origin_(origin),
      ps_num_(kPsPerS / std::gcd(kPsPerS, mode.pixel_clock_hz)),
      ps_den_(mode.pixel_clock_hz / std::gcd(kPsPerS, mode.pixel_clock_hz)),
      max_pixels_(std::numeric_limits<uint64_t>::max() / ps_num_),
      max_ps_(std::numeric_limits<uint64_t>::max() / ps_den_) {}

sc_time ScanTiming::ticks_time(uint64_t pixels) const {
  // floor(P * 1e12 / clk) from the origin; 1e12 / clk = num / den in lowest terms, so the same floor.
  const uint64_t ps =
      pixels <= max_pixels_ ? pixels * ps_num_ / ps_den_ : uint64_t(u128(pixels) * kPsPerS / mode_.pixel_clock_hz);
  return origin_ + sc_time::from_value(ps);
}

uint64_t ScanTiming::ticks(const sc_time& t) const {
  if (t < origin_) return 0;
  // The largest P with floor(P * 1e12 / clk) <= dt, i.e. P * 1e12 < (dt + 1) * clk: floor(((dt + 1) * clk
  // - 1) / 1e12). With clk = g * den and 1e12 = g * num that is floor(((dt + 1) * den - 1) / num): write
  // (dt + 1) * den = q * num + r; for r >= 1 both floors are q, for r = 0 both are q - 1.
  const uint64_t x = (t - origin_).value() + 1;
  if (x <= max_ps_) return (x * ps_den_ - 1) / ps_num_;
  return uint64_t((u128(x) * mode_.pixel_clock_hz - 1) / kPsPerS);
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
