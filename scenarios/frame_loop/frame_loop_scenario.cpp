// frame_loop: an application's frames from a workload file (workload.file, workloads/*.json) on the
// platform: see frame_loop.h.
#include "hw_model/core/input_file.h"
#include "scenarios/common/fence_common.h"
#include "scenarios/frame_loop/frame_loop.h"

namespace gpumodel {

ScenarioInfo frame_loop_scenario() {
  ScenarioInfo info{"frame_loop",
                    "an application's frames from a workload file: frame time, latency, interrupts, idle",
                    [](ParamSet& ps, const std::string& o) {
                      ps.declare_path(
                          "workload.file", "workloads/game.json",
                          "A: the workload file (workloads/*.json: devices' queues, fences, a frame's steps); a "
                          "regular file of at most " +
                              format_bytes(kWorkloadFileMaxBytes) +
                              " (a frame's 100,000 steps, one a line), strict JSON: a key given twice is refused",
                          o);
                      ps.declare_real("workload.fps", 0, "fps", 0, 1000,
                                      "A: 0 = the workload file's own pace (its fps); F = the app starts a frame "
                                      "every 1/F s (a player or a page that updates F times a second)",
                                      o);
                      declare_frame_loop_params(ps, o);
                    },
                    [](const ParamSet& ps) {
                      Workload w = load_workload(ps.get_path("workload.file"));
                      if (ps.get_real("workload.fps") > 0) w.fps = ps.get_real("workload.fps");
                      return std::make_unique<FrameLoopDriver>(ps, std::move(w));
                    },
                    [](const ParamSet& ps) {
                      Workload w = load_workload(ps.get_path("workload.file"));
                      if (ps.get_real("workload.fps") > 0) w.fps = ps.get_real("workload.fps");
                      validate_frame_loop(ps, w, "frame_loop");
                    },
                    /*runs_without_native_fences=*/legacy_fence_kind};
  info.presents = true;
  return info;
}

namespace {
const ScenarioRegistration kFrameLoop{frame_loop_scenario};
}  // namespace

}  // namespace gpumodel
