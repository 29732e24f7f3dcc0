// frame_loop and presentmon_replay through the command line: the fence kind's interrupt counts on the
// shipped game, the PresentMon file as a frame-pacing tool reads it, the model's own capture replayed
// to itself, and a public capture of a real application replayed. The workload file's parser alone.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "scenarios/frame_loop/workload.h"
#include "tb.h"

using namespace tb;
using namespace gpumodel;

namespace {

// The game's frame (workloads/game.json): 42 GPU signals of its own fences, one present-fence signal;
// its CPU steps take 3000 +- 500 and 1000 +- 200 us.
constexpr int kFrameSignals = 42, kFrames = 60;

std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> head;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    return f;
  };
  if (std::getline(in, line)) head = split(line);
  while (std::getline(in, line)) {
    const auto f = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < head.size() && i < f.size(); ++i) row[head[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE("frame_loop game: native fences interrupt once a frame and legacy fences once per GPU signal",
          "[F3][F5][F8][frame_loop]") {
  const std::string args = scenario("frame_loop") + " --workload.frames=" + std::to_string(kFrames);
  const auto native = run_json(args, "fl_native")["metrics"];
  const auto legacy = run_json(args + " --fence.kind=legacy", "fl_legacy")["metrics"];
  // Native: the one CPU wait that blocks is the present thread's on the present fence (the frame-start
  // wait on frame n - 1's work never blocks: that work ends at most cpu 4.7 ms + GPU 6.2 ms after frame
  // n - 1 started, before frame n starts 16.7 ms later), so one fence interrupt a frame; one flip each.
  CHECK(native["cpu_interrupts"]["fence"] == kFrames);
  CHECK(native["cpu_interrupts"]["display_flip"] == kFrames);
  CHECK(native["cpu_interrupts"]["total"] == 2 * kFrames);
  CHECK(native["gpu_waits"]["cpu_round_trips"] == 0);
  CHECK(native["gpu_waits"]["unblocked_on_gpu"].get<int>() <= 3 * kFrames);  // three GPU waits a frame at most
  // Legacy (F5): every GPU signal of a monitored fence interrupts, the present fence's too.
  CHECK(legacy["cpu_interrupts"]["fence"] == kFrames * (kFrameSignals + 1));
  CHECK(legacy["cpu_interrupts"]["display_flip"] == kFrames);
  CHECK(legacy["gpu_waits"]["unblocked_on_gpu"] == 0);
  CHECK(legacy["gpu_waits"]["cpu_round_trips"].get<int>() > 0);
  // Fewer wake-ups, deeper idle.
  CHECK(native["cpu_wakeups"].get<int>() < legacy["cpu_wakeups"].get<int>());
  CHECK(native["cpu_idle_residency"]["C6"].get<double>() > legacy["cpu_idle_residency"]["C6"].get<double>());
  CHECK(native["frames_dropped"] == 0);
  CHECK(legacy["frames_dropped"] == 0);
}

TEST_CASE("frame_loop --presentmon: one row per present that a frame-pacing tool reads back consistently",
          "[H4][frame_loop][presentmon]") {
  const std::string csv = "pm_" + std::to_string(::getpid()) + ".csv";
  const auto m = run_json(scenario("frame_loop") + " --workload.frames=120 --presentmon " + csv, "fl_pm")["metrics"];
  const auto rows = read_csv(csv);
  std::remove(csv.c_str());
  REQUIRE(rows.size() == 120);
  const double refresh = 1000.0 / 60.0;
  double phase = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    INFO("row " << i);
    CHECK(r.at("Application") == "gpumodel.exe");
    CHECK(r.at("PresentMode") == "Hardware: Legacy Flip");
    CHECK(r.at("MsUntilDisplayed") != "NA");  // displayed
    // The app starts a frame every 16.667 ms (60 fps) and its CPU steps take 4 ms +- 0.7 ms before it
    // presents (plus submission time, under 0.3 ms).
    CHECK(std::stod(r.at("CPUStartQPC")) / 1e4 == Approx(refresh * double(i)).margin(1e-3));
    CHECK(std::stod(r.at("MsCPUBusy")) >= 3.3);
    CHECK(std::stod(r.at("MsCPUBusy")) <= 5.0);
    // Each frame is on screen at a vblank start: present + until-displayed lies on one 60 Hz grid.
    const double screen = std::stod(r.at("TimeInQPC")) / 1e4 + std::stod(r.at("MsUntilDisplayed"));
    const double ph = std::fmod(screen, refresh);
    if (phase < 0) phase = ph;
    CHECK(std::fabs(ph - phase) < 2e-3);
    if (i > 0) {  // one frame a refresh: each shows for exactly one refresh
      CHECK(std::stod(r.at("MsBetweenDisplayChange")) == Approx(refresh).margin(2e-3));
      CHECK(std::stod(r.at("MsBetweenPresents")) > 0);
    }
  }
  CHECK(m["frames_displayed"] == 120);
}

TEST_CASE("presentmon_replay: the model's own capture replays to itself at 100 % same refresh",
          "[H4][frame_loop][presentmon]") {
  const std::string csv = "pm_self_" + std::to_string(::getpid()) + ".csv";
  run_json(scenario("frame_loop") + " --workload.frames=120 --presentmon " + csv, "fl_self");
  const auto m = run_json(scenario("presentmon_replay") + " --workload.presentmon=" + csv, "rp_self")["metrics"];
  std::remove(csv.c_str());
  CHECK(m["capture_format"] == "PresentMon 2.x");
  CHECK(m["capture_process"] == "gpumodel.exe");
  CHECK(m["frames_compared"] == 120);
  CHECK(m["frames_same_refresh_pct"] == 100.0);
  CHECK(m["dropped_agreement_pct"] == 100.0);
  CHECK(m["capture_refresh_hz"].get<double>() == Approx(60.0).epsilon(1e-6));
  CHECK(m["until_displayed_error_ms"]["p95"].get<double>() < 0.01);
}

TEST_CASE("presentmon_replay: a public capture of a real desktop (dwm.exe beside a game) replays at its refresh",
          "[H4][frame_loop][presentmon]") {
  const auto m = run_json(scenario("presentmon_replay"), "rp_grb")["metrics"];
  CHECK(m["capture_format"] == "PresentMon 1.x");
  CHECK(m["capture_process"] == "dwm.exe");
  CHECK(m["presents_replayed"] == 4229);
  CHECK(m["capture_refresh_hz"].get<double>() == Approx(119.84).margin(0.01));
  CHECK(m["frames_same_refresh_pct"].get<double>() >= 90.0);
  CHECK(m["dropped_agreement_pct"].get<double>() >= 90.0);
  // The model's vblank grid sits on the capture's (its phase): until-displayed within 0.1 ms of the capture's.
  CHECK(m["until_displayed_error_ms"]["p95"].get<double>() < 0.1);
}

TEST_CASE("presentmon_replay: a PresentMon 2.x capture (byte-order mark, QPC ticks) replays at its 60 Hz refresh",
          "[H4][frame_loop][presentmon]") {
  // PresentMon's own test gold: CPUStartQPC in ticks of a 10 MHz counter the reader must find from the
  // deltas (per swap chain: dwm.exe presents to two, one per monitor, interleaved).
  const auto m = run_json(scenario("presentmon_replay") + " --workload.presentmon=" + GPUMODEL_SOURCE_DIR +
                              "/workloads/captures/test_case_5.csv",
                          "rp_tc5")["metrics"];
  CHECK(m["capture_format"] == "PresentMon 2.x");
  CHECK(m["capture_process"] == "dwm.exe");
  CHECK(m["presents_replayed"] == 174);
  CHECK(m["presents_to_other_swap_chains"] == 184);
  CHECK(m["capture_refresh_hz"].get<double>() == Approx(60.0).margin(0.05));
  CHECK(m["frames_same_refresh_pct"].get<double>() >= 90.0);
}

TEST_CASE("presentmon_replay: a process whose present modes the model lacks is refused, counted not replayed",
          "[H4][frame_loop][presentmon]") {
  const Run r = run_cli(scenario("presentmon_replay") + " --workload.presentmon_process=firefox.exe");
  CHECK(r.code == 2);
  CHECK(r.err.find("none of its presents uses a present mode the model replays (Hardware: Legacy Flip, Hardware: "
                   "Independent Flip, Hardware Composed: Independent Flip); it has Composed: Flip") !=
        std::string::npos);
}

TEST_CASE("Workload file: unknown keys, wrong types, impossible steps are refused naming the key path",
          "[H4][frame_loop][bad_input]") {
  const std::string ok_queues = R"("queues": {"gfx": {"engine": "graphics"}, "copy": {"engine": "copy"}})";
  auto w = [&](const std::string& frame, const std::string& extra = "") {
    return R"({"name": "t", "frames": 2, )" + ok_queues + R"(, "fences": {"f": {}}, "frame": )" + frame + extra + "}";
  };
  const std::string good = R"([{"gpu": {"queue": "gfx", "us": 5}}, {"signal": {"queue": "gfx", "fence": "f"}},
                               {"wait": {"queue": "copy", "fence": "f"}}, {"present": {"queue": "gfx"}}])";
  const Workload ok = parse_workload(w(good), "t.json");
  CHECK(ok.signals == 1);
  CHECK(ok.gpu_waits == 1);
  CHECK(ok.frame.size() == 4);
  CHECK_THROWS_WITH(parse_workload(w(good, R"(, "fsp": 60)"), "t.json"), Catch::Contains("$.fsp: unknown key"));
  CHECK_THROWS_WITH(parse_workload(w(R"([{"gpu": {"queue": "gfx", "us": "5"}}, {"present": {"queue": "gfx"}}])"), "t"),
                    Catch::Contains("$.frame[0].gpu.us: must be a number"));
  CHECK_THROWS_WITH(parse_workload(w(R"([{"gpu": {"queue": "copy", "us": 5}}, {"present": {"queue": "gfx"}}])"), "t"),
                    Catch::Contains("runs no COMPUTE"));
  CHECK_THROWS_WITH(parse_workload(w(R"([{"wait": {"queue": "copy", "fence": "f"}}, {"signal": {"queue": "gfx",
                    "fence": "f"}}, {"present": {"queue": "gfx"}}])"),
                                   "t"),
                    Catch::Contains("waited on before any step signals it"));
  CHECK_THROWS_WITH(parse_workload(w(R"([{"gpu": {"queue": "gpu0", "us": 5}}])"), "t"),
                    Catch::Contains("'gpu0' is no queue of the workload; allowed: copy, gfx"));
  CHECK_THROWS_WITH(parse_workload(w(R"([{"signal": {"queue": "gfx", "fence": "f"}}])"), "t"),
                    Catch::Contains("no present step"));
  CHECK_THROWS_WITH(parse_workload(w(R"([{"present": {"queue": "gfx", "sync_interval": 0}}])"), "t"),
                    Catch::Contains("sync_interval: out of range"));
  CHECK_THROWS_WITH(parse_workload("{", "t.json"), Catch::Contains("not valid JSON"));
}

TEST_CASE("frame_loop as fast as dependencies allow: the swap chain throttles the app and every frame is shown once",
          "[H4][frame_loop]") {
  // The game at fps 0: the app presents faster than 60 Hz, so max_frame_latency (and the buffers) hold it
  // back; the present thread flips one frame a refresh (the flip register holds one pending flip).
  auto w = nlohmann::json::parse(slurp(std::string(GPUMODEL_SOURCE_DIR) + "/workloads/game.json"));
  w["fps"] = 0;
  std::map<int, double> p2d;
  for (int latency : {1, 2}) {
    w["max_frame_latency"] = latency;
    const std::string file = "fast_game_" + std::to_string(latency) + "_" + std::to_string(::getpid()) + ".json";
    std::ofstream(file) << w.dump();
    const auto m = run_json(scenario("frame_loop") + " --workload.frames=120 --workload.file=" + file,
                            "fl_fast" + std::to_string(latency))["metrics"];
    std::remove(file.c_str());
    INFO("max_frame_latency " << latency);
    CHECK(m["frames_throttled"].get<int>() > 0);
    CHECK(m["frames_dropped"] == 0);
    // Throttled to the panel: one frame a refresh.
    CHECK(m["frame_time_ms"]["mean"].get<double>() == Approx(1000.0 / 60.0).epsilon(0.01));
    p2d[latency] = m["present_to_display_ms"]["mean"].get<double>();
  }
  // A second frame in flight waits a refresh more before its flip: about one refresh more latency.
  CHECK(p2d[2] - p2d[1] > 0.8 * 1000.0 / 60.0);
}

TEST_CASE("A frame loop cut by sim.limit_ms reports the frames that ran, and rates over the time that ran",
          "[H4][frame_loop]") {
  // The game as fast as the panel allows (fps 0: no pace to check the limit against before the run),
  // 600 frames asked for, 1 s of simulated time: about 60 run.
  auto w = nlohmann::json::parse(slurp(std::string(GPUMODEL_SOURCE_DIR) + "/workloads/game.json"));
  w["fps"] = 0;
  const std::string file = "cut_game_" + std::to_string(::getpid()) + ".json";
  std::ofstream(file) << w.dump();
  const auto j = run_json(scenario("frame_loop") + " --workload.frames=600 --sim.limit_ms=1000 --workload.file=" + file,
                          "fl_cut", 1);
  std::remove(file.c_str());
  const auto& m = j["metrics"];
  CHECK(j.contains("incomplete"));
  CHECK(m["frames_requested"] == 600);
  const uint64_t presented = m["frames_presented"], displayed = m["frames_displayed"];
  // One flip a refresh (the flip register holds one pending flip) and at most max_frame_latency frames
  // presented ahead of the screen: presented <= 60 refreshes in 1 s + 2.
  CHECK(presented <= 62);
  CHECK(presented >= 50);
  CHECK(presented == displayed + m["frames_dropped"].get<uint64_t>() + m["frames_pending"].get<uint64_t>());
  CHECK(m["frames_dropped"] == 0);
  // fps is frames presented over the time from the first frame's start to the cut: between 1 s and
  // 1 s less the set-up (under kFrameLoopTailMs, 100 ms) of simulated time.
  const double fps = m["fps"];
  CHECK(fps >= double(presented) / 1.0);
  CHECK(fps <= double(presented) / 0.9);
}

TEST_CASE("hybrid_present cut by sim.limit_ms counts the frames it presented, not those asked for", "[H4][C2]") {
  // 100 ms of rendering a frame: 20 frames need over 2 s; the scenario's own check reckons with the
  // pace, not the render, so 1.5 s passes it and the run is cut after about 14 frames.
  const auto j =
      run_json(scenario("hybrid_present") + " --workload.render_us=100000 --workload.frames=20 --sim.limit_ms=1500",
               "hp_cut", 1);
  const auto& m = j["metrics"];
  CHECK(j.contains("incomplete"));
  CHECK(m["frames_requested"] == 20);
  const uint64_t presented = m["frames_presented"];
  CHECK(presented < 20);
  CHECK(presented >= 10);  // 1.5 s at one frame per 100 ms of rendering, less the set-up
  CHECK(presented == m["frames_displayed"].get<uint64_t>() + m["frames_dropped"].get<uint64_t>() +
                         m["frames_pending"].get<uint64_t>());
  // Checks that judge a whole run are not made on a cut one: the reason given is the cut.
  for (auto& f : j["checks_failed"]) CHECK(f.get<std::string>().find("never reached the panel") == std::string::npos);
}

// workload.adapter = igpu: the hybrid laptop's iGPU renders and presents on its own panel. The dGPU's
// last use is its start before the first frame; after gpu.runtime_d3_idle_ms (laptop_hybrid: runtime
// D3cold on, 5 s) the OS powers it off and it stays off: the run's off time is its length less the 5 s and
// less the start (tens of ms) and the save (no local allocation to save: microseconds of register work).
TEST_CASE("frame_loop on the iGPU: it renders and presents on its own panel and the idle dGPU powers off", "[H3][H5]") {
  const nlohmann::json j = run_json(scenario("idle_desktop"), "idle_desktop");
  const auto& m = j["metrics"];
  CHECK(m["frames_displayed"] == 30);
  const auto& st = m["power_states"];
  // Every frame's composition ran on the iGPU's graphics engine (a gate wake each: a second apart, far
  // beyond the gating delay), none on the dGPU's.
  CHECK(st["igpu_node0_gate_wakes"] == 30);
  CHECK(st["gpu_node0_gate_wakes"] == 0);
  // The busy figure is the iGPU engine's: 300 +- 50 us of composition a second, 0.025-0.035 %.
  const double busy = m["engine_busy_pct"]["node 0 (graphics)"].get<double>();
  CHECK(busy >= 0.025);
  CHECK(busy <= 0.035);
  // Nothing crosses the link a frame (one frame is 16 MB at 2560x1600): a few register accesses of the
  // power-off at most.
  CHECK(m["link_bytes_per_frame"].get<double>() < 64);
  const double t_s = j["sim_time_ns"].get<double>() / 1e9;
  const double off_s = st["dgpu_d3cold"].get<double>() * t_s;
  CHECK(off_s <= t_s - 5.0);
  CHECK(off_s >= t_s - 5.2);
  // The iGPU's panel self-refreshes between repaints and the package reaches PC8 there.
  CHECK(st["display_psr"].get<double>() > 0.9);
  CHECK(st["package_pc8"].get<double>() > 0.9);
}

TEST_CASE("workload.adapter = igpu is refused without an iGPU, with the dGPU's panel, or without the engine", "[H4]") {
  expect_bad_input(scenario("frame_loop") + " --workload.adapter=igpu", "workload.adapter = igpu");
  expect_bad_input(scenario("frame_loop") + " --workload.adapter=igpu", "only platform.topology = hybrid has");
  expect_bad_input(scenario("idle_desktop") + " --display.adapter=gpu", "display.adapter");
  expect_bad_input(scenario("video_playback_laptop") + " --igpu.node1.kind=compute", "igpu.nodeN.kind = video");
}

TEST_CASE("frame_loop on the iGPU: its GPU waits are counted on the iGPU's scheduler and command processor",
          "[F5][H5]") {
  // video_playback.json waits once a frame (the conversion for the decode). With legacy fences the OS holds
  // each wait and releases it on the signal's interrupt: one CPU round trip a frame, none resolved on the
  // GPU; with native fences the iGPU's command processor resolves each, and none makes a round trip.
  const auto legacy =
      run_json(scenario("video_playback_laptop") + " --fence.kind=legacy --workload.frames=30", "igpu_legacy");
  CHECK(legacy["metrics"]["gpu_waits"]["cpu_round_trips"] == 30);
  CHECK(legacy["metrics"]["gpu_waits"]["unblocked_on_gpu"] == 0);
  const auto native = run_json(scenario("video_playback_laptop") + " --workload.frames=30", "igpu_native");
  CHECK(native["metrics"]["gpu_waits"]["cpu_round_trips"] == 0);
  CHECK(native["metrics"]["gpu_waits"]["unblocked_on_gpu"] == 30);
}
