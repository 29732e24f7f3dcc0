// The CMP alone: a Cmp against system memory (its firmware's reads, MMU off) and two stub engines that
// implement EnginePort (hw_model/gpu/engine_ports.h) and record what the CMP asks of them. Its queues
// are programmed through its own BAR0 registers (Cmp::map_registers into a RegisterTable), as the KMD
// would; the engines' side is played by calling CmpPort as an engine does. Times derive from the CMP's
// parameters: cmp.clock_mhz 1000 (1 ns a cycle), cmp.doorbell_cycles 64, cmp.decision_cycles 20,
// cmp.barrier_ns 200, cmp.timeslice_us 100; memory reads 90 ns + n ps (sysmem.bandwidth_gbps = 1000).
#include <string>
#include <vector>

#include "hw_model/core/register_table.h"
#include "hw_model/gpu/cmp.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {

constexpr uint64_t kCv = kMem + 0x1000;
constexpr uint32_t kCmpSlot = 5;

struct StubEngine : EnginePort {
  int ordinal = 0;
  std::vector<std::pair<int, sc_time>> kicks;  // queue id, when
  unsigned preempts = 0, flushes = 0;
  sc_time flush_visible = SC_ZERO_TIME;  // when this engine's writes issued so far are visible
  sc_event flush_ev, reset_ev;
  void kick(const HwQueue& q) override { kicks.emplace_back(q.id, sc_time_stamp()); }
  void request_preempt() override { ++preempts; }
  void request_reset(bool, const sc_time&) override {}
  uint32_t status() const override { return 0; }
  const sc_event& reset_done_event() const override { return reset_ev; }
  void request_flush(WriteBuffer::Flush& f) override {
    ++flushes;
    f.done = true;
    f.visible = flush_visible;
  }
  const sc_event& flush_event() const override { return flush_ev; }
  sc_time dma_visible() const override { return SC_ZERO_TIME; }
  void flush_logs() override {}
  void invalidate_tlb(uint64_t) override {}
};

struct CmpRig : sc_module {
  ParamSet ps;
  Vcd vcd;
  Memory mem;
  Cmp cmp;
  StubEngine e0, e1;
  RegisterTable regs;
  std::function<void(CmpRig&)> body;
  explicit CmpRig(sc_module_name n)
      : sc_module(n),
        ps(params({{"sysmem.bandwidth_gbps", "1000"}})),
        mem("sysmem", ps, "sysmem.", kMem),
        cmp("cmp", ps, vcd, 8) {
    cmp.isock.bind(mem.tsock);
    e1.ordinal = 1;
    cmp.attach(&e0);
    cmp.attach(&e1);
    cmp.map_registers(regs);
    SC_HAS_PROCESS(CmpRig);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  // The KMD's programming of a queue: its node and priority, then enable.
  void queue(int q, int node, uint32_t priority) {
    regs.write(regs::queue_reg(q, regs::kQRingBase), kMem + 0x10000 + 0x1000 * uint64_t(q), 8);
    regs.write(regs::queue_reg(q, regs::kQRingSize), 4096, 4);
    regs.write(regs::queue_reg(q, regs::kQNode), uint64_t(node), 4);
    regs.write(regs::queue_reg(q, regs::kQPriority), priority, 4);
    regs.write(regs::queue_reg(q, regs::kQEnable), 1, 4);
  }
  void doorbell(int q, uint64_t wptr) { regs.write(regs::doorbell_reg(q), wptr, 8); }
  const HwQueue& q(int i) const { return cmp.queue(i); }
};

void check_cmp_defaults(const ParamSet& p) {
  REQUIRE(p.get_real("cmp.clock_mhz") == 1000);
  REQUIRE(p.get_int("cmp.doorbell_cycles") == 64);
  REQUIRE(p.get_int("cmp.decision_cycles") == 20);
  REQUIRE(p.get_real("cmp.barrier_ns") == 200);
  REQUIRE(p.get_real("cmp.timeslice_us") == 100);
  REQUIRE(p.get_real("sysmem.read_latency_ns") == 90);
}

int id(const HwQueue* q) { return q ? q->id : -1; }

}  // namespace

TEST_CASE("CMP alone: doorbells are taken in order at cmp.doorbell_cycles each and kick the queue's engine",
          "[H1][H2][cmp]") {
  CmpRig rig("rig");
  check_cmp_defaults(rig.ps);
  std::vector<int> picks;
  bool switch_early = true, switch_late = false;
  rig.body = [&](CmpRig& r) {
    r.queue(0, 0, 1);
    r.queue(1, 0, 1);
    r.queue(2, 0, 2);
    r.queue(3, 1, 1);
    for (int q = 0; q < 4; ++q) r.doorbell(q, 64);
    wait(sc_time(1, SC_US));
    // Engine 0's run list: the highest priority first (queue 2), then round robin among equals.
    const HwQueue* first = r.cmp.pick(0);
    picks.push_back(id(first));
    r.cmp.executed(*first, 64);  // queue 2 ran to its write pointer: it leaves the run list
    const HwQueue* a = r.cmp.pick(0);
    picks.push_back(id(a));
    picks.push_back(id(r.cmp.pick(0)));  // the other queue of priority 1
    picks.push_back(id(r.cmp.pick(1)));
    const sc_time since = sc_time_stamp();
    switch_early = r.cmp.should_switch(0, *a, since);  // queue 1 waits, but the slice has just begun
    wait(sc_time(100, SC_US));
    switch_late = r.cmp.should_switch(0, *a, since);  // the slice is over and an equal waits
  };
  sc_start(sc_time(200, SC_US));
  // The firmware takes one doorbell at a time: 64 cycles at 1 GHz each.
  REQUIRE(rig.e0.kicks.size() == 3);
  for (int q = 0; q < 3; ++q) {
    CHECK(rig.e0.kicks[size_t(q)].first == q);
    CHECK(rig.e0.kicks[size_t(q)].second == sc_time(64.0 * (q + 1), SC_NS));
  }
  REQUIRE(rig.e1.kicks.size() == 1);
  CHECK(rig.e1.kicks[0].second == sc_time(256, SC_NS));
  CHECK(picks == std::vector<int>{2, 0, 1, 3});
  CHECK_FALSE(switch_early);
  CHECK(switch_late);
}

TEST_CASE("CMP alone: every engine operation on a queue keeps the run list right", "[H1][F5][cmp]") {
  CmpRig rig("rig");
  check_cmp_defaults(rig.ps);
  std::vector<int> picks;
  bool other_after_block = true, other_before = false;
  bool faulted_after_doorbell = false;
  rig.body = [&](CmpRig& r) {
    r.queue(0, 0, 1);
    r.queue(1, 0, 1);
    r.queue(2, 0, 1);
    for (int q = 0; q < 3; ++q) r.doorbell(q, 64);
    wait(sc_time(1, SC_US));
    other_before = r.cmp.other_runnable(0, r.q(1));  // queues 0 and 2 could run beside queue 1
    r.cmp.block(r.q(0), BlockedWait{kCmpSlot, 3});   // a WAIT on a slot the table does not hold: stays blocked
    r.cmp.drop_rest(r.q(1));                         // preempted: the rest of its ring given back
    other_after_block = r.cmp.other_runnable(0, r.q(2));
    picks.push_back(id(r.cmp.pick(0)));
    r.cmp.fault_queue(r.q(2));
    picks.push_back(id(r.cmp.pick(0)));  // none: blocked, dropped, faulted
    r.doorbell(2, 128);
    wait(sc_time(1, SC_US));
    faulted_after_doorbell = r.q(2).faulted;
    picks.push_back(id(r.cmp.pick(0)));  // a faulted queue stays off the run list despite new work
    r.cmp.reset_queue(r.q(2));           // an engine reset empties it and clears the fault
    picks.push_back(id(r.cmp.pick(0)));  // empty: nothing to run
    r.doorbell(2, 192);
    wait(sc_time(1, SC_US));
    picks.push_back(id(r.cmp.pick(0)));
    r.cmp.reset_queue(r.q(0));  // a reset forgets the blocked WAIT too
    r.doorbell(0, 128);
    wait(sc_time(1, SC_US));
    picks.push_back(id(r.cmp.pick(0)));
  };
  sc_start(sc_time(10, SC_US));
  CHECK(other_before);
  CHECK_FALSE(other_after_block);  // queue 0 blocked, queue 1 given back: nothing but queue 2 can run
  CHECK(picks == std::vector<int>{2, -1, -1, -1, 2, 0});
  CHECK(faulted_after_doorbell);
  CHECK(rig.q(1).rptr == rig.q(1).wptr);
  CHECK_FALSE(rig.q(0).blocked);
}

namespace {
// A queue blocked on (kCmpSlot, 3) while CV is 1; at 2 us an engine reports a signal of `value`, its CV
// write visible at `visible` (still in its write buffer when it reports).
struct GpuWait {
  std::vector<std::pair<int, sc_time>> kicks;
  sc_time registered;
  size_t waiters_after_drop = 99;  // the fence's GPU waiters once a preemption gave the queue back
  uint64_t unblocks = 0;
  bool blocked_after = true;
};
GpuWait gpu_wait(uint64_t value, const sc_time& visible) {
  CmpRig rig("rig");
  check_cmp_defaults(rig.ps);
  GpuWait g;
  rig.body = [&](CmpRig& r) {
    const uint64_t cv = 1;
    r.mem.poke(kCv, &cv, 8);
    r.regs.write(regs::kFenceSelect, kCmpSlot, 4);
    r.regs.write(regs::kFenceCvAddr, kCv, 8);
    r.regs.write(regs::kFenceFlags, regs::kFenceValid, 4);
    r.queue(0, 0, 1);
    r.doorbell(0, 64);
    wait(sc_time(1, SC_US));
    r.e0.kicks.clear();
    r.cmp.block(r.q(0), BlockedWait{kCmpSlot, 3});
    wait(sc_time(1, SC_US));
    g.registered = r.cmp.last_wait_registered();
    r.e0.flush_visible = visible;
    r.cmp.fence_written(kCmpSlot, value, false);
    wait(sc_time(3, SC_US));
    g.blocked_after = r.q(0).blocked;
    g.kicks = r.e0.kicks;
    // Blocked again, registered, then preempted: the fence forgets the queue (no stale waiter).
    r.doorbell(0, 128);
    wait(sc_time(1, SC_US));
    r.cmp.block(r.q(0), BlockedWait{kCmpSlot, 1000});
    wait(sc_time(1, SC_US));
    r.cmp.drop_rest(r.q(0));
    g.waiters_after_drop = r.cmp.fence(kCmpSlot)->gpu_waiters.size();
  };
  sc_start(sc_time(10, SC_US));
  g.unblocks = rig.cmp.gpu_unblocks();
  return g;
}
}  // namespace

TEST_CASE("CMP alone: a GPU wait is released on the GPU once the signal's writes are visible and the barrier is done",
          "[F5][F7][cmp]") {
  const sc_time cv_visible(2500, SC_NS);
  const GpuWait g = gpu_wait(3, cv_visible);
  // Registration: cmp.decision_cycles (20 ns), then the CV re-read (90 ns + 8 ps) finds 1 < 3.
  CHECK(g.registered == sc_time(1, SC_US) + sc_time(20, SC_NS) + sc_time(90, SC_NS) + ps(8));
  // The signal: 20 ns of decision, then the barrier waits for the engine's writes (its CV, visible at
  // 2.5 us) and costs cmp.barrier_ns on top; only then does the queue run again.
  REQUIRE(g.kicks.size() == 1);
  CHECK(g.kicks[0].first == 0);
  CHECK(g.kicks[0].second == cv_visible + sc_time(200, SC_NS));
  CHECK(g.unblocks == 1);
  CHECK_FALSE(g.blocked_after);
  CHECK(g.waiters_after_drop == 0);
}

TEST_CASE("CMP alone: a signal below the waited value leaves the GPU wait blocked", "[F5][cmp]") {
  const GpuWait g = gpu_wait(2, sc_time(2, SC_US));
  CHECK(g.kicks.empty());
  CHECK(g.unblocks == 0);
  CHECK(g.blocked_after);
}

namespace {
// The CMP's fence slot, event ring and MSI programmed through its registers as the KMD does; CV = `cv` in
// memory. An MV update to `mv` then runs F7: shadow write, barrier, step 3's CV read. Returns the event
// entries the CMP wrote.
struct RaisedEvent {
  uint32_t type = 0, handle = 0;
  uint64_t value = 0;
};
std::vector<RaisedEvent> step3_raise(bool names_queue) {
  CmpRig rig("rig");
  check_cmp_defaults(rig.ps);
  constexpr uint64_t kMv = kMem + 0x2000, kShadow = kMem + 0x3000, kAck = kMem + 0x4000, kRing = kMem + 0x5000,
                     kWptr = kMem + 0x6000, kMsi = kMem + 0x7000;
  const uint64_t cv = 1;
  rig.mem.poke(kCv, &cv, 8);
  rig.body = [&](CmpRig& r) {
    using namespace regs;
    r.cmp.set_msi(kMsi, 0x40);  // what BAR0's MSI registers program (the adapter's, not the CMP's)
    r.regs.write(kFenceAckAddr, kAck, 8);
    r.regs.write(kShadowMvBase, kShadow, 8);
    r.regs.write(kEventRingBase, kRing, 8);
    r.regs.write(kEventRingSize, 16, 4);
    r.regs.write(kEventRingWptrAddr, kWptr, 8);
    if (names_queue) r.regs.write(kFenceIrqMode, kFenceIrqNamesQueue, 4);
    r.regs.write(kFenceSelect, kCmpSlot, 4);
    r.regs.write(kFenceCvAddr, kCv, 8);
    r.regs.write(kFenceMvAddr, kMv, 8);
    r.regs.write(kFenceHandle, 77, 4);
    r.regs.write(kFenceFlags, kFenceValid, 4);
    r.regs.write(kFenceMvUpdate, 0, 8);  // a waiter on 1 arrives: MV 0 < CV 1, step 3 raises
    wait(sc_time(10, SC_US));
  };
  sc_start(sc_time(20, SC_US));
  std::vector<RaisedEvent> out;
  const uint32_t n = uint32_t(rig.mem.peek64(kWptr));
  for (uint32_t i = 0; i < n; ++i) {
    RaisedEvent e;
    uint32_t th[2];
    rig.mem.peek(kRing + 16ull * i, th, 8);
    e.type = th[0], e.handle = th[1];
    e.value = rig.mem.peek64(kRing + 16ull * i + 8);
    out.push_back(e);
  }
  return out;
}
}  // namespace

TEST_CASE("CMP alone: F7 step 3 raises for the fence it found past the new MV", "[F7][F12][cmp]") {
  const auto ev = step3_raise(false);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].type == regs::kEventNativeFence);
  CHECK(ev[0].handle == 77);
  CHECK(ev[0].value == 1);
}

TEST_CASE(
    "CMP alone: with the optimized interrupt a raise no queue's log explains names a NULL queue on every node and "
    "never the fence",
    "[F19][cmp]") {
  const auto ev = step3_raise(true);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].type == regs::kEventNativeFenceQueue);
  CHECK(ev[0].handle == 0);                    // a NULL HW queue ...
  CHECK(ev[0].value == regs::kEventAllNodes);  // ... on every node: the engine is unknown
}

TEST_CASE(
    "CMP alone: a raise no queue's log explains names the node whose logged signal last raised the fence, and "
    "every node once that is unknown",
    "[F19][cmp]") {
  // Queue 0 on node 0, queue 1 on node 1. Per case a fence slot of its own with CV = 2 in memory: the engines
  // report their signals (Cmp::fence_written) without an interrupt (their check saw the old MV), then an MV
  // update's step 3 finds CV past the new MV and raises: a NULL queue on the node it names.
  CmpRig rig("rig");
  constexpr uint64_t kShadow = kMem + 0x3000, kAck = kMem + 0x4000, kRing = kMem + 0x5000, kWptr = kMem + 0x6000,
                     kMsi = kMem + 0x7000, kValues = kMem + 0x8000;
  using Signals = std::function<void(CmpRig&, uint32_t slot)>;
  const std::vector<std::pair<Signals, uint64_t>> cases = {
      // A logged signal from node 1: the OS is sent to node 1's queues.
      {[](CmpRig& r, uint32_t f) { r.cmp.fence_written(f, 2, false, &r.q(1)); }, 1},
      // The fence destroyed and created again after it: no signal of the new fence is known.
      {[](CmpRig& r, uint32_t f) {
         r.cmp.fence_written(f, 2, false, &r.q(1));
         r.regs.write(regs::kFenceFlags, regs::kFenceValid, 4);
       },
       regs::kEventAllNodes},
      // A later unlogged signal reached a higher value: no log holds it.
      {[](CmpRig& r, uint32_t f) {
         r.cmp.fence_written(f, 1, false, &r.q(1));
         r.cmp.fence_written(f, 2, false);
       },
       regs::kEventAllNodes},
      // Two logged signals of the same value: the later one's node (its log holds the newer entry).
      {[](CmpRig& r, uint32_t f) {
         r.cmp.fence_written(f, 2, false, &r.q(1));
         r.cmp.fence_written(f, 2, false, &r.q(0));
       },
       0},
      // A lower value after the highest leaves the highest's node.
      {[](CmpRig& r, uint32_t f) {
         r.cmp.fence_written(f, 2, false, &r.q(1));
         r.cmp.fence_written(f, 1, false, &r.q(0));
       },
       1}};
  rig.body = [&](CmpRig& r) {
    using namespace regs;
    r.cmp.set_msi(kMsi, 0x40);
    r.regs.write(kFenceAckAddr, kAck, 8);
    r.regs.write(kShadowMvBase, kShadow, 8);
    r.regs.write(kEventRingBase, kRing, 8);
    r.regs.write(kEventRingSize, 16, 4);
    r.regs.write(kEventRingWptrAddr, kWptr, 8);
    r.regs.write(kFenceIrqMode, kFenceIrqNamesQueue, 4);
    r.queue(0, 0, 0);
    r.queue(1, 1, 0);
    for (uint32_t k = 0; k < cases.size(); ++k) {
      const uint32_t slot = 10 + k;
      const uint64_t cv = 2, cv_addr = kValues + 64 * k;
      r.mem.poke(cv_addr, &cv, 8);
      r.regs.write(kFenceSelect, slot, 4);
      r.regs.write(kFenceCvAddr, cv_addr, 8);
      r.regs.write(kFenceMvAddr, cv_addr + 8, 8);
      r.regs.write(kFenceHandle, 100 + k, 4);
      r.regs.write(kFenceFlags, kFenceValid, 4);
      cases[k].first(r, slot);
      r.regs.write(kFenceSelect, slot, 4);
      r.regs.write(kFenceMvUpdate, 0, 8);  // a waiter on 1: MV 0 < CV 2, step 3 raises
      wait(sc_time(10, SC_US));
    }
  };
  sc_start(sc_time(100, SC_US));
  REQUIRE(rig.mem.peek64(kWptr) == cases.size());
  for (uint32_t k = 0; k < cases.size(); ++k) {
    CAPTURE(k);
    uint32_t th[2];
    rig.mem.peek(kRing + 16ull * k, th, 8);
    CHECK(th[0] == regs::kEventNativeFenceQueue);
    CHECK(th[1] == 0);  // a NULL HW queue, always: no queue's log holds this raise
    CHECK(rig.mem.peek64(kRing + 16ull * k + 8) == cases[k].second);
  }
}
