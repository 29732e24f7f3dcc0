// Display engine: mode timing arithmetic, formats, scan-out FIFO refill, flips latched at vblank,
// underflow and measured bandwidth (C6, H1, C4). Each case builds its own small platform: the engine,
// system memory and an interrupt controller behind a router, and a probe as the CPU.
#include <cstring>
#include <map>

#include "hw_model/display/display_engine.h"
#include "hw_model/interconnect/interrupt_controller.h"
#include "hw_model/interconnect/router.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;
namespace dr = gpumodel::display_regs;

namespace {
constexpr uint64_t kRegs = 0x2'0000'0000ull;  // outside memory: the probe is bound to the engine directly
const sc_time kRegWrite(20, SC_NS);           // display.reg_write_latency_ns
const sc_time kRegRead(540, SC_NS);           // display.reg_read_latency_ns
const sc_time kReadLatency(90, SC_NS);        // sysmem.read_latency_ns

ParamSet display_params(const Overrides& o) {
  ParamSet ps;
  Memory::declare_params(ps, "sysmem.", false);
  DisplayEngine::declare_params(ps);
  for (auto& [k, v] : o) ps.set(k, v, "test");
  return ps;
}

// ps(t) for exact expectations: picoseconds as an integer.
sc_time pst(uint64_t v) { return sc_time::from_value(v); }

struct DisplayRig {
  ParamSet ps;
  Vcd vcd;
  Memory mem;
  InterruptController ic;
  Router fabric;
  DisplayEngine disp;
  Probe cpu;
  std::vector<DisplayEngine::RequestRecord> reqs;
  std::vector<DisplayEngine::FrameRecord> frames;
  explicit DisplayRig(const Overrides& o = {}, sc_time hop = SC_ZERO_TIME, bool trace = false)
      : ps(display_params(o)),
        vcd(trace ? traced() : Vcd()),
        mem("sysmem", ps, "sysmem.", kMem),
        ic("ic", vcd),
        fabric("fabric", hop),
        disp("display", ps, vcd, kRegs),
        cpu("cpu") {
    disp.isock.bind(fabric.tsock);
    fabric.isock.bind(mem.tsock);
    fabric.isock.bind(ic.tsock);
    fabric.map(kMem, mem.size(), 0, "sysmem");
    fabric.map(InterruptController::kMsiBase, InterruptController::kMsiSize, 1, "msi");
    cpu.sock.bind(disp.regs);
    disp.on_request = [this](const DisplayEngine::RequestRecord& r) { reqs.push_back(r); };
    disp.on_frame = [this](const DisplayEngine::FrameRecord& r) { frames.push_back(r); };
  }
  static Vcd traced() {
    Vcd v;
    v.enable();
    return v;
  }
  // Posted at 0 (or now): surface, then enable; both land kRegWrite later, in order.
  void start(uint64_t surface, uint32_t control = dr::kCtrlEnable) {
    cpu.bus.post64(kRegs + dr::kSurfaceAddr, surface);
    cpu.bus.post32(kRegs + dr::kControl, control);
  }
  void wait_until(const sc_time& t) {
    REQUIRE(t >= sc_time_stamp());
    wait(t - sc_time_stamp());
  }
  // Starts the engine on a surface at `surface` and simulates until `t`.
  void run_until(const sc_time& t, uint64_t surface = kMem) {
    cpu.body = [this, t, surface] {
      start(surface);
      wait_until(t);
      sc_core::sc_stop();
    };
    sc_core::sc_start();
  }
};

// floor(pixels * 1e12 / clock) ps, independently of the model (pixels * 1e12 < 2^64 here).
sc_time px_time(uint64_t pixels, uint64_t clock_hz) {
  return pst(uint64_t((unsigned __int128)pixels * 1000000000000ull / clock_hz));
}
}  // namespace

TEST_CASE("display modes: line and frame times exact from the pixel clock", "[C6][H1]") {
  const sc_time o(20, SC_NS);
  {
    // 1080p60, CTA VIC 16: line 2200 px / 148.5 MHz = 14,814,814.8 ps; frame 2200 x 1125 = 2,475,000 px
    // = 16,666,666,666.7 ps; frame 0 starts after the 45-line vertical blank: 99,000 px = 666,666,666.7 ps;
    // frame 2 at (45 + 2 x 1125) x 2200 = 5,049,000 px = 34,000,000,000 ps exactly.
    const DisplayMode& m = display_mode("1920x1080@60");
    CHECK(m.h_total() == 2200);
    CHECK(m.v_total() == 1125);
    CHECK(m.refresh_hz() == Approx(60.0).epsilon(1e-12));
    ScanTiming t(m, 4, 0, o);
    CHECK(t.line_period() == pst(14814814));
    CHECK(t.frame_period() == pst(16666666666));
    CHECK(t.frame_start(0) == o + pst(666666666));
    CHECK(t.frame_start(2) == o + pst(34000000000));
    for (uint64_t n : {0, 1, 2, 7}) CHECK(t.frame_start(n) == o + px_time((45 + 1125 * n) * 2200, 148500000));
    // Line 1 of frame 0: 99,000 + 2,200 = 101,200 px = 681,481,481.5 ps; vblank of frame 0 after 1080 lines.
    CHECK(t.line_start(0, 1) == o + pst(681481481));
    CHECK(t.vblank_start(0) == o + px_time(1125 * 2200, 148500000));
    CHECK(t.row_bytes() == 7680);
    CHECK(t.frame_bytes() == 8294400);  // docs/calibration.md: bytes per 1080p frame at 4 B/px
  }
  {
    // 2160p60, CTA VIC 97: line 4400 px / 594 MHz = 7,407,407.4 ps; frame 4400 x 2250 = 9,900,000 px =
    // 16,666,666,666.7 ps; frame 0 after 90 blank lines = 396,000 px = 666,666,666.7 ps.
    const DisplayMode& m = display_mode("3840x2160@60");
    CHECK(m.h_total() == 4400);
    CHECK(m.v_total() == 2250);
    ScanTiming t(m, 4, 0, o);
    CHECK(t.line_period() == pst(7407407));
    CHECK(t.frame_period() == pst(16666666666));
    CHECK(t.frame_start(0) == o + pst(666666666));
    CHECK(t.frame_start(3) == o + px_time((90 + 3 * 2250) * 4400, 594000000));
  }
  {
    // 1440p144, CVT-RBv2: line 2640 px / 586.586 MHz = 4,500,618.x ps (2640e12 / 586,586,000);
    // frame 2640 x 1543 = 4,073,520 px = 6,944,454,862.x ps; frame 0 after 103 blank lines =
    // 271,920 px = 463,563,740.x ps. Refresh 586,586,000 / 4,073,520 = 143.9998 Hz.
    const DisplayMode& m = display_mode("2560x1440@144");
    CHECK(m.h_total() == 2640);
    CHECK(m.v_total() == 1543);
    CHECK(m.refresh_hz() == Approx(586586000.0 / 4073520.0));
    ScanTiming t(m, 4, 0, o);
    CHECK(t.line_period() == pst(4500618));
    CHECK(t.frame_period() == pst(6944454862));
    CHECK(t.frame_start(0) == o + pst(463563740));
    CHECK(t.frame_start(5) == o + px_time((103 + 5 * 1543) * 2640, 586586000));
  }
  CHECK_THROWS_AS(display_mode("1024x768"), ConfigError);  // neither named nor WxH@R
}

TEST_CASE("display: Scan timing: need_time and consumed are inverse at line boundaries, flat during blanking",
          "[C6][H1]") {
  const sc_time o(1, SC_US);
  for (const DisplayMode& m : display_modes()) {
    INFO(m.name);
    ScanTiming t(m, 4, 0, o);
    const uint64_t row = t.row_bytes(), fb = t.frame_bytes();
    CHECK(t.consumed(o) == 0);
    CHECK(t.consumed(t.frame_start(0)) == 0);  // the whole initial vertical blank consumes nothing
    for (uint64_t n : {0, 1, 2}) {
      for (unsigned l : {0u, 1u, 17u, m.v_active - 1}) {
        const uint64_t b = n * fb + l * row;
        CHECK(t.need_time(b) == t.line_start(n, l));
        CHECK(t.consumed(t.line_start(n, l)) == b);
        // Just before the line starts the beam is in the previous line's blank: all earlier rows, no more.
        CHECK(t.consumed(t.line_start(n, l) - pst(1)) == b);
        // 100 pixels in: 100 x 4 bytes more; the horizontal blank adds nothing.
        CHECK(t.consumed(t.ticks_time(t.ticks(t.line_start(n, l)) + 100)) == b + 400);
        CHECK(t.consumed(t.ticks_time(t.ticks(t.line_start(n, l)) + m.h_active)) == b + row);
        CHECK(t.consumed(t.line_start(n, l + 1) - pst(1)) == b + row);
        CHECK(t.time_consumed(b + 1) == t.ticks_time(t.ticks(t.line_start(n, l)) + 1));
      }
      // The vertical blank: the frame is done at its start and nothing moves until the next frame.
      CHECK(t.consumed(t.vblank_start(n)) == (n + 1) * fb);
      CHECK(t.consumed(t.frame_start(n + 1) - pst(1)) == (n + 1) * fb);
      CHECK(t.consumed(t.frame_start(n + 1)) == (n + 1) * fb);
      // No drift: the blank lasts its lines' exact time, floored once (less than 1 ps per line lost).
      const sc_time blank = t.frame_start(n + 1) - t.vblank_start(n);
      CHECK(blank >= t.line_period() * double(t.vblank_lines()));
      CHECK(blank - t.line_period() * double(t.vblank_lines()) <= pst(t.vblank_lines()));
    }
    // time_consumed is the earliest time consumed() reaches a count.
    for (uint64_t c : {uint64_t(1), uint64_t(4), uint64_t(5), row + 3, fb - 1, fb, fb + 7}) {
      CHECK(t.consumed(t.time_consumed(c)) >= c);
      CHECK(t.consumed(t.time_consumed(c) - pst(1)) < c);
    }
  }
}

TEST_CASE("display: Scan-out formats: the tier-3 minimum list and its bytes per pixel", "[C4][C6]") {
  CHECK(bytes_per_pixel("R8G8B8A8_UNORM") == 4);
  CHECK(bytes_per_pixel("R8G8B8A8_UNORM_SRGB") == 4);
  CHECK(bytes_per_pixel("B8G8R8A8_UNORM") == 4);
  CHECK(bytes_per_pixel("B8G8R8A8_UNORM_SRGB") == 4);
  CHECK(bytes_per_pixel("R10G10B10A2_UNORM") == 4);
  CHECK(bytes_per_pixel("R16G16B16A16_FLOAT") == 8);
  CHECK(display_format_names().size() == 6);
  CHECK_THROWS_AS(bytes_per_pixel("R5G6B5_UNORM"), ConfigError);
  // FP16 x 4 doubles the 1080p frame: 16,588,800 B (docs/calibration.md).
  ScanTiming t(display_mode("1920x1080@60"), bytes_per_pixel("R16G16B16A16_FLOAT"), 0, SC_ZERO_TIME);
  CHECK(t.frame_bytes() == 16588800);
}

TEST_CASE("display parameters: a FIFO smaller than one request, odd requests, unknown modes and formats are refused",
          "[C6][C4]") {
  auto msg = [](const std::map<std::string, std::string>& o) -> std::string {
    try {
      DisplayEngine::validate(display_params(o));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(msg({}) == "");
  CHECK(msg({{"display.fifo_bytes", "4096"}, {"display.request_bytes", "8192"}}).find("display.fifo_bytes") !=
        std::string::npos);
  CHECK(msg({{"display.fifo_bytes", "8192"}, {"display.request_bytes", "8192"}}) == "");
  CHECK(msg({{"display.request_bytes", "100"}}).find("display.request_bytes") != std::string::npos);
  ParamSet ps = display_params({});
  try {
    ps.set("display.mode", "1024x768@300", "test");  // R above 240 Hz
    FAIL("unknown mode accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("display.mode") != std::string::npos);
  }
  try {
    ps.set("display.format", "R5G6B5_UNORM", "test");
    FAIL("unknown format accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("display.format") != std::string::npos);
  }
  CHECK_THROWS_AS(ps.set("display.fifo_bytes", "32", "test"), ConfigError);  // below 64
  CHECK_THROWS_AS(ps.set("display.outstanding", "65", "test"), ConfigError);
}

TEST_CASE("display registers: read latency, id, and scanline and frame count computed from time", "[C6][H1]") {
  DisplayRig r;
  uint32_t id = 0, line_before = 0, line_at = 0, line_blank = 0;
  uint64_t frames_at = 0;
  sc_time id_done;
  const sc_time t0 = kRegWrite;  // the enable lands 20 ns after it is posted at 0
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
  const sc_time s = t.line_start(1, 5);
  r.cpu.body = [&] {
    r.start(kMem);
    id = r.cpu.bus.read32(kRegs + dr::kId);
    id_done = sc_time_stamp();
    // Sampled 1 ps before frame 1's line 5 starts, and at that instant (read latency before it).
    r.wait_until(s - pst(1) - kRegRead);
    line_before = r.cpu.bus.read32(kRegs + dr::kScanline);
    // Issued as the first returns: sampled 540 ns - 1 ps into line 5 (a line lasts 14.8 us).
    line_at = r.cpu.bus.read32(kRegs + dr::kScanline);
    frames_at = r.cpu.bus.read64(kRegs + dr::kFrameCount);
    r.wait_until(t.vblank_start(1) - kRegRead);
    line_blank = r.cpu.bus.read32(kRegs + dr::kScanline);
    sc_stop();
  };
  sc_start();
  CHECK(id == dr::kIdValue);
  CHECK(id_done == kRegRead);  // the read is sampled after the register-bus latency and returns then
  CHECK(line_before == 4);
  CHECK(line_at == 5);
  CHECK(frames_at == 2);      // frames 0 and 1 have started
  CHECK(line_blank == 1080);  // the vertical blank reads as lines v_active..v_total-1
  CHECK(r.disp.timing().origin() == t0);
}

TEST_CASE("display: Scan-out FIFO: K requests at enable, stop when full, resume below the watermark at the exact time",
          "[C6][H1]") {
  // A FIFO of 4 requests of 8 KB, 8 outstanding, watermark 50 % = 16 KB (below fifo - request = 24 KB).
  DisplayRig r(Overrides{{"display.fifo_bytes", "32768"},
                         {"display.request_bytes", "8192"},
                         {"display.outstanding", "8"},
                         {"display.watermark_pct", "50"}});
  const sc_time t0 = kRegWrite;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
  r.run_until(t.line_start(0, 12));
  CHECK(r.disp.watermark_bytes() == 16384);
  REQUIRE(r.reqs.size() >= 8);
  // The first four fill the FIFO and leave together at the enable; the DRAM port serialises them:
  // arrival i = t0 + (i + 1) x 8192 B at 76.8 GB/s + 90 ns (the router adds nothing here).
  for (unsigned i = 0; i < 4; ++i) {
    CHECK(r.reqs[i].issue == t0);
    CHECK(r.reqs[i].stream_byte == 8192 * i);
    CHECK(r.reqs[i].arrival == t0 + dflt::dram_xfer(8192) * double(i + 1) + kReadLatency);
  }
  // Full (32 KB issued, nothing consumed) until the level falls below 16 KB: consumed > 16,384 bytes,
  // i.e. byte 16,384 = pixel 4096 = row 2, pixel 256 has ended: tick (45 + 2) x 2200 + 257 = 103,657
  // = floor(103,657e12 / 148.5e6) = 698,026,936 ps after the origin. Then consumed = 16,388: two
  // requests fit (24,572 and 32,764 <= 32,768), a third does not.
  const sc_time resume1 = t0 + pst(698026936);
  CHECK(r.reqs[4].issue == resume1);
  CHECK(r.reqs[5].issue == resume1);
  // Issued 48 KB; the next resume needs consumed > 32,768: byte 32,768 = pixel 8192 = row 4, pixel 512;
  // tick (45 + 4) x 2200 + 513 = 108,313 -> floor(108,313e12 / 148.5e6) = 729,380,471 ps.
  CHECK(r.reqs[6].issue == t0 + pst(729380471));
  // The room rule never over-commits the FIFO, counting everything in flight.
  for (auto& q : r.reqs) CHECK(q.stream_byte + q.len - t.consumed(q.issue) <= 32768);
  // The level just before request 4 arrives (the port is idle: 8 KB transfer and 90 ns after resume1):
  // 32 KB arrived less what the beam consumed by then. The minimum is no higher, and positive.
  const sc_time a4 = resume1 + dflt::dram_xfer(8192) + kReadLatency;
  CHECK(r.reqs[4].arrival == a4);
  CHECK(r.disp.min_fifo_bytes() <= 32768 - t.consumed(a4));
  CHECK(r.disp.min_fifo_bytes() > 0);
  CHECK(r.disp.underflows() == 0);
}

TEST_CASE("display: Flip latched at vblank: the next frame reads the new surface, flip-complete MSI after the latch",
          "[C6][H1]") {
  const sc_time hop(10, SC_NS);
  DisplayRig r(Overrides{{"display.reg_read_latency_ns", "0"}}, hop);
  const uint64_t a = kMem + 0x100000, b = kMem + 0x4000000;
  const uint64_t tag_a = 0xA0A0A0A0'00000001ull, tag_b = 0xB0B0B0B0'00000002ull;
  r.mem.poke(a, &tag_a, 8);
  r.mem.poke(b, &tag_b, 8);
  const sc_time t0 = kRegWrite;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
  const sc_time v = t.vblank_start(0);
  uint64_t cur_before = 0, cur_at = 0, pend_before = 0, pend_at = 1, latched = 0;
  r.cpu.body = [&] {
    r.cpu.bus.post64(kRegs + dr::kMsiAddr, InterruptController::kMsiBase);
    r.cpu.bus.post32(kRegs + dr::kMsiData, 0x40);
    r.start(a, dr::kCtrlEnable | dr::kCtrlVblankIrq | dr::kCtrlFlipIrq);
    r.wait_until(t.line_start(0, 500));  // mid-frame 0
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddr, b);
    r.wait_until(v - pst(1));
    cur_before = r.cpu.bus.read64(kRegs + dr::kCurrentAddr);
    pend_before = r.cpu.bus.read32(kRegs + dr::kFlipPending);
    r.wait_until(v);
    cur_at = r.cpu.bus.read64(kRegs + dr::kCurrentAddr);
    pend_at = r.cpu.bus.read32(kRegs + dr::kFlipPending);
    latched = r.cpu.bus.read64(kRegs + dr::kFlipsLatched);
    r.wait_until(t.frame_start(1) + t.line_period());
    sc_stop();
  };
  sc_start();
  CHECK(cur_before == a);
  CHECK(pend_before == 1);
  CHECK(cur_at == b);  // latched exactly at frame 0's vblank start
  CHECK(pend_at == 0);
  CHECK(latched == 1);
  REQUIRE(r.frames.size() == 2);
  CHECK(r.frames[0].surface == a);
  CHECK(r.frames[0].first_qword == tag_a);
  CHECK(r.frames[0].first_line_time == t.frame_start(0));
  CHECK(r.frames[1].surface == b);
  CHECK(r.frames[1].first_qword == tag_b);
  CHECK(r.frames[1].first_line_time == t.frame_start(1));
  // Frame 1 is not fetched before its surface is known: its first request leaves at the latch (the
  // FIFO is empty then: all of frame 0 issued and consumed).
  for (auto& q : r.reqs)
    if (q.frame == 1) {
      CHECK(q.issue == v);
      CHECK(q.addr == b);
      break;
    }
  // The vblank MSI (data base + 0), then flip complete (+ 1), posted at the latch; one router hop.
  uint32_t vec = 0;
  sc_time at;
  REQUIRE(r.ic.take(vec, at));
  CHECK(vec == 0x40 + dr::kVblankVector);
  CHECK(at == v + hop);
  REQUIRE(r.ic.take(vec, at));
  CHECK(vec == 0x40 + dr::kFlipVector);
  CHECK(at == v + hop);
  CHECK_FALSE(r.ic.take(vec, at));
}

TEST_CASE("display: an immediate flip takes effect with the next request and records its tear line", "[C5][C6]") {
  // DXGK_FLIPCAPS FlipImmediateMmio: written at line 500 of frame 0, the new surface is read from the DMA's
  // next request on (the FIFO still holds the old surface's bytes ahead of the beam, so the tear is below
  // the beam: at the line of that request's first byte); the flip-complete MSI goes when it is issued.
  const sc_time hop(10, SC_NS);
  DisplayRig r(Overrides{}, hop);
  const uint64_t a = kMem + 0x100000, b = kMem + 0x4000000;
  const uint64_t tag_b = 0xB0B0B0B0'00000002ull;
  r.mem.poke(b, &tag_b, 8);
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, kRegWrite);
  std::vector<DisplayEngine::TearRecord> tears;
  r.disp.on_tear = [&](const DisplayEngine::TearRecord& x) { tears.push_back(x); };
  const sc_time write_at = t.line_start(0, 500);
  r.cpu.body = [&] {
    r.cpu.bus.post64(kRegs + dr::kMsiAddr, InterruptController::kMsiBase);
    r.cpu.bus.post32(kRegs + dr::kMsiData, 0x40);
    r.start(a, dr::kCtrlEnable | dr::kCtrlFlipIrq);
    r.wait_until(write_at);
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddrImmediate, b);
    r.wait_until(t.frame_start(1) + t.line_period());
    sc_stop();
  };
  sc_start();
  const sc_time landed = write_at + kRegWrite;
  // Requests issued before the write landed read surface a; the first one after reads b at its offset.
  const DisplayEngine::RequestRecord* first = nullptr;
  for (auto& q : r.reqs) {
    if (q.issue < landed) {
      CHECK(q.addr == a + q.stream_byte % t.frame_bytes());
    } else if (!first || q.issue < first->issue) {
      first = &q;
    }
  }
  REQUIRE(first != nullptr);
  CHECK(first->frame == 0);
  CHECK(first->addr == b + first->stream_byte);
  REQUIRE(tears.size() == 1);
  CHECK(tears[0].frame == 0);
  CHECK(tears[0].surface == b);
  CHECK(tears[0].line == first->stream_byte / t.row_bytes());
  CHECK(tears[0].line > 500);  // below the beam: the FIFO's lead
  CHECK(tears[0].time == t.need_time(first->stream_byte));
  CHECK(r.disp.immediate_flips() == 1);
  CHECK(r.disp.flips_latched() == 0);  // no vsync'd latch
  // The next frame starts on b (its tag read at the top).
  REQUIRE(r.frames.size() == 2);
  CHECK(r.frames[1].surface == b);
  CHECK(r.frames[1].first_qword == tag_b);
  // Flip complete: posted when the request left, one router hop.
  uint32_t vec = 0;
  sc_time at;
  REQUIRE(r.ic.take(vec, at));
  CHECK(vec == 0x40 + dr::kFlipVector);
  CHECK(at == first->issue + hop);
  CHECK_FALSE(r.ic.take(vec, at));
}

TEST_CASE("display: an immediate flip supersedes a pending vsync'd flip", "[C6]") {
  DisplayRig r;
  const uint64_t a = kMem, b = kMem + 0x1000000, c = kMem + 0x2000000;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, kRegWrite);
  r.cpu.body = [&] {
    r.start(a);
    r.wait_until(t.line_start(0, 100));
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddr, b);           // vsync'd, pending
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddrImmediate, c);  // immediate: c from now on, b never latched
    r.wait_until(t.frame_start(1) + t.line_period());
    sc_stop();
  };
  sc_start();
  CHECK(r.disp.flips_latched() == 0);
  CHECK(r.disp.flips_replaced() == 1);
  CHECK(r.disp.immediate_flips() == 1);
  CHECK_FALSE(r.disp.flip_pending());
  REQUIRE(r.frames.size() == 2);
  CHECK(r.frames[1].surface == c);
}

TEST_CASE("display: Two flips before one vblank: the latest wins, the other is counted replaced", "[C6]") {
  DisplayRig r;
  const uint64_t a = kMem, b = kMem + 0x1000000, c = kMem + 0x2000000;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, kRegWrite);
  r.cpu.body = [&] {
    r.start(a);
    r.wait_until(t.line_start(0, 100));
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddr, b);
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddr, c);
    r.wait_until(t.vblank_start(0) + pst(1));
    sc_stop();
  };
  sc_start();
  CHECK(r.disp.current_surface() == c);
  CHECK(r.disp.flips_latched() == 1);
  CHECK(r.disp.flips_replaced() == 1);
  CHECK_FALSE(r.disp.flip_pending());
}

TEST_CASE("display: Underflow: 1 ms memory latency underflows, counted with frame and line", "[C6][H1]") {
  {
    // 8 requests of 8 KB per millisecond is far below the 0.594 GB/s the active lines drain, and the
    // first data arrives after frame 0 has started (the initial vertical blank lasts 666.7 us).
    DisplayRig r(Overrides{{"sysmem.read_latency_ns", "1000000"}});
    const sc_time t0 = kRegWrite;
    const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
    uint64_t hook_calls = 0, reg = 0;
    r.disp.on_underflow = [&](uint64_t, unsigned, sc_time) { ++hook_calls; };
    r.cpu.body = [&] {
      r.start(kMem);
      r.wait_until(t0 + sc_time(3, SC_MS));
      reg = r.cpu.bus.read64(kRegs + dr::kUnderflows);
      sc_stop();
    };
    sc_start();
    REQUIRE(r.disp.underflows() > 0);
    CHECK(hook_calls == r.disp.underflows());
    CHECK(reg == r.disp.underflows());
    const auto& u = r.disp.underflow_records().front();
    CHECK(u.frame == 0);
    CHECK(u.line == 0);
    CHECK(u.time == t0 + dflt::dram_xfer(8192) + sc_time(1, SC_MS));  // the first request's arrival
    CHECK(u.need == t.frame_start(0));
    CHECK(r.disp.min_fifo_bytes() == 0);
  }
}

TEST_CASE(
    "display: Underflow: a fetch behind the beam resyncs at each vblank start, never fetching a frame after it ended",
    "[C6][H1]") {
  // With 1 ms of memory latency the DMA gets about 8 x 8 KB a millisecond, an eighth of a frame in
  // the 16.7 ms it lasts. At frame n's vblank start the rest of frame n is skipped (an underflow per
  // request's worth) and frame n + 1 is fetched from its first byte, as a display pipe restarts.
  DisplayRig r(Overrides{{"sysmem.read_latency_ns", "1000000"}});
  const sc_time t0 = kRegWrite;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
  r.run_until(t.frame_start(3));
  REQUIRE(!r.reqs.empty());
  std::map<uint64_t, uint64_t> first_byte;  // frame -> its earliest request's stream byte
  uint64_t late = 0;
  for (auto& q : r.reqs) {
    INFO("frame " << q.frame << " byte " << q.stream_byte);
    CHECK(q.issue < t.vblank_start(q.frame));  // never requested after its frame ended
    if (!first_byte.count(q.frame)) first_byte[q.frame] = q.stream_byte;
    if (q.arrival > t.need_time(q.stream_byte)) ++late;
  }
  // Frames 1 and 2 start at their first byte, after the previous frame's vblank start.
  const uint64_t fb = 1920ull * 1080 * 4;
  REQUIRE(first_byte.count(1));
  REQUIRE(first_byte.count(2));
  CHECK(first_byte[1] == fb);
  CHECK(first_byte[2] == 2 * fb);
  CHECK(r.disp.frames_started() >= 2);
  // Frames 0, 1 and 2 ended by frame 3's start: three resyncs, each skipping the rest of a frame that
  // starved. Requests sit at multiples of 8 KB in a frame and a frame is 8,294,400 = 1012 x 8 KB + 4 KB,
  // so each skip is k x 8 KB + 4 KB = k + 1 requests' worth: underflows = late arrivals
  // + (skipped - 3 x 4 KB) / 8 KB + 3.
  REQUIRE(r.disp.bytes_skipped() > 0);
  CHECK((r.disp.bytes_skipped() - 3 * 4096) % 8192 == 0);
  CHECK(r.disp.underflows() == late + (r.disp.bytes_skipped() - 3 * 4096) / 8192 + 3);
  // The stream is frame 3's by now, and what was requested but not skipped has arrived or is in flight
  // (frame 3's requests, 8 KB each).
  CHECK(r.disp.bytes_issued() + r.disp.bytes_skipped() >= 3 * fb);
  CHECK(r.disp.bytes_issued() - r.disp.bytes_fetched() == uint64_t(r.disp.in_flight()) * 8192);
}

TEST_CASE("display: Underflow: the default platform never underflows over two frames", "[C6][H1]") {
  {
    DisplayRig r;
    const sc_time t0 = kRegWrite;
    const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
    r.run_until(t.frame_start(2));
    CHECK(r.disp.underflows() == 0);
    CHECK(r.disp.frames_started() == 3);  // frame 2's first request arrived during the blank before it
    CHECK(r.disp.min_fifo_bytes() > 0);
    // 8 outstanding of a 32-request FIFO: the first 8 leave at the enable, the 9th when the first arrives.
    REQUIRE(r.reqs.size() > 9);
    for (unsigned i = 0; i < 8; ++i) CHECK(r.reqs[i].issue == t0);
    CHECK(r.reqs[8].issue == r.reqs[0].arrival);
    CHECK(r.reqs[0].arrival == t0 + dflt::dram_xfer(8192) + kReadLatency);
  }
}

TEST_CASE("display: Measured scan-out bandwidth: 1080p60 RGBA8 averages 0.4977 GB/s, 0.594 GB/s during active pixels",
          "[C6][H1]") {
  // Over whole frames: 1920 x 1080 x 4 B = 8,294,400 B per frame x 60 Hz = 497,664,000 B/s (docs/calibration.md
  // 0.50 GB/s). During active pixels the beam takes 4 B per pixel clock: 4 x 148.5e6 = 594,000,000 B/s.
  // Measured between two vblank starts, where the FIFO is empty (frame n fetched, frame n+1 not yet
  // latched), and as consumed bytes over the active time.
  DisplayRig r;
  const sc_time t0 = kRegWrite;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, t0);
  uint64_t f0 = 0, f2 = 0, consumed = 0;
  sc_time v0, v2, active;
  r.cpu.body = [&] {
    r.start(kMem);
    r.wait_until(t.vblank_start(0));
    v0 = sc_time_stamp();
    f0 = r.disp.bytes_fetched();
    r.wait_until(t.vblank_start(2));
    v2 = sc_time_stamp();
    f2 = r.disp.bytes_fetched();
    consumed = r.disp.bytes_consumed();
    active = r.disp.active_time();
    sc_stop();
  };
  sc_start();
  CHECK(f0 == 8294400);
  const double avg = double(f2 - f0) / (v2 - v0).to_seconds();
  CHECK(avg == Approx(8294400.0 * 60).epsilon(0.001));
  CHECK(consumed == 3 * 8294400ull);
  CHECK(double(consumed) / active.to_seconds() == Approx(4 * 148.5e6).epsilon(0.001));
  CHECK(r.disp.underflows() == 0);
}

TEST_CASE("display trace: line, fifo, vblank, flip and surface signals are written when tracing is on", "[C6]") {
  DisplayRig r(Overrides{}, SC_ZERO_TIME, true);
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, kRegWrite);
  r.cpu.body = [&] {
    r.start(kMem);
    r.wait_until(t.line_start(0, 10));
    r.cpu.bus.post64(kRegs + dr::kSurfaceAddr, kMem + 0x1000000);
    r.wait_until(t.frame_start(1));
    sc_stop();
  };
  sc_start();
  const std::string path = "display_trace_" + std::to_string(::getpid()) + ".vcd";
  REQUIRE(r.vcd.write(path, "test").empty());
  const std::string v = slurp(path);
  std::remove(path.c_str());
  for (const char* sig : {"line", "fifo_bytes", "underflow", "flip", "vblank", "surface"})
    CHECK(v.find(sig) != std::string::npos);
  CHECK(r.disp.flips_latched() == 1);
}

TEST_CASE("display: Pitched surface: a request crossing a row end is split into per-row reads that skip the pad",
          "[C6][H1]") {
  // Pitch 8192 B for 7680-byte rows: request 0 (stream bytes 0..8191) is row 0 whole and the first 512 B
  // of row 1, read at A and A + 8192; the pad A + 7680 .. A + 8191 is never read.
  DisplayRig r;
  const uint64_t a = kMem + 0x100000;
  const uint64_t row1_tag = 0x1111222233334444ull;
  r.mem.poke(a + 8192, &row1_tag, 8);
  uint64_t seen = 0, pad_reads = 0;
  r.mem.watch_reads(a + 8192, [&](uint64_t v) { seen = v; });
  r.mem.watch_reads(a + 7680, [&](uint64_t) { ++pad_reads; });
  const sc_time t0 = kRegWrite;
  const ScanTiming t(display_mode("1920x1080@60"), 4, 8192, t0);
  r.cpu.body = [&] {
    r.cpu.bus.post32(kRegs + dr::kPitch, 8192);
    r.start(a);
    r.wait_until(t.line_start(0, 3));
    sc_stop();
  };
  sc_start();
  CHECK(seen == row1_tag);
  CHECK(pad_reads == 0);
  REQUIRE(r.reqs.size() > 8);
  // The pieces go one after the other within the request's slot; the other 7 slots' reads compete for
  // the DRAM port too, so only the first slot's first piece has the port to itself at t0.
  CHECK(r.reqs[0].addr == a);
  CHECK(r.reqs[0].arrival > t0 + dflt::dram_xfer(7680) + kReadLatency + kReadLatency);
  CHECK(r.reqs[1].addr == a + 8192 + 512);  // stream byte 8192 = row 1, byte 512
  CHECK(r.disp.underflows() == 0);
}

namespace {
// Panel self refresh after 2 idle frames: which frames the engine fetches, with a flip posted during
// frame `flip_in` (0: none). The enable lands at kRegWrite; the run stops in the middle of frame 9.
void psr_run(uint64_t flip_in, const std::vector<uint64_t>& fetched, uint64_t psr_frames) {
  DisplayRig r({{"display.psr", "on"}, {"display.psr_idle_frames", "2"}});
  const ScanTiming t(display_mode("1920x1080@60"), 4, 0, kRegWrite);
  const sc_time end = t.line_start(9, 540);
  r.cpu.body = [&] {
    r.start(kMem);
    if (flip_in) {
      r.wait_until(t.line_start(flip_in, 100));
      r.cpu.bus.post64(kRegs + dr::kSurfaceAddr, kMem);  // a flip (to the same buffer) is a new image
    }
    r.wait_until(end);
    sc_core::sc_stop();
  };
  sc_core::sc_start();
  std::vector<uint64_t> got;
  for (auto& f : r.frames) got.push_back(f.frame);
  CHECK(got == fetched);
  CHECK(r.disp.psr_frames() == psr_frames);
  CHECK(r.disp.underflows() == 0);
  CHECK(r.disp.bytes_fetched() == fetched.size() * t.frame_bytes());
  // The power state: PSR from the vblank start that decided the first self-refresh frame.
  if (!flip_in) CHECK(r.disp.power().time_in(DisplayEngine::kPsr, end) == end - t.vblank_start(1));
}
}  // namespace

// Frames 0 and 1 are fetched; vblank 1 is the second without a flip, so frames 2.. are self refresh.
TEST_CASE("display: panel self refresh stops the fetch after psr_idle_frames vblanks without a flip", "[C6][H5]") {
  psr_run(0, {0, 1}, 8);
}

// The flip posted in frame 5 latches at vblank 5: frames 6 and 7 are fetched, 8 and 9 self-refresh again.
TEST_CASE("display: a flip ends panel self refresh for the next frame and restarts the idle count", "[C6][H5]") {
  psr_run(5, {0, 1, 6, 7}, 6);
}
