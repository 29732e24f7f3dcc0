// L1 PM substates (link.l1_substates, PCI Express Base Specification section 5.5; docs/link.md): the link's
// L1 is L1.1, or L1.2 when the device's LTR tolerates LTR_L1.2_THRESHOLD; a TLP that finds it there pays
// L1's exit plus the substate's; each substate draws its own fraction of L0; the residencies balance; the
// slot's power-off (L3) is unchanged. Each case builds its own platform (no driver) or runs the binary.
#include "hw_model/gpu/regs.h"
#include "platform/energy.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;
using namespace gpumodel;
using namespace tb::dflt;

namespace {

struct Expect {
  size_t state;      // the L1 state the link must sleep in
  sc_time exit;      // what the waking write pays before its TLP
  const char* frac;  // its power fraction's key
};

// A write at 0, 100 us of idle (far past link.l1_entry_us, 32 us), a second write: it finds the link in
// `want.state` and pays `want.exit` exactly. Then the link's energy at that state's fraction, the
// residencies, and the balance.
void substate_wake(const Overrides& o, const Expect& want) {
  Overrides all{{"link.aspm", "l1"}};
  for (auto& [k, v] : o) all[k] = v;
  auto ps = params(all);
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe gpu_agent("gpu_agent");  // its writes to system memory go up the link
  gpu_agent.sock.bind(p.gpu.fabric.tsock);
  std::vector<unsigned char> data(256, 0xCD);
  sc_time v1, v2, asleep;
  size_t state_before = PcieLink::kL0;
  gpu_agent.body = [&] {
    v1 = gpu_agent.bus.post(kA, data.data(), 256);
    wait(sc_time(100, SC_US));
    state_before = p.link.power().state();
    v2 = gpu_agent.bus.post(kA + 256, data.data(), 256);
    asleep = p.link.power().time_in(want.state, sc_time_stamp());
  };
  sc_start(sc_time(1, SC_MS));
  const sc_time s280 = ser(256 + 24, kRate), path = s280 + kHop + kRc + dram_xfer(256) + kDram;
  CHECK(v1 == path);
  CHECK(p.link.l1_state() == want.state);
  CHECK(std::string(PcieLink::power_name(state_before)) == PcieLink::power_name(want.state));
  CHECK(v2 == sc_time(100, SC_US) + want.exit + path);
  // Asleep from 32 us after the first TLP left the wire until the second write woke it.
  CHECK(asleep == sc_time(100, SC_US) - s280 - sc_time(32, SC_US));
  CHECK(p.link.exits() == 1);
  // The run's end: every L1 state but the chosen one empty; the link's energy at that state's fraction.
  const sc_time now = sc_time_stamp();
  const StateClock& lk = p.link.power();
  for (size_t s : {PcieLink::kL1, PcieLink::kL1_1, PcieLink::kL1_2})
    if (s != want.state) CHECK(lk.time_in(s, now) == SC_ZERO_TIME);
  const EnergyModel m(p);
  const EnergyReading e = m.read();
  const double l0_mw = 16 * 2 * 16 * ps.get_real("power.link_pj_per_bit");  // Gen4 x16: 2048 mW
  const double f = ps.get_real(std::string("power.") + want.frac);
  CHECK(
      e.part("link") ==
      Approx(l0_mw * (ms(lk.time_in(PcieLink::kL0, now)) + f * ms(lk.time_in(want.state, now))) / 1000).epsilon(1e-12));
  CHECK(m.balance(e).empty());
  const nlohmann::json st = m.residencies();
  const double run = now.to_seconds();
  CHECK(st["link_l1"].get<double>() == Approx(lk.time_in(PcieLink::kL1, now).to_seconds() / run));
  if (want.state == PcieLink::kL1) {  // substates off: the results keep their keys of before
    CHECK_FALSE(st.contains("link_l1_1"));
    CHECK_FALSE(st.contains("link_l1_2"));
    return;
  }
  CHECK(st["link_l1_1"].get<double>() == Approx(lk.time_in(PcieLink::kL1_1, now).to_seconds() / run));
  CHECK(st["link_l1_2"].get<double>() == Approx(lk.time_in(PcieLink::kL1_2, now).to_seconds() / run));
  CHECK(st["link_l1_1"].get<double>() + st["link_l1_2"].get<double>() + st["link_l0s"].get<double>() +
            st["link_l3"].get<double>() + lk.time_in(PcieLink::kL0, now).to_seconds() / run ==
        Approx(1.0).epsilon(1e-12));
}
}  // namespace

// Defaults: L1 exit 4 us, L1.1 0.4 us more, L1.2 299 us more (T_POWER_ON 44 + T_COMMON_MODE 255), the
// threshold 305 us, the device's LTR 1 ms.
TEST_CASE("L1 substates: a write after the idle entry time finds the link in L1.2 and pays L1's exit plus L1.2's",
          "[H5][H2][link]") {
  substate_wake({{"link.l1_substates", "l1_2"}}, {PcieLink::kL1_2, sc_time(4 + 299, SC_US), "link_l1_2_fraction"});
}

TEST_CASE("L1 substates: with the device's LTR below LTR_L1.2_THRESHOLD the link stays in L1.1 and pays its exit",
          "[H5][H2][link]") {
  substate_wake({{"link.l1_substates", "l1_2"}, {"link.ltr_us", "304"}},
                {PcieLink::kL1_1, sc_time(4400, SC_NS), "link_l1_1_fraction"});
}

TEST_CASE("L1 substates: an LTR equal to the threshold tolerates L1.2", "[H5][H2][link]") {
  substate_wake({{"link.l1_substates", "l1_2"}, {"link.ltr_us", "305"}, {"link.l1_2_exit_us", "20"}},
                {PcieLink::kL1_2, sc_time(24, SC_US), "link_l1_2_fraction"});
}

TEST_CASE("L1 substates: l1_1 enables L1.1 alone whatever the LTR", "[H5][H2][link]") {
  substate_wake({{"link.l1_substates", "l1_1"}, {"link.l1_1_exit_us", "2"}},
                {PcieLink::kL1_1, sc_time(6, SC_US), "link_l1_1_fraction"});
}

TEST_CASE("L1 substates: off keeps the plain L1 and its exit", "[H5][H2][link]") {
  substate_wake({{"link.l1_substates", "off"}}, {PcieLink::kL1, sc_time(4, SC_US), "link_l1_fraction"});
}

TEST_CASE("L1 substates: a substate releases the host package's hold as L1 does", "[H5][link]") {
  auto ps = params({{"link.aspm", "l1"}, {"link.l1_substates", "l1_2"}, {"cpu.idle_state", "C6"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  sc_start(sc_time(1, SC_MS));
  // The core idles in C6 from 0; the link, idle from 0, enters L1.2 at 32 us: PC8 from then on.
  const sc_time now = sc_time_stamp();
  CHECK(p.cpu.package().clock().time_in(Package::kPC8, now) == sc_time(1, SC_MS) - sc_time(32, SC_US));
  CHECK(p.link.power().time_in(PcieLink::kL1_2, now) == sc_time(1, SC_MS) - sc_time(32, SC_US));
  const EnergyModel m(p);
  CHECK(m.balance(m.read()).empty());
}

TEST_CASE("L1 substates: the slot's power-off from L1.2 is L3 and the link returns to L1.2 after training",
          "[H5][H3][link]") {
  auto ps = params({{"link.aspm", "l1"}, {"link.l1_substates", "l1_2"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  const uint64_t kSlot = PcieLink::kRootPortBase + PcieLink::kSlotControl;
  const sc_time ramp = ps.get_ns("link.power_on_ms") * 1e6 + ps.get_ns("link.training_ms") * 1e6;
  size_t before_off = PcieLink::kL0, while_off = PcieLink::kL0;
  sc_time on_at;
  p.cpu.spawn_thread("os", [&] {
    p.cpu.sleep(sc_time(100, SC_US));
    before_off = p.link.power().state();
    p.cpu.mmio_write32(kSlot, PcieLink::kSlotCtlPowerOff);
    p.cpu.sleep(sc_time(1, SC_MS));
    while_off = p.link.power().state();
    on_at = sc_time_stamp();
    p.cpu.mmio_write32(kSlot, 0);
  });
  sc_start(sc_time(200, SC_MS));
  CHECK(before_off == PcieLink::kL1_2);
  CHECK(while_off == PcieLink::kL3);
  // Up after the ramp, idle from then: L1.2 again after link.l1_entry_us.
  CHECK(p.link.power().state() == PcieLink::kL1_2);
  CHECK(p.link.exits() == 0);  // a power-off is no ASPM exit
  CHECK(p.link.power().time_in(PcieLink::kL3, sc_time_stamp()) > ramp);
  const EnergyModel m(p);
  CHECK(m.balance(m.read()).empty());
}

TEST_CASE("L1 substates: a user's link.l1_substates implies link.aspm = l1 and the run reports the substates",
          "[H5][link]") {
  const auto j = run_json(scenario("fence_signal") + " --link.l1_substates=l1_2", "l1ss_implied");
  REQUIRE(j.contains("implied"));
  CHECK(j["implied"]["link.aspm"]["value"] == "l1");
  CHECK(j["parameters"]["link.aspm"] == "l1");
  CHECK(j["metrics"]["power_states"].contains("link_l1_2"));
  CHECK(j["metrics"]["power_states"]["link_l1"] == 0.0);
}

TEST_CASE("L1 substates: a platform's link.l1_substates without L1 ASPM is inert, not refused", "[H4][link]") {
  // laptop_hybrid sets l1_1; a scenario that leaves link.aspm off runs with the link always in L0.
  const auto j =
      run_json(scenario("mmio_roundtrip") + " --platform=laptop_hybrid --platform.topology=dgpu", "l1ss_platform");
  CHECK(j["parameters"]["link.l1_substates"] == "l1_1");
  CHECK(j["parameters"]["link.aspm"] == "off");
  CHECK_FALSE(j.contains("implied"));
  CHECK(j["metrics"]["power_states"]["link_l1_1"] == 0.0);
  CHECK(j["metrics"]["power_states"]["link_exits"] == 0);
}
