// presentmon_replay's rules, each on a capture built for it: the refresh fitted over the capture's whole
// span, the swap chain chosen by PID (a name only as a shortcut, refused when two processes share it;
// a tie never lands on a swap chain without hardware flips), the naive baseline and the verdict that
// fails below it, and the flip queue: a burst of presents drains one per vblank, as on the hardware.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "scenarios/presentmon/presentmon.h"
#include "scenarios/presentmon/refresh_fit.h"
#include "scenarios/presentmon/replay_comparison.h"
#include "scenarios/presentmon/swap_chain_choice.h"
#include "tb.h"

using namespace tb;
using namespace gpumodel;

namespace {

Capture parse_rules_csv(const std::string& text) { return parse_presentmon(text, "t.csv", "workload.presentmon"); }

// A 1.x capture: application, PID, swap chain, present mode, Present() time (s), until displayed (ms).
std::string row(const std::string& app, int pid, const std::string& chain, const std::string& mode, double t_s) {
  char b[256];
  std::snprintf(b, sizeof b, "%s,%d,%s,1,%s,0,%.7f,16.6,0.1,1.0,10.0\n", app.c_str(), pid, chain.c_str(), mode.c_str(),
                t_s);
  return b;
}
const std::string kLegacy = "Hardware: Legacy Flip", kGdi = "Composed: Copy with GPU GDI";

std::string write_temp(const std::string& tag, const std::string& text) {
  const std::string path = "pm_" + tag + "_" + std::to_string(::getpid()) + ".csv";
  std::ofstream(path) << text;
  return path;
}

// The model's PresentMon rows (written by --presentmon): read, then the file removed. col() is a column's
// index (cols.size() when absent), rows each row's fields.
struct Rows {
  std::vector<std::string> cols;
  std::vector<std::vector<std::string>> rows;
  size_t col(const std::string& name) const { return size_t(std::find(cols.begin(), cols.end(), name) - cols.begin()); }
  double num(size_t row, const std::string& name) const { return std::stod(rows.at(row).at(col(name))); }
};
Rows read_replay_rows(const std::string& path) {
  Rows r;
  std::ifstream in(path);
  auto split = [](const std::string& line) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
    return f;
  };
  std::string line;
  if (std::getline(in, line)) r.cols = split(line);
  while (std::getline(in, line)) r.rows.push_back(split(line));
  in.close();
  std::remove(path.c_str());
  return r;
}

}  // namespace

TEST_CASE("presentmon_replay refresh: fitted over the capture's whole span, not a local estimate", "[H4][presentmon]") {
  // A 59.949 Hz panel (16.68085 ms) seen for 1000 refreshes, a frame on two of every three, each screen
  // time quantised to 0.1 ms and jittered by up to +-0.3 ms (PresentMon's display times carry the
  // flip-complete event's delay). Locally one refresh's interval is 16.0 to 17.3 ms: 57.7 to 62.5 Hz.
  // Over the span the error of one screen time is spread over 1000 refreshes: the slope is within
  // 0.7 ms / 1000 refreshes, 4e-5 of the period, so 59.949 +- 0.001 Hz (0.0025 at worst; the fit
  // averages the jitter out further).
  const double period = 1000.0 / 59.949;
  std::vector<double> screen;
  for (int k = 0; k < 1000; ++k) {
    if (k % 3 == 2) continue;
    const double jitter = 0.3 * std::sin(k * 12.9898);  // deterministic, in [-0.3, 0.3]
    screen.push_back(std::round((5.0 + k * period + jitter) * 10.0) / 10.0);
  }
  const RefreshFit f = fit_refresh(screen);
  CHECK(1000.0 / f.period_ms == Approx(59.949).margin(0.001));
  // The phase: a refresh starts at 5 ms (mod the period), to the jitter's mean.
  CHECK(std::remainder(f.phase_ms - 5.0, f.period_ms) == Approx(0.0).margin(0.1));
  CHECK(f.on_grid_pct == 100.0);
  // A gap of many refreshes (the app idle) keeps the count of refreshes in it.
  std::vector<double> gap = {0.0, period, 2 * period, 300 * period, 301 * period, 302 * period};
  CHECK(fit_refresh(gap).period_ms == Approx(period).epsilon(1e-9));
  // Too few screen changes: no period.
  CHECK(fit_refresh({1.0, 17.0}).period_ms == 0.0);
}

TEST_CASE("presentmon_replay refresh: the shipped 59.949 Hz capture fits its span's rate", "[H4][presentmon]") {
  // test_case_4.csv, dwm.exe's hardware flips: its first and last display times are 112 refreshes apart
  // (1868.2 ms / 112 = 16.681 ms, 59.949 Hz). The least-squares fit over all of them agrees to 0.002 Hz;
  // an estimate from the intervals alone (their 10th percentile refined over their whole multiples)
  // gives 59.928 Hz, and one refresh's step 60.15 Hz.
  const Capture cap =
      read_presentmon(std::string(GPUMODEL_SOURCE_DIR) + "/workloads/captures/test_case_4.csv", "workload.presentmon");
  std::vector<double> screen;
  for (const CapturedPresent& p : cap.presents)
    if (cap.name(p.application) == "dwm.exe" && replayed_present_mode(cap.name(p.present_mode)) && p.until_displayed_ms)
      screen.push_back(p.present_ms + *p.until_displayed_ms);
  REQUIRE(screen.size() >= 100);
  std::sort(screen.begin(), screen.end());
  const RefreshFit f = fit_refresh(screen);
  const double span = screen.back() - screen.front();
  const double span_period = span / std::round(span / f.period_ms);
  CHECK(1000.0 / span_period == Approx(59.949).margin(0.001));
  CHECK(1000.0 / f.period_ms == Approx(1000.0 / span_period).margin(0.002));
}

TEST_CASE("presentmon_replay choice: by PID and swap chain, a name two processes share refused naming both",
          "[H4][presentmon]") {
  // Two processes named game.exe (PIDs 7 and 9), and dwm.exe with two swap chains.
  const Capture cap =
      parse_rules_csv(k1x + row("game.exe", 7, "0x10", kLegacy, 0.01) + row("game.exe", 9, "0x20", kLegacy, 0.02) +
                      row("game.exe", 9, "0x20", kLegacy, 0.03) + row("dwm.exe", 4, "0x30", kLegacy, 0.04) +
                      row("dwm.exe", 4, "0x31", kLegacy, 0.05) + row("dwm.exe", 4, "0x31", kLegacy, 0.06));
  auto chain = [&](const SwapChainChoice& c) { return cap.name(c.swap_chain); };
  // By PID: the process's own presents only, never merged with another of the same name.
  const SwapChainChoice p7 = choose_swap_chain(cap, 7, "", "", "t.csv");
  CHECK(p7.process_id == 7);
  CHECK(chain(p7) == "0x10");
  CHECK(p7.hardware_flips == 1);
  CHECK(choose_swap_chain(cap, 9, "", "", "t.csv").hardware_flips == 2);
  // The name alone: refused, naming both PIDs and the key that chooses.
  CHECK_THROWS_WITH(choose_swap_chain(cap, 0, "game.exe", "", "t.csv"),
                    Catch::Contains("workload.presentmon_process = 'game.exe' names 2 processes") &&
                        Catch::Contains("(PIDs 7, 9)") && Catch::Contains("allowed: workload.presentmon_pid"));
  // A name one process has is its PID; a PID and a name that disagree are refused.
  CHECK(choose_swap_chain(cap, 0, "dwm.exe", "", "t.csv").process_id == 4);
  CHECK_THROWS_WITH(choose_swap_chain(cap, 7, "dwm.exe", "", "t.csv"), Catch::Contains("is not process 7"));
  CHECK_THROWS_WITH(choose_swap_chain(cap, 5, "", "", "t.csv"),
                    Catch::Contains("workload.presentmon_pid = 5 presents nothing") && Catch::Contains("4, 7, 9"));
  // A swap chain by its address, as a number (the key's zero padding and case do not matter).
  CHECK(chain(choose_swap_chain(cap, 4, "", "0x30", "t.csv")) == "0x30");
  CHECK(choose_swap_chain(cap, 4, "", "0X00031", "t.csv").hardware_flips == 2);
  CHECK_THROWS_WITH(choose_swap_chain(cap, 4, "", "0x10", "t.csv"),
                    Catch::Contains("workload.presentmon_swapchain = '0x10' is not a swap chain of process 4"));
  // Nothing given: the process with the most hardware flips (dwm.exe's 3 over game.exe 9's 2), and its
  // swap chain with the most (0x31's 2).
  const SwapChainChoice d = choose_swap_chain(cap, 0, "", "", "t.csv");
  CHECK(d.process_id == 4);
  CHECK(d.hardware_flips == 2);
}

TEST_CASE("presentmon_replay choice: a tie never lands on a GDI swap chain when another has hardware flips",
          "[H4][presentmon]") {
  // One process, two swap chains of 3 presents each: the GDI copy's comes first in the file. The one
  // with hardware flips is replayed; so is the process, over another with more presents but no flips.
  const Capture cap =
      parse_rules_csv(k1x + row("app.exe", 5, "0xA", kGdi, 0.01) + row("app.exe", 5, "0xB", kLegacy, 0.011) +
                      row("app.exe", 5, "0xA", kGdi, 0.02) + row("app.exe", 5, "0xB", kLegacy, 0.021) +
                      row("app.exe", 5, "0xA", kGdi, 0.03) + row("app.exe", 5, "0xB", kLegacy, 0.031) +
                      row("gdi.exe", 6, "0xC", kGdi, 0.04) + row("gdi.exe", 6, "0xC", kGdi, 0.05) +
                      row("gdi.exe", 6, "0xC", kGdi, 0.06) + row("gdi.exe", 6, "0xC", kGdi, 0.07));
  const SwapChainChoice c = choose_swap_chain(cap, 0, "", "", "t.csv");
  CHECK(c.process_id == 5);
  CHECK(cap.name(c.swap_chain) == "0xB");
  CHECK(c.hardware_flips == 3);
  CHECK(cap.name(choose_swap_chain(cap, 5, "", "", "t.csv").swap_chain) == "0xB");
}

TEST_CASE("presentmon_replay verdict: fails below the threshold, below the naive baseline, and at 0 %",
          "[H4][presentmon]") {
  // A 10 ms refresh from 0. Each frame is presented at 10k + 1 and renders in 2 ms (done at 10k + 3): the
  // baseline puts it on the vblank at 10(k+1). The capture shows frames 0-7 there, frames 8 and 9 a
  // refresh later (a queue); so the baseline has 8 of 10.
  auto frames = [](int model_right) {
    std::vector<ReplayFrame> f(10);
    for (int k = 0; k < 10; ++k) {
      f[size_t(k)].settled = true;
      f[size_t(k)].capture_present_ms = f[size_t(k)].model_present_ms = 10.0 * k + 1;
      f[size_t(k)].capture_render_ms = 2.0;
      const double captured = 10.0 * (k + 1) + (k >= 8 ? 10.0 : 0.0);
      f[size_t(k)].capture_until_ms = captured - (10.0 * k + 1);
      f[size_t(k)].model_screen_ms = k < model_right ? captured : captured + 10.0;
    }
    return f;
  };
  const ReplayComparison base = compare_replay(frames(10), 10.0, 0.0);
  CHECK(base.baseline_compared == 10);
  CHECK(base.baseline_same_refresh == 8);
  CHECK(base.baseline_pct() == 80.0);
  CHECK(base.same_refresh_pct() == 100.0);
  CHECK_FALSE(replay_verdict(base, 95.0).has_value());
  // 9 of 10: passes a 90 % threshold, fails the default 95 %.
  CHECK_FALSE(replay_verdict(compare_replay(frames(9), 10.0, 0.0), 90.0).has_value());
  CHECK(replay_verdict(compare_replay(frames(9), 10.0, 0.0), 95.0)
            .value_or("")
            .find("below "
                  "workload.presentmon_min_"
                  "agreement_pct = 95 %") != std::string::npos);
  // 7 of 10 with a 50 % threshold: above the threshold, below the baseline's 8: fails naming it.
  const auto below = replay_verdict(compare_replay(frames(7), 10.0, 0.0), 50.0);
  REQUIRE(below.has_value());
  CHECK(below->find("below the 80 % of the naive rule") != std::string::npos);
  // 0 %: fails whatever the threshold, even 0 (the key allows no less than 0.001).
  CHECK(replay_verdict(compare_replay(frames(0), 10.0, 0.0), 0.0).has_value());
  CHECK(replay_verdict(ReplayComparison{}, 0.0).has_value());
  // ... and where the capture has no render times, so no baseline stands beside it.
  std::vector<ReplayFrame> no_render = frames(0);
  for (ReplayFrame& f : no_render) f.capture_render_ms.reset();
  const ReplayComparison nr = compare_replay(no_render, 10.0, 0.0);
  CHECK(nr.baseline_compared == 0);
  CHECK(replay_verdict(nr, 0.0).has_value());
}

TEST_CASE("presentmon_replay: a burst of presents drains one per vblank, as DXGI's flip queue does",
          "[H4][frame_loop][presentmon]") {
  // A 2.x capture at exactly 60 Hz (P = 16.6667 ms; refresh k from k P), one swap chain of legacy
  // flips. Each frame's CPU work starts at the previous Present() (as PresentMon's CPUStart does), its GPU
  // work is 0.5 ms and done 1 ms after Present(). Frames 0-7: presented at k P + 2 ms with 14.67 ms of
  // CPU work, each on the next vblank, (k + 1) P. Then a burst: frame 8 at 8 P + 2 and frame 9 at
  // 8 P + 4 (CPU 2 ms), both before vblank 9. The display takes one flip a vblank: 8 at 9 P, 9 at 10 P.
  // Frames 10-13 follow at k' P + 2 for k' = 9..12, CPU from the previous present: each finds the one
  // before it still queued and goes a refresh later than its own next vblank, at (k' + 2) P: 11 P,
  // 12 P, 13 P, 14 P. Then the app pauses; frame 14 at 16 P + 2 finds the queue empty: 17 P.
  // The capture records exactly that, so the model agrees on all 15 frames; the naive rule (next vblank
  // after render complete) puts frames 9-13 one refresh early: 10 of 15.
  // Every time is 20 ms later in the file (the first frame's CPU start, 2 - 14 ms, must be >= 0).
  const double P = 1000.0 / 60.0, O = 20.0;
  std::vector<double> present, screen;
  for (int k = 0; k < 8; ++k) present.push_back(O + k * P + 2), screen.push_back(O + (k + 1) * P);
  present.push_back(O + 8 * P + 2), screen.push_back(O + 9 * P);
  present.push_back(O + 8 * P + 4), screen.push_back(O + 10 * P);
  for (int k = 9; k <= 12; ++k) present.push_back(O + k * P + 2), screen.push_back(O + (k + 2) * P);
  present.push_back(O + 16 * P + 2), screen.push_back(O + 17 * P);
  std::string text =
      "Application,ProcessID,SwapChainAddress,SyncInterval,PresentMode,CPUStartTime,MsBetweenAppStart,MsCPUBusy,"
      "MsGPUBusy,MsRenderPresentLatency,MsUntilDisplayed\n";
  for (size_t i = 0; i < present.size(); ++i) {
    const double start = i == 0 ? present[0] - 14.0 : present[i - 1];
    const double next = i + 1 < present.size() ? present[i] : present[i] + P;
    char b[256];
    std::snprintf(b, sizeof b, "dwm.exe,44,0x1,1,Hardware: Legacy Flip,%.4f,%.4f,%.4f,0.5,1.0,%.4f\n", start,
                  next - start, present[i] - start, screen[i] - present[i]);
    text += b;
  }
  const std::string csv = write_temp("burst", text), rows = "pm_burst_out_" + std::to_string(::getpid()) + ".csv";
  const auto m = run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv + " --presentmon=" + rows,
                          "rp_burst")["metrics"];
  std::remove(csv.c_str());
  // The file's 0.0001 ms columns: the fit is 60 Hz to 1e-4 ms over 17 refreshes, 2e-5 Hz.
  CHECK(m["capture_refresh_hz"].get<double>() == Approx(60.0).margin(1e-4));
  CHECK(m["frames_compared"] == 15);
  // At most 2 frames are ever presented and not on screen (8 and 9, from 8 P + 4 to 9 P): below DXGI's
  // default maximum frame latency of 3, so no Present() blocked and no frame started late. (A latency of
  // 2 would hold frame 10 until frame 8's flip.)
  CHECK(m["frames_throttled"] == 0);
  CHECK(m["frames_same_refresh_pct"] == 100.0);
  CHECK(m["baseline_same_refresh_pct"].get<double>() == Approx(100.0 * 10 / 15));
  // The model's own frames: each frame's screen time (its Present() plus until displayed, on the model's
  // clock) minus frame 0's is the capture's, to the 0.0001 ms the columns are printed to and the model's
  // panel period (its pixel clock: within 0.01 ms over these 17 refreshes).
  const Rows out = read_replay_rows(rows);
  REQUIRE(out.col("TimeInQPC") < out.cols.size());
  REQUIRE(out.col("MsUntilDisplayed") < out.cols.size());
  // The rows are the capture's process and swap chain, as the capture wrote them: PID 44, chain "0x1".
  for (size_t k = 0; k < out.rows.size(); ++k) {
    CHECK(out.rows[k].at(out.col("Application")) == "dwm.exe");
    CHECK(out.rows[k].at(out.col("ProcessID")) == "44");
    CHECK(out.rows[k].at(out.col("SwapChainAddress")) == "0x1");
  }
  std::vector<double> model_screen;
  for (size_t k = 0; k < out.rows.size(); ++k)
    model_screen.push_back(out.num(k, "TimeInQPC") / 1e4 + out.num(k, "MsUntilDisplayed"));
  REQUIRE(model_screen.size() == 15);
  for (size_t i = 1; i < 15; ++i) {
    INFO("frame " << i);
    CHECK(model_screen[i] - model_screen[0] == Approx(screen[i] - screen[0]).margin(0.01));
  }
}

TEST_CASE("presentmon_replay: Present() blocks while DXGI's maximum frame latency of 3 frames is queued",
          "[H4][frame_loop][presentmon]") {
  // 60 Hz (P = 16.6667 ms, refresh k from 20 ms + k P). Frames 0-3 at k P + 2, each on the next vblank.
  // Then four presents within refresh 4: at 4 P + 2, + 3, + 4, + 5 ms (1 ms of CPU each, from the
  // previous Present()). The first three queue (on screen at 5 P, 6 P, 7 P); the fourth finds 3 frames
  // presented and not on screen, DXGI's default maximum frame latency (Microsoft Learn,
  // "IDXGIDevice1::SetMaximumFrameLatency"), and its Present() returns only when frame 4's flip
  // completes at 5 P: in Present() for 5 P - (4 P + 5) = P - 5 = 11.667 ms, plus the flip-complete
  // interrupt's way to the app thread (under 0.2 ms: the ISR, DPC and a thread wake, 2 + 1 + 2 us, and a
  // C6 exit, 85 us). It goes on screen at 8 P. Frame 8, presented at 5 P + 2, again finds 3 queued
  // (frames 5, 6, 7): its Present() returns when frame 5's flip completes at 6 P, after P - 2 = 14.667
  // ms and the same interrupt's way; it is on screen at 9 P, after the queue.
  const double P = 1000.0 / 60.0, O = 20.0;
  std::vector<double> present, screen;
  for (int k = 0; k < 4; ++k) present.push_back(O + k * P + 2), screen.push_back(O + (k + 1) * P);
  for (int j = 0; j < 4; ++j) present.push_back(O + 4 * P + 2 + j), screen.push_back(O + (5 + j) * P);
  present.push_back(O + 5 * P + 2), screen.push_back(O + 9 * P);
  std::string text =
      "Application,ProcessID,SwapChainAddress,SyncInterval,PresentMode,CPUStartTime,MsBetweenAppStart,MsCPUBusy,"
      "MsGPUBusy,MsRenderPresentLatency,MsUntilDisplayed\n";
  // CPU work: 14 ms before each steady present, 1 ms before each later one.
  auto start = [&](size_t i) { return present[i] - (i < 4 ? 14.0 : 1.0); };
  for (size_t i = 0; i < present.size(); ++i) {
    const double next = i + 1 < present.size() ? start(i + 1) : start(i) + P;
    char b[256];
    std::snprintf(b, sizeof b, "app.exe,45,0x2,1,Hardware: Independent Flip,%.4f,%.4f,%.4f,0.2,0.5,%.4f\n", start(i),
                  next - start(i), present[i] - start(i), screen[i] - present[i]);
    text += b;
  }
  const std::string csv = write_temp("latency", text), rows = "pm_latency_out_" + std::to_string(::getpid()) + ".csv";
  const auto m = run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv + " --presentmon=" + rows,
                          "rp_latency")["metrics"];
  std::remove(csv.c_str());
  CHECK(m["frames_compared"] == 9);
  CHECK(m["frames_same_refresh_pct"] == 100.0);
  CHECK(m["frames_throttled"] == 2);
  const Rows out = read_replay_rows(rows);
  REQUIRE(out.col("MsInPresentAPI") < out.cols.size());
  std::vector<double> in_present;
  for (size_t k = 0; k < out.rows.size(); ++k) in_present.push_back(out.num(k, "MsInPresentAPI"));
  REQUIRE(in_present.size() == 9);
  CHECK(in_present[7] >= P - 5.0);
  CHECK(in_present[7] < P - 5.0 + 0.2);
  CHECK(in_present[8] >= P - 2.0);
  CHECK(in_present[8] < P - 2.0 + 0.2);
  for (size_t i : {0, 3, 4, 5, 6}) CHECK(in_present[i] < 0.2);
}

TEST_CASE(
    "presentmon_replay comparison: a torn frame belongs to the refresh it tore into and a vsync'd one to its vblank",
    "[H4][presentmon]") {
  // A 10 ms refresh from 0. A torn frame on screen at 27 ms is in refresh 2 (20-30 ms); a vsync'd frame's
  // screen time is a vblank start, to within the capture's clock (19.7 ms is the vblank at 20: refresh 2).
  std::vector<ReplayFrame> f(1);
  f[0].settled = true;
  f[0].capture_present_ms = f[0].model_present_ms = 12.0;
  f[0].capture_until_ms = 15.0;   // on screen at 27
  f[0].capture_render_ms = 15.0;  // 1.x: a torn frame's screen time is its render complete
  f[0].capture_immediate = f[0].model_immediate = true;
  f[0].model_screen_ms = 29.9;
  CHECK(compare_replay(f, 10.0, 0.0).same_refresh == 1);
  f[0].model_screen_ms = 30.1;  // the next refresh
  CHECK(compare_replay(f, 10.0, 0.0).same_refresh == 0);
  // Read as vsync'd, 27 would be the vblank at 30 (refresh 3) and 24.9 the one at 20: the rule decides.
  f[0].model_screen_ms = 24.9;
  CHECK(compare_replay(f, 10.0, 0.0).same_refresh == 1);
  f[0].capture_immediate = f[0].model_immediate = false;
  CHECK(compare_replay(f, 10.0, 0.0).same_refresh == 0);
  // The naive rule knows no tearing: the torn frame goes on the vblank after its render, refresh 3.
  f[0].capture_immediate = f[0].model_immediate = true;
  CHECK(compare_replay(f, 10.0, 0.0).baseline_same_refresh == 0);
  // A vsync'd frame 0.3 ms before its vblank on the capture's clock, and the model's on it: refresh 2 both.
  f[0].capture_immediate = f[0].model_immediate = false;
  f[0].capture_until_ms = 19.7 - 12.0;
  f[0].model_screen_ms = 20.0;
  CHECK(compare_replay(f, 10.0, 0.0).same_refresh == 1);
}

namespace {
// The GPU-bound tearing game of the test below: its 1.x capture, and each frame's Present() and render
// complete (ms).
std::string torn_capture(std::vector<double>& present, std::vector<double>& done) {
  double prev = 0;
  for (int k = 0; k < 20; ++k) {
    const double t = 20.0 + 10.0 * k;
    present.push_back(t);
    prev = std::max(t, prev) + (k < 10 ? 12.0 : 4.0);
    done.push_back(prev);
  }
  std::string text =
      "Application,ProcessID,SwapChainAddress,SyncInterval,AllowsTearing,PresentMode,Dropped,TimeInSeconds,"
      "MsBetweenPresents,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n";
  for (size_t i = 0; i < present.size(); ++i) {
    char b[256];
    std::snprintf(b, sizeof b, "game.exe,46,0x3,0,1,Hardware: Independent Flip,0,%.7f,10.0,0.1,%.4f,%.4f\n",
                  present[i] / 1000.0, done[i] - present[i], done[i] - present[i]);
    text += b;
  }
  return text;
}
}  // namespace

TEST_CASE("presentmon_replay: torn presents flip at once after the GPU's work and the capture's queue is not work",
          "[H4][frame_loop][presentmon]") {
  // A 1.x capture of a GPU-bound game that tears (SyncInterval 0, AllowsTearing 1; PresentMon 1.x gives a
  // torn frame's screen time as its render complete). Presents every 10 ms from 20 ms (CPU work 9.9 ms
  // from the previous Present()'s return); the GPU needs 12 ms a frame for frames 0-9, then 4 ms: frames
  // queue (frame k done at 20 + 12 (k + 1), 1.8 ms and more after the next Present()), then catch up.
  // The replay must run each frame's GPU work for its 12 ms, not its Present()-to-render-complete (up to
  // 30 ms: the queue), and flip it at once: on screen (the capture's clock: PresentMon's screen time for
  // an immediate flip is Dxgkrnl's MMIO flip) after the render complete by the fence interrupt's way to
  // the present thread (the ISR, DPC and a thread wake, 2 + 1 + 2 us, and a C6 exit, 85 us), the flip
  // register write, and the engine's own start-up of each job in the queue (the command processor's
  // fetch and dispatch, a few us a frame: under 0.1 ms over the 10 queued frames).
  std::vector<double> present, done;
  const std::string text = torn_capture(present, done);
  const std::string csv = write_temp("tear", text), rows = "pm_tear_out_" + std::to_string(::getpid()) + ".csv";
  const auto j =
      run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv + " --presentmon=" + rows, "rp_tear");
  const auto& m = j["metrics"];
  std::remove(csv.c_str());
  CHECK(j["verdict"] == "pass");
  CHECK(m["immediate_flips_replayed"] == 20);
  CHECK(m["sync_interval_0_replayed_as_1"] == 0);
  // Every frame tore, so the capture shows no refresh: the replay runs at display.mode's (60 Hz).
  CHECK(m["capture_refresh_hz"] == 0.0);
  CHECK(m["refresh_hz"].get<double>() == Approx(60.0).margin(1e-6));
  CHECK(m["refresh_source"].get<std::string>().find("display.mode") == 0);
  CHECK(m["frames_compared"] == 20);
  CHECK(m["frames_same_refresh_pct"] == 100.0);
  CHECK(m["until_displayed_error_ms"]["p95"].get<double>() < 0.2);
  // The naive rule puts every torn frame on the vblank after its render: in the refresh after.
  CHECK(m["baseline_same_refresh_pct"].get<double>() < 100.0);
  // The model's own rows: each frame flipped immediately (SyncInterval 0, AllowsTearing 1), on screen from
  // its tear, mid-refresh, within a refresh of its Present() + render complete.
  const Rows out = read_replay_rows(rows);
  REQUIRE(out.col("MsUntilDisplayed") < out.cols.size());
  for (size_t n = 0; n < out.rows.size(); ++n) {
    INFO("frame " << n);
    CHECK(out.rows[n].at(out.col("SyncInterval")) == "0");
    CHECK(out.rows[n].at(out.col("AllowsTearing")) == "1");
    const double render = out.num(n, "MsRenderPresentLatency"), until = out.num(n, "MsUntilDisplayed");
    CHECK(render == Approx(done[n] - present[n]).margin(0.1));
    CHECK(until > render);
    CHECK(until < render + 1000.0 / 60.0);
  }
  CHECK(out.rows.size() == 20);
}

TEST_CASE("presentmon_replay: every frame tore so the run's length is checked against display.mode's refresh",
          "[H4][presentmon]") {
  // The tearing game's last frame starts 190 ms after its first; after it the replay needs four
  // refreshes and 10 ms: at display.mode's 30 Hz, 143.3 ms (at 60 Hz, 76.7 ms). sim.limit_ms = 300
  // holds the 60 Hz run and not the 30 Hz one, which is refused naming display.mode's refresh.
  std::vector<double> present, done;
  const std::string csv = write_temp("tear_limit", torn_capture(present, done));
  expect_bad_input(scenario("presentmon_replay") + " --workload.presentmon=" + csv +
                       " --display.mode=1920x1080@30 --sim.limit_ms=300",
                   "four refreshes of display.mode's (every frame of the capture tore) 30 Hz");
  CHECK(run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv + " --sim.limit_ms=300",
                 "rp_tear_limit")["verdict"] == "pass");
  std::remove(csv.c_str());
}

TEST_CASE(
    "presentmon_replay: sync interval 0 without AllowsTearing is replayed at 1 and only torn presents flip at once",
    "[H4][presentmon]") {
  // 60 Hz, vblanks at 20 + k P. Frames 0-9 at sync interval 1, 10-14 at sync interval 0 without tearing
  // (DXGI's flip model: no tear, the frame waits for a vblank), 15-19 torn. Each is presented 2 ms after
  // vblank k and renders in 1 ms: the vsync'd ones on screen at vblank k + 1, the torn ones at their
  // render complete (PresentMon 1.x).
  const double P = 1000.0 / 60.0;
  std::string text =
      "Application,ProcessID,SwapChainAddress,SyncInterval,AllowsTearing,PresentMode,Dropped,TimeInSeconds,"
      "MsBetweenPresents,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n";
  for (int k = 0; k < 20; ++k) {
    const bool torn = k >= 15;
    char b[256];
    std::snprintf(b, sizeof b, "mixed.exe,47,0x4,%d,%d,Hardware: Independent Flip,0,%.7f,%.4f,0.1,1.0,%.4f\n",
                  k < 10 ? 1 : 0, torn ? 1 : 0, (20.0 + k * P + 2.0) / 1000.0, P, torn ? 1.0 : P - 2.0);
    text += b;
  }
  const std::string csv = write_temp("mixed", text), rows = "pm_mixed_out_" + std::to_string(::getpid()) + ".csv";
  const auto j =
      run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv + " --presentmon=" + rows, "rp_mixed");
  std::remove(csv.c_str());
  const auto& m = j["metrics"];
  CHECK(m["sync_interval_0_replayed_as_1"] == 5);
  CHECK(m["immediate_flips_replayed"] == 5);
  CHECK(m["frames_compared"] == 20);
  CHECK(m["frames_same_refresh_pct"] == 100.0);
  const Rows out = read_replay_rows(rows);
  REQUIRE(out.col("AllowsTearing") < out.cols.size());
  std::vector<std::string> si, tear;
  for (auto& f : out.rows) si.push_back(f.at(out.col("SyncInterval"))), tear.push_back(f.at(out.col("AllowsTearing")));
  REQUIRE(si.size() == 20);
  for (size_t k = 0; k < 20; ++k) {
    INFO("frame " << k);
    CHECK(si[k] == (k >= 15 ? "0" : "1"));
    CHECK(tear[k] == (k >= 15 ? "1" : "0"));
  }
}

TEST_CASE("PresentMon capture: AllowsTearing other than 0 or 1 is refused with its row and column",
          "[H4][presentmon]") {
  const std::string head =
      "Application,ProcessID,SwapChainAddress,SyncInterval,AllowsTearing,PresentMode,Dropped,"
      "TimeInSeconds,MsBetweenPresents,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n";
  const std::string ok = "a.exe,1,0x1,0,1,Hardware: Independent Flip,0,0.02,10.0,0.1,1.0,1.0\n";
  CHECK(parse_rules_csv(head + ok).presents.at(0).allows_tearing);
  CHECK_THROWS_WITH(parse_rules_csv(head + ok + "a.exe,1,0x1,0,2,Hardware: Independent Flip,0,0.03,10.0,0.1,1.0,1.0\n"),
                    Catch::Contains("column AllowsTearing: '2' is neither 0 nor 1; allowed: 0 or 1"));
}

TEST_CASE(
    "presentmon_replay: a capture with no displayed frame and none torn is refused, not run at display.mode's refresh",
    "[H4][presentmon]") {
  // Every frame vsync'd and dropped (MsUntilDisplayed NA): no refresh to fit, and display.mode's is the
  // fallback only for a capture whose frames all tore.
  std::string text =
      "Application,ProcessID,SwapChainAddress,SyncInterval,AllowsTearing,PresentMode,Dropped,"
      "TimeInSeconds,MsBetweenPresents,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n";
  for (int k = 0; k < 5; ++k)
    text += "d.exe,48,0x5,1,0,Hardware: Legacy Flip,1,0.0" + std::to_string(2 + k) + ",10.0,0.1,1.0,NA\n";
  const std::string csv = write_temp("dropped", text);
  expect_bad_input(scenario("presentmon_replay") + " --workload.presentmon=" + csv,
                   "too few displayed frames to find the display's refresh");
  std::remove(csv.c_str());
}

namespace {
// Every number in a results tree finite: JSON has no NaN or infinity, so the writer puts null for them.
void check_no_null(const nlohmann::json& j, const std::string& at) {
  INFO(at);
  CHECK(!j.is_null());
  if (j.is_object())
    for (auto& [k, v] : j.items()) check_no_null(v, at + "." + k);
}
}  // namespace

TEST_CASE("presentmon_replay: a run that fails before the display is set up reports refresh_hz 0, no null",
          "[H4][presentmon]") {
  // 1 MiB of system memory: the video memory manager runs out before the display mode is committed, so
  // the replay never ran at a refresh (it reported 1000 / 0 ms, null in JSON). Both the fitted and the
  // every-frame-tore (display.mode's refresh) comparisons run over no displayed frame.
  std::vector<double> present, done;
  const std::string torn = write_temp("tear_nomem", torn_capture(present, done));
  for (const std::string& capture : {std::string(" --workload.frames=6"), " --workload.presentmon=" + torn}) {
    const auto j = run_json(scenario("presentmon_replay") + capture + " --sysmem.size_bytes=1048576 --sim.limit_ms=300",
                            "rp_nomem", 1);
    CHECK(j["verdict"] == "fail");
    CHECK(j["metrics"]["refresh_hz"] == 0.0);
    CHECK(j["metrics"]["frames_compared"] == 0);
    check_no_null(j["metrics"], "metrics");
  }
  std::remove(torn.c_str());
}
