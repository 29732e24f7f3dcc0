// Energy: the platform's power states and traffic turned into millijoules (docs/energy.md).
//
// Each component already keeps the time it spent in each of its power states (hw_model/core/power.h)
// and the bytes it moved; the energy at an instant is a pure function of those and the power.*
// parameters, so reading it (at the run's end, or per frame) changes nothing in the run:
//   cpu_core     every core's contexts: C0 power while running (threads, ISR, DPC, dispatch, idle-state
//                exits), each idle state's power while in it
//   cpu_package  the package (uncore, memory controller, I/O) in PC0 / PC2 / PC8 (cpu/package.h)
//   link         the PCIe link's lanes in L0 / L0s / L1 / L1.1 / L1.2 (line rate x energy per bit in L0)
//   sysmem       system DRAM: energy per bit read and written, background power per GiB, self-refresh
//                while the package is in PC8
//   vram         GPU memory: energy per bit, background power per GiB
//   <adapter>_nodeN  each engine active (fetch, execute, wake), idle, or power-gated, by its kind
//   <adapter>_cmp    the context management processor, always on
//   display      the display engine scanning or in panel self refresh, and the panel, each following the
//                mode's active pixel rate for its share that does
//   platform_rest  the rest of the platform (storage, wireless, fans...) as one term
//   vr_loss      the voltage regulators' loss on all of the above (power.vr_efficiency)
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/display/display_timing.h"

namespace gpumodel {

class Platform;

struct EnergyReading {
  std::vector<std::pair<std::string, double>> parts_mj;  // in the order above
  double total_mj = 0;
  sc_core::sc_time at = sc_core::SC_ZERO_TIME;
  double part(const std::string& name) const {
    for (auto& [n, v] : parts_mj)
      if (n == name) return v;
    return 0;
  }
};

class EnergyModel {
 public:
  static void declare_params(ParamSet& ps);
  explicit EnergyModel(const Platform& p);

  // The energy from time zero to now.
  EnergyReading read() const;
  // The results' "energy" object (total_mj, avg_power_mw, wall_power_mw, <part>_mj) and "power_states" (residencies).
  nlohmann::json results(const EnergyReading& e) const;
  nlohmann::json residencies() const;
  // The balance monitor: every component's state times sum to the elapsed time and none is negative,
  // and the parts sum to the total. Each failed check is one message.
  std::vector<std::string> balance(const EnergyReading& e) const;

  // The display figures at a mode: each figure's share that follows the active pixel rate scaled by the
  // mode's rate over the reference (1920x1080 at 60 Hz), the rest fixed.
  static double mode_scale(const DisplayMode& m, double share);
  double display_scan_mw(const DisplayMode& m) const;  // the engine scanning out
  double panel_mw(const DisplayMode& m) const;         // the panel lit and refreshed from the link

 private:
  const Platform& p_;
  struct Cpu {
    double c0, c1, c1e, c3, c6, pc0, pc2, pc8;
  } cpu_;
  double link_pj_per_bit_, link_l0s_frac_, link_l1_frac_, link_l1_1_frac_, link_l1_2_frac_;
  struct Mem {
    double read_pj_per_bit, write_pj_per_bit, background_mw_per_gib, self_refresh_mw_per_gib;
  } sysmem_, vram_;
  struct Kind {
    double active, idle, gated;
  };
  std::map<std::string, Kind> kinds_;  // by engine kind name
  double igpu_scale_, cmp_mw_, display_scan_mw_, display_psr_mw_, panel_mw_, panel_psr_mw_;
  double display_pixel_share_, panel_refresh_share_, rest_mw_, vr_efficiency_, charger_efficiency_;
};

// Per frame (frame loops): at each new frame on the panel, the energy since the previous one, and the
// waveform's power counters power.<part>_mw (each part's average power over that frame; in the
// timeline as counters). An observer: it reads the energy and writes trace signals, nothing else.
class EnergyProbe {
 public:
  EnergyProbe(const Platform& p, Vcd& vcd);
  void frame();  // a new frame reached the panel now
  const std::vector<double>& per_frame_mj() const { return per_frame_; }
  nlohmann::ordered_json summary() const;  // mean, p50, p95, frames

 private:
  EnergyModel model_;
  Vcd& vcd_;
  EnergyReading last_;
  bool started_ = false;
  std::vector<double> per_frame_;
  std::vector<Vcd::Id> ids_;  // total, then each part
};

}  // namespace gpumodel
