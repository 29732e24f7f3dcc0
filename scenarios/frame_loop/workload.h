// A workload file (workloads/*.json): what an architect writes by hand to describe an application's
// frames. Strict: an unknown key, a wrong type or an out-of-range value is a ConfigError naming the key
// path (exit 2), never a silent default; so is a key given twice in one object.
//
//   {
//     "name": "game",
//     "description": "...",
//     "frames": 600,                 // frames to run
//     "fps": 60,                     // the app's own pace; 0 = as fast as dependencies allow
//     "max_frame_latency": 2,        // frames presented and not yet on screen before the next one starts
//     "buffers": 3,                  // swap-chain buffers
//     "queues": { "gfx": { "engine": "graphics" }, ... },   // on the rendering adapter (the dGPU)
//     "fences": { "shadows": { "storage": "system", "kind": "native" }, ... },
//     "frame": [ step, ... ]         // one frame, in program order, run every frame
//   }
//
// Steps (each an object with one key):
//   {"cpu": {"us": 2000, "jitter_us": 500}}                  the app thread computes (the core is busy)
//   {"cpu": {"us": 4000, "threads": 6}}                      and 5 job threads beside it, each for "us"
//                                                            on a core of its own (cpu_jobs.h)
//   {"gpu": {"queue": "gfx", "us": 800, "jitter_us": 100}}   engine work: "us" at the engine's clock,
//   {"gpu": {"queue": "gfx", "cycles": 1600000}}              or cycles, or (a COPY) bytes
//   {"gpu": {"queue": "copy", "bytes": 4194304}}
//   {"signal": {"queue": "gfx", "fence": "shadows"}}          GPU signal: the fence's next value
//   {"wait": {"queue": "async", "fence": "shadows"}}          GPU wait for the fence's latest value
//   {"cpu_wait": {"fence": "frame", "frames_back": 1, "timeout_ms": 100}}
//                                                            CPU wait for the value of frames_back frames ago
//   {"present": {"queue": "gfx", "sync_interval": 1}}         the frame's present (one per frame, last)
//   {"repeat": 10, "steps": [ ... ]}                         the steps, 10 times
// "jitter_us" draws uniformly in [-jitter, +jitter] from the run's seed (clamped at 0).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw_model/gpu/engine_kind.h"
#include "hw_model/gpu/packets.h"

namespace gpumodel {

struct WorkloadStep {
  enum class Kind { Cpu, Gpu, Signal, Wait, CpuWait, Present } kind = Kind::Cpu;
  int queue = -1, fence = -1;
  double us = 0, jitter_us = 0;
  unsigned threads = 1;  // a CPU step: the app thread and threads - 1 job threads
  uint64_t cycles = 0, bytes = 0;
  int frames_back = 0;
  double timeout_ms = 0;  // 0: no timeout
  int sync_interval = 1;
  std::string where;  // "frame[3]": the step's place in the file, for messages
};

struct WorkloadQueue {
  std::string name;
  EngineKind engine = EngineKind::Graphics;
};

struct WorkloadFence {
  std::string name;
  std::string storage = "system";
  std::string kind;           // "native", "legacy", or "" (fence.kind's); a fence.kind the user set overrides it
  int signals_per_frame = 0;  // signal steps per frame (a frame's values are n * this + k)
};

struct Workload {
  std::string name, description, file;
  uint64_t frames = 0;
  double fps = 0;
  int max_frame_latency = 1, buffers = 3;
  std::vector<WorkloadQueue> queues;
  std::vector<WorkloadFence> fences;
  std::vector<WorkloadStep> frame;  // repeats unrolled
  int present_queue = -1;
  // Per frame: GPU signals, GPU waits, CPU waits.
  int signals = 0, gpu_waits = 0, cpu_waits = 0;
};

// The most a workload file may hold: a frame's 100,000 steps (the parser's bound) written out one a
// line at about 80 bytes each; a file larger than that is not a workload. workload.file's description
// documents it.
constexpr uint64_t kWorkloadFileMaxBytes = uint64_t(8) << 20;
// How deep its JSON may nest: the deepest workload is a few levels of repeats (at most 4) inside a
// frame's steps, about 16 levels.
constexpr size_t kWorkloadMaxDepth = 64;

// Parses `text` (the file `file`); ConfigError on anything not described above, a key given twice in
// one object included.
Workload parse_workload(const std::string& text, const std::string& file);
// Reads and parses a workload file: ConfigError naming workload.file if it cannot be read, is not a
// regular file or is larger than kWorkloadFileMaxBytes.
Workload load_workload(const std::string& path);

}  // namespace gpumodel
