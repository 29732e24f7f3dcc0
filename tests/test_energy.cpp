// Energy and power states (H5): a run's energy derived by hand from the power figures, ASPM L1's exit
// latency on a write, the package's deep state and what holds it, engine power gating, and the balance
// monitor. Each case builds its own platform (no driver): what runs is only what the case starts.
#include "hw_model/display/display_regs.h"
#include "hw_model/gpu/regs.h"
#include "platform/energy.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;
using namespace gpumodel;
using namespace tb::dflt;

namespace {}  // namespace

TEST_CASE("energy: an idle millisecond and one 64 KiB copy, derived by hand from the power figures", "[H5]") {
  auto ps = params();  // defaults: the core idles in C1 (fixed governor), ASPM off, no display
  Vcd vcd;
  Platform p(ps, vcd, 1);
  std::vector<unsigned char> buf(65536, 0x5A);
  p.cpu.spawn_thread("copy", [&] { p.cpu.mem_write(kA, buf.data(), unsigned(buf.size())); });
  sc_start(sc_time(1, SC_MS));
  const EnergyReading e = EnergyModel(p).read();
  auto mw = [&](const std::string& k) { return ps.get_real("power." + k); };
  // The core runs the copy at cpu.memcpy_gbps (65536 B / 20 GB/s = 3276.8 ns, in C0 and PC0), then
  // idles in C1 with the package in PC2 (the link, never in L1 with ASPM off, holds it) to 1 ms.
  const sc_time copy(65536.0 / ps.get_real("cpu.memcpy_gbps"), SC_NS);
  const double busy = ms(copy), idle = 1.0 - busy;
  CHECK(e.part("cpu_core") == Approx((mw("cpu_c0_mw") * busy + mw("cpu_c1_mw") * idle) / 1000).epsilon(1e-12));
  CHECK(e.part("cpu_package") ==
        Approx((mw("package_pc0_mw") * busy + mw("package_pc2_mw") * idle) / 1000).epsilon(1e-12));
  // The link in L0 the whole millisecond: 16 lanes x 2 directions x 16 GT/s x 4 pJ/bit = 2048 mW.
  CHECK(e.part("link") == Approx(16 * 2 * 16 * mw("link_pj_per_bit") * 1.0 / 1000).epsilon(1e-12));
  // System memory: the copy's 524,288 bits at the write energy, and 16 GiB of background for 1 ms
  // (no PC8, so no self refresh).
  REQUIRE(p.sysmem.bytes_written() == 65536);
  CHECK(e.part("sysmem") == Approx(65536 * 8 * mw("sysmem_write_pj_per_bit") * 1e-9 +
                                   gib(p.sysmem.size()) * mw("sysmem_background_mw_per_gib") * 1.0 / 1000)
                                .epsilon(1e-12));
  CHECK(e.part("vram") == Approx(gib(p.gpu.vram.size()) * mw("vram_background_mw_per_gib") / 1000).epsilon(1e-12));
  // Every engine idle for the millisecond, at its kind's idle power (node 0 graphics, the rest compute).
  REQUIRE(p.gpu.nodes.size() >= 2);
  CHECK(e.part("gpu_node0") == Approx(mw("graphics_idle_mw") / 1000).epsilon(1e-12));
  CHECK(e.part("gpu_node1") == Approx(mw("compute_idle_mw") / 1000).epsilon(1e-12));
  CHECK(e.part("gpu_cmp") == Approx(mw("cmp_mw") / 1000).epsilon(1e-12));
  CHECK(e.part("display") == 0);
  double sum = 0;
  for (auto& [n, v] : e.parts_mj) sum += v;
  CHECK(e.total_mj == Approx(sum).epsilon(1e-12));
  CHECK(EnergyModel(p).balance(e).empty());
}

namespace {
// SystemC elaborates once per process: each setting is its own TEST_CASE, sharing the body.
void link_wake(const char* aspm) {
  {
    {
      auto ps = params({{"link.aspm", aspm}});
      Vcd vcd;
      Platform p(ps, vcd, 1);
      Probe gpu_agent("gpu_agent");  // its writes to system memory go up the link
      gpu_agent.sock.bind(p.gpu.fabric.tsock);
      std::vector<unsigned char> data(256, 0xCD);
      sc_time v1, v2, l1_time;
      gpu_agent.body = [&] {
        v1 = gpu_agent.bus.post(kA, data.data(), 256);
        wait(sc_time(100, SC_US));  // idle far past link.l1_entry_us (32 us)
        v2 = gpu_agent.bus.post(kA + 256, data.data(), 256);
        l1_time = p.link.power().time_in(PcieLink::kL1, sc_time_stamp());
      };
      sc_start(sc_time(1, SC_MS));
      const sc_time s280 = ser(256 + 24, kRate), path = s280 + kHop + kRc + dram_xfer(256) + kDram;
      CHECK(v1 == path);
      const bool l1 = std::string(aspm) == "l1";
      // The second write: L1 exit (4 us) before its TLP, only when the link slept.
      CHECK(v2 == sc_time(100, SC_US) + (l1 ? sc_time(4, SC_US) : SC_ZERO_TIME) + path);
      // In L1 from 32 us after the first TLP left the wire until the second write woke it.
      CHECK(l1_time == (l1 ? sc_time(100, SC_US) - s280 - sc_time(32, SC_US) : SC_ZERO_TIME));
      CHECK(p.link.exits() == (l1 ? 1u : 0u));
    }
  }
}
}  // namespace

TEST_CASE("energy: a write that finds the link in ASPM L1 pays the exit latency first", "[H5][H2]") { link_wake("l1"); }
TEST_CASE("energy: with ASPM off the link never sleeps and a write pays no exit", "[H5][H2]") { link_wake("off"); }

namespace {
void package_deep(const char* aspm) {
  {
    {
      auto ps = params({{"link.aspm", aspm}, {"cpu.idle_state", "C6"}});
      Vcd vcd;
      Platform p(ps, vcd, 1);
      sc_start(sc_time(1, SC_MS));
      const sc_time pc8 = p.cpu.package().clock().time_in(Package::kPC8, sc_time_stamp());
      // The core idles in C6 from 0; the link, idle from 0, enters L1 at 32 us: PC8 from then on.
      CHECK(pc8 == (std::string(aspm) == "l1" ? sc_time(1, SC_MS) - sc_time(32, SC_US) : SC_ZERO_TIME));
      const EnergyReading e = EnergyModel(p).read();
      // DRAM self-refreshes exactly while the package is in PC8.
      const double g = gib(p.sysmem.size());
      CHECK(e.part("sysmem") == Approx(g *
                                       (ps.get_real("power.sysmem_background_mw_per_gib") * (1.0 - ms(pc8)) +
                                        ps.get_real("power.sysmem_self_refresh_mw_per_gib") * ms(pc8)) /
                                       1000)
                                    .epsilon(1e-12));
      CHECK(EnergyModel(p).balance(e).empty());
    }
  }
}
}  // namespace

TEST_CASE("energy: the package reaches PC8 with the core in C6 and the link in L1", "[H5]") { package_deep("l1"); }
TEST_CASE("energy: a link that never enters L1 holds the package out of PC8", "[H5]") { package_deep("off"); }

TEST_CASE("energy: an interrupt that wakes the package from PC8 waits for its exit before the core's", "[H5]") {
  auto ps = params({{"link.aspm", "l1"}, {"cpu.idle_state", "C6"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe gpu_agent("gpu_agent");
  gpu_agent.sock.bind(p.gpu.fabric.tsock);
  const sc_time t_msi(500, SC_US);
  p.cpu.connect_interrupt(0xF000, 1, [](uint32_t) { return true; });  // an ISR that claims it
  gpu_agent.body = [&] {
    wait(t_msi);
    gpu_agent.bus.post32(InterruptController::kMsiBase, 0xF000);  // an MSI up the sleeping link (no KMD vector)
  };
  sc_start(sc_time(1, SC_MS));
  // The MSI's TLP wakes the link at 500 us (the call), which releases the package from PC8: it is up
  // 115 us later (cpu.package_exit_ns). The MSI reaches the core after the link's 4 us exit; the core's
  // C6 exit (85 us) starts only once the package is up.
  const Cpu::Stamps& s = p.cpu.last_interrupt();
  REQUIRE(p.cpu.interrupts() == 1);
  CHECK(s.msi_arrival > t_msi + sc_time(4, SC_US));
  CHECK(s.idle_exit == sc_time(85, SC_US) + (t_msi + sc_time(115, SC_US) - s.msi_arrival));
  CHECK(p.cpu.package_exits() == 1);
}

namespace {
void engine_gating(const char* gating) {
  {
    {
      auto ps = params({{"node.power_gating", gating}});
      Vcd vcd;
      Platform p(ps, vcd, 1);
      sc_start(sc_time(1, SC_MS));
      const sc_time now = sc_time_stamp();
      const bool on = std::string(gating) == "on";
      for (auto& n : p.gpu.nodes) {
        // Idle from 0; gated from node.gate_delay_us (76.8 us) to the end.
        CHECK(n->clock().time_in(Node::gated_state(), now) == (on ? now - sc_time(76.8, SC_US) : SC_ZERO_TIME));
        CHECK(n->clock().time_in(Node::idle_state(), now) == (on ? sc_time(76.8, SC_US) : now));
      }
      const EnergyReading e = EnergyModel(p).read();
      const double idle = ps.get_real("power.graphics_idle_mw"), gated = ps.get_real("power.graphics_gated_mw");
      CHECK(e.part("gpu_node0") ==
            Approx(on ? (idle * 0.0768 + gated * (1 - 0.0768)) / 1000 : idle / 1000).epsilon(1e-12));
    }
  }
}
}  // namespace

TEST_CASE("energy: an idle engine power-gates after node.gate_delay_us", "[H5]") { engine_gating("on"); }
TEST_CASE("energy: with gating off an idle engine stays idle", "[H5]") { engine_gating("off"); }

// Through the command line: the energy is read from power states, never from the trace, so a run
// traced to a waveform and a timeline has the same energy as one that is not; and the per-frame
// energies of the game add up to the energy between the first and last new frame (at most the run's).
TEST_CASE("energy: identical with and without --vcd and --timeline, and per frame within the run's", "[H5][H4]") {
  const std::string args = scenario("frame_loop") + " --workload.frames=20 --quiet";
  const std::string vcd = "energy_" + std::to_string(::getpid()) + ".vcd",
                    tl = "energy_" + std::to_string(::getpid()) + ".json";
  const nlohmann::json plain = run_json(args, "plain");
  const nlohmann::json traced = run_json(args + " --vcd " + vcd + " --timeline " + tl, "traced");
  std::remove(vcd.c_str());
  std::remove(tl.c_str());
  CHECK(plain["metrics"]["energy"] == traced["metrics"]["energy"]);
  CHECK(plain["metrics"]["energy_per_frame_mj"] == traced["metrics"]["energy_per_frame_mj"]);
  const auto& pf = plain["metrics"]["energy_per_frame_mj"];
  // 20 frames on the panel: 19 intervals between them.
  REQUIRE(pf["frames"].get<int>() == 19);
  CHECK(pf["mean"].get<double>() * 19 < plain["metrics"]["energy"]["total_mj"].get<double>());
  CHECK(pf["p50"].get<double>() > 0);
  CHECK(plain["monitors"]["energy_balance"]["violations"] == 0);
}

// The monitor can fail: a package whose link hold is dropped by hand (a hold rule broken) reaches PC8
// with the link awake, and the balance says so; with the hold in place the same run is clean.
TEST_CASE("energy: the balance monitor reports a package in PC8 while the link was awake", "[H5]") {
  auto ps = params({{"cpu.idle_state", "C6"}});  // ASPM off: the link never enters L1
  Vcd vcd;
  Platform p(ps, vcd, 1);
  p.cpu.package().hold(Package::kLink, false);  // the mutation: the link no longer holds the package
  sc_start(sc_time(1, SC_MS));
  const EnergyModel m(p);
  const auto bad = m.balance(m.read());
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].find("longer than the link was in L1") != std::string::npos);
}

// ASPM L0s then L1: idle 7 us after the first TLP the link enters L0s, 32 us after it L1; the write at
// 100 us pays L1's exit (4 us), not L0s's (1 us).
TEST_CASE("energy: with ASPM L0s and L1 the link takes L0s at its entry time then L1 at its own", "[H5][H2]") {
  auto ps = params({{"link.aspm", "l0s_l1"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe gpu_agent("gpu_agent");
  gpu_agent.sock.bind(p.gpu.fabric.tsock);
  std::vector<unsigned char> data(256, 0xCD);
  sc_time v2, l0s, l1;
  gpu_agent.body = [&] {
    gpu_agent.bus.post(kA, data.data(), 256);
    wait(sc_time(100, SC_US));
    v2 = gpu_agent.bus.post(kA + 256, data.data(), 256);
    l0s = p.link.power().time_in(PcieLink::kL0s, sc_time_stamp());
    l1 = p.link.power().time_in(PcieLink::kL1, sc_time_stamp());
  };
  sc_start(sc_time(1, SC_MS));
  const sc_time s280 = ser(256 + 24, kRate);
  CHECK(l0s == sc_time(32, SC_US) - sc_time(7, SC_US));
  CHECK(l1 == sc_time(100, SC_US) - s280 - sc_time(32, SC_US));
  CHECK(v2 == sc_time(100, SC_US) + sc_time(4, SC_US) + s280 + kHop + kRc + dram_xfer(256) + kDram);
}

// ASPM L0s alone: a 20 us gap (past L0s's 7 us entry) costs the write L0s's 1 us exit.
TEST_CASE("energy: a write that finds the link in L0s pays the L0s exit", "[H5][H2]") {
  auto ps = params({{"link.aspm", "l0s"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe gpu_agent("gpu_agent");
  gpu_agent.sock.bind(p.gpu.fabric.tsock);
  std::vector<unsigned char> data(256, 0xCD);
  sc_time v2, l0s;
  gpu_agent.body = [&] {
    gpu_agent.bus.post(kA, data.data(), 256);
    wait(sc_time(20, SC_US));
    v2 = gpu_agent.bus.post(kA + 256, data.data(), 256);
    l0s = p.link.power().time_in(PcieLink::kL0s, sc_time_stamp());
  };
  sc_start(sc_time(1, SC_MS));
  const sc_time s280 = ser(256 + 24, kRate);
  CHECK(v2 == sc_time(20, SC_US) + sc_time(1, SC_US) + s280 + kHop + kRc + dram_xfer(256) + kDram);
  CHECK(l0s == sc_time(20, SC_US) - s280 - sc_time(7, SC_US));
  CHECK(p.link.power().time_in(PcieLink::kL1, sc_time(20, SC_US)) == SC_ZERO_TIME);
}

// Only C6 lets the package go deep: a core idling in C3 with the link in L1 keeps it in PC2.
TEST_CASE("energy: a core idle in C3 keeps the package out of PC8 even with the link in L1", "[H5]") {
  auto ps = params({{"link.aspm", "l1"}, {"cpu.idle_state", "C3"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  sc_start(sc_time(1, SC_MS));
  const StateClock& pkg = p.cpu.package().clock();
  CHECK(pkg.time_in(Package::kPC8, sc_time_stamp()) == SC_ZERO_TIME);
  CHECK(pkg.time_in(Package::kPC2, sc_time_stamp()) == sc_time(1, SC_MS));
}

// The integrated adapter's engines draw power.igpu_scale of the discrete figures.
TEST_CASE("energy: an integrated adapter's idle engine draws igpu_scale of the discrete figure", "[H5]") {
  auto ps = params({{"platform.topology", "hybrid"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  sc_start(sc_time(1, SC_MS));
  const EnergyReading e = EnergyModel(p).read();
  CHECK(e.part("igpu_node0") ==
        Approx(ps.get_real("power.igpu_scale") * ps.get_real("power.graphics_idle_mw") / 1000).epsilon(1e-12));
  CHECK(e.part("gpu_node0") == Approx(ps.get_real("power.graphics_idle_mw") / 1000).epsilon(1e-12));
}

// The laptop INI's power management engages (a 5 fps player: frames repeat, so the panel self-refreshes,
// the link sleeps, the engines gate, the package goes deep), and the display's energy is its two states'
// powers times their residencies.
TEST_CASE("energy: the laptop video player at 5 fps self-refreshes and its display energy is derived", "[H5][H4]") {
  const nlohmann::json j =
      run_json(scenario("video_playback") + " --workload.frames=12 --workload.fps=5 --quiet", "psr5");
  const auto& m = j["metrics"];
  const auto& st = m["power_states"];
  CHECK(st["display_psr"].get<double>() > 0.3);
  CHECK(st["link_l1"].get<double>() > 0.5);
  CHECK(st["package_pc8"].get<double>() > 0.5);
  CHECK(st["gpu_node0_gated"].get<double>() > 0.5);
  CHECK(st["gpu_node0_gate_wakes"].get<int>() >= 12);  // at least one wake a frame
  const double t_ms = j["sim_time_ns"].get<double>() / 1e6;
  const auto& p = j["parameters"];
  const double scan = p["power.display_scan_mw"].get<double>() + p["power.panel_mw"].get<double>();
  const double psr = p["power.display_psr_mw"].get<double>() + p["power.panel_psr_mw"].get<double>();
  CHECK(m["energy"]["display_mj"].get<double>() ==
        Approx((scan * st["display_scan"].get<double>() + psr * st["display_psr"].get<double>()) * t_ms / 1000)
            .epsilon(1e-9));
}

// Gating's wake latency: with a 1 us gating delay the engine gates before each of its two rounds' work
// arrives, and that work waits node.gate_wake_us (100 us) in state `wake`: the whole rest of the run, its
// end included, moves by exactly twice that, while the signal's own stages do not change.
TEST_CASE("energy: work that finds its engine gated waits the wake latency, and only that", "[H5]") {
  const std::string args = scenario("fence_signal") + " --node.gate_delay_us=1 --quiet";
  const nlohmann::json off = run_json(args + " --node.power_gating=off", "gate_off");
  const nlohmann::json on = run_json(args + " --node.power_gating=on", "gate_on");
  REQUIRE(on["metrics"]["power_states"]["gpu_node0_gate_wakes"] == 2);
  CHECK(on["sim_time_ns"].get<double>() - off["sim_time_ns"].get<double>() == Approx(200000).margin(1e-3));
  CHECK(on["metrics"]["signal_to_wake_ns"].get<double>() ==
        Approx(off["metrics"]["signal_to_wake_ns"].get<double>()).margin(1e-3));
}

namespace {
// The hybrid laptop with the core allowed C6 and ASPM L1, its iGPU display started on a surface in
// system memory by register writes from the host, run for `ms` milliseconds: the package's PC8 time.
sc_time igpu_display_pc8(const std::map<std::string, std::string>& extra, double ms_run) {
  std::map<std::string, std::string> o{{"platform.topology", "hybrid"}, {"link.aspm", "l1"}, {"cpu.idle_state", "C6"}};
  for (auto& kv : extra) o[kv.first] = kv.second;
  auto ps = params(o);
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe host("host");
  host.sock.bind(p.rc.tsock);
  const uint64_t d = regs::kIgpuBar0Base + regs::kDisplayOffset;
  host.body = [&] {
    host.bus.post64(d + gpumodel::display_regs::kSurfaceAddr, kA);
    host.bus.post32(d + gpumodel::display_regs::kControl, gpumodel::display_regs::kCtrlEnable);
  };
  sc_start(sc_time(ms_run, SC_MS));
  REQUIRE(p.igpu->display->enabled());
  return p.cpu.package().clock().time_in(Package::kPC8, sc_time_stamp());
}
}  // namespace

// An integrated display fetching from system memory holds the package: no PC8 while it scans, though
// the core is in C6 and the link in L1.
TEST_CASE("energy: an integrated display that fetches holds the package out of PC8", "[H5][C6]") {
  CHECK(igpu_display_pc8({}, 50) == SC_ZERO_TIME);
}

// With panel self refresh after 2 idle frames the display stops fetching, and the package goes deep.
TEST_CASE("energy: an integrated display in panel self refresh lets the package reach PC8", "[H5][C6]") {
  CHECK(igpu_display_pc8({{"display.psr", "on"}, {"display.psr_idle_frames", "2"}}, 100) > sc_time(50, SC_MS));
}

// Each power state at its own figure: a millisecond of deep idle (the core in C6 from 0, ASPM L1), so
// that C6, PC8 and L1 each carry most of the run, and a figure taken from a neighbouring state (C3's for
// C6, PC2's for PC8, L0s's fraction for L1) moves its part by far more than the tolerance.
TEST_CASE("energy: deep idle draws C6, PC8 and L1 at their own figures, derived by hand", "[H5]") {
  auto ps = params({{"link.aspm", "l1"}, {"cpu.idle_state", "C6"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  sc_start(sc_time(1, SC_MS));
  auto mw = [&](const std::string& k) { return ps.get_real("power." + k); };
  // As in the PC8 test above: nothing runs, so the core is in C6 the whole millisecond; the link, idle
  // from 0, is in L0 until link.l1_entry_us (32 us) and in L1 after; the package is in PC2 while the
  // link holds it (32 us) and in PC8 for the remaining 968 us.
  const double l0 = 0.032, l1 = 1.0 - l0;
  REQUIRE(p.cpu.time_in("C6") == sc_time(1, SC_MS));
  const EnergyReading e = EnergyModel(p).read();
  CHECK(e.part("cpu_core") == Approx(mw("cpu_c6_mw") * 1.0 / 1000).epsilon(1e-12));
  CHECK(e.part("cpu_package") == Approx((mw("package_pc2_mw") * l0 + mw("package_pc8_mw") * l1) / 1000).epsilon(1e-12));
  // The link in L0: 16 lanes x 2 directions x 16 GT/s x 4 pJ/bit = 2048 mW; in L1 link_l1_fraction of it.
  const double l0_mw = 16 * 2 * 16 * mw("link_pj_per_bit");
  CHECK(e.part("link") == Approx(l0_mw * (l0 + mw("link_l1_fraction") * l1) / 1000).epsilon(1e-12));
  CHECK(EnergyModel(p).balance(e).empty());
}

// A read from system memory costs the read energy per bit, not the write's (DDR4's IDD4R against IDD4W).
TEST_CASE("energy: system memory reads cost power.sysmem_read_pj_per_bit", "[H5]") {
  auto ps = params();
  Vcd vcd;
  Platform p(ps, vcd, 1);
  std::vector<unsigned char> buf(65536);
  p.cpu.spawn_thread("read", [&] { p.cpu.mem_read(kA, buf.data(), unsigned(buf.size())); });
  sc_start(sc_time(1, SC_MS));
  REQUIRE(p.sysmem.bytes_read() == 65536);
  REQUIRE(p.sysmem.bytes_written() == 0);
  const EnergyReading e = EnergyModel(p).read();
  // 524,288 bits at the read energy, and 16 GiB of background for 1 ms (no PC8: the core idles in C1).
  CHECK(e.part("sysmem") == Approx(65536 * 8 * ps.get_real("power.sysmem_read_pj_per_bit") * 1e-9 +
                                   gib(p.sysmem.size()) * ps.get_real("power.sysmem_background_mw_per_gib") / 1000)
                                .epsilon(1e-12));
}

// node.fence_wait: what an engine does while its WAIT is blocked decides whether it can gate. gpu_wait's
// node B waits for node A's signal (50 us of compute) with gating on after 1 us of idle:
//  - poll keeps the blocked queue and never gates while it waits, so gating moves nothing on its unblock:
//    the warm signal-to-unblock is the same with gating on and off;
//  - release gives the queue back and idles; 1 us later it gates, so the unblock finds it gated and pays
//    node.gate_wake_us (100 us) on top of the same release without gating, exactly; and without gating,
//    release costs a refetch of the ring from the WAIT that poll's kept FIFO does not (more than 0).
TEST_CASE("node.fence_wait: a polled wait keeps its engine up, a released one gates and pays the wake", "[H5][F5]") {
  const std::string args = scenario("gpu_wait") + " --node.gate_delay_us=1 --quiet";
  const auto poll_on = run_json(args + " --node.fence_wait=poll --node.power_gating=on", "poll_on");
  const auto poll_off = run_json(args + " --node.fence_wait=poll --node.power_gating=off", "poll_off");
  const auto rel_on = run_json(args + " --node.fence_wait=release --node.power_gating=on", "rel_on");
  const auto rel_off = run_json(args + " --node.fence_wait=release --node.power_gating=off", "rel_off");
  auto unblock = [](const nlohmann::json& j) { return j["metrics"]["signal_to_unblock_ns"].get<double>(); };
  CHECK(unblock(poll_on) == Approx(unblock(poll_off)).margin(1e-3));
  CHECK(unblock(rel_on) - unblock(rel_off) == Approx(100000).margin(1e-3));
  CHECK(unblock(rel_off) > unblock(poll_off));
  // The released engine gates through both waits: two more wakes than the polled one's (whose two are
  // its first packets after the set-up), and more of the run gated.
  const auto& ps_rel = rel_on["metrics"]["power_states"];
  const auto& ps_poll = poll_on["metrics"]["power_states"];
  CHECK(ps_rel["gpu_node1_gate_wakes"].get<int>() == ps_poll["gpu_node1_gate_wakes"].get<int>() + 2);
  CHECK(ps_rel["gpu_node1_gated"].get<double>() > ps_poll["gpu_node1_gated"].get<double>());
}

// The display follows its mode: at 3840x2160 at 60 Hz (CTA-861 VIC 97: 594 MHz over 4400 x 2250 pixels,
// exactly 60 Hz) the active pixel rate is exactly four times the reference's (1920x1080 at 60 Hz), so each
// figure's share that follows the pixel rate counts four times, the rest once. In self refresh the engine's
// figure is fixed and the panel's follows the mode as when it scans.
TEST_CASE("energy: the display engine's and the panel's power follow the mode's pixel rate, in self refresh too",
          "[H5][C6]") {
  const nlohmann::json j = run_json(
      scenario("video_playback") + " --workload.frames=12 --workload.fps=5 --display.mode=3840x2160@60 --quiet", "uhd");
  const auto& m = j["metrics"];
  const auto& st = m["power_states"];
  REQUIRE(st["display_psr"].get<double>() > 0.3);  // both states hold a share of the run
  REQUIRE(st["display_scan"].get<double>() > 0.1);
  const auto& p = j["parameters"];
  const double ratio = 4.0;
  auto scale = [&](const char* share) { return 1 - p[share].get<double>() + p[share].get<double>() * ratio; };
  const double panel = scale("power.panel_refresh_share");
  const double scan = p["power.display_scan_mw"].get<double>() * scale("power.display_scan_pixel_share") +
                      p["power.panel_mw"].get<double>() * panel;
  const double psr = p["power.display_psr_mw"].get<double>() + p["power.panel_psr_mw"].get<double>() * panel;
  const double t_ms = j["sim_time_ns"].get<double>() / 1e6;
  CHECK(m["energy"]["display_mj"].get<double>() ==
        Approx((scan * st["display_scan"].get<double>() + psr * st["display_psr"].get<double>()) * t_ms / 1000)
            .epsilon(1e-9));
  // The figures are not the reference's: 570 mW + 2,175 mW scanning with the defaults, against 1,800 mW.
  CHECK(scan > p["power.display_scan_mw"].get<double>() + p["power.panel_mw"].get<double>());
}

// The rest of the platform is a constant draw over the run; the regulators' loss is what the supply gives
// beyond every other part, the rest included: parts / efficiency - parts.
TEST_CASE("energy: the rest of the platform draws its figure and the regulators lose their share of all parts",
          "[H5]") {
  const nlohmann::json j =
      run_json(scenario("fence_signal") + " --power.platform_rest_mw=1000 --power.vr_efficiency=0.8 --quiet", "rest");
  const auto& e = j["metrics"]["energy"];
  const double t_ms = j["sim_time_ns"].get<double>() / 1e6;
  CHECK(e["platform_rest_mj"].get<double>() == Approx(1000 * t_ms / 1000).epsilon(1e-12));
  double others = 0;
  for (auto& [k, v] : e.items())
    if (k != "total_mj" && k != "vr_loss_mj" && k != "avg_power_mw" && k != "wall_power_mw") others += v.get<double>();
  CHECK(e["vr_loss_mj"].get<double>() == Approx(others * (1 / 0.8 - 1)).epsilon(1e-9));
  CHECK(e["total_mj"].get<double>() == Approx(others / 0.8).epsilon(1e-9));
  // The defaults count neither: only the modelled parts.
  const nlohmann::json d = run_json(scenario("fence_signal") + " --quiet", "rest_default");
  CHECK(d["metrics"]["energy"]["platform_rest_mj"] == 0.0);
  CHECK(d["metrics"]["energy"]["vr_loss_mj"] == 0.0);
  // No supply's loss on the desktop platform (fence_signal's: desktop_gen4 sets charger_efficiency = 1, the
  // built-in default, which the desktop_gen4 test holds equal): at the wall the same as the average.
  CHECK(d["metrics"]["energy"]["wall_power_mw"] == d["metrics"]["energy"]["avg_power_mw"]);
}

// At the wall the external supply delivers the platform's whole draw at power.charger_efficiency: the
// average power over the efficiency, nothing of it counted in the parts or the total (a battery's drain).
TEST_CASE("energy: the power at the wall is the average over the charger's efficiency, outside the total", "[H5]") {
  const nlohmann::json j = run_json(scenario("fence_signal") + " --power.charger_efficiency=0.8 --quiet", "wall");
  const nlohmann::json d = run_json(scenario("fence_signal") + " --quiet", "wall_default");
  const auto &e = j["metrics"]["energy"], &e0 = d["metrics"]["energy"];
  CHECK(e["wall_power_mw"].get<double>() == Approx(e["avg_power_mw"].get<double>() / 0.8).epsilon(1e-12));
  CHECK(e["total_mj"] == e0["total_mj"]);
  CHECK(e["avg_power_mw"] == e0["avg_power_mw"]);
}
