#include "scenarios/frame_loop/cpu_jobs.h"

#include <string>

namespace gpumodel {

void CpuJobs::validate(const ParamSet& ps, const Workload& w) {
  const int64_t cores = ps.get_int("cpu.cores");
  for (const WorkloadStep& st : w.frame)
    if (st.threads > 1 && int64_t(st.threads) > cores - 1)
      throw ConfigError("workload step " + st.where + ": a cpu step with threads = " + std::to_string(st.threads) +
                        " needs a core of its own for each thread beside core 0, which takes the interrupts; "
                        "allowed: cpu.cores of at least " +
                        std::to_string(st.threads + 1) + " (it is " + std::to_string(cores) + "), or fewer threads");
}

void CpuJobs::start(Cpu& cpu, unsigned workers) {
  for (unsigned k = 0; k < workers; ++k) {
    w_.push_back(std::make_unique<Worker>());
    Worker* w = w_.back().get();
    cpu.spawn_thread("job" + std::to_string(k + 1), [this, &cpu, w] {
      for (;;) {
        while (w->taken == w->posted) cpu.wait_for(w->go);
        ++w->taken;
        if (w->us > 0) cpu.work(sc_core::sc_time(w->us, sc_core::SC_US));
        --pending_;
        cpu.signal(done_);
      }
    });
  }
}

void CpuJobs::run(Cpu& cpu, const std::vector<double>& us) {
  for (size_t k = 1; k < us.size() && k <= w_.size(); ++k) {
    Worker& w = *w_[k - 1];
    w.us = us[k];
    ++w.posted;
    ++pending_;
    cpu.signal(w.go);
  }
  if (!us.empty() && us[0] > 0) cpu.work(sc_core::sc_time(us[0], sc_core::SC_US));
  while (pending_ > 0) cpu.wait_for(done_);
}

}  // namespace gpumodel
