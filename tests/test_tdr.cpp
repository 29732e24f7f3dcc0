// Per-engine TDR (TDR in Windows 8 and later, SPEC T1-T10): the hardware's preemption and reset as the KMD drives them
// through BAR0, the TDR monitor alone, and the DPC flush. Times are checked exactly where the model's
// arithmetic gives them (preemption points) and against bounds derived from the parameters where an
// MMIO round trip or a poll interval enters. The six TDR scenarios through the CLI: test_tdr_scenarios.cpp.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "hw_model/gpu/regs.h"
#include "scenarios/tdr/tdr_monitor.h"

using namespace tb;
using namespace sc_core;

namespace {
sc_time us_(double v) { return sc_time(v, SC_US); }

// 2 GHz engine clock: cycles of `us` microseconds.
uint64_t cycles_us(double us) { return uint64_t(us * 2000); }
const uint64_t kEndless = uint64_t(1) << 62;

}  // namespace

TEST_CASE(
    "Preemption at a packet boundary: the running packet finishes, the rest of the ring is dropped, "
    "DMA_PREEMPTED carries the last completed fence ID",
    "[T3][T5]") {
  Bench b;
  auto& p = b.p;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    for (uint64_t id = 1; id <= 3; ++id) {
      PacketWriter w;
      w.compute(cycles_us(10));
      b.submit(0, id, w);
    }
    wait(us_(4));  // packet 1 is running
    p.kmd.DxgkDdiPreemptCommand(0, 77);
  });
  sc_start();
  const Node& n = *p.gpu.nodes[0];
  REQUIRE(b.irqs.size() == 2);
  CHECK(b.irqs[0].type == DxgkInterruptData::DmaCompleted);
  CHECK(b.irqs[0].fence_id == 1);
  CHECK(b.irqs[1].type == DxgkInterruptData::DmaPreempted);
  CHECK(b.irqs[1].last_completed_fence_id == 1);
  CHECK(b.irqs[1].preemption_fence_id == 77);
  CHECK(n.preemptions() == 1);
  CHECK(n.last_fence() == 1);
  // Only packet 1 computed: packets 2 and 3 were dropped with the ring, not run.
  CHECK(n.compute_time() == us_(10));
  // The preemption saves the node's state (node.preempt_save_ns = 10 us) after packet 1's FENCE, whose
  // interrupt left first: the two MSIs are at least that far apart.
  CHECK(b.irq_at[1] - b.irq_at[0] >= us_(10));
}

namespace {
// node.preemption = mid_command: a 100 us COMPUTE, a preemption request 25-28 us into it.
void mid_command_case(bool disabled) {
  Bench b(std::map<std::string, std::string>{{"node.preemption", "mid_command"}});
  auto& p = b.p;
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    ts = p.kmd.scratch();
    PacketWriter w;
    w.timestamp(ts).compute(cycles_us(100) | (disabled ? kComputeNoPreempt : 0));
    b.submit(0, 1, w);
    // The COMPUTE starts about 1.5 us after the submission (ring store, doorbell, fetch); the request
    // reaches the node 25 to 28 us into it, between its second and third preemption point.
    wait(us_(26.5));
    p.kmd.DxgkDdiPreemptCommand(0, 5);
  });
  sc_start();
  const Node& n = *p.gpu.nodes[0];
  const sc_time compute_start = sc_time(double(p.sysmem.peek64(ts)), SC_PS) + dflt::kDecode;
  REQUIRE(compute_start > SC_ZERO_TIME);
  CHECK(n.preemptions() == 1);
  if (!disabled) {
    // Points every node.preempt_point_cycles = 20,000 cycles = 10 us from the COMPUTE's start: the
    // request lands between 20 and 30 us, so the dispatch stops at exactly 30 us.
    CHECK(n.compute_time() == us_(30));
    CHECK(n.last_fence() == 0);  // preempted, not completed (T5)
    REQUIRE(b.irqs.size() == 1);
    CHECK(b.irqs[0].type == DxgkInterruptData::DmaPreempted);
    CHECK(b.irqs[0].last_completed_fence_id == 0);
  } else {
    CHECK(n.compute_time() == us_(100));  // no preemption point: it runs out, then its FENCE is the boundary
    CHECK(n.last_fence() == 1);
    REQUIRE(b.irqs.size() == 2);
    CHECK(b.irqs[1].last_completed_fence_id == 1);
  }
}
}  // namespace

TEST_CASE("Mid-command preemption stops a COMPUTE at its next preemption point (30 us, not 25)", "[T3]") {
  mid_command_case(false);
}

TEST_CASE("A dispatch with preemption disabled runs to its end and stops at the packet boundary", "[T3]") {
  mid_command_case(true);
}

TEST_CASE(
    "DxgkDdiResetEngine through MMIO: the node resets in node.reset_ns, keeps its last completed "
    "fence ID, reports the aborted packet, and runs new packets after",
    "[T1][T5]") {
  Bench b;
  auto& p = b.p;
  DxgkResetEngineArgs a;
  bool ok = false;
  sc_time t0, t1;
  uint64_t kmd_completed_after_reset = 0;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    PacketWriter w1, w2, w3;
    w1.compute(cycles_us(1));
    w2.compute(kEndless);  // a hang
    b.submit(0, 1, w1);
    b.submit(0, 2, w2);
    wait(us_(50));
    CHECK(p.kmd.DxgkDdiQueryDependentEngineGroup(0, 0) == 1u);  // node 0 resets alone
    t0 = sc_time_stamp();
    ok = p.kmd.DxgkDdiResetEngine(a);
    t1 = sc_time_stamp();
    kmd_completed_after_reset = p.kmd.driver_last_completed(0);
    w3.compute(cycles_us(1));
    b.submit(0, 3, w3);
  });
  sc_start();
  const Node& n = *p.gpu.nodes[0];
  REQUIRE(ok);
  CHECK(a.last_completed_fence_id == 1);
  CHECK(a.last_aborted_fence_id == 2);  // the packet the reset stopped
  CHECK(n.resets() == 1);
  CHECK(kmd_completed_after_reset == a.last_completed_fence_id);  // T5: the reset's ID
  CHECK(p.kmd.driver_last_completed(0) == 3);                     // then packet 3's completion
  CHECK(b.completed(3));                                          // the node runs again
  // The reset takes 174 us from the control write's arrival (about 0.3 us after t0); the KMD polls its
  // status every 10 us plus a 1.0 us MMIO read (docs/calibration.md 0.9-1.1 us), then reads the fence
  // register once more: the call returns within one poll and two reads of the reset's end.
  CHECK(t1 - t0 >= us_(174));
  CHECK(t1 - t0 <= us_(174 + 0.5 + 10 + 2 * 1.1));
}

TEST_CASE(
    "A node that cannot be reset stays hung, DxgkDdiResetFromTimeout resets the adapter in "
    "cmp.adapter_reset_ms and the node runs again",
    "[T9]") {
  Bench b(std::map<std::string, std::string>{{"gpu.node0.reset_fails_on", "0"}, {"cmp.adapter_reset_ms", "1000"}});
  auto& p = b.p;
  DxgkResetEngineArgs a;
  bool ok = true;
  uint32_t status = 0;
  uint64_t completed_after_restart = 0;
  sc_time t0, t1;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    PacketWriter w1, w2;
    w1.compute(kEndless);
    b.submit(0, 1, w1);
    wait(us_(20));
    ok = p.kmd.DxgkDdiResetEngine(a);
    status = p.cpu.mmio_read32(p.kmd.bar0() + regs::kNodeBase + regs::kNStatus);
    t0 = sc_time_stamp();
    REQUIRE(p.kmd.DxgkDdiResetFromTimeout());
    p.kmd.DxgkDdiRestartFromTimeout();
    t1 = sc_time_stamp();
    completed_after_restart = p.kmd.driver_last_completed(0);
    w2.compute(cycles_us(1));
    b.submit(0, 2, w2);
  });
  sc_start();
  CHECK_FALSE(ok);
  CHECK(status & regs::kNStResetFailed);
  // 1,000 ms of reset, seen by a poll every kmd.adapter_reset_poll_ms = 10 ms (plus its MMIO reads and
  // the restart's register writes).
  CHECK(t1 - t0 >= sc_time(1000, SC_MS));
  CHECK(t1 - t0 <= sc_time(1010.1, SC_MS));
  CHECK(completed_after_restart == 1);  // T5: after an adapter reset, the last submitted ID
  CHECK(b.completed(2));
  CHECK(p.kmd.driver_last_completed(0) == 2);
}

TEST_CASE(
    "A node's own reset_fails_on: its first engine reset succeeds and its second fails, and a node without "
    "the key (node.reset_fails_on = -1) always resets",
    "[T9][H4]") {
  Bench b(std::map<std::string, std::string>{{"gpu.node0.reset_fails_on", "1"}, {"cmp.adapter_reset_ms", "1000"}});
  auto& p = b.p;
  bool first = false, second = true, other = false;
  uint32_t status = 0;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    PacketWriter w1, w2, w3;
    w1.compute(kEndless);
    w2.compute(kEndless);
    w3.compute(kEndless);
    auto hang_and_reset = [&](uint32_t node, uint64_t id, const PacketWriter& w) {
      b.submit(node, id, w);
      wait(us_(20));
      DxgkResetEngineArgs a;
      a.node_ordinal = node;
      return p.kmd.DxgkDdiResetEngine(a);
    };
    first = hang_and_reset(0, 1, w1);
    other = hang_and_reset(1, 2, w2);
    second = hang_and_reset(0, 3, w3);
    status = p.cpu.mmio_read32(p.kmd.bar0() + regs::kNodeBase + regs::kNStatus);
    REQUIRE(p.kmd.DxgkDdiResetFromTimeout());  // the hung node comes back with the adapter
    p.kmd.DxgkDdiRestartFromTimeout();
  });
  sc_start();
  CHECK(first);
  CHECK(other);
  CHECK_FALSE(second);
  CHECK(status & regs::kNStResetFailed);
  CHECK(p.gpu.nodes[1]->resets() >= 1);
}

TEST_CASE(
    "Two hangs in a row on one node: each DxgkDdiResetEngine reports the packet it aborted, not one "
    "the previous reset already dropped",
    "[T1][T4]") {
  Bench b;
  auto& p = b.p;
  DxgkResetEngineArgs first, second;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    PacketWriter w;
    w.compute(kEndless);
    b.submit(0, 1, w);
    wait(us_(20));
    REQUIRE(p.kmd.DxgkDdiResetEngine(first));
    b.submit(0, 2, w);
    wait(us_(20));
    REQUIRE(p.kmd.DxgkDdiResetEngine(second));
  });
  sc_start();
  CHECK(first.last_aborted_fence_id == 1);
  CHECK(first.last_completed_fence_id == 0);
  CHECK(second.last_aborted_fence_id == 2);
  CHECK(second.last_completed_fence_id == 0);
  CHECK(p.gpu.nodes[0]->resets() == 2);
}

TEST_CASE(
    "After an adapter reset LAST_FENCE reads 0 - DMA_PREEMPTED and DxgkDdiResetEngine report the last completed "
    "fence ID the driver keeps and not the register",
    "[T5]") {
  // Packets 1 and 2 complete (LAST_FENCE = 2), the adapter resets (BACO: the node's registers read 0 after it) and
  // restarts (T5: the driver's last completed ID moves to the last submitted, 2). Packet 3, a 100 us COMPUTE, is
  // preempted mid-command 26.5 us after its submission (it stops at a preemption point, not completed: the
  // register stays 0). The DMA_PREEMPTED must carry 2, not 0. Then packet 4 hangs and is reset: the reset's
  // LastCompletedFenceId must be 2 as well, and the aborted packet 4.
  Bench b(std::map<std::string, std::string>{{"node.preemption", "mid_command"}, {"cmp.adapter_reset_ms", "1000"}});
  auto& p = b.p;
  DxgkResetEngineArgs a;
  bool ok = false;
  uint64_t reg_after_reset = 99, kmd_after_restart = 0;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    PacketWriter w1, w3, w4;
    w1.compute(cycles_us(1));
    b.submit(0, 1, w1);
    b.submit(0, 2, w1);
    wait(us_(50));
    REQUIRE(p.kmd.DxgkDdiResetFromTimeout());
    p.kmd.DxgkDdiRestartFromTimeout();
    reg_after_reset = p.cpu.mmio_read64(p.kmd.bar0() + regs::kNodeBase + regs::kNLastFence);
    kmd_after_restart = p.kmd.driver_last_completed(0);
    w3.compute(cycles_us(100));
    b.submit(0, 3, w3);
    wait(us_(26.5));
    p.kmd.DxgkDdiPreemptCommand(0, 9);
    wait(us_(50));
    w4.compute(kEndless);
    b.submit(0, 4, w4);
    wait(us_(20));
    ok = p.kmd.DxgkDdiResetEngine(a);
  });
  sc_start();
  CHECK(b.completed(2));
  CHECK(reg_after_reset == 0);    // the setting: the register is stale (cleared) after the adapter reset
  CHECK(kmd_after_restart == 2);  // T5: the last submitted ID after an adapter reset
  const auto pre = std::find_if(b.irqs.begin(), b.irqs.end(),
                                [](const DxgkInterruptData& d) { return d.type == DxgkInterruptData::DmaPreempted; });
  REQUIRE(pre != b.irqs.end());
  CHECK(pre->preemption_fence_id == 9);
  CHECK(pre->last_completed_fence_id == 2);  // the driver's value, not LAST_FENCE's 0
  CHECK_FALSE(b.completed(3));               // preempted, not completed
  REQUIRE(ok);
  CHECK(a.last_completed_fence_id == 2);
  CHECK(a.last_aborted_fence_id == 4);
}

TEST_CASE(
    "T4 step 8: a LastAbortedFenceId inside the snapshot's range that is in no hardware queue and not the last "
    "completed one - the stale ID of the previous reset - is bug check 0x119",
    "[T4]") {
  // Node 0: app A's endless COMPUTE (ID 1), then app B's (ID 2). The first timeout resets the node: 1 aborted, A in
  // error, B's packet resubmitted as 3 (T6). It hangs too; at the second reset the snapshot is [0, 3] and the
  // driver (kmd.tdr_report_aborted = stale) returns 1 again: inside the range, but neither queued (only 3 is) nor
  // the last completed 0. Step 8 must bug check (0xA, 1, 0, node 0); the monitor reports it as well.
  Bench b(std::map<std::string, std::string>{
      {"kmd.tdr_report_aborted", "stale"}, {"vidsch.quantum_ms", "1"}, {"vidsch.tdr_delay_ms", "1"}});
  auto& p = b.p;
  PacketScheduler& ps = p.vidsch.packets();
  TdrRulesMonitor mon(p);
  SchedDevice *da = nullptr, *db = nullptr;
  PacketWriter w;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    da = ps.CreateDevice(), db = ps.CreateDevice();
    SchedContext *ca = ps.CreateContext(da, 0), *cb = ps.CreateContext(db, 0);
    w.compute(kEndless);
    ps.SubmitRender(ca, w);
    ps.SubmitRender(cb, w);
  });
  sc_start(sc_time(1, SC_SEC));
  CHECK(ps.engine_resets() == 2);
  CHECK(da->error);
  REQUIRE(p.vidsch.bugchecked());
  CHECK(p.vidsch.bugcheck_code() == PacketScheduler::kBugCheckSchedulerFault);
  CHECK(p.vidsch.bugcheck_params() == std::vector<uint64_t>{PacketScheduler::kBadAbortedFenceId, 1, 0, 0});
  CHECK(mon.violations() >= 1);
}

namespace {
// The monitor alone, fed notifications by hand: each rule fires on the break it names.
struct MonitorBench {
  ParamSet ps = params();
  Vcd vcd;
  Platform p{ps, vcd, 1};
  TdrRulesMonitor mon{p};
  PacketSchedObserver& o = p.vidsch.packets().observer;
  SchedDevice app{1, false}, sys{0, true};
  SchedContext ctx{1, &app, 0, 1}, sys_ctx{0, &sys, 0, 1};
  std::vector<std::unique_ptr<DmaPacket>> pk;
  DmaPacket& packet(uint64_t seq, bool paging, uint64_t fence) {
    pk.push_back(std::make_unique<DmaPacket>());
    DmaPacket& d = *pk.back();
    d.seq = seq, d.paging = paging, d.fence_id = fence, d.ctx = paging ? &sys_ctx : &ctx;
    return d;
  }
  void reset(uint64_t aborted, uint64_t completed, uint64_t snap_c, uint64_t snap_s) {
    DxgkResetEngineArgs a;
    a.last_aborted_fence_id = aborted, a.last_completed_fence_id = completed;
    o.reset_returned(0, a, snap_c, snap_s);
    o.completed_moved(0, snap_c, completed, "engine reset returned LastCompletedFenceId");
  }
};
}  // namespace

TEST_CASE(
    "tdr_rules: the system device in error state (T7) and a completion after the snapshot (T3) are "
    "violations",
    "[T7][T3]") {
  MonitorBench m;
  m.o.device_error(m.app);
  CHECK(m.mon.violations() == 0);
  m.o.device_error(m.sys);
  CHECK(m.mon.violations() == 1);
  m.o.submitted(m.packet(1, false, 1), false);
  m.o.step({0, TdrStep::Snapshot, sc_core::SC_ZERO_TIME});
  m.o.completed_moved(0, 0, 1, "a packet completed");
  CHECK(m.mon.violations() == 2);
}

TEST_CASE(
    "tdr_rules: a LastAbortedFenceId within the snapshot's range that is neither in the hardware queue nor the last "
    "completed one is a T4 violation - one in the queue or the last completed one is not",
    "[T4]") {
  for (int which = 0; which < 3; ++which) {
    INFO("case " << which);
    MonitorBench m;
    m.o.submitted(m.packet(1, false, 1), false);
    m.o.submitted(m.packet(2, false, 2), false);
    m.o.submitted(m.packet(3, false, 3), false);
    m.o.retired(*m.pk[1]);  // packet 2 left the hardware queue (dropped): 2 is in [0, 3] but not queued
    const uint64_t aborted = which == 0 ? 2 : which == 1 ? 3 : 0;
    m.reset(aborted, 0, 0, 3);
    CHECK(m.mon.violations() == (which == 0 ? 1u : 0u));
  }
}

TEST_CASE(
    "tdr_rules: after an engine reset a render packet resubmitted before the late paging packet, or "
    "a paging packet with a new ID, or a render packet with its old ID, is a T6 violation",
    "[T6]") {
  for (int which = 0; which < 3; ++which) {
    INFO("case " << which);
    MonitorBench m;
    m.o.submitted(m.packet(1, false, 1), false);  // the hang
    m.o.submitted(m.packet(2, true, 2), false);   // late paging
    m.o.submitted(m.packet(3, false, 3), false);  // late render
    m.reset(1, 0, 0, 3);
    CHECK(m.mon.violations() == 0);
    if (which == 0) m.o.submitted(m.packet(3, false, 4), true);  // render first
    if (which == 1) m.o.submitted(m.packet(2, true, 4), true);   // paging with a new ID
    if (which == 2) {
      m.o.submitted(m.packet(2, true, 2), true);   // right
      m.o.submitted(m.packet(3, false, 3), true);  // render with its old ID
    }
    CHECK(m.mon.violations() >= 1);
  }
}

TEST_CASE(
    "tdr_rules: a completed ID that is not the reset's at recovery, or not the last submitted after an "
    "adapter reset, is a T5 violation",
    "[T5]") {
  {
    MonitorBench m;
    m.o.submitted(m.packet(1, false, 1), false);
    DxgkResetEngineArgs a;
    a.last_aborted_fence_id = 1, a.last_completed_fence_id = 0;
    m.o.reset_returned(0, a, 0, 1);
    m.o.completed_moved(0, 0, 1, "engine reset returned LastCompletedFenceId");  // not the reset's 0
    CHECK(m.mon.violations() >= 1);
  }
  {
    MonitorBench m;
    m.o.submitted(m.packet(1, false, 1), false);
    m.o.submitted(m.packet(2, false, 2), false);
    m.o.step({-1, TdrStep::AdapterReset, sc_core::SC_ZERO_TIME});
    m.o.completed_moved(0, 0, 1, "adapter reset: last submitted");  // 1, not 2
    CHECK(m.mon.violations() >= 1);
  }
  {
    MonitorBench m;
    m.o.submitted(m.packet(1, false, 1), false);
    m.o.step({-1, TdrStep::AdapterReset, sc_core::SC_ZERO_TIME});
    m.o.step({-1, TdrStep::AdapterRecovered, sc_core::SC_ZERO_TIME});  // never moved to 1
    CHECK(m.mon.violations() == 1);
  }
}

TEST_CASE(
    "T3 step 3: interrupts of the timed-out node are ignored from the snapshot on, also the one a DPC "
    "flush lets in before step 5 ends (two nodes time out back to back)",
    "[T3][T8]") {
  // Step 3 is one atomic step at device IRQL: the snapshot, and the node's interrupts ignored from then
  // on, not only after the DPC flush of step 5. The flush has work only when a DPC is queued at the
  // snapshot, which a lone timeout never gives (its TDR worker is dispatched by the core only when no
  // interrupt and no DPC is pending); a second node timing out while the worker handles the first does:
  // its snapshot comes the moment the first sequence ends, whatever the core is doing.
  //   vidsch.quantum_ms = 1, vidsch.tdr_delay_ms = 0.1; three nodes, one app device on each.
  //   A (node 0): an endless COMPUTE. Preemption requested a quantum after it became the head, timeout
  //     TdrDelay later (T_A); its sequence takes the worker's wake (2 us), the prepare (50 us and four
  //     ~1 us MMIO reads) and the reset (node.reset_ns = 174 us seen by 10 us polls): ~233 us.
  //   B (node 1): a 1,295 us COMPUTE submitted 50 us after A's: it times out 50 us after A, while A's
  //     sequence runs, so the worker takes it when A's ends (B's snapshot = A's "run" step, ~T_A + 233 us).
  //     It completes ~14 us after that snapshot: the hung packet finishing inside the sequence (T8).
  //     node.preempt_save_ns = 1 ms: B's answer to the preemption request (after the packet) is still
  //     being saved when B is reset, so its completion is its only interrupt in the sequence.
  //   C (node 2): a 400 us COMPUTE submitted 900 us after A's (under a quantum: never preempted). It
  //     completes ~26 us before B's snapshot; with cpu.isr_ns = 60 us its ISR, which queued VidSch's
  //     DPC, is still running at the snapshot, and B's MSI arrives during it. The core takes B's ISR
  //     (ISR before DPC) before the DPC, so B's interrupt comes between the snapshot and the end of the
  //     flush. It must be ignored: the scheduler's last completed fence ID of B stays at the snapshot's
  //     0 until step 9 sets it from the reset, and B's packet is aborted, its device in error (T8).
  // The flush ends exactly when that DPC does: C's ISR was notified at n_C and costs isr_ns more; then
  // B's ISR: interrupt entry (500 ns), its read of the fence word in system memory (rc + DRAM transfer
  // of 8 B + DRAM latency + rc = 150.104 ns), the notification (ignored), isr_ns; then the DPC, dpc_ns
  // (1 us): flush end = n_C + 2 isr_ns + 500 ns + 150.104 ns + 1 us.
  const sc_time isr = us_(60);
  Bench b(std::map<std::string, std::string>{{"gpu.nodes", "3"},
                                             {"vidsch.quantum_ms", "1"},
                                             {"vidsch.tdr_delay_ms", "0.1"},
                                             {"cpu.isr_ns", "60000"},
                                             {"node.preempt_save_ns", "1000000"}});
  auto& p = b.p;
  PacketScheduler& ps = p.vidsch.packets();
  TdrRulesMonitor mon(p);
  struct At {
    sc_time t = sc_max_time();
    bool dpc_pending = false;
    uint64_t kmd_completed = 0, sched_completed = 0;
  };
  std::map<std::pair<int, TdrStep>, At> at;  // each node's steps (the first of each)
  chain(ps.observer.step, [&](const TdrStepRecord& s) {
    at.emplace(std::make_pair(s.node, s.step),
               At{s.at, p.cpu.dpcs_pending(), p.kmd.driver_last_completed(1), ps.last_completed(1)});
  });
  struct Moved {
    uint64_t from, to;
    std::string why;
    sc_time t;
  };
  std::vector<Moved> moved_b;
  chain(ps.observer.completed_moved, [&](int n, uint64_t from, uint64_t to, const char* why) {
    if (n == 1) moved_b.push_back({from, to, why, sc_time_stamp()});
  });
  std::map<int, DmaPacket::State> final_state;  // per node: how its packet was retired
  chain(ps.observer.retired, [&](const DmaPacket& pk) { final_state[pk.ctx->device->id] = pk.state; });
  SchedDevice *da = nullptr, *db = nullptr, *dc = nullptr;
  PacketWriter wa, wb, wc;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    da = ps.CreateDevice(), db = ps.CreateDevice(), dc = ps.CreateDevice();
    SchedContext *ca = ps.CreateContext(da, 0), *cb = ps.CreateContext(db, 1), *cc = ps.CreateContext(dc, 2);
    wa.compute(kEndless);
    wb.compute(cycles_us(1295));
    wc.compute(cycles_us(400));
    ps.SubmitRender(ca, wa);
    wait(us_(50));
    ps.SubmitRender(cb, wb);
    wait(us_(850));
    ps.SubmitRender(cc, wc);
  });
  sc_start(sc_time(5, SC_MS));
  auto step = [&](int node, TdrStep s) {
    auto it = at.find({node, s});
    REQUIRE(it != at.end());
    return it->second;
  };
  // The setting: B timed out while A's sequence ran; B's snapshot is the instant A's ended.
  const At b_timeout = step(1, TdrStep::Timeout), a_run = step(0, TdrStep::Recovered),
           b_snap = step(1, TdrStep::Snapshot), b_flush = step(1, TdrStep::FlushDpc),
           b_prepare = step(1, TdrStep::Prepare), b_returned = step(1, TdrStep::ResetReturned);
  CHECK(b_timeout.t - step(1, TdrStep::Preempt).t == us_(100));  // TdrDelay, exactly
  REQUIRE(b_timeout.t > step(0, TdrStep::Snapshot).t);
  REQUIRE(b_timeout.t < a_run.t);
  CHECK(b_snap.t == a_run.t);
  // C's completion interrupt came before B's snapshot, and its DPC was still queued then: the flush had
  // work.
  const auto c_irq = std::find_if(b.irqs.begin(), b.irqs.end(), [](const DxgkInterruptData& d) { return d.node == 2; });
  REQUIRE(c_irq != b.irqs.end());
  const sc_time n_c = b.irq_at[size_t(c_irq - b.irqs.begin())];
  REQUIRE(n_c < b_snap.t);
  REQUIRE(n_c + isr > b_snap.t);
  CHECK(b_snap.dpc_pending);
  // The flush ends with that DPC, exactly after C's ISR, B's ISR and the DPC.
  CHECK(b_flush.t == n_c + isr + dflt::kIntEntry + dflt::cpu_read(8) + isr + dflt::kDpc);
  CHECK_FALSE(b_flush.dpc_pending);
  // B's completion: not in the KMD's view at the snapshot, in it when the flush ended (its ISR ran
  // meanwhile and read fence ID 1) ...
  CHECK(b_snap.kmd_completed == 0);
  CHECK(b_flush.kmd_completed == 1);
  // ... and ignored by the scheduler: its last completed ID of B stays the snapshot's through steps 5
  // and 6, and moves once, at step 9, to what the reset returned (T5).
  CHECK(b_snap.sched_completed == 0);
  CHECK(b_flush.sched_completed == 0);
  CHECK(b_prepare.sched_completed == 0);
  CHECK(ps.ignored_interrupts() == 1);
  CHECK(b.irqs.size() == 1);  // VidSch was notified of C's interrupt only
  REQUIRE(moved_b.size() == 1);
  CHECK(moved_b[0].from == 0);
  CHECK(moved_b[0].to == 1);
  CHECK(moved_b[0].why == "engine reset returned LastCompletedFenceId");
  CHECK(moved_b[0].t == b_returned.t);
  // What the reset reports: B's ring was empty to the driver, so LastAbortedFenceId = LastCompletedFenceId
  // = 1 (T8), and the scheduler still aborts B's packet and puts its device in error state. A's packet
  // is aborted too; C's completed.
  CHECK(ps.engine_resets() == 2);
  CHECK(ps.last_reset_completed_fence_id() == 1);
  CHECK(ps.last_aborted_fence_id() == 1);
  CHECK(final_state[db->id] == DmaPacket::Aborted);
  CHECK(final_state[da->id] == DmaPacket::Aborted);
  CHECK(final_state[dc->id] == DmaPacket::Completed);
  CHECK(db->error);
  CHECK(da->error);
  CHECK_FALSE(dc->error);
  CHECK(ps.packets_aborted() == 2);
  CHECK(mon.violations() == 0);
}

namespace {
// A thread kept running by MMIO reads (about 1 us each) until the first ISR has ended, then
// KeFlushQueuedDpcs: when it called the flush, and when the flush returned.
struct FlushTimes {
  sc_time called = SC_ZERO_TIME, returned = SC_ZERO_TIME;
};
void spawn_flusher(Platform& p, FlushTimes& t) {
  p.cpu.spawn_thread("flusher", [&p, &t] {
    while (p.cpu.last_interrupt().isr_end == SC_ZERO_TIME) (void)p.cpu.mmio_read32(p.kmd.bar0() + regs::kId);
    t.called = sc_time_stamp();
    p.cpu.flush_dpcs();
    t.returned = sc_time_stamp();
  });
}
}  // namespace

TEST_CASE(
    "KeFlushQueuedDpcs waits for a DPC taken from the queue whose cost is still running, not only for queued ones",
    "[T3]") {
  // T3 step 5 flushes the DPCs so that nothing the timed-out node reported is still being processed. A
  // DPC taken from the queue spends cpu.dpc_ns (10 us here) before its code runs: a flush that starts
  // then must return when the code has run (the DPC's end, exactly: the done event is a delta later),
  // not at once. A GPU INTERRUPT raises the DPC; the flusher sees the ISR end, so it calls the flush
  // within about 1 us of the DPC's start, 9 us before its end.
  Bench b(std::map<std::string, std::string>{{"cpu.dpc_ns", "10000"}});
  auto& p = b.p;
  FlushTimes t;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(20000).interrupt(3);  // 10 us of work, then an interrupt whose DPC sets event 3
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    spawn_flusher(p, t);
    p.cpu.wait_for(p.vidsch.interrupt_event(3));
  });
  sc_start();
  const auto& s = p.cpu.last_interrupt();
  REQUIRE(t.called > s.dpc_start);            // the DPC was out of the queue...
  REQUIRE(t.called < s.dpc_start + us_(10));  // ...and in its cost
  CHECK(t.returned == s.dpc_end);             // the flush returned when its code had run
  CHECK(s.dpc_end == s.dpc_start + us_(10));
}

TEST_CASE("KeFlushQueuedDpcs waits for a DPC whose code is still running (its device accesses take time)", "[T3]") {
  // cpu.dpc_ns = 0: the DPC's time is its code's. A native fence with a CPU waiter is signalled; the DPC
  // wakes the waiter and moves MV back up, DxgkDdiUpdateMonitoredValues: MMIO writes and the poll for
  // the CMP's acknowledgement, microseconds of device accesses. The flusher calls the flush once the ISR
  // has ended, inside that code; it returns when the code has run.
  Bench b(std::map<std::string, std::string>{{"cpu.dpc_ns", "0"}});
  auto& p = b.p;
  FlushTimes t;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(20000).signal(VidSch::va(*f, 1), 1);  // 10 us, then the signal past the waiter's MV
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    spawn_flusher(p, t);
    p.vidsch.WaitFromCpu(f, 1);
  });
  sc_start();
  const auto& s = p.cpu.last_interrupt();
  REQUIRE(t.called >= s.dpc_start);
  REQUIRE(t.called < s.dpc_end);   // called inside the DPC's code
  CHECK(t.returned == s.dpc_end);  // returned when it had run
}
