#include "kernel_stub/dxgkrnl/runtime_pm.h"

#include "hw_model/interconnect/pcie_link.h"
#include "kernel_stub/dxgkrnl/vidmm.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

using namespace sc_core;

namespace {
const char* name_of(RuntimePm::State s) {
  switch (s) {
    case RuntimePm::State::On: return "D0";
    case RuntimePm::State::Entering: return "entry";
    case RuntimePm::State::Off: return "off";
    case RuntimePm::State::Resuming: return "resume";
  }
  return "?";
}
// Linux pcie_wait_for_link_delay: the first sleep (PCIe Base Specification, Conventional Reset: the LTSSM
// enters Detect within 20 ms of the end of the reset) and the Link Status poll period (msleep(1)).
const sc_time kFirstSleep(20, SC_MS);
const sc_time kPollPeriod(1, SC_MS);
// The adapter's idle, polled before the power goes (A: the KMD's own stall loop, as its reset polls).
const sc_time kQuiescePoll(10, SC_US);
}  // namespace

void RuntimePm::declare_params(ParamSet& ps) {
  ps.declare_enum("gpu.runtime_d3", "off", {"off", "d3cold"},
                  "Q: NVIDIA Linux driver README, 'PCI-Express Runtime D3 (RTD3) Power Management': enabled by "
                  "default on Ampere and newer notebooks (the dGPU and, below a threshold of use, its video "
                  "memory powered off when idle), disabled on desktops; off = the dGPU stays in D0 (a desktop)");
  ps.declare_real("gpu.runtime_d3_idle_ms", 5000, "ms", 1, 600000,
                  "Q: Linux amdgpu and nouveau set a dGPU's runtime-PM autosuspend delay to 5000 ms "
                  "(pm_runtime_set_autosuspend_delay); A: Windows' idle timeout for a dGPU is not published, "
                  "taken the same, uncertainty x0.2-x2");
  ps.declare_int("gpu.runtime_d3_vram_threshold_mb", 200, "MiB", 0, 1024,
                 "Q: NVIDIA Linux driver README, 'Video Memory Utilization Threshold': 200 MB by default (at most "
                 "1024): with less in use, video memory is turned off (its contents saved to system memory), "
                 "otherwise kept in self refresh; 0 = always self refresh");
  ps.declare_real("gpu.runtime_d3_config_wait_ms", 100, "ms", 0, 10000,
                  "Q: PCI Express Base Specification, Conventional Reset: with link speeds above 5 GT/s, software "
                  "waits 100 ms after the link trains before its first configuration request (Linux "
                  "pcie_wait_for_link_delay, d3cold_delay)");
}

RuntimePm::RuntimePm(const ParamSet& ps, Cpu& cpu, Kmd& kmd, VidMm& vidmm, Vcd& vcd, const std::string& adapter,
                     uint64_t port_base, bool applies)
    : cpu_(cpu),
      kmd_(kmd),
      vidmm_(vidmm),
      vcd_(vcd),
      port_(port_base),
      enabled_(applies && ps.get_enum("gpu.runtime_d3") == "d3cold"),
      idle_(ps.get_ns("gpu.runtime_d3_idle_ms") * 1e6),
      config_wait_(ps.get_ns("gpu.runtime_d3_config_wait_ms") * 1e6),
      threshold_bytes_(uint64_t(ps.get_int("gpu.runtime_d3_vram_threshold_mb")) << 20) {
  if (!enabled_) return;
  trace_ = vcd_.add_ascii(adapter + ".runtime_d3", name_of(state_));
  cpu_.spawn_thread("dxgkrnl.runtime_pm", [this] { idle_worker(); });
}

void RuntimePm::expire() {
  if (!timer_wait_ || fired_ || sc_time_stamp() < last_use_ + idle_) return;
  fired_ = true;
  cpu_.signal(timer_);
}

void RuntimePm::set_state(State s) {
  state_ = s;
  vcd_.set_ascii(trace_, name_of(s));
}

void RuntimePm::use() {
  // The worker's own paging copies (the save before a power-off, the restore after a power-on) are not uses.
  if (!enabled_ || sc_get_current_process_handle() == worker_) return;
  for (;;) {
    if (state_ == State::On) {
      last_use_ = sc_time_stamp();
      return;
    }
    if (state_ == State::Off) {
      resume_from_ = sc_time_stamp();
      set_state(State::Resuming);
      cpu_.signal(used_);
    } else if (state_ == State::Entering) {
      last_use_ = sc_time_stamp();  // while VidMm still copies, this cancels the power-off
    }
    cpu_.wait_for(ready_);  // the transition under way ends: look again
  }
}

void RuntimePm::wake_users() {
  while (ready_.waiters > ready_.queued) cpu_.signal(ready_);
}

void RuntimePm::idle_worker() {
  worker_ = sc_get_current_process_handle();
  for (;;) {
    if (sc_time_stamp() < last_use_ + idle_) {
      timer_wait_ = true;
      if (last_use_ + idle_ < loop_stop_) {  // the run loop stops at the deadline (deadline())
        paused_ = true;
        sc_pause();
      }
      cpu_.wait_for(timer_);
      timer_wait_ = fired_ = false;
      continue;  // a use meanwhile moved it
    }
    const sc_time decided = sc_time_stamp();  // a use from here on cancels the power-off
    if (holds_ > 0 || kmd_.adapter_busy()) {  // a DDI under way, or work queued or running: a use now
      last_use_ = sc_time_stamp();
      continue;
    }
    power_off(decided);
    if (state_ != State::Off) continue;  // a use cancelled it
    while (state_ == State::Off) cpu_.wait_for(used_);
    power_on();
  }
}

void RuntimePm::power_off(const sc_time& from) {
  set_state(State::Entering);
  const uint64_t in_use = vidmm_.local_resident_bytes();
  const bool save = in_use <= threshold_bytes_;
  uint64_t bytes = 0;
  if (save) bytes = vidmm_.save_local_for_power_off();
  // The copies can leave the adapter busy a little longer (a preemption the scheduler asked for while they
  // ran, its interrupt on its way): the power goes only once the adapter reports idle.
  while (last_use_ <= from && kmd_.adapter_busy()) cpu_.sleep(kQuiescePoll);
  // Every interrupt the adapter raised before it reported idle has reached the interrupt controller (the
  // status read's completion does not pass the adapter's posted MSIs); the core takes them, and runs their
  // DPCs, before the power goes (a driver's synchronize_irq in its suspend): an ISR that ran after would
  // read a powered-off adapter. Each is activity, so it cancels the power-off.
  // The status bit can clear as the interrupt leaves the adapter (a preemption's): one more poll period
  // lets such an MSI arrive before the check.
  cpu_.sleep(kQuiescePoll);
  while (cpu_.interrupts_pending()) cpu_.sleep(kQuiescePoll);
  if (last_use_ > from || holds_ > 0) {  // an app reached the adapter meanwhile: it stays on
    ++cancelled_;
    set_state(State::On);
    wake_users();
    return;
  }
  kmd_.DxgkDdiSetPowerState(false, !save);
  // An interrupt raised as the adapter went idle (a preemption's, its status bit cleared as its MSI left)
  // is behind the DDI's read-back now: its ISR and DPC run while the adapter still has power.
  while (cpu_.interrupts_pending()) cpu_.sleep(kQuiescePoll);
  cpu_.mmio_write32(port_ + PcieLink::kSlotControl, PcieLink::kSlotCtlPowerOff);
  saved_ = save;
  last_saved_bytes_ = bytes;
  if (save) ++vram_saves_;
  ++power_offs_;
  set_state(State::Off);
  wake_users();  // a use that came after the copies: it powers the adapter on again
}

void RuntimePm::power_on() {
  cpu_.mmio_write32(port_ + PcieLink::kSlotControl, 0);  // Power Controller Control: on
  cpu_.sleep(kFirstSleep);
  for (;;) {
    if (cpu_.mmio_read32(port_ + PcieLink::kLinkControl) & PcieLink::kLinkStaDllla) break;
    cpu_.sleep(kPollPeriod);
  }
  cpu_.sleep(config_wait_);
  kmd_.DxgkDdiSetPowerState(true, false);
  const sc_time restore_from = sc_time_stamp();
  if (saved_) vidmm_.restore_local_after_power_on();
  last_restored_bytes_ = saved_ ? last_saved_bytes_ : 0;
  last_restore_ = sc_time_stamp() - restore_from;
  ++power_ons_;
  last_resume_ = sc_time_stamp() - resume_from_;
  last_use_ = sc_time_stamp();  // the use that asked for the power-on: the idle time counts from here
  set_state(State::On);
  wake_users();
}

}  // namespace gpumodel
