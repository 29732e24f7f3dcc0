// A workload's CPU step spread over threads (a game engine's job system): the app thread and threads - 1
// job threads each compute the step's time, on cores of their own, and the step ends when all are done.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "tb.h"

using namespace tb;

namespace {

std::string jobs_workload(int threads) {
  const std::string path = "jobs_" + std::to_string(threads) + "_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"({"name": "jobs", "description": "t", "frames": 30, "fps": 60, "max_frame_latency": 2,
 "buffers": 3, "queues": {"gfx": {"engine": "graphics"}}, "fences": {"frame": {}},
 "frame": [{"cpu": {"us": 2000, "threads": )"
                      << threads << R"(}}, {"gpu": {"queue": "gfx", "us": 100}},
           {"signal": {"queue": "gfx", "fence": "frame"}}, {"present": {"queue": "gfx", "sync_interval": 1}}]})";
  return path;
}

}  // namespace

TEST_CASE("frame_loop: a CPU step on 4 threads keeps 3 more cores busy for its time each frame", "[H5][frame_loop]") {
  // 30 frames at 60 fps, a 2 ms CPU step, cpu.cores = 6, every idle core in C6 (fixed governor). With
  // threads = 4, three job threads beside the app thread each leave C6 (85 us, at C0's power) and compute
  // 2 ms every frame on a core that otherwise stays in C6: the cores' energy grows by at least
  // 3 x 30 x (2000 + 85) us x (power.cpu_c0_mw 2000 - power.cpu_c6_mw 10) mW = 373.42 mJ. At most by
  // that and each job thread's first exit at its creation (3 x 85 us) and each wake's dispatch
  // (cpu.thread_wake_ns, 2 us, 90 wakes), at the same power: 0.87 mJ more. Run one after another on the
  // app thread the steps would add 358.2 mJ (no exits); not run, nothing.
  const std::string args = " --cpu.cores=6 --cpu.idle_governor=fixed --cpu.idle_state=C6";
  const std::string w1 = jobs_workload(1), w4 = jobs_workload(4);
  const auto one = run_json(scenario("frame_loop") + args + " --workload.file=" + w1, "jobs1");
  const auto four = run_json(scenario("frame_loop") + args + " --workload.file=" + w4, "jobs4");
  std::remove(w1.c_str());
  std::remove(w4.c_str());
  CHECK(one["verdict"] == "pass");
  CHECK(four["verdict"] == "pass");
  const double d =
      four["metrics"]["energy"]["cpu_core_mj"].get<double>() - one["metrics"]["energy"]["cpu_core_mj"].get<double>();
  const double lo = 3 * 30 * (2000 + 85) * 1e-6 * (2000 - 10);
  CHECK(d >= lo - 1e-6);
  CHECK(d <= lo + (3 * 85 + 90 * 2) * 1e-6 * (2000 - 10) + 1e-6);
  // The app's CPU time a frame: its own 2 ms, then the wait for the slowest job thread, which left C6
  // (85 us) before its 2 ms, and the app's own core's exit from C6 (85 us) when that one's completion
  // wakes it: at least 2 + 0.085 + 0.085 ms; at most that and the two wakes' dispatch and the ISR-free
  // signal path (2 + 2 us) with room for rounding, 2.2 ms. Without the wait it would be 2 ms; one after
  // another on the app thread, 8 ms. With one thread it is the step's 2 ms.
  const double p50 = four["metrics"]["cpu_busy_ms"]["p50"].get<double>();
  CHECK(p50 >= 2.170 - 1e-9);
  CHECK(p50 <= 2.2);
  CHECK(one["metrics"]["cpu_busy_ms"]["p50"].get<double>() == Approx(2.0).margin(0.001));
  CHECK(four["metrics"]["frames_displayed"] == 30);
}

TEST_CASE("frame_loop: a CPU step with more threads than the cores beside core 0 is refused naming cpu.cores",
          "[H4][frame_loop]") {
  const std::string w4 = jobs_workload(4);
  expect_bad_input(scenario("frame_loop") + " --cpu.cores=4 --workload.file=" + w4, "cpu.cores of at least 5");
  // Five cores hold it: core 0 and one for each thread.
  CHECK(run_json(scenario("frame_loop") + " --cpu.cores=5 --workload.frames=5 --workload.file=" + w4,
                 "jobs_ok")["verdict"] == "pass");
  std::remove(w4.c_str());
  // The workload reader's range, 1 to 63 (cpu.cores is at most 64), named by the step's path.
  const std::string w0 = jobs_workload(0), w64 = jobs_workload(64);
  expect_bad_input(scenario("frame_loop") + " --cpu.cores=64 --workload.file=" + w0, "$.frame[0].cpu.threads");
  expect_bad_input(scenario("frame_loop") + " --cpu.cores=64 --workload.file=" + w64, "$.frame[0].cpu.threads");
  std::remove(w0.c_str());
  std::remove(w64.c_str());
}
