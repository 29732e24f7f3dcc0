// The CPU's cores (cpu.cores): with one, the threads and the interrupts share core 0, so a running thread
// keeps the interrupts' core awake; with more, core 0 takes the interrupts and the threads run on cores
// 1..N-1 (round-robin by creation), each idling in its own C-state. Each case builds its own platform.
#include "platform/energy.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;
using namespace gpumodel;

namespace {

// A thread computes from 0 to 1 ms; an MSI is posted at 500 us (the link's ASPM off: no link exit, and
// the link holds the package out of PC8, so only the core's own exit counts). Returns the interrupt's
// idle exit.
sc_time interrupt_beside_busy_thread(const char* cores) {
  auto ps = params({{"cpu.cores", cores}, {"cpu.idle_state", "C6"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe gpu_agent("gpu_agent");
  gpu_agent.sock.bind(p.gpu.fabric.tsock);
  p.cpu.connect_interrupt(0xF000, 1, [](uint32_t) { return true; });
  p.cpu.spawn_thread("busy", [&] { p.cpu.work(sc_time(1, SC_MS)); });
  gpu_agent.body = [&] {
    wait(500, SC_US);
    gpu_agent.bus.post32(InterruptController::kMsiBase, 0xF000);
  };
  sc_start(sc_time(2, SC_MS));
  REQUIRE(p.cpu.interrupts() == 1);
  if (std::string(cores) != "1") {
    // The thread ran on core 1 for its whole 1 ms (after the exit from the idle state it was created in).
    CHECK(p.cpu.time_in(1, "thread") == sc_time(1, SC_MS));
    CHECK(p.cpu.time_in(0, "thread") == SC_ZERO_TIME);
  }
  return p.cpu.last_interrupt().idle_exit;
}

// A platform with `cores` cores allowed C6 (fixed governor), an MSI posted at `msi_at`, and an ISR whose DPC
// sets `ev`.
struct DpcRig {
  ParamSet ps;
  Vcd vcd;
  Platform p;
  Probe gpu_agent{"gpu_agent"};
  KEvent ev;
  DpcRig(const char* cores, sc_time msi_at)
      : ps(params({{"cpu.cores", cores}, {"cpu.idle_state", "C6"}})), p(ps, vcd, 1) {
    gpu_agent.sock.bind(p.gpu.fabric.tsock);
    p.cpu.connect_interrupt(0xF000, 1, [this](uint32_t) {
      p.cpu.queue_dpc([this] { p.cpu.signal(ev); });
      return true;
    });
    gpu_agent.body = [this, msi_at] {
      wait(msi_at);
      gpu_agent.bus.post32(InterruptController::kMsiBase, 0xF000);
    };
  }
};

// A thread waits on an event a DPC sets (the MSI at 500 us: entry, ISR, DPC on core 0). It runs again
// cpu.thread_wake_ns after the DPC ends (core 0's dispatch), and with its own core idle in C6 after that
// core's exit too. Returns the time from the DPC's end to the thread running.
sc_time thread_woken_by_dpc(const char* cores) {
  DpcRig r(cores, sc_time(500, SC_US));
  sc_time resumed;
  r.p.cpu.spawn_thread("waiter", [&] {
    r.p.cpu.wait_for(r.ev);
    resumed = sc_time_stamp();
  });
  sc_start(sc_time(2, SC_MS));
  REQUIRE(resumed > SC_ZERO_TIME);
  return resumed - r.p.cpu.last_interrupt().dpc_end;
}

}  // namespace

TEST_CASE("cpu.cores = 1: a computing thread keeps the interrupts' core awake: no idle exit", "[H5]") {
  CHECK(interrupt_beside_busy_thread("1") == SC_ZERO_TIME);
}

TEST_CASE("cpu.cores = 2: the interrupt finds core 0 in C6 while the thread computes on core 1", "[H5]") {
  // Core 0 idles in C6 (cpu.idle_state, fixed governor) from the start: the MSI pays its 85 us exit.
  CHECK(interrupt_beside_busy_thread("2") == sc_time(85, SC_US));
}

TEST_CASE("cpu.cores = 1: a thread woken by a DPC runs the dispatch cost after it", "[H5]") {
  CHECK(thread_woken_by_dpc("1") == sc_time(2, SC_US));  // cpu.thread_wake_ns
}

TEST_CASE("cpu.cores = 2: a thread woken by a DPC waits for its own idle core's exit after the dispatch", "[H5]") {
  CHECK(thread_woken_by_dpc("2") == sc_time(2, SC_US) + sc_time(85, SC_US));  // dispatch, then core 1's C6 exit
}

TEST_CASE("cpu.cores = 3: threads take cores 1 and 2 in turn and the package reaches PC8 only with every core in C6",
          "[H5]") {
  auto ps = params({{"cpu.cores", "3"}, {"cpu.idle_state", "C6"}, {"link.aspm", "l1"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  // Two threads compute 100 us each from the start (created on cores 1 and 2, each out of C6 first); a
  // third, created third, wraps to core 1: it sleeps 1 ms, then computes 1 ms there.
  sc_time a_start, c_start;  // when each body starts: after core 1's exit, which the second waits for too
  p.cpu.spawn_thread("a", [&] {
    a_start = sc_time_stamp();
    p.cpu.work(sc_time(100, SC_US));
  });
  p.cpu.spawn_thread("b", [&] { p.cpu.work(sc_time(100, SC_US)); });
  p.cpu.spawn_thread("c", [&] {
    c_start = sc_time_stamp();
    p.cpu.sleep(sc_time(1, SC_MS));
    p.cpu.work(sc_time(1, SC_MS));
  });
  sc_start(sc_time(3, SC_MS));
  const sc_time now = sc_time_stamp();
  CHECK(p.cpu.cores() == 3);
  // a and c share core 1: whichever runs first takes it out of C6 (85 us), the other waits for that exit.
  CHECK(a_start == sc_time(85, SC_US));
  CHECK(c_start == sc_time(85, SC_US));
  CHECK(p.cpu.time_in(1, "thread") == sc_time(1100, SC_US));
  CHECK(p.cpu.time_in(2, "thread") == sc_time(100, SC_US));
  CHECK(p.cpu.time_in(0, "thread") == SC_ZERO_TIME);
  // Core 1 idled between a's end and c's timer: three exits in all (a or c at the start, b at the start,
  // c after its sleep). At the start the package is up (85 us, C6's exit alone); at c's timer every core
  // was in C6 with the link in L1, so the package was in PC8 and core 1's exit waits for the package's
  // (cpu.package_exit_ns, 115 us) first: 85 + (115 + 85) us.
  CHECK(p.cpu.worker_wakeups() == 3);
  CHECK(p.cpu.time_in(1, "exit") == sc_time(285, SC_US));
  CHECK(p.cpu.time_in(2, "exit") == sc_time(85, SC_US));
  // While any core runs the package is in PC0; PC8 needs all three in C6 and the link in L1, so it is
  // bounded by each core's C6 time.
  // PC0 while any core runs, core 0 idle throughout: the threads' 100 us each (side by side), c's 1 ms,
  // and the exits (a core leaving its idle state runs).
  CHECK(p.cpu.package().clock().time_in(Package::kPC0, now) >= sc_time(1100, SC_US));
  const sc_time pc8 = p.cpu.package().clock().time_in(Package::kPC8, now);
  CHECK(pc8 > SC_ZERO_TIME);
  for (size_t k = 0; k < 3; ++k) CHECK(pc8 <= p.cpu.time_in(k, "C6"));
  CHECK(EnergyModel(p).balance(EnergyModel(p).read()).empty());
}

TEST_CASE("energy: every core's idle state counts: two idle cores draw twice one's C1 power", "[H5]") {
  auto ps = params({{"cpu.cores", "2"}});  // fixed governor, C1: both cores idle in C1 from the start
  Vcd vcd;
  Platform p(ps, vcd, 1);
  sc_start(sc_time(1, SC_MS));
  const EnergyReading e = EnergyModel(p).read();
  CHECK(p.cpu.time_in(1, "C1") == sc_time(1, SC_MS));
  CHECK(e.part("cpu_core") == Approx(2 * ps.get_real("power.cpu_c1_mw") / 1000).epsilon(1e-12));
}

namespace {
// The menu governor with no idle history picks C1 (the last idle period, zero, reaches no deeper target
// residency). Core 0 idles from the start; a thread on core 1 (cpu.cores = 2) blocks at once for good.
// With the clock tick (cpu.idle_retick_ms) each is re-evaluated at 15.625 ms and goes to C6, the deepest
// allowed; without it each stays in C1 to the end of the 50 ms run.
void retick(const char* ms) {
  auto ps =
      params({{"cpu.cores", "2"}, {"cpu.idle_governor", "menu"}, {"cpu.idle_state", "C6"}, {"cpu.idle_retick_ms", ms}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  KEvent never;
  p.cpu.spawn_thread("blocked", [&] { p.cpu.wait_for(never); });
  sc_start(sc_time(50, SC_MS));
  const bool on = std::string(ms) != "0";
  // Core 1: created in C6 (no history: the governor expects a long idle), out of it for the thread (85 us),
  // then the thread blocks after a zero-length idle history.
  const sc_time exit1(85, SC_US);
  CHECK(p.cpu.time_in(1, "exit") == exit1);
  CHECK(p.cpu.time_in(1, "C1") == (on ? sc_time(15.625, SC_MS) : sc_time(50, SC_MS) - exit1));
  CHECK(p.cpu.time_in(0, "C1") == (on ? sc_time(15.625, SC_MS) : sc_time(50, SC_MS)));
  CHECK(p.cpu.time_in(0, "C6") == (on ? sc_time(50 - 15.625, SC_MS) : SC_ZERO_TIME));
}
}  // namespace

TEST_CASE("cpu.idle_retick_ms: at the clock tick an idle core left in C1 goes to C6", "[H5]") { retick("15.625"); }
TEST_CASE("cpu.idle_retick_ms = 0: an idle core stays in the state the governor chose", "[H5]") { retick("0"); }

// A wait whose timer expires while its core is in C6 (cpu.cores = 2). The thread is created on core 1
// (out of C6 at 85 us), sleeps 1 ms (its core's exit again: 1170 us), then waits 100 us: the timer at
// 1270 us, the core's exit to 1355 us, the waiter registered meanwhile. A DPC that sets the event during
// that exit wakes it: the MSI at 1200 us finds core 0 in C6 (85 us), then entry 0.5, ISR 2 and DPC 1 us set
// the event at 1288.5 us, dispatched at 1290.5 us. The wait returns true, not a timeout (a timeout would
// leave the dispatched wake-up behind for a waiter gone).
TEST_CASE("cpu.cores = 2: an event set during the core's exit after a wait's timer counts as the wake", "[H5]") {
  DpcRig r("2", sc_time(1200, SC_US));
  int result = -1;
  sc_time back;
  r.p.cpu.spawn_thread("waiter", [&] {
    r.p.cpu.sleep(sc_time(1, SC_MS));
    result = r.p.cpu.wait_for(r.ev, sc_time(100, SC_US)) ? 1 : 0;
    back = sc_time_stamp();
  });
  sc_start(sc_time(3, SC_MS));
  CHECK(result == 1);
  CHECK(back == sc_time(1355, SC_US));
}

// Core 0 idles in C6 (the menu governor sends it there at the first clock tick, 15.625 ms) and the link
// sits in L1 (ASPM L1, no traffic); a thread on core 1 sleeps 50 us and computes 1 us, over and over: the
// governor, seeing 50 us idle periods, keeps core 1 out of C6 (C6's target residency is longer), so the
// package may go no deeper than PC2 between the ticks. Counting a worker's shallow idle as deep would put
// it in PC8 there.
TEST_CASE("cpu.cores = 2: a worker core idling shallow holds the package out of PC8 while core 0 is in C6", "[H5]") {
  auto ps = params({{"cpu.cores", "2"},
                    {"cpu.idle_governor", "menu"},
                    {"cpu.idle_state", "C6"},
                    {"cpu.idle_retick_ms", "15.625"},
                    {"link.aspm", "l1"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  p.cpu.spawn_thread("ticker", [&] {
    for (;;) {
      p.cpu.sleep(sc_time(50, SC_US));
      p.cpu.work(sc_time(1, SC_US));
    }
  });
  // Between the first two ticks (from 16 ms, past the first tick's effect on core 1's current sleep, to
  // 31 ms, before the second).
  sc_start(sc_time(16, SC_MS));
  auto pc = [&](size_t s) { return p.cpu.package().clock().time_in(s, sc_time_stamp()); };
  const sc_time pc8_a = pc(Package::kPC8), pc2_a = pc(Package::kPC2), c6_0a = p.cpu.time_in(0, "C6"),
                c6_1a = p.cpu.time_in(1, "C6");
  sc_start(sc_time(15, SC_MS));
  CHECK(p.cpu.time_in(0, "C6") - c6_0a == sc_time(15, SC_MS));  // core 0 deep throughout
  CHECK(p.cpu.time_in(1, "C6") == c6_1a);                       // core 1 never deep
  CHECK(pc(Package::kPC8) == pc8_a);                            // so neither is the package
  CHECK(pc(Package::kPC2) - pc2_a > sc_time(10, SC_MS));        // held in PC2 while core 1 idles
  CHECK(EnergyModel(p).balance(EnergyModel(p).read()).empty());
}

// The monitor checks every core: the package told by hand that core 1 is in C6 while a thread computes
// on it (a broken core-to-package rule) reaches PC8 with core 1 running, and the balance names core 1.
// Core 0 is in C6 throughout and the link in L1, so no other bound fails.
TEST_CASE("energy: the balance monitor bounds the package's PC8 by every core's C6 and not only core 0's", "[H5]") {
  auto ps = params({{"cpu.cores", "2"}, {"cpu.idle_state", "C6"}, {"link.aspm", "l1"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  p.cpu.spawn_thread("busy", [&] { p.cpu.work(sc_time(2, SC_MS)); });
  Probe breaker("breaker");
  breaker.sock.bind(p.gpu.fabric.tsock);
  breaker.body = [&] {
    wait(500, SC_US);
    p.cpu.package().set_core(1, false, true);  // the mutation: core 1 reported deep while it computes
  };
  sc_start(sc_time(1, SC_MS));
  const EnergyModel m(p);
  const auto bad = m.balance(m.read());
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].find("longer than core 1 was in C6") != std::string::npos);
}
