// PresentMon's columns checked against each other as PresentMon's console application README ("CSV
// columns") defines them, in rows the writer makes and in a run's own; and presentmon_replay's
// comparison figures against a hand count, on a few frames and on a small capture replayed. Times of day
// are QPC ticks at 10 MHz (TimeInQPC, CPUStartQPC), intervals ms:
//   MsCPUBusy + MsCPUWait = MsBetweenAppStart  (the frame's CPU work, then the wait to the next start)
//   CPUStartQPC + MsBetweenAppStart = the next row's CPUStartQPC
//   MsGPUBusy + MsGPUWait = MsGPUTime
//   MsCPUBusy + MsRenderPresentLatency = MsGPULatency + MsGPUTime  (the GPU's end from the frame's start)
//   MsBetweenDisplayChange = this displayed frame's screen time (TimeInQPC + MsUntilDisplayed) less the
//   previous displayed frame's; a frame never displayed has NA in both
//   MsBetweenPresents = the difference of successive TimeInQPC
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "monitors/monitor.h"
#include "scenarios/frame_loop/frame_loop.h"
#include "scenarios/presentmon/csv_reader.h"
#include "scenarios/presentmon/presentmon.h"
#include "scenarios/presentmon/replay_comparison.h"
#include "tb.h"

using namespace tb;
using namespace gpumodel;

namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_column_rows(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CsvReader csv([&in](char* b, size_t n) {
    in.read(b, std::streamsize(n));
    return size_t(in.gcount());
  });
  std::vector<std::string> head, f;
  REQUIRE(csv.next(head));
  std::vector<Row> rows;
  while (csv.next(f)) {
    REQUIRE(f.size() == head.size());
    Row r;
    for (size_t i = 0; i < f.size(); ++i) r[head[i]] = f[i];
    rows.push_back(r);
  }
  return rows;
}

// A column's value; NaN for NA.
double v(const Row& r, const std::string& col) {
  const std::string& s = r.at(col);
  return s == "NA" ? std::numeric_limits<double>::quiet_NaN() : std::stod(s);
}

// Each interval is printed to 0.0001 ms and each QPC time to a tick (0.0001 ms): a sum of three rounded
// figures is within 1.5e-4 ms of exact.
constexpr double kTol = 2e-4;
double qpc_ms(const Row& r, const std::string& col) { return v(r, col) / 1e4; }

// Every rule of the file's header comment, on consecutive rows.
void check_rules(const std::vector<Row>& rows) {
  const Row* last_shown = nullptr;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    INFO("row " << i + 1);
    const bool next = i + 1 < rows.size();
    if (next) {
      CHECK(v(r, "MsCPUBusy") + v(r, "MsCPUWait") == Approx(v(r, "MsBetweenAppStart")).margin(kTol));
      CHECK(qpc_ms(r, "CPUStartQPC") + v(r, "MsBetweenAppStart") ==
            Approx(qpc_ms(rows[i + 1], "CPUStartQPC")).margin(kTol));
    } else {
      CHECK(r.at("MsCPUWait") == "NA");  // no next frame
    }
    CHECK(v(r, "MsGPUBusy") + v(r, "MsGPUWait") == Approx(v(r, "MsGPUTime")).margin(kTol));
    CHECK(v(r, "MsCPUBusy") + v(r, "MsRenderPresentLatency") ==
          Approx(v(r, "MsGPULatency") + v(r, "MsGPUTime")).margin(kTol));
    if (i > 0)
      CHECK(v(r, "MsBetweenPresents") ==
            Approx(qpc_ms(r, "TimeInQPC") - qpc_ms(rows[i - 1], "TimeInQPC")).margin(kTol));
    if (r.at("MsUntilDisplayed") == "NA") {
      CHECK(r.at("MsBetweenDisplayChange") == "NA");
      continue;
    }
    const double screen = qpc_ms(r, "TimeInQPC") + v(r, "MsUntilDisplayed");
    if (last_shown)
      CHECK(v(r, "MsBetweenDisplayChange") ==
            Approx(screen - qpc_ms(*last_shown, "TimeInQPC") - v(*last_shown, "MsUntilDisplayed")).margin(kTol));
    else
      CHECK(r.at("MsBetweenDisplayChange") == "NA");
    last_shown = &r;
  }
}

}  // namespace

TEST_CASE("PresentMon rows: the columns agree with each other as PresentMon defines them, a dropped frame included",
          "[H4][presentmon]") {
  // Six frames by hand (ms): CPU work, a Present() call that takes time to return (so its call and its
  // return differ), GPU work with 1.5 ms idle inside it, and frame 3 dropped: frame 2 stays on screen
  // until frame 4 replaces it.
  const double start[] = {0, 10, 21, 30, 42, 50}, busy[] = {4, 5, 3, 6, 4, 5},
               in_present[] = {0.3, 0.5, 0.2, 1, 0.4, 0.3};
  const std::optional<double> shown[] = {20, 30, std::nullopt, 50, 60, 70};
  const std::string csv = "pm_rows_" + std::to_string(::getpid()) + ".csv";
  {
    PresentMonWriter w(csv);
    REQUIRE(w.ok());
    for (int k = 0; k < 6; ++k) {
      PresentRow r;
      r.cpu_start = start[k];
      r.present = start[k] + busy[k];
      r.present_return = r.present + in_present[k];
      r.next_cpu_start = k < 5 ? start[k + 1] : -1;
      r.gpu_start = start[k] + 1;
      r.gpu_end = r.present + 6;
      r.gpu_busy = *r.gpu_end - *r.gpu_start - 1.5;
      r.displayed = shown[k];
      for (int j = k + 1; j < 6 && shown[k]; ++j)  // the next frame on screen
        if (shown[j]) {
          r.next_displayed = shown[j];
          break;
        }
      w.write(r);
    }
    Results done;
    w.close(done);  // the file appears whole at close (hw_model/core/output_file.h)
    REQUIRE(done.output_error.empty());
  }
  const auto rows = read_column_rows(csv);
  std::remove(csv.c_str());
  REQUIRE(rows.size() == 6);
  check_rules(rows);
  // And against the frames written: the wait counts from the Present() call, not its return.
  CHECK(v(rows[1], "MsCPUWait") == Approx(21 - 15).margin(kTol));
  CHECK(v(rows[1], "MsInPresentAPI") == Approx(0.5).margin(kTol));
  CHECK(rows[2].at("MsUntilDisplayed") == "NA");                                // dropped
  CHECK(v(rows[3], "MsBetweenDisplayChange") == Approx(50 - 30).margin(kTol));  // frame 2 showed until frame 4
}

// The column set is one PresentMon release's, named: its own gold test data's header, column by column
// (workloads/captures/test_case_5.csv, GameTechDev/PresentMon Tests/Gold, BOM aside).
TEST_CASE("PresentMon rows: the header is PresentMon 2.x's gold test data's, column by column", "[H4][presentmon]") {
  std::ifstream in(std::string(GPUMODEL_SOURCE_DIR) + "/workloads/captures/test_case_5.csv", std::ios::binary);
  std::string line;
  REQUIRE(std::getline(in, line));
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  auto split = [](const std::string& t) {
    std::vector<std::string> c;
    std::stringstream ss(t);
    for (std::string f; std::getline(ss, f, ',');) c.push_back(f);
    return c;
  };
  const std::vector<std::string> real = split(line), ours = split(PresentMonWriter::kHeader);
  REQUIRE(real.size() == 32);
  REQUIRE(ours.size() == real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    INFO("column " << i + 1);
    CHECK(ours[i] == real[i]);
  }
}

TEST_CASE("frame_loop --presentmon: each row is the run's own frame times, and the columns agree",
          "[H4][frame_loop][presentmon]") {
  // The game (frame_loop.ini's platform) for 30 frames in this process, so the driver's own per-frame
  // times (what the loop saw happen) are at hand beside the file it wrote.
  ParamSet ps;
  declare_all_params(ps);
  ps.apply_scenario_defaults("frame_loop");
  for (auto [k, val] : std::map<std::string, std::string>{{"gpu.nodes", "3"},
                                                          {"gpu.node0.kind", "graphics"},
                                                          {"gpu.node1.kind", "compute"},
                                                          {"gpu.node2.kind", "copy"},
                                                          {"display.adapter", "gpu"},
                                                          {"display.mode", "1920x1080@60"},
                                                          {"workload.frames", "30"},
                                                          {"sim.limit_ms", "2000"}})
    ps.set(k, val, "test");
  Vcd vcd;
  Platform p(ps, vcd, 1);
  FrameLoopDriver d(ps, load_workload(std::string(GPUMODEL_SOURCE_DIR) + "/workloads/game.json"));
  const std::string csv = "pm_run_" + std::to_string(::getpid()) + ".csv";
  d.presentmon_path = csv;
  Results r;
  d.build(p, r);
  sc_core::sc_start(sc_core::sc_time(2000, sc_core::SC_MS));
  d.finish(p, r);
  REQUIRE(r.failures.empty());
  const auto rows = read_column_rows(csv);
  std::remove(csv.c_str());
  REQUIRE(rows.size() == 30);
  check_rules(rows);
  const auto& ft = d.frames();
  const double t0 = to_ns(d.t0());
  auto ms = [&](double ns) { return (ns - t0) / 1e6; };
  for (size_t n = 1; n <= 30; ++n) {
    const Row& row = rows[n - 1];
    const FrameTimes& f = ft[n];
    INFO("frame " << n);
    CHECK(qpc_ms(row, "CPUStartQPC") == Approx(ms(f.cpu_start)).margin(1e-4));
    CHECK(qpc_ms(row, "TimeInQPC") == Approx(ms(f.present)).margin(1e-4));
    CHECK(v(row, "MsInPresentAPI") == Approx((f.present_return - f.present) / 1e6).margin(1e-4));
    if (n < 30) CHECK(v(row, "MsCPUWait") == Approx((ft[n + 1].cpu_start - f.present) / 1e6).margin(1e-4));
    REQUIRE(f.displayed.has_value());
    CHECK(v(row, "MsUntilDisplayed") == Approx((*f.displayed - f.present) / 1e6).margin(1e-4));
    if (n > 1)
      CHECK(v(row, "MsBetweenDisplayChange") == Approx((*f.displayed - *ft[n - 1].displayed) / 1e6).margin(1e-4));
    CHECK(v(row, "MsGPUTime") == Approx((*f.gpu_end - *f.gpu_start) / 1e6).margin(1e-4));
    CHECK(v(row, "MsGPUBusy") == Approx(*f.gpu_busy / 1e6).margin(1e-4));
  }
}

TEST_CASE("presentmon_replay comparison: frames compared, same refresh and dropped agreement by hand",
          "[H4][presentmon]") {
  // A 10 ms refresh from 0. Six frames, counted by hand:
  //   0: both show it at the refresh from 10                 compared, same refresh, agree (error 0)
  //   1: model at 20, capture at 30                          compared, other refresh, agree (error 10)
  //   2: both dropped                                        agree
  //   3: model shows it, the capture dropped it              disagree
  //   4: model dropped it, the capture shows it              disagree
  //   5: not settled (the run was cut before its fate)       left out
  std::vector<ReplayFrame> f(6);
  auto frame = [](bool settled, double mp, std::optional<double> ms, double cp, std::optional<double> cu) {
    ReplayFrame x;
    x.settled = settled, x.model_present_ms = mp, x.model_screen_ms = ms, x.capture_present_ms = cp,
    x.capture_until_ms = cu;
    return x;
  };
  f[0] = frame(true, 1, 10, 1, 9);
  f[1] = frame(true, 11, 20, 11, 19);
  f[2] = frame(true, 21, std::nullopt, 21, std::nullopt);
  f[3] = frame(true, 31, 40, 31, std::nullopt);
  f[4] = frame(true, 41, std::nullopt, 41, 5);
  f[5] = frame(false, 51, std::nullopt, 51, 5);
  const ReplayComparison c = compare_replay(f, 10.0, 0.0);
  CHECK(c.settled == 5);
  CHECK(c.compared == 2);
  CHECK(c.same_refresh == 1);
  CHECK(c.same_refresh_pct() == 50.0);
  CHECK(c.agree == 3);
  CHECK(c.dropped_agreement_pct() == 60.0);
  REQUIRE(c.until_error_ms.size() == 2);
  CHECK(c.until_error_ms[0] == 0.0);
  CHECK(c.until_error_ms[1] == 10.0);
  CHECK(c.model_until_ms == std::vector<double>{9.0, 9.0});
  CHECK(c.capture_until_ms == std::vector<double>{9.0, 19.0});
}

TEST_CASE("presentmon_replay: a small capture's figures match a hand count and the run's own frames",
          "[H4][presentmon]") {
  // 12 presents of one swap chain 16.6667 ms apart (60 Hz), each on screen 11 ms after its Present();
  // the capture dropped frames 5 and 9. The model, given each frame's start and 2 ms of GPU work, shows
  // every frame: compared = 10 (both displayed), agreement = 10 of 12.
  std::string text =
      "Application,ProcessID,SwapChainAddress,SyncInterval,PresentMode,Dropped,TimeInSeconds,"
      "MsBetweenPresents,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n";
  for (int k = 0; k < 12; ++k) {
    const bool dropped = k == 4 || k == 8;
    char line[256];
    std::snprintf(line, sizeof line, "game.exe,7,0x10,1,Hardware: Legacy Flip,%d,%.7f,16.6667,0.2000,2.0000,%s\n",
                  dropped ? 1 : 0, 0.005 + k * 0.0166667, dropped ? "0.0000" : "11.0000");
    text += line;
  }
  const std::string csv = "pm_small_" + std::to_string(::getpid()) + ".csv";
  std::ofstream(csv) << text;
  const auto m = run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv, "rp_small")["metrics"];
  std::remove(csv.c_str());
  CHECK(m["presents_replayed"] == 12);
  // The run's own frames: all 12 presented and on screen.
  CHECK(m["frames_presented"] == 12);
  CHECK(m["frames_displayed"] == 12);
  CHECK(m["frames_compared"] == 10);
  CHECK(m["dropped_agreement_pct"].get<double>() == Approx(100.0 * 10 / 12));
  CHECK(m["capture_refresh_hz"].get<double>() == Approx(60.0).margin(0.01));
}
