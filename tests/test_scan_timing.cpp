// ScanTiming's conversions between pixel clock ticks and simulated time, against the 128-bit formulas
// they are defined by. The modes' own line and frame times are in test_display.cpp.
#include <numeric>
#include <random>
#include <vector>

#include "hw_model/display/display_timing.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

TEST_CASE("display: Scan timing converts pixels and picoseconds exactly, in 64 bits and past them", "[C6][H1]") {
  // ticks_time(P) = origin + floor(P * 1e12 / clk) and ticks(t) = the largest P with ticks_time(P) <= t,
  // against the 128-bit formulas, for every mode's clock and for clocks sharing no factor with 1e12 (the
  // 64-bit products overflow soonest), at the edges where the model changes arithmetic and at random.
  using u128 = unsigned __int128;
  constexpr uint64_t kPs = 1000000000000ull, kMax = ~0ull;
  std::vector<uint64_t> clocks{1, 7, 148500001, 4294967291ull};
  for (const DisplayMode& m : display_modes()) clocks.push_back(m.pixel_clock_hz);
  std::mt19937_64 rng(1);
  const sc_time o = sc_time::from_value(12345);
  for (const uint64_t clk : clocks) {
    DisplayMode m = display_mode("1920x1080@60");
    m.pixel_clock_hz = clk;
    const ScanTiming t(m, 4, 0, o);
    const uint64_t g = std::gcd(kPs, clk), num = kPs / g, den = clk / g;
    // The picoseconds of P pixels fit in 64 bits for P below this.
    const uint64_t p_fit = uint64_t(std::min<u128>((u128(kMax) - o.value()) * clk / kPs, kMax));
    std::vector<uint64_t> pixels{0, 1, 2, 3, clk - 1, clk, clk + 1, kMax / num - 1, kMax / num, kMax / num + 1};
    for (int i = 0; i < 300; ++i) pixels.push_back(rng() >> (rng() % 64));
    for (const uint64_t p : pixels) {
      if (p >= p_fit) continue;
      const sc_time at = o + sc_time::from_value(uint64_t(u128(p) * kPs / clk));
      INFO("clock " << clk << " Hz, " << p << " pixels");
      CHECK(t.ticks_time(p) == at);
      CHECK(t.ticks(at) == p);  // a tick's own start counts it
    }
    // Picoseconds: at r = 0 ((dt + 1) * den a multiple of num) the floor steps; and past 64-bit products.
    std::vector<uint64_t> ps{0, 1, 2, num - 1, num, 2 * num - 1, kMax / den - 2, kMax / den - 1, kMax / den};
    for (int i = 0; i < 300; ++i) ps.push_back(rng() >> (rng() % 64));
    for (const uint64_t dt : ps) {
      if (dt >= kMax - o.value()) continue;
      const u128 p = (u128(dt + 1) * clk - 1) / kPs;
      if (p + 1 >= p_fit) continue;
      INFO("clock " << clk << " Hz, " << dt << " ps after the origin");
      CHECK(t.ticks(o + sc_time::from_value(dt)) == uint64_t(p));
      CHECK(t.ticks_time(uint64_t(p)) <= o + sc_time::from_value(dt));  // the definition, independently of the formula
      CHECK(t.ticks_time(uint64_t(p) + 1) > o + sc_time::from_value(dt));
    }
  }
}
