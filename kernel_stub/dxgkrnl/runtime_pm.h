// Runtime D3cold of the discrete adapter (gpu.runtime_d3 = d3cold): the OS powers an idle dGPU off and back
// on at its next use, as hybrid laptops do. What the model follows (NVIDIA's Linux driver README, chapter
// "PCI-Express Runtime D3 (RTD3) Power Management"):
//  * the lowest power state turns the whole chip off through the platform (ACPI _PR3): nothing runs on it,
//    and any work or MMIO access must first turn it back on and restore its state;
//  * a GPU that drives a display stays on;
//  * its video memory is turned off too (its contents saved to system memory) when less than a threshold
//    is in use (200 MB by default), and kept in self refresh otherwise, which "uses more power than turning
//    off video memory, but allows the GPU to be powered off and reactivated more quickly".
//
// Powering off, after gpu.runtime_d3_idle_ms without a use (Linux amdgpu and nouveau: a 5 s autosuspend
// delay), once the adapter reports no work (BAR0 kAdapterStatus kAdapterBusy). The idle deadline is kept
// by the run loop (deadline() below): a run whose work ends before it ends there, as it would without
// runtime D3:
//   1 DxgkDdiSetPowerState(D3): VRAM in use <= gpu.runtime_d3_vram_threshold_mb -> VidMm copies every
//     resident local allocation to its system-memory copy (paging copies on the GPU, over the link) and the
//     KMD lets VRAM lose power; otherwise it asks for self refresh (BAR0 kVramSelfRefresh).
//   2 The OS cuts the slot's power: the root port's Slot Control, Power Controller Control = off.
//   A use while the copies run cancels the power-off.
// Powering on (a use finds it off; the caller waits, and so does every other caller meanwhile):
//   1 Slot Control Power Controller Control = on: the platform ramps the rail and releases PERST#
//     (link.power_on_ms), the link trains (link.training_ms).
//   2 As Linux's pcie_wait_for_link_delay: sleep 20 ms (PCIe Base Specification, Conventional Reset: the
//     LTSSM enters Detect within 20 ms), poll Link Status' Data Link Layer Link Active every 1 ms, then wait
//     gpu.runtime_d3_config_wait_ms (100 ms: above 5 GT/s, software waits 100 ms after the link trains
//     before its first configuration request).
//   3 DxgkDdiSetPowerState(D0): the KMD re-initialises the GPU (kmd.d0_init_ms) and re-routes interrupts.
//   4 VidMm copies back what it saved.
// Uses: every VidSch entry that reaches the adapter (submissions, CPU signals and waits, queue and fence
// creation) and every packet VidSch schedules; each of the adapter's interrupts is activity (the idle time
// counts from the last), and an adapter found busy at the idle check counts as used then. A path that reaches a
// powered-off adapter without one is a model bug the link counts (PcieLink::aborts) and the run reports.
//
// Simplifications: the hardware keeps its registers and local memory's contents through a power-off (the
// restore is timed, not performed); the rail's residual draw is taken as zero.
// Trace: <adapter>.runtime_d3 (D0 / off / resume / entry).
#pragma once
#include <cstdint>
#include <string>

#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "kernel_stub/cpu/cpu.h"

namespace gpumodel {

class Kmd;
class VidMm;

class RuntimePm {
 public:
  static void declare_params(ParamSet& ps);
  // `port_base`: the root port's configuration space (PcieLink::kRootPortBase); `applies`: a discrete adapter
  // that drives no display (an integrated adapter, or one that scans out a panel, never powers off).
  RuntimePm(const ParamSet& ps, Cpu& cpu, Kmd& kmd, VidMm& vidmm, Vcd& vcd, const std::string& adapter,
            uint64_t port_base, bool applies);
  bool enabled() const { return enabled_; }

  // Before Dxgkrnl reaches the adapter for a caller: powers it on first when it is off (the calling thread
  // waits), and marks it used now.
  void use();
  // A use held for the length of an operation that reaches the adapter (a DDI's register accesses): no
  // power-off begins while one is held.
  // The worker's own copies (the save, the restore) neither hold nor use.
  void acquire() {
    if (!enabled_ || sc_core::sc_get_current_process_handle() == worker_) return;
    use();
    ++holds_;
  }
  void release() {
    if (!enabled_ || sc_core::sc_get_current_process_handle() == worker_) return;
    --holds_;
    last_use_ = sc_core::sc_time_stamp();
  }
  struct Hold {
    RuntimePm* pm;
    explicit Hold(RuntimePm* p) : pm(p) {
      if (pm) pm->acquire();
    }
    ~Hold() {
      if (pm) pm->release();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
  };
  // The adapter interrupted (its ISR ran): activity, so the idle time counts from now. Never waits (device
  // IRQL); an interrupt cannot come from a powered-off adapter, and those of the power-off's and power-on's
  // own copies are not activity.
  void activity() {
    if (enabled_ && state_ == State::On) last_use_ = sc_core::sc_time_stamp();
  }

  // The idle deadline, an OS timer the run loop keeps (app/progress.h, advance): while the worker waits for
  // it, deadline() gives its time; the loop runs the simulation to it and, when anything else is still to
  // happen there, calls expire(), which wakes the worker (the timer's DPC cost is not modelled). A run whose
  // work ends before the deadline ends there, as it would without runtime D3: a pending OS timer does not
  // keep a finished run going. The loop tells where its current run stops (set_loop_stop): a deadline armed
  // earlier than that pauses the simulation (sc_pause) so the loop can stop at it. Without the loop (a
  // test's own sc_start) the deadline never expires.
  bool deadline(sc_core::sc_time* at) const {
    if (!enabled_ || !timer_wait_ || fired_) return false;
    *at = last_use_ + idle_;
    return true;
  }
  void expire();
  void set_loop_stop(const sc_core::sc_time& t) { loop_stop_ = t; }
  bool take_pause() {  // the run returned early because a deadline was armed (sc_pause)
    const bool p = paused_;
    paused_ = false;
    return p;
  }

  enum class State { On, Entering, Off, Resuming };
  State state() const { return state_; }
  // Figures: power-offs, power-ons, the last power-on's latency (the first waiting use to the adapter
  // ready), the power-offs that saved VRAM, and the power-offs a use cancelled.
  uint64_t power_offs() const { return power_offs_; }
  uint64_t power_ons() const { return power_ons_; }
  uint64_t cancelled() const { return cancelled_; }
  uint64_t vram_saves() const { return vram_saves_; }
  sc_core::sc_time last_resume() const { return last_resume_; }
  sc_core::sc_time last_restore() const { return last_restore_; }  // its VidMm copies back (0: none)
  uint64_t last_restored_bytes() const { return last_restored_bytes_; }
  sc_core::sc_time last_use() const { return last_use_; }

 private:
  void idle_worker();  // an OS worker thread: the idle timer and the power-off
  void power_off(const sc_core::sc_time& decided);
  void power_on();
  void set_state(State s);
  void wake_users();  // every use waiting for a transition to end looks again

  Cpu& cpu_;
  Kmd& kmd_;
  VidMm& vidmm_;
  Vcd& vcd_;
  const uint64_t port_;
  const bool enabled_;
  sc_core::sc_time idle_, config_wait_;
  uint64_t threshold_bytes_;
  State state_ = State::On;
  sc_core::sc_time last_use_ = sc_core::SC_ZERO_TIME;
  KEvent ready_, used_, timer_;
  bool timer_wait_ = false, fired_ = false;  // the worker waits for the idle deadline; expire() woke it
  bool paused_ = false;                      // it paused the run loop's sc_start
  int holds_ = 0;
  sc_core::sc_time loop_stop_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_process_handle worker_;
  sc_core::sc_time resume_from_ = sc_core::SC_ZERO_TIME;  // the first use that found the adapter off
  bool saved_ = false;                                    // the last power-off saved VRAM (power-on restores it)
  uint64_t power_offs_ = 0, power_ons_ = 0, cancelled_ = 0, vram_saves_ = 0;
  sc_core::sc_time last_resume_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time last_restore_ = sc_core::SC_ZERO_TIME;
  uint64_t last_saved_bytes_ = 0, last_restored_bytes_ = 0;
  Vcd::Id trace_ = Vcd::kNone;
};

}  // namespace gpumodel
