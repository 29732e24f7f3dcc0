#include "scenarios/display/display_monitors.h"

namespace gpumodel {

ScanoutUnderflowMonitor::ScanoutUnderflowMonitor(Platform& p) {
  for (GpuAdapter* a : {&p.gpu, p.igpu}) {
    if (!a || !a->display) continue;
    watching_ = true;
    const std::string who = a->display->name();
    a->display->on_underflow = [this, who](uint64_t frame, unsigned line, sc_core::sc_time t) {
      if (++n_ <= 8)
        first_.push_back(who + ": frame " + std::to_string(frame) + " line " + std::to_string(line) + " at " +
                         t.to_string());
    };
  }
}

void ScanoutUnderflowMonitor::finish(Results& r) {
  if (!watching_) return;
  r.monitors["scanout_underflow"] = n_;
  if (!first_.empty()) r.metric("scanout_underflow_first", first_);
}

MpoStaticCheckMonitor::MpoStaticCheckMonitor(Platform& p) {
  if (!p.igpu_driver && !p.gpu.display) return;  // no panel to check overlays for
  watching_ = true;
  for (Kmd* k : {&p.kmd, p.igpu_driver ? &p.igpu_driver->kmd : nullptr}) {
    if (!k) continue;
    k->on_mpo_check = [this](const MpoCheck& c, uint64_t before, uint64_t after) {
      if (c.static_check && before != after) ++n_;  // C5: a static check must leave the cached state alone
    };
  }
}

void MpoStaticCheckMonitor::finish(Results& r) {
  if (watching_) r.monitors["mpo_static_check_state"] = n_;
}

namespace {
const MonitorRegistration kUnderflow{"scanout_underflow", attach_monitor<ScanoutUnderflowMonitor>};
const MonitorRegistration kMpo{"mpo_static_check_state", attach_monitor<MpoStaticCheckMonitor>};
}  // namespace

}  // namespace gpumodel
