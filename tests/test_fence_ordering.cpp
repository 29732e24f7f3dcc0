// The native fence's ordering contract (Native GPU fence object, "Synchronization issues"), each safety mechanism on
// its own. One race throughout: an engine executes SIGNAL(f, 1) while a CPU thread starts waiting on
// (f, 1), so the OS lowers MV from UINT64_MAX to 0 through DxgkDdiUpdateMonitoredValues. The engine's
// conditional check reads the old shadow MV and raises nothing (asserted: the race is real). Three
// mechanisms can still report the signal:
//  * F7 step 3: the CMP writes the shadow MV, barriers against the engines' writes issued before, reads
//    CV and interrupts iff CV > MV (cmp.barrier, cmp.mv_update_check);
//  * F8: the KMD returns only after the CMP's acknowledgement (kmd.mv_update_wait), and the OS then
//    re-reads CV (vidsch.resample_cv).
// With the CV write pending for a long time (node.write_buffer_ns = 5000, so the window is wide and the
// placement needs no tuning) each mechanism is switched off in turn; every time below is derived from
// the parameters (tests/fence_bench.h) and an anchor observed in memory.
// The race is the steady state of an engine that has signalled before: node 0's TLB is warmed first by
// an earlier submission (a SIGNAL of a second fence of the process, whose CV, OS MV and shadow MV share
// f's pages, and the queue's read-pointer write-back as it drains), so the racing SIGNAL's CV write and
// check walk no page tables (with a cold TLB the two walks, 2 us, would let the new shadow MV land
// before the check and there would be no race). The CMP's TLB is warm for the shadow MV, CV and
// acknowledgement pages from the fences' creation; its first fence interrupt still translates the
// event ring's pages, one PTE read each: they share the acknowledgement word's 2 MiB region, whose PDE
// the CMP's page-walk cache holds (tb::dflt::cmp_first_fence_interrupt).
#include "fence_bench.h"
#include "hw_model/gpu/regs.h"

using namespace tb;
using namespace tb::dflt;
using namespace sc_core;

namespace {

struct Race {
  NativeFence* f = nullptr;
  sc_time t_s;                   // the SIGNAL executes (after its decode)
  sc_time t_call;                // the CPU thread calls WaitFromCpu
  sc_time t_v;                   // the CMP's new shadow MV (0) becomes visible
  sc_time t_cv;                  // the CV write (1) becomes visible
  sc_time t_ack;                 // the CMP's acknowledgement of that update becomes visible
  sc_time ddi_return;            // the first DxgkDdiUpdateMonitoredValues after t_call returns
  sc_time woken;                 // VidSch wakes the waiter
  uint64_t warm_suppressed = 0;  // the CMP's suppressed signals after the warm-up (its own)
  bool ok = false;
};

// Node 0 warms its TLB (see the header), then computes 10 us, then signals (f, 1), and with `rescue`
// computes that much longer and signals (f, 2). A CPU thread waits for the first SIGNAL of f to start,
// `delay` more, then waits on (f, 1) for `timeout` (500 us; sc_max_time(): an untimed wait).
void race(FenceBench& b, Race& r, const sc_time& delay = SC_ZERO_TIME, const sc_time& rescue = SC_ZERO_TIME,
          const sc_time& timeout = sc_time(500, SC_US)) {
  auto& p = b.p;
  auto woken = p.vidsch.observer.waiter_woken;  // the monitors observe it too
  p.vidsch.observer.waiter_woken = [&r, woken](const CpuWaiter& w) {
    if (r.woken == SC_ZERO_TIME) r.woken = sc_time_stamp();
    woken(w);
  };
  p.vidsch.observer.monitored_values_updated = [&r] {
    if (r.t_call != SC_ZERO_TIME && r.ddi_return == SC_ZERO_TIME) r.ddi_return = sc_time_stamp();
  };
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    r.f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    const uint64_t sh = p.gpu.cmp.shadow_mv_addr(p.vidsch.slot(*r.f)), cv = r.f->cv_addr;
    p.gpu.vram.watch(sh, 8, [&, sh](uint64_t, unsigned) {
      if (r.t_v == SC_ZERO_TIME && p.gpu.vram.peek64(sh) == 0) r.t_v = sc_time_stamp();
    });
    p.sysmem.watch(cv, 8, [&, cv](uint64_t, unsigned) {
      if (r.t_cv == SC_ZERO_TIME && p.sysmem.peek64(cv) == 1) r.t_cv = sc_time_stamp();
    });
    p.sysmem.watch(p.gpu.cmp.config().ack_addr, 8, [&](uint64_t, unsigned) {
      if (r.t_v != SC_ZERO_TIME && r.t_ack == SC_ZERO_TIME) r.t_ack = sc_time_stamp();
    });
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    // The warm-up: nobody waits on g (its MV is UINT64_MAX), so its SIGNAL is suppressed; 20 us is
    // ample for the queue to drain and its writes (5 us in the buffer at most) to land.
    NativeFence* g = p.vidsch.CreateNativeFence(1, Segment::System, false);
    PacketWriter warm;
    warm.signal(VidSch::va(*g, 1), 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, warm);
    p.cpu.sleep(sc_time(20, SC_US));
    r.warm_suppressed = p.gpu.cmp.suppressed();
    PacketWriter w;
    w.compute(20000).signal(VidSch::va(*r.f, 1), 1);
    if (rescue != SC_ZERO_TIME) w.compute(uint64_t(rescue.to_seconds() * 2e9)).signal(VidSch::va(*r.f, 1), 2);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  p.cpu.spawn_thread("waiter", [&, delay, timeout] {
    while (p.gpu.nodes[0]->signals() < 2) p.cpu.sleep(ns_(10));  // the warm-up's, then f's
    r.t_s = p.gpu.nodes[0]->last_signal_start();                 // the first SIGNAL's (a rescue comes much later)
    if (delay != SC_ZERO_TIME) p.cpu.sleep(delay);
    r.t_call = sc_time_stamp();
    r.ok = p.vidsch.WaitFromCpu(r.f, 1, timeout);
  });
  sc_start();
}

// The race happened as described: the engine checked the old shadow MV (before the CMP's new one was
// visible) and raised nothing itself.
void require_race(FenceBench& b, const Race& r) {
  REQUIRE(r.warm_suppressed == 1);  // the warm-up ran, and only it, before the race
  REQUIRE(r.t_v > r.t_s + kShadowCheck);
  REQUIRE(b.p.gpu.cmp.suppressed() >= r.warm_suppressed + 1);
}

const std::map<std::string, std::string> kPending = {{"node.write_buffer_ns", "5000"}};
std::map<std::string, std::string> pending_with(std::map<std::string, std::string> o) {
  o.insert(kPending.begin(), kPending.end());
  return o;
}

}  // namespace

TEST_CASE(
    "F7 step 3 alone: with the KMD not waiting, the barrier waits for the pending CV write and the CMP's interrupt "
    "wakes the waiter",
    "[F7][F3]") {
  FenceBench b(pending_with({{"kmd.mv_update_wait", "never"}}));
  Race r;
  race(b, r);
  require_race(b, r);
  // The OS's re-read ran at once and found nothing: the CV write was still in the write buffer.
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);
  // The CV write leaves the 5 us write buffer after the barrier began (at the shadow's visibility), so
  // the barrier waits for it and for the queue's read-pointer write-back, posted as the queue drained
  // right after the check (kShadowCheck later, so visible that much after CV); + 200 ns handshake;
  // then step 3 reads CV across the link and the firmware issues the interrupt 32 cycles later, after
  // a translation of each of the event ring's pages (the CMP's first fence interrupt: one PTE read
  // each, as the CMP's page-walk cache holds their region's PDE since its walk for the ack word).
  REQUIRE(r.t_v < r.t_s + ns_(5000));
  CHECK(r.t_cv == r.t_s + ns_(5000) + up_write(8));
  const sc_time barrier_done = r.t_cv + kShadowCheck + kCmpBarrier;
  CHECK(b.p.gpu.cmp.last_msi_issued() == barrier_done + sysmem_read(8) + cmp_first_fence_interrupt());
  CHECK(b.p.cpu.last_interrupt().msi_arrival == b.p.gpu.cmp.last_msi_issued() + first_msi_delivery());
  CHECK(r.ok);
  // The interrupt's DPC woke the waiter: after its DPC cost and its CV read.
  CHECK(r.woken == b.p.cpu.last_interrupt().dpc_start + ns_(1000) + cpu_read(8));
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);
  CHECK(b.p.vidsch.spurious_interrupts() == 0);
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE(
    "F8 re-read alone: with step 3 off, the acknowledgement comes after the barrier and the OS's re-read of CV wakes "
    "the waiter",
    "[F8]") {
  FenceBench b(pending_with({{"cmp.mv_update_check", "false"}}));
  Race r;
  race(b, r);
  require_race(b, r);
  // The barrier waits for the pending CV write (visible at t_cv) and the read-pointer write-back behind
  // it (kShadowCheck later), + 200 ns; with no step 3 the CMP posts its acknowledgement at once: one
  // 8-byte write up the idle link.
  CHECK(r.t_ack == r.t_cv + kShadowCheck + kCmpBarrier + up_write(8));
  // The KMD polls the acknowledgement with back-to-back CPU loads (each cpu_read(8), sampled at DRAM
  // 30 ns before it returns): the first load sampled at or after t_ack returns 30 ns after its sample.
  CHECK(r.ddi_return >= r.t_ack + kRc);
  CHECK(r.ddi_return < r.t_ack + kRc + cpu_read(8));
  // VidSch's re-read of CV right after the return finds the value and wakes the waiter.
  CHECK(r.woken == r.ddi_return + cpu_read(8));
  CHECK(r.ok);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 0);  // nothing but the re-read reported the signal
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE("With step 3 off and the KMD not waiting, the signal racing the MV update is lost", "[F7][F8]") {
  FenceBench b(pending_with({{"cmp.mv_update_check", "false"}, {"kmd.mv_update_wait", "never"}}));
  Race r;
  race(b, r);
  require_race(b, r);
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);  // the re-read came too early
  CHECK_FALSE(r.ok);                             // the waiter timed out
  CHECK(r.woken == SC_ZERO_TIME);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 0);
  CHECK(b.mon.lost_interrupts() == 1);
  CHECK(b.mon.overdue_woken_later() == 0);  // never woken
}

TEST_CASE("An untimed wait whose signal raised nothing is lost when the run goes idle under it", "[F7][F8][H4]") {
  // The same loss with an untimed wait: nothing times the waiter out and nothing will wake it, so the
  // run goes idle (sc_start returns) with it still waiting. The CPU never had an interrupt to handle,
  // so no MSI's arrival judged it during the run: only the end of the run can, and it is lost there.
  FenceBench b(pending_with({{"cmp.mv_update_check", "false"}, {"kmd.mv_update_wait", "never"}}));
  Race r;
  race(b, r, SC_ZERO_TIME, SC_ZERO_TIME, sc_max_time());
  require_race(b, r);
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);
  REQUIRE_FALSE(sc_pending_activity());  // idle: the model has nothing left to do
  CHECK(r.woken == SC_ZERO_TIME);
  CHECK(b.p.vidsch.waiter_count() == 1);  // still waiting
  CHECK(b.p.gpu.cmp.fence_interrupts() == 0);
  Results res;
  b.mon.finish(res);
  CHECK(res.monitors.at("lost_interrupt") == 1);
  CHECK(res.metrics["lost_at_idle"] == 1);
  CHECK(res.metrics["overdue_woken_later"] == 0);
  CHECK(res.metrics["late_cpu_busy"] == 0);
  CHECK(res.metrics["late_gpu_or_link"] == 0);
}

TEST_CASE("Lost, then rescued by a later signal: still lost, counted as woken later", "[F7][F8]") {
  // The same loss; 150 us later (past the monitor's 100 us bound) node 0 signals 2, which passes the
  // waiter's MV and interrupts: the waiter is woken, too late. The CPU sat idle past the bound with
  // the waiter still waiting, so the monitor calls it lost, not late.
  FenceBench b(pending_with({{"cmp.mv_update_check", "false"}, {"kmd.mv_update_wait", "never"}}));
  Race r;
  race(b, r, SC_ZERO_TIME, sc_time(150, SC_US));
  require_race(b, r);
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);
  CHECK(r.ok);
  CHECK(r.woken > r.t_cv + sc_time(100, SC_US));
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);  // the second signal's
  CHECK(b.mon.lost_interrupts() == 1);
  CHECK(b.mon.overdue_woken_later() == 1);
}

TEST_CASE("Lost, then rescued within the bound by a later signal: still lost, not on time", "[F7][F8]") {
  // The same loss; 20 us later (well inside the monitor's 100 us bound, so the CPU's quiet stretch
  // never judges the waiter overdue) node 0 signals 2, which passes the waiter's MV and interrupts.
  // The waiter is woken in time, but by an interrupt its own signal did not raise: lost, and rescued.
  FenceBench b(pending_with({{"cmp.mv_update_check", "false"}, {"kmd.mv_update_wait", "never"}}));
  Race r;
  race(b, r, SC_ZERO_TIME, sc_time(20, SC_US));
  require_race(b, r);
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);
  CHECK(r.ok);
  CHECK(r.woken < r.t_cv + sc_time(100, SC_US));  // woken within the bound
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);     // the second signal's
  CHECK(b.mon.lost_interrupts() == 1);
  CHECK(b.mon.overdue_woken_later() == 1);
}

TEST_CASE(
    "Without the F7 barrier, a CV write pending longer than the acknowledgement path is lost even though the KMD waits",
    "[F7][F8]") {
  FenceBench b(pending_with({{"cmp.barrier", "false"}}));
  Race r;
  race(b, r);
  require_race(b, r);
  // Step 3 read CV right after writing the shadow MV and the acknowledgement followed at once: the OS
  // re-read CV before the engine's write left its buffer.
  REQUIRE(r.t_ack < r.t_cv);
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);
  CHECK_FALSE(r.ok);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 0);
  CHECK(b.mon.lost_interrupts() == 1);
}

TEST_CASE(
    "Default settings: step 3 raises, the OS's re-read has already woken the waiter, and the DDI holds the ISR off at "
    "device IRQL",
    "[F7][F8]") {
  FenceBench b;  // node.write_buffer_ns = 100
  Race r;
  race(b, r);
  require_race(b, r);
  // The engine's writes (CV, then the queue's read pointer posted as the queue drained after the
  // check) are visible before the shadow is: the barrier costs only its 200 ns handshake.
  REQUIRE(r.t_cv == r.t_s + ns_(100) + up_write(8));
  REQUIRE(r.t_v > r.t_s + kShadowCheck + ns_(100) + up_write(8));
  // The interrupt is the CMP's first: a translation of each of the event ring's pages, one PTE read
  // apiece (their 2 MiB region's PDE is in the CMP's page-walk cache since its walk for the ack word).
  CHECK(b.p.gpu.cmp.last_msi_issued() == r.t_v + kCmpBarrier + sysmem_read(8) + cmp_first_fence_interrupt());
  // The acknowledgement follows the interrupt; the DDI returns after it and the re-read wakes the
  // waiter, so the interrupt wakes nobody (F8: a spurious interrupt is acceptable).
  CHECK(r.t_ack > b.p.gpu.cmp.last_msi_issued());
  CHECK(r.woken == r.ddi_return + cpu_read(8));
  CHECK(r.ok);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);
  CHECK(b.p.vidsch.spurious_interrupts() == 1);
  CHECK(b.mon.lost_interrupts() == 0);
  // Device IRQL: the MSI arrived while the DDI polled the acknowledgement; the ISR waited for it.
  const auto& s = b.p.cpu.last_interrupt();
  CHECK(s.msi_arrival < r.ddi_return);
  CHECK(s.isr_start >= r.ddi_return);
}

namespace {
// A waiter on 1 that times out after 20 us: MV goes down from UINT64_MAX to 0, then back up. When each
// DxgkDdiUpdateMonitoredValues returned, and when each of the CMP's acknowledgements became visible.
struct UpDown {
  std::vector<sc_time> returned, acked;
};
UpDown mv_down_then_up(FenceBench& b) {
  auto& p = b.p;
  UpDown u;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    p.sysmem.watch(p.gpu.cmp.config().ack_addr, 8, [&](uint64_t, unsigned) { u.acked.push_back(sc_time_stamp()); });
    p.vidsch.observer.monitored_values_updated = [&] { u.returned.push_back(sc_time_stamp()); };
    p.vidsch.WaitFromCpu(f, 1, sc_time(20, SC_US));
  });
  sc_start();
  REQUIRE(u.returned.size() == 2);  // lowered to 0, raised back to UINT64_MAX
  REQUIRE(u.acked.size() == 2);     // the two updates (creation's was before the watch)
  return u;
}
}  // namespace

TEST_CASE("F8 for every call: the DDI waits for the CMP's acknowledgement when an MV goes up, too", "[F8]") {
  // The document's guarantee holds after every return, so the DDI returns only once each update is
  // acknowledged: the poll load that returns it was sampled (30 ns before it returns) at or after the
  // acknowledgement's visibility, and the one before was sampled earlier.
  FenceBench b;
  const UpDown u = mv_down_then_up(b);
  for (size_t i = 0; i < 2; ++i) {
    INFO("update " << i);
    CHECK(u.returned[i] >= u.acked[i] + kRc);
    CHECK(u.returned[i] < u.acked[i] + kRc + cpu_read(8));
  }
}

TEST_CASE("kmd.mv_update_wait = lowered returns from a raise without the acknowledgement", "[F8]") {
  FenceBench b(std::map<std::string, std::string>{{"kmd.mv_update_wait", "lowered"}});
  const UpDown u = mv_down_then_up(b);
  CHECK(u.returned[0] >= u.acked[0] + kRc);  // lowered: waited
  CHECK(u.returned[1] < u.acked[1]);         // raised: returned before the CMP acknowledged
}

namespace {
// Queue B on node 1 waits on (f, 1) and then writes a timestamp; queue A on node 0 signals (f, 1).
// Both compute 10 us first; B is submitted first, so its WAIT reads CV a little before A's SIGNAL
// executes (the placement is checked below, not assumed). Both engines have run before (steady state):
// an earlier submission on each queue warms the TLBs, B's with a WAIT already satisfied and A's with a
// SIGNAL nobody waits for, both on a second fence g of the process (its CV shares f's page, its shadow
// MV the shadow table's page), and each queue's read-pointer write-back as it drains. With cold TLBs
// A's two walks (CV write, shadow check) against B's one (CV read) would put B's registration before
// A's notification: the race below would not happen.
struct GpuWaitRace {
  sc_time t_a, t_w, t_cv, b_ran;
};
void gpu_wait_race(FenceBench& b, GpuWaitRace& g) {
  auto& p = b.p;
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    p.sysmem.watch(f->cv_addr, 8, [&, f](uint64_t, unsigned) {
      if (g.t_cv == SC_ZERO_TIME && p.sysmem.peek64(f->cv_addr) == 1) g.t_cv = sc_time_stamp();
    });
    KmdHwQueue* qa = p.kmd.DxgkDdiCreateHwQueue(0);
    KmdHwQueue* qb = p.kmd.DxgkDdiCreateHwQueue(1);
    ts = p.kmd.scratch();
    NativeFence* warm_fence = p.vidsch.CreateNativeFence(1, Segment::System, false);
    PacketWriter warm_b, warm_a;
    warm_b.wait(VidSch::va(*warm_fence, 1), 0);    // CV 0 >= 0: satisfied at once
    warm_a.signal(VidSch::va(*warm_fence, 1), 1);  // MV UINT64_MAX: suppressed
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qb, warm_b);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, warm_a);
    p.cpu.sleep(sc_time(20, SC_US));  // both drained, their writes landed (5 us in the buffer at most)
    PacketWriter a, w;
    w.compute(20000).wait(VidSch::va(*f, 1), 1).timestamp(ts);
    a.compute(20000).signal(VidSch::va(*f, 1), 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qb, w);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, a);
  });
  sc_start();
  g.t_a = p.gpu.nodes[0]->last_signal_start();
  g.t_w = p.gpu.nodes[1]->last_wait_read();
  g.b_ran = sc_time(double(p.sysmem.peek64(ts)), SC_PS);
}
// The WAIT's CV read: request up the link, root complex, DRAM; sampled there.
sc_time wait_read_sampled(const sc_time& t_w) { return t_w + ser(24, kRate) + kHop + kRc + dram_xfer(8) + kDram; }
}  // namespace

TEST_CASE(
    "GPU wait registration re-reads CV: a signal landing between a WAIT's CV read and the CMP's registration still "
    "unblocks the queue",
    "[F5]") {
  FenceBench b;
  GpuWaitRace g;
  gpu_wait_race(b, g);
  // The placement: B's read sampled CV before A's write was visible, and the CMP took B's registration
  // only after A's signal notification (which then found no GPU waiter to release).
  REQUIRE(wait_read_sampled(g.t_w) < g.t_cv);
  REQUIRE(g.t_w + sysmem_read(8) > g.t_a + kShadowCheck);
  // The CMP takes the registration as B's read returns, spends 20 cycles, re-reads CV (now visible; the
  // CMP's TLB holds the CV page since the fences' creation) and unblocks B, which decodes its TIMESTAMP.
  REQUIRE(g.t_w + sysmem_read(8) + kCmpDecision + ser(24, kRate) + kHop + kRc > g.t_cv);
  CHECK(g.b_ran == g.t_w + sysmem_read(8) + kCmpDecision + sysmem_read(8) + kDecode);
  CHECK(b.p.gpu.cmp.gpu_unblocks() == 1);
  CHECK(b.p.cpu.interrupts() == 0);
}

TEST_CASE(
    "GPU wait registration: a signal whose CV write is still in flight is released by its reported value after a "
    "barrier",
    "[F5][F7]") {
  FenceBench b(std::map<std::string, std::string>{{"node.write_buffer_ns", "5000"}});
  GpuWaitRace g;
  gpu_wait_race(b, g);
  // The CMP's re-read, too, came before A's CV was visible; A's notification came before it.
  const sc_time reread_sampled = wait_read_sampled(g.t_w + sysmem_read(8) + kCmpDecision);
  REQUIRE(reread_sampled < g.t_cv);
  REQUIRE(g.t_w + sysmem_read(8) > g.t_a + kShadowCheck);
  // The CMP knows A signalled 1, so it barriers: A's CV write and its queue's read-pointer write-back
  // (posted kShadowCheck after it) become visible, + 200 ns; then B resumes and decodes.
  CHECK(g.t_cv == g.t_a + ns_(5000) + up_write(8));
  CHECK(g.b_ran == g.t_cv + kShadowCheck + kCmpBarrier + kDecode);
  CHECK(b.p.gpu.cmp.gpu_unblocks() == 1);
}

TEST_CASE("Reused slot: a fence created in it starts with no signal history, a WAIT on it stays blocked", "[F5][F11]") {
  // Fence A is signalled to 5 and destroyed; fence B takes A's CMP slot. A queue waiting on (B, 1) must
  // not be released by A's old signal (B's CV is 0 and nobody signals B).
  FenceBench b;
  auto& p = b.p;
  uint64_t ts = 0;
  uint32_t slot_a = 0, slot_b = 1;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* fa = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter sig;
    sig.signal(VidSch::va(*fa, 1), 5);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, sig);
    p.vidsch.WaitFromCpu(fa, 5);
    slot_a = p.vidsch.slot(*fa);
    p.vidsch.DestroySynchronizationObject(1, fa);
    NativeFence* fb = p.vidsch.CreateNativeFence(1, Segment::System, false);
    slot_b = p.vidsch.slot(*fb);
    ts = p.kmd.scratch();
    PacketWriter w;
    w.wait(VidSch::va(*fb, 1), 1).timestamp(ts);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  sc_start();
  REQUIRE(slot_b == slot_a);
  CHECK(p.gpu.cmp.gpu_unblocks() == 0);
  CHECK(p.sysmem.peek64(ts) == 0);  // the TIMESTAMP after the WAIT never ran
}

TEST_CASE("The F7 barrier waits only for the writes issued before it began, not for a stream posted after", "[F7]") {
  // Node 1 streams 3,000 WRITE64s to VRAM (bursts of 4 ns decodes as its ring fetches arrive) while a
  // CPU thread's wait makes the CMP update the shadow MV. Each write stays 3 us in the write buffer, so
  // the buffer never drains while the stream runs. The barrier begins when the shadow is visible (t_v);
  // the last write posted by then leaves the buffer 3 us later at most and lands in VRAM 250 ns (+ 8 B)
  // after; + 200 ns handshake; then step 3's CV read and the acknowledgement up the idle link. A
  // barrier that waited for the buffer to drain would wait for the whole stream.
  FenceBench b(std::map<std::string, std::string>{{"node.write_buffer_ns", "3000"}});
  auto& p = b.p;
  sc_time t_v, t_ack, stream_end;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    const uint64_t sh = p.gpu.cmp.shadow_mv_addr(p.vidsch.slot(*f));
    p.gpu.vram.watch(sh, 8, [&, sh](uint64_t, unsigned) {
      if (t_v == SC_ZERO_TIME && p.gpu.vram.peek64(sh) == 0) t_v = sc_time_stamp();
    });
    p.sysmem.watch(p.gpu.cmp.config().ack_addr, 8, [&](uint64_t, unsigned) {
      if (t_v != SC_ZERO_TIME && t_ack == SC_ZERO_TIME) t_ack = sc_time_stamp();
    });
    const uint64_t buf = p.vidmm.allocate(Segment::Local, 3000 * 8);
    p.gpu.vram.watch(buf + 2999 * 8, 8, [&](uint64_t, unsigned) { stream_end = sc_time_stamp(); });
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1);
    PacketWriter w;
    for (uint64_t i = 0; i < 3000; ++i) w.write64(buf + 8 * i, i + 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.sleep(sc_time(3, SC_US));  // the stream is running
    p.vidsch.WaitFromCpu(f, 1, sc_time(20, SC_US));
  });
  sc_start();
  REQUIRE(t_v != SC_ZERO_TIME);
  REQUIRE(stream_end > t_ack);  // the stream was still being written when the update completed
  const sc_time after = kCmpBarrier + sysmem_read(8) + up_write(8);
  CHECK(t_ack >= t_v + after);
  CHECK(t_ack <= t_v + ns_(3000) + kShadowCheck + after);
}

TEST_CASE("The F7 barrier also waits for the DMA writes a copy engine had issued when it began", "[F7]") {
  // Node 1 copies 1 MiB device-to-host (16 chunks in flight, the link's up direction full) while a CPU
  // wait makes the CMP update the shadow MV. When the barrier begins (t_v) some chunk writes are on the
  // link, visible later; the barrier ends no earlier than the last of them + 200 ns, and then step 3's
  // CV read and the acknowledgement take at least their idle-link times.
  FenceBench b;
  auto& p = b.p;
  sc_time t_v, t_ack, dma_at_tv;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    const uint64_t sh = p.gpu.cmp.shadow_mv_addr(p.vidsch.slot(*f));
    p.gpu.vram.watch(sh, 8, [&, sh](uint64_t, unsigned) {
      if (t_v == SC_ZERO_TIME && p.gpu.vram.peek64(sh) == 0) {
        t_v = sc_time_stamp();
        dma_at_tv = p.gpu.nodes[1]->dma_visible();
      }
    });
    p.sysmem.watch(p.gpu.cmp.config().ack_addr, 8, [&](uint64_t, unsigned) {
      if (t_v != SC_ZERO_TIME && t_ack == SC_ZERO_TIME) t_ack = sc_time_stamp();
    });
    const uint64_t src = p.vidmm.allocate(Segment::Local, 1 << 20), dst = p.vidmm.allocate(Segment::System, 1 << 20);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1);
    PacketWriter w;
    w.copy(src, dst, 1 << 20);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.sleep(sc_time(10, SC_US));  // the copy is streaming
    p.vidsch.WaitFromCpu(f, 1, sc_time(20, SC_US));
  });
  sc_start();
  REQUIRE(t_v != SC_ZERO_TIME);
  REQUIRE(dma_at_tv > t_v);  // chunk writes were still in flight
  CHECK(t_ack >= dma_at_tv + kCmpBarrier + sysmem_read(8) + up_write(8));
}

TEST_CASE("A posted write held by a full link stays in order behind the write buffer's earlier writes", "[H2][F7]") {
  // Node 1 copies 1 MiB device-to-host, keeping the link's posted egress full; node 0 then writes a
  // TIMESTAMP to VRAM (never held) and two WRITE64s to system memory, which wait for room, in their
  // buffer's order. The copy engine has copied the same buffers once before (steady state: its TLB
  // holds their pages, 16 + 16 entries: both 1 MiB buffers are 64 KiB aligned and mapped with 64 KiB
  // pages), so its stream has no gaps for page walks.
  FenceBench b;
  auto& p = b.p;
  uint64_t a = 0, c = 0;  // two words of system memory, mapped through VidMm
  sc_time t_a, t_c;
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    a = p.vidmm.allocate(Segment::System, 128);
    c = a + 64;
    p.sysmem.watch(a, 8, [&](uint64_t, unsigned) { t_a = sc_time_stamp(); });
    p.sysmem.watch(c, 8, [&](uint64_t, unsigned) { t_c = sc_time_stamp(); });
    const uint64_t src = p.vidmm.allocate(Segment::Local, 1 << 20), dst = p.vidmm.allocate(Segment::System, 1 << 20);
    KmdHwQueue* qc = p.kmd.DxgkDdiCreateHwQueue(1);
    KmdHwQueue* qw = p.kmd.DxgkDdiCreateHwQueue(0);
    ts = p.vidmm.allocate(Segment::Local, 8);
    PacketWriter warm, copy, w;
    warm.copy(src, dst, 1 << 20).interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qc, warm);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    copy.copy(src, dst, 1 << 20);
    w.timestamp(ts).write64(a, 1).write64(c, 2);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qc, copy);
    p.cpu.sleep(sc_time(10, SC_US));
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qw, w);
  });
  sc_start();
  const sc_time t0(double(p.gpu.vram.peek64(ts)), SC_PS);  // the TIMESTAMP ran; the WRITE64s after it
  // Held: far later than the translations (node 0's first writes to ts's page and to a's: a cold TLB),
  // the write buffer and an idle link would make it. ts's page is in VRAM, a 2 MiB region node 0 never
  // walked: a full walk; a's (allocated right after the KMD's own, +0x7000) is in the KMD's system-memory
  // region, whose PDE node 0's page-walk cache holds since the walk for its ring's first fetch: a PTE
  // read.
  REQUIRE(t_a > t0 + walk() + kDecode + pte_read() + kWb + up_write(8) + ns_(1000));
  CHECK(t_a < t_c);
}

namespace {
// One SIGNAL(f, 1), then a TIMESTAMP, with the OS's MV location poked to 0 ("interrupt on anything")
// behind the OS's back and no CPU waiter. `before` runs first (after the fence exists). Returns when
// the TIMESTAMP packet ran.
sc_time signal_against_poked_mv(FenceBench& b, const std::function<void(NativeFence*)>& before = {}) {
  auto& p = b.p;
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    if (before) before(f);
    const uint64_t zero = 0;
    p.sysmem.poke(f->mv_addr, &zero, 8);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    ts = p.kmd.scratch();
    PacketWriter w;
    w.signal(VidSch::va(*f, 1), 1).timestamp(ts);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  sc_start();
  return sc_time(double(p.sysmem.peek64(ts)), SC_PS);
}
}  // namespace

TEST_CASE("cmp.mv_source = shadow: the engine checks the CMP's shadow MV and ignores the OS's MV location", "[F3]") {
  FenceBench b;
  const sc_time ran = signal_against_poked_mv(b);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 0);  // the shadow holds UINT64_MAX
  CHECK(b.p.gpu.cmp.suppressed() == 1);
  // The SIGNAL's check is one VRAM read; the next packet decodes right after it. Node 0's TLB is cold:
  // the CV write (its first touch of the CV page) and the check (of the shadow MV's page) each wait for
  // a walk first.
  CHECK(ran == b.p.gpu.nodes[0]->last_signal_start() + walk() + walk() + kShadowCheck + kDecode);
}

TEST_CASE(
    "cmp.mv_source = memory: the engine reads the OS's MV after its CV write has left, and the CMP keeps no shadow",
    "[F3][F2]") {
  FenceBench b(std::map<std::string, std::string>{{"cmp.mv_source", "memory"}});
  // An MV update first (a waiter that times out): in this form the CMP has no work for it.
  const sc_time ran =
      signal_against_poked_mv(b, [&](NativeFence* f) { b.p.vidsch.WaitFromCpu(f, 5, sc_time(5, SC_US)); });
  CHECK(b.p.gpu.cmp.config().shadow_base == 0);
  CHECK(b.p.gpu.cmp.mv_updates() == 0);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);  // 1 > MV 0
  // Node 0's TLB is cold: the CV write waits for a walk (its first touch of the CV page; a full one: the
  // CV's system-process alias, F10, is in a 2 MiB region the node never walked), then leaves the 100 ns
  // write buffer; the MV read waits for a translation of its own (the OS's MV page, aliased on the next
  // page of the same region: the node's page-walk cache holds the region's PDE since the CV's walk, so
  // one PTE read), by when the CV write's 32-byte TLP has left the link, so the read's request goes up
  // an idle link; the next packet decodes when the read returns.
  CHECK(ran == b.p.gpu.nodes[0]->last_signal_start() + walk() + ns_(100) + pte_read() + sysmem_read(8) + kDecode);
}

TEST_CASE(
    "cmp.mv_source = memory: a signal racing an MV update reads the new MV because the engine orders its CV write "
    "first",
    "[F7][F8]") {
  // The CV write waits 5 us in the write buffer; the engine reads MV only after it has left, by when
  // the OS has stored the new MV (the thread starts waiting 1 us after the SIGNAL). The OS's re-read
  // came too early, so the engine's interrupt is what wakes the waiter.
  FenceBench b(pending_with({{"cmp.mv_source", "memory"}}));
  Race r;
  sc_time t_mv;
  b.p.cpu.spawn_thread("mv_watch", [&] {
    while (!r.f) b.p.cpu.sleep(ns_(10));
    b.p.sysmem.watch(r.f->mv_addr, 8, [&](uint64_t, unsigned) {
      if (t_mv == SC_ZERO_TIME && b.p.sysmem.peek64(r.f->mv_addr) == 0) t_mv = sc_time_stamp();
    });
  });
  race(b, r, sc_time(1, SC_US));
  const sc_time mv_read = r.t_s + ns_(5000) + ser(32, kRate);  // behind the CV write's TLP
  REQUIRE(t_mv != SC_ZERO_TIME);
  REQUIRE(t_mv < wait_read_sampled(mv_read));
  REQUIRE(r.ddi_return + cpu_read(8) < r.t_cv);
  CHECK(r.t_cv == r.t_s + ns_(5000) + up_write(8));
  // The engine's verdict reaches the CMP as the read returns; the CMP (20 cycles) barriers against the
  // CV write and the queue's read-pointer write-back posted right then (5 us in the buffer), + 200 ns,
  // and issues the interrupt 32 cycles later, after a translation of each of the event ring's pages
  // (the CMP's first fence interrupt). With no shadow the CMP never touched the KMD's system-memory
  // region before (no MV update, so no acknowledgement): the event entry's page is a full walk, the
  // write index's then one PTE read (tb::dflt::cmp_first_fence_interrupt_no_shadow).
  const sc_time rptr_visible = mv_read + sysmem_read(8) + ns_(5000) + up_write(8);
  CHECK(b.p.gpu.cmp.last_msi_issued() == rptr_visible + kCmpBarrier + cmp_first_fence_interrupt_no_shadow());
  CHECK(r.ok);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE("A copy of a partly drawn surface moves exactly its bytes over a destination holding other data", "[H2]") {
  // The copy engine's DMA tags skip moving zeros they know they hold (ZeroHint, host speed only); the
  // destination must still end up equal to the source, chunk by chunk, whatever each tag held before:
  // drawn chunks (non-zero), undrawn ones (never written: zeros), and a destination full of 0xEE.
  FenceBench b;
  auto& p = b.p;
  const uint64_t bytes = 64 * 4096;  // 64 chunks of node.dma_chunk_bytes = 4 KiB, over 16 tags
  uint64_t src = 0, dst = 0;
  std::vector<unsigned char> drawn(4096);
  for (unsigned i = 0; i < drawn.size(); ++i) drawn[i] = static_cast<unsigned char>(i * 7 + 1);
  std::vector<unsigned char> junk(bytes, 0xEE);
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    src = p.vidmm.allocate(Segment::Local, bytes);
    dst = p.vidmm.allocate(Segment::System, bytes);
    for (unsigned c = 0; c < 64; c += 3) p.gpu.vram.poke(src + c * 4096, drawn.data(), 4096);  // every 3rd drawn
    p.sysmem.poke(dst, junk.data(), unsigned(bytes));
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1);
    for (int pass = 0; pass < 2; ++pass) {  // twice: the tags start the second pass holding either kind
      PacketWriter w;
      w.copy(src, dst, bytes).interrupt(1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
      p.cpu.wait_for(p.vidsch.interrupt_event(1));
      if (pass == 0) p.sysmem.poke(dst, junk.data(), unsigned(bytes));
    }
  });
  sc_start();
  std::vector<unsigned char> a(bytes), c(bytes);
  p.gpu.vram.peek(src, a.data(), unsigned(bytes));
  p.sysmem.peek(dst, c.data(), unsigned(bytes));
  CHECK(a[0] == 1);
  CHECK(a[4096] == 0);
  CHECK(a == c);
}
