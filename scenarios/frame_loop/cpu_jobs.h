// A game's job system under the frame loop: a CPU step spread over several threads ({"cpu": {"us": 4000,
// "threads": 6}}): the app thread and threads - 1 job threads each compute the step's time (each with its
// own jitter draw) side by side, each on a core of its own: the job threads are created right after the
// app thread and take the next cores round-robin (Windows' ideal processors), so validate()'s rule (a
// core beside core 0 for each thread) gives each its own. The step ends when the last one is done (the
// app waits on the job system's completion event, as a job system's main thread joins its workers).
#pragma once
#include <memory>
#include <vector>

#include "hw_model/core/params.h"
#include "kernel_stub/cpu/cpu.h"
#include "scenarios/frame_loop/workload.h"

namespace gpumodel {

class CpuJobs {
 public:
  // Refuses (ConfigError naming cpu.cores and the step) a step with more threads than the cores beside
  // core 0, which takes the interrupts.
  static void validate(const ParamSet& ps, const Workload& w);
  // Spawns `workers` job threads (once, before the first frame); each waits for its work.
  void start(Cpu& cpu, unsigned workers);
  unsigned workers() const { return unsigned(w_.size()); }
  // From the app thread: us[0] on the calling thread, us[k] on job thread k - 1 (us.size() - 1 of them,
  // at most workers()); returns when every one of them is done.
  void run(Cpu& cpu, const std::vector<double>& us);

 private:
  struct Worker {
    KEvent go;
    double us = 0;
    uint64_t posted = 0, taken = 0;
  };
  std::vector<std::unique_ptr<Worker>> w_;
  KEvent done_;
  uint64_t pending_ = 0;
};

}  // namespace gpumodel
