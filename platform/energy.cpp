#include "platform/energy.h"

#include <algorithm>
#include <cmath>

#include "platform/platform.h"

namespace gpumodel {

using namespace sc_core;

void EnergyModel::declare_params(ParamSet& ps) {
  const char* core =
      "A: one mobile core; no public per-state table for current client parts (Intel's datasheets "
      "give the package C-state entry rules, not their power): ";
  ps.declare_real("power.cpu_c0_mw", 2000, "mW", 0, 1e6,
                  std::string(core) +
                      "a 15 W four-core part's busy core at mid frequency, 1.5-3 W; uncertainty x0.5-x3 (a core at its "
                      "lowest clock to a performance core at turbo)");
  struct Figure {
    const char* key;
    double mw;
    const char* what;
  };
  for (const Figure& f : {Figure{"power.cpu_c1_mw", 600, "C1 clock-gated, 30 % of C0; uncertainty x0.5-x2"},
                          Figure{"power.cpu_c1e_mw", 300, "C1E at the lowest voltage; uncertainty x0.5-x2"},
                          Figure{"power.cpu_c3_mw", 100,
                                 "C3, caches flushed, clocks off; uncertainty x0.3-x3 (leakage at the retention "
                                 "voltage)"}})
    ps.declare_real(f.key, f.mw, "mW", 0, 1e6, std::string(core) + f.what);
  ps.declare_real("power.cpu_c6_mw", 10, "mW", 0, 1e6,
                  "Q/A: core C6 cuts the core's voltage to 0 V, state saved to SRAM (Intel Core datasheet Vol. 1, "
                  "Core C6): leakage of the retention SRAM only; uncertainty x0.3-x5 (that leakage varies with "
                  "temperature and process)");
  const char* pkg =
      "A: the package without the core (uncore, memory controller, I/O), ordered as the package "
      "C-states' entry rules (Intel Core datasheet Vol. 1, Package C-States) give them: ";
  for (const Figure& f : {Figure{"power.package_pc0_mw", 1000, "PC0, a core running; uncertainty x0.5-x2"},
                          Figure{"power.package_pc2_mw", 800,
                                 "PC2, the cores idle and the package held awake by a device; uncertainty x0.5-x2"},
                          Figure{"power.package_pc8_mw", 100,
                                 "PC8, DRAM in self-refresh, links in L1: tens to a hundred mW; uncertainty x0.3-x2"}})
    ps.declare_real(f.key, f.mw, "mW", 0, 1e6, std::string(pkg) + f.what);
  ps.declare_real("power.link_pj_per_bit", 4, "pJ/bit", 0, 1e3,
                  "D: 'A 1.93-pJ/Bit PCI Express Gen4 PHY Transmitter' (Electronics 10(1):68, 2021) for the "
                  "transmitter, doubled for the receiver; a lane in L0 burns it at the line rate whether it "
                  "carries data or idle symbols");
  ps.declare_real(
      "power.link_l0s_fraction", 0.33, "", 0, 1,
      "A: a lane in L0s draws a third of L0 (transmitter in electrical idle, receiver and PLL on); uncertainty "
      "x0.5-x2");
  ps.declare_real(
      "power.link_l1_fraction", 0.07, "", 0, 1,
      "A: a lane in L1 draws 7 % of L0 (both directions idle, PLL may stop; L1 substates lower); uncertainty "
      "x0.5-x2");
  ps.declare_real("power.link_l1_1_fraction", 0.03, "", 0, 1,
                  "A: a lane in L1.1 (link.l1_substates) draws 3 % of L0: the reference clock and PLL off "
                  "(CLKREQ# deasserted), the receiver's electrical-idle detector and the common-mode voltage kept "
                  "(PCI Express Base Specification section 5.5); between L1 and L1.2; uncertainty x0.5-x2");
  ps.declare_real("power.link_l1_2_fraction", 0.005, "", 0, 1,
                  "A: a lane in L1.2 draws 0.5 % of L0: the common-mode voltage off too, transmitter and receiver "
                  "unpowered, only the CLKREQ# sideband and the ports' wake logic kept (PCI Express Base "
                  "Specification section 5.5); uncertainty x0.2-x3");
  ps.declare_real("power.sysmem_read_pj_per_bit", 6.1, "pJ/bit", 0, 1e3,
                  "D: DDR4-2400 x16 8 Gb (Micron MT40A512M16, as in gem5's DDR4_2400_4x16): (IDD4R 243 - IDD3N "
                  "47 mA) x 1.2 V / 38.4 Gb/s; the core's energy, without I/O and activates");
  ps.declare_real("power.sysmem_write_pj_per_bit", 5.7, "pJ/bit", 0, 1e3,
                  "D: same device: (IDD4W 228 - IDD3N 47 mA) x 1.2 V / 38.4 Gb/s");
  ps.declare_real("power.sysmem_background_mw_per_gib", 41, "mW/GiB", 0, 1e5,
                  "D: same device, precharge standby: IDD2N 34 mA x 1.2 V + IPP 3 mA x 2.5 V per 8 Gb (1 GiB)");
  ps.declare_real("power.sysmem_self_refresh_mw_per_gib", 36, "mW/GiB", 0, 1e5,
                  "D: same device, self refresh: IDD6 30 mA x 1.2 V per GiB (the datasheet's maximum; "
                  "typical parts at room temperature draw less)");
  ps.declare_real("power.vram_pj_per_bit", 7.5, "pJ/bit", 0, 1e3,
                  "Q: Micron 'Ultra-Bandwidth Solutions' comparison table: GDDR6 average device power 7.5 pJ/bit");
  ps.declare_real("power.vram_background_mw_per_gib", 150, "mW/GiB", 0, 1e5,
                  "A: GDDR6 standby with its interface trained (16 Gb devices, 0.3 W each); uncertainty x0.5-x2");
  ps.declare_real("power.vram_self_refresh_mw_per_gib", 36, "mW/GiB", 0, 1e5,
                  "A: GDDR6 in self refresh while the dGPU is powered off (runtime D3cold, gpu.runtime_d3): "
                  "taken equal to the DDR4 device's self refresh per GiB (power.sysmem_self_refresh_mw_per_gib: "
                  "refreshing the array is the same work, the interface is off); GDDR6 vendors publish no "
                  "self-refresh current; uncertainty x0.5-x3");
  // Each engine kind busy, idle (clock-gated, 10 % of busy) and power-gated (leaking 0.4 %).
  const char* eng = "A: a laptop dGPU of about 60 W split by engine; idle is clock-gated (10 %), gated leaks 0.4 %: ";
  const struct {
    const char *key, *label;
    double active, idle, gated;
  } kinds[] = {{"graphics", "3D engine", 25000, 2500, 100},
               {"compute", "compute engine", 15000, 1500, 60},
               {"copy", "copy engine", 2000, 200, 8},
               {"video", "video engine", 1500, 150, 6}};
  for (const auto& k : kinds) {
    const std::string key = std::string("power.") + k.key, what = std::string(eng) + k.label;
    ps.declare_real(key + "_active_mw", k.active, "mW", 0, 1e7, what + " busy; uncertainty x0.5-x2");
    ps.declare_real(key + "_idle_mw", k.idle, "mW", 0, 1e7, what + " idle; uncertainty x0.5-x2");
    ps.declare_real(key + "_gated_mw", k.gated, "mW", 0, 1e7, what + " power-gated; uncertainty x0.25-x4");
  }
  ps.declare_real("power.igpu_scale", 0.2, "", 0, 10,
                  "A: an integrated GPU's engines draw a fifth of the discrete one's (a 15 W SoC's graphics "
                  "share against a 60 W dGPU); uncertainty x0.5-x2");
  ps.declare_real("power.cmp_mw", 200, "mW", 0, 1e6,
                  "A: the context management processor, a microcontroller, always on; uncertainty x0.25-x2");
  ps.declare_real(
      "power.display_scan_mw", 300, "mW", 0, 1e6,
      "A: the display engine fetching and scanning out one pipe at the reference pixel rate (1920x1080 "
      "active at 60 Hz); other modes scale its pixel share (power.display_scan_pixel_share); uncertainty x0.5-x2");
  ps.declare_real("power.display_scan_pixel_share", 0.3, "", 0, 1,
                  "A: the share of power.display_scan_mw that follows the mode's active pixel rate (the pipe's "
                  "datapath and the link's serialisers); the rest (clock generation, control) is fixed. "
                  "uncertainty x0.33-x2 (0.1-0.6)");
  ps.declare_real("power.display_psr_mw", 50, "mW", 0, 1e6,
                  "A: the display engine with the panel in self refresh (fetch and link to the panel off); uncertainty "
                  "x0.5-x3");
  ps.declare_real(
      "power.panel_mw", 1500, "mW", 0, 1e6,
      "A: a 14-inch eDP LCD panel and its backlight at the reference pixel rate (1920x1080 at 60 Hz); "
      "other modes scale its refresh share (power.panel_refresh_share); uncertainty x0.7-x1.5 (brightness)");
  ps.declare_real("power.panel_refresh_share", 0.15, "", 0, 1,
                  "A: the share of an LCD panel's power that rewrites the pixels each refresh (timing controller, "
                  "source and gate drivers) and so follows the active pixel rate; the backlight, most of an LCD "
                  "panel's power, does not. uncertainty x0.33-x2 (0.05-0.3)");
  ps.declare_real("power.panel_psr_mw", 1250, "mW", 0, 1e6,
                  "D: Intel's panel self refresh demonstration, 'about a 500 mW reduction' (IDF 2011), less "
                  "the engine's 250 mW: the panel's timing controller refreshing from its own buffer (at the "
                  "reference pixel rate; its refresh share follows the mode as power.panel_mw's does)");
  ps.declare_real("power.platform_rest_mw", 0, "mW", 0, 1e6,
                  "D: the rest of the platform (storage, wireless, embedded controller, audio, fans) as one "
                  "term: 0 counts only the modelled parts (a desktop's board and supply vary by tens of watts); a "
                  "platform file that compares with measured power names its figure");
  ps.declare_real("power.vr_efficiency", 1, "", 0.1, 1,
                  "D: the voltage regulators' efficiency from the supply to the rails: 1 counts the power the parts "
                  "draw (no conversion loss); a platform file that compares with measured power names its figure");
  ps.declare_real("power.charger_efficiency", 1, "", 0.5, 1,
                  "D: the external power supply's efficiency from the wall socket to the platform's input, for "
                  "energy.wall_power_mw (the same run plugged in, the battery full); 1 reports no supply's loss. "
                  "A platform that compares with power measured at the wall names its figure: the US Department "
                  "of Energy's Level VI standard for external power supplies (10 CFR 430.32(w)) requires at least "
                  "88 % average active-mode efficiency (over 25-100 % of its rated load) of a basic-voltage supply of "
                  "49-250 W; at a few percent of its load a supply does worse");
}

EnergyModel::EnergyModel(const Platform& p) : p_(p) {
  const ParamSet& ps = p.params;
  cpu_ = {ps.get_real("power.cpu_c0_mw"),      ps.get_real("power.cpu_c1_mw"),     ps.get_real("power.cpu_c1e_mw"),
          ps.get_real("power.cpu_c3_mw"),      ps.get_real("power.cpu_c6_mw"),     ps.get_real("power.package_pc0_mw"),
          ps.get_real("power.package_pc2_mw"), ps.get_real("power.package_pc8_mw")};
  link_pj_per_bit_ = ps.get_real("power.link_pj_per_bit");
  link_l0s_frac_ = ps.get_real("power.link_l0s_fraction");
  link_l1_frac_ = ps.get_real("power.link_l1_fraction");
  link_l1_1_frac_ = ps.get_real("power.link_l1_1_fraction");
  link_l1_2_frac_ = ps.get_real("power.link_l1_2_fraction");
  sysmem_ = {ps.get_real("power.sysmem_read_pj_per_bit"), ps.get_real("power.sysmem_write_pj_per_bit"),
             ps.get_real("power.sysmem_background_mw_per_gib"), ps.get_real("power.sysmem_self_refresh_mw_per_gib")};
  const double v = ps.get_real("power.vram_pj_per_bit"), vb = ps.get_real("power.vram_background_mw_per_gib");
  vram_ = {v, v, vb, ps.get_real("power.vram_self_refresh_mw_per_gib")};
  for (const char* k : {"graphics", "compute", "copy", "video"}) {
    const std::string b = std::string("power.") + k;
    kinds_[k] = {ps.get_real(b + "_active_mw"), ps.get_real(b + "_idle_mw"), ps.get_real(b + "_gated_mw")};
  }
  igpu_scale_ = ps.get_real("power.igpu_scale");
  cmp_mw_ = ps.get_real("power.cmp_mw");
  display_scan_mw_ = ps.get_real("power.display_scan_mw");
  display_psr_mw_ = ps.get_real("power.display_psr_mw");
  panel_mw_ = ps.get_real("power.panel_mw");
  panel_psr_mw_ = ps.get_real("power.panel_psr_mw");
  display_pixel_share_ = ps.get_real("power.display_scan_pixel_share");
  panel_refresh_share_ = ps.get_real("power.panel_refresh_share");
  rest_mw_ = ps.get_real("power.platform_rest_mw");
  vr_efficiency_ = ps.get_real("power.vr_efficiency");
  charger_efficiency_ = ps.get_real("power.charger_efficiency");
}

namespace {
double ms(const sc_time& t) { return t.to_seconds() * 1e3; }
// The display figures' reference pixel rate: 1920x1080 active pixels at 60 Hz (CTA-861 VIC 16's exact 60 Hz).
constexpr double kReferencePixelRate = 1920.0 * 1080.0 * 60.0;
const char* const kIdleStates[] = {"C1", "C1E", "C3", "C6"};
std::vector<const GpuAdapter*> adapters(const Platform& p) {
  std::vector<const GpuAdapter*> v{&p.gpu};
  if (p.igpu) v.push_back(p.igpu);
  return v;
}
}  // namespace

EnergyReading EnergyModel::read() const {
  EnergyReading e;
  const sc_time now = sc_time_stamp();
  e.at = now;
  auto add = [&](const std::string& name, double mj) {
    e.parts_mj.push_back({name, mj});
    e.total_mj += mj;
  };
  // mW x ms = uJ; / 1000 = mJ.
  const double idle_mw[] = {cpu_.c1, cpu_.c1e, cpu_.c3, cpu_.c6};
  double core = 0;
  for (size_t k = 0; k < p_.cpu.cores(); ++k) {  // each core: its idle states, C0 the rest of the time
    sc_time idle = SC_ZERO_TIME;
    for (size_t i = 0; i < 4; ++i) {
      const sc_time t = p_.cpu.time_in(k, kIdleStates[i]);
      core += idle_mw[i] * ms(t);
      idle += t;
    }
    core += cpu_.c0 * ms(now - idle);  // every other context runs the core
  }
  add("cpu_core", core / 1000);
  const StateClock& pkg = p_.cpu.package().clock();
  add("cpu_package", (cpu_.pc0 * ms(pkg.time_in(Package::kPC0, now)) + cpu_.pc2 * ms(pkg.time_in(Package::kPC2, now)) +
                      cpu_.pc8 * ms(pkg.time_in(Package::kPC8, now))) /
                         1000);
  const StateClock& lk = p_.link.power();
  const double l0_mw = p_.link.lanes() * 2 * p_.link.gts() * link_pj_per_bit_;  // GT/s x pJ/bit = mW
  add("link",
      l0_mw *
          (ms(lk.time_in(PcieLink::kL0, now)) + link_l0s_frac_ * ms(lk.time_in(PcieLink::kL0s, now)) +
           link_l1_frac_ * ms(lk.time_in(PcieLink::kL1, now)) + link_l1_1_frac_ * ms(lk.time_in(PcieLink::kL1_1, now)) +
           link_l1_2_frac_ * ms(lk.time_in(PcieLink::kL1_2, now))) /
          1000);
  // Background while powered, self refresh, nothing while off (`off`: the dGPU's local memory in runtime
  // D3cold without self refresh).
  auto memory = [&](const Memory& m, const Mem& k, const sc_time& self_refresh, const sc_time& off) {
    const double gib = double(m.size()) / double(uint64_t(1) << 30);
    const double traffic_pj =
        8.0 * (k.read_pj_per_bit * double(m.bytes_read()) + k.write_pj_per_bit * double(m.bytes_written()));
    return traffic_pj * 1e-9 +
           gib *
               (k.background_mw_per_gib * ms(now - self_refresh - off) + k.self_refresh_mw_per_gib * ms(self_refresh)) /
               1000;
  };
  add("sysmem", memory(p_.sysmem, sysmem_, pkg.time_in(Package::kPC8, now), SC_ZERO_TIME));
  const StateClock& vr = p_.dgpu_power.vram;
  add("vram", memory(p_.gpu.vram, vram_, vr.time_in(1, now), vr.time_in(2, now)));
  // The dGPU's slot off (runtime D3cold): its engines and command processor draw nothing meanwhile.
  const bool off_now = !p_.link.slot_on();
  const sc_time slot_off = p_.link.slot().time_in(1, now);
  for (const GpuAdapter* a : adapters(p_)) {
    const double scale = a->config.integrated ? igpu_scale_ : 1.0;
    const bool dgpu = a == &p_.gpu;
    for (size_t i = 0; i < a->nodes.size(); ++i) {
      const Node& n = *a->nodes[i];
      const Kind& k = kinds_.at(to_string(n.engine_kind()));
      double mw_ms = 0;
      for (size_t s = 0; s < Node::states(); ++s) {
        const double mw = Node::active_state(s) ? k.active : Node::gated_state(s) ? k.gated : k.idle;
        sc_time t = n.clock().time_in(s, now);
        if (dgpu) t -= p_.dgpu_power.off_in(i, s, n.clock(), off_now, now);  // less its time with the slot off
        mw_ms += mw * ms(t);
      }
      add(a->config.key + "_" + n.basename(), scale * mw_ms / 1000);
    }
    add(a->config.key + "_cmp", cmp_mw_ * ms(dgpu ? now - slot_off : now) / 1000);
  }
  double disp = 0;
  for (const GpuAdapter* a : adapters(p_))
    if (a->display) {
      const StateClock& d = a->display->power();
      const double scan_mw = display_scan_mw(a->display->timing().mode()) + panel_mw(a->display->timing().mode());
      // In self refresh the pipe and the link to the panel are off (a fixed figure); the panel still
      // refreshes its pixels at the mode's rate from its own buffer.
      const double psr_mw =
          display_psr_mw_ + panel_psr_mw_ * mode_scale(a->display->timing().mode(), panel_refresh_share_);
      disp += (scan_mw * ms(d.time_in(DisplayEngine::kScan, now)) + psr_mw * ms(d.time_in(DisplayEngine::kPsr, now))) /
              1000;
    }
  add("display", disp);
  add("platform_rest", rest_mw_ * ms(now) / 1000);
  // The regulators' loss: what the supply gives beyond what the parts draw.
  add("vr_loss", e.total_mj * (1 / vr_efficiency_ - 1));
  return e;
}

double EnergyModel::mode_scale(const DisplayMode& m, double share) {
  const double rate = double(m.h_active) * double(m.v_active) * m.refresh_hz();
  return (1 - share) + share * rate / kReferencePixelRate;
}

double EnergyModel::display_scan_mw(const DisplayMode& m) const {
  return display_scan_mw_ * mode_scale(m, display_pixel_share_);
}

double EnergyModel::panel_mw(const DisplayMode& m) const { return panel_mw_ * mode_scale(m, panel_refresh_share_); }

nlohmann::json EnergyModel::results(const EnergyReading& e) const {
  nlohmann::json j;
  j["total_mj"] = e.total_mj;
  const double avg_mw = e.at > SC_ZERO_TIME ? e.total_mj / ms(e.at) * 1000 : 0.0;
  j["avg_power_mw"] = avg_mw;
  // At the wall: what the external supply draws to deliver the total (a battery full, so none charges it).
  j["wall_power_mw"] = avg_mw / charger_efficiency_;
  for (auto& [n, v] : e.parts_mj) j[n + "_mj"] = v;
  return j;
}

nlohmann::json EnergyModel::residencies() const {
  const sc_time now = sc_time_stamp();
  const double t = now.to_seconds();
  auto frac = [&](const sc_time& x) { return t > 0 ? x.to_seconds() / t : 0.0; };
  nlohmann::json j;
  const StateClock& pkg = p_.cpu.package().clock();
  j["package_pc8"] = frac(pkg.time_in(Package::kPC8, now));
  j["package_pc2"] = frac(pkg.time_in(Package::kPC2, now));
  j["link_l0s"] = frac(p_.link.power().time_in(PcieLink::kL0s, now));
  j["link_l1"] = frac(p_.link.power().time_in(PcieLink::kL1, now));
  if (p_.link.l1_state() != PcieLink::kL1) {  // only with L1 PM substates enabled (link.l1_substates)
    j["link_l1_1"] = frac(p_.link.power().time_in(PcieLink::kL1_1, now));
    j["link_l1_2"] = frac(p_.link.power().time_in(PcieLink::kL1_2, now));
  }
  j["link_l3"] = frac(p_.link.power().time_in(PcieLink::kL3, now));
  j["dgpu_d3cold"] = frac(p_.link.slot().time_in(1, now));
  j["vram_self_refresh"] = frac(p_.dgpu_power.vram.time_in(1, now));
  j["link_exits"] = p_.link.exits();
  j["package_exits"] = p_.cpu.package_exits();
  for (const GpuAdapter* a : adapters(p_)) {
    for (auto& n : a->nodes) {
      sc_time g = SC_ZERO_TIME;
      for (size_t s = 0; s < Node::states(); ++s)
        if (Node::gated_state(s)) g += n->clock().time_in(s, now);
      j[a->config.key + "_" + n->basename() + "_gated"] = frac(g);
    }
    for (auto& n : a->nodes) j[a->config.key + "_" + n->basename() + "_gate_wakes"] = n->gate_wakes();
    if (a->display) {
      j["display_scan"] = frac(a->display->power().time_in(DisplayEngine::kScan, now));
      j["display_psr"] = frac(a->display->power().time_in(DisplayEngine::kPsr, now));
    }
  }
  return j;
}

std::vector<std::string> EnergyModel::balance(const EnergyReading& e) const {
  std::vector<std::string> bad;
  const sc_time now = e.at;
  auto covers = [&](const std::string& what, const StateClock& c) {
    sc_time sum = SC_ZERO_TIME;
    for (size_t s = 0; s < c.states(); ++s) sum += c.time_in(s, now);
    if (sum != now)
      bad.push_back(what + "'s power states cover " + sum.to_string() + " of the run's " + now.to_string());
  };
  for (size_t k = 0; k < p_.cpu.cores(); ++k) {
    sc_time cpu = SC_ZERO_TIME;
    for (auto& c : p_.cpu.contexts(k)) cpu += p_.cpu.time_in(k, c);
    if (cpu != now)
      bad.push_back("core " + std::to_string(k) + "'s contexts cover " + cpu.to_string() + " of the run's " +
                    now.to_string());
  }
  covers("the package", p_.cpu.package().clock());
  covers("the link", p_.link.power());
  for (const GpuAdapter* a : adapters(p_)) {
    for (auto& n : a->nodes) covers(a->config.key + "." + n->basename(), n->clock());
    if (a->display) covers(a->config.key + " display", a->display->power());
  }
  // The package's deep state needs the core in C6, the link in L1 and an integrated display not
  // fetching: its time in PC8 is bounded by each (a hold that failed to hold shows here).
  const sc_time pc8 = p_.cpu.package().clock().time_in(Package::kPC8, now);
  auto bound = [&](const std::string& what, const sc_time& limit) {
    if (pc8 > limit)
      bad.push_back("the package was in PC8 for " + pc8.to_string() + ", longer than " + what + " (" +
                    limit.to_string() + ")");
  };
  for (size_t k = 0; k < p_.cpu.cores(); ++k)
    bound("core " + std::to_string(k) + " was in C6", p_.cpu.time_in(k, "C6"));
  const StateClock& lk = p_.link.power();
  bound("the link was in L1 (any substate) or off", lk.time_in(PcieLink::kL1, now) + lk.time_in(PcieLink::kL1_1, now) +
                                                        lk.time_in(PcieLink::kL1_2, now) +
                                                        lk.time_in(PcieLink::kL3, now));
  // L1's substates: only the one link.l1_substates and the LTR rule chose, never another.
  for (size_t s : {PcieLink::kL1, PcieLink::kL1_1, PcieLink::kL1_2})
    if (s != p_.link.l1_state() && lk.time_in(s, now) > SC_ZERO_TIME)
      bad.push_back(std::string("the link was in ") + PcieLink::power_name(s) + ", its L1 is " +
                    PcieLink::power_name(p_.link.l1_state()));
  covers("the dGPU's local memory", p_.dgpu_power.vram);
  // The link is off (L3) exactly while the slot is (runtime D3cold); it is down longer (training), never less.
  if (p_.link.power().time_in(PcieLink::kL3, now) < p_.link.slot().time_in(1, now))
    bad.push_back("the link was off (L3) for less than the dGPU's slot was");
  if (p_.igpu && p_.igpu->display)
    bound("the integrated display was not fetching",
          now - p_.igpu->display->power().time_in(DisplayEngine::kScan, now));
  double sum = 0;
  for (auto& [n, v] : e.parts_mj) {
    if (!(v >= 0) || !std::isfinite(v)) bad.push_back(n + " energy is " + std::to_string(v) + " mJ");
    sum += v;
  }
  if (std::fabs(sum - e.total_mj) > 1e-9 * std::max(1.0, std::fabs(e.total_mj)))
    bad.push_back("the parts sum to " + std::to_string(sum) + " mJ, the total is " + std::to_string(e.total_mj));
  return bad;
}

EnergyProbe::EnergyProbe(const Platform& p, Vcd& vcd) : model_(p), vcd_(vcd) {
  ids_.push_back(vcd_.add("power.total_mw", 32));
  for (auto& [n, v] : model_.read().parts_mj) ids_.push_back(vcd_.add("power." + n + "_mw", 32));
}

void EnergyProbe::frame() {
  const EnergyReading now = model_.read();
  if (started_ && now.at > last_.at) {
    const double dt_ms = (now.at - last_.at).to_seconds() * 1e3;
    per_frame_.push_back(now.total_mj - last_.total_mj);
    if (vcd_.enabled()) {
      // Each part's average power over the frame, from the frame's start (the previous new frame).
      vcd_.set(ids_[0], uint64_t(std::llround((now.total_mj - last_.total_mj) / dt_ms * 1000)), last_.at);
      for (size_t i = 0; i < now.parts_mj.size() && i + 1 < ids_.size(); ++i)
        vcd_.set(ids_[i + 1],
                 uint64_t(std::llround((now.parts_mj[i].second - last_.parts_mj[i].second) / dt_ms * 1000)), last_.at);
    }
  }
  started_ = true;
  last_ = now;
}

nlohmann::ordered_json EnergyProbe::summary() const {
  nlohmann::ordered_json j;
  std::vector<double> v = per_frame_;
  j["frames"] = v.size();
  if (v.empty()) return j;
  double sum = 0;
  for (double x : v) sum += x;
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))]; };
  j["mean"] = sum / double(v.size());
  j["p50"] = pct(0.5);
  j["p95"] = pct(0.95);
  return j;
}

}  // namespace gpumodel
