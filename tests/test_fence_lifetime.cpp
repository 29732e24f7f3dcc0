// Native fence lifetime and what the OS is told: global handles never reused while an event entry may
// name them (F11), EvaluateLegacyMonitoredFences only when legacy waiters cannot be reported otherwise
// (F12), and NotificationOnly for a CurrentValue another agent wrote (F13).
#include <algorithm>

#include "fence_bench.h"
#include "kernel_stub/dxgkrnl/adapter_start.h"

using namespace tb;
using namespace sc_core;

namespace {

// F11: fence A's interrupt entry is in the event ring when A is destroyed and fence B is created in
// A's (freed) slot. The ISR runs late (cpu.interrupt_entry_ns = 20 us: interrupt latency behind
// higher-IRQL work), so B exists in the KMD and the OS before the ISR reads A's entry. B has a CPU
// waiter, and an independent agent writes B's CV (no GPU signal, so no interrupt of B's own) after
// the waiter's F8 re-read: if A's entry named B, the DPC's scan of B would wake that waiter.
const std::map<std::string, std::string> kLateIsr = {{"cpu.interrupt_entry_ns", "20000"}};
struct StaleEntry {
  uint32_t handle_a = 0, handle_b = 0, slot_a = 0, slot_b = 0;
  bool b_woken = false;
  sc_time b_created, b_cv_written;
  uint64_t b_mv_at_cv_write = 0;
  size_t b_waiters_at_cv_write = 0;
};
StaleEntry stale_entry_after_slot_reuse(FenceBench& b) {
  auto& p = b.p;
  StaleEntry r;
  NativeFence* fb = nullptr;
  Probe agent("agent");  // another device writing B's shared CV
  agent.sock.bind(p.rc.tsock);
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    // A reuses the slot of a fence already gone, so A's handle is not its slot + 1: the CMP's entry
    // must carry the handle the KMD programmed, not one derived from the slot.
    p.vidsch.DestroySynchronizationObject(1, p.vidsch.CreateNativeFence(1, Segment::System, false));
    NativeFence* fa = p.vidsch.CreateNativeFence(1, Segment::System, false);
    r.handle_a = fa->handle;
    r.slot_a = p.vidsch.slot(*fa);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(40000).signal(VidSch::va(*fa, 1), 1);  // 20 us, then A's signal interrupts (A has a waiter)
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.spawn_thread("destroyer", [&, fa] {
      while (p.gpu.cmp.fence_interrupts() == 0) p.cpu.sleep(sc_time(50, SC_NS));  // A's entry written
      p.vidsch.DestroySynchronizationObject(1, fa);
      fb = p.vidsch.CreateNativeFence(1, Segment::System, false);
      r.b_created = sc_time_stamp();
      r.handle_b = fb->handle;
      r.slot_b = p.vidsch.slot(*fb);
      r.b_woken = p.vidsch.WaitFromCpu(fb, 1, us(60));
    });
    p.vidsch.WaitFromCpu(fa, 1);  // cancelled by the destroy
  });
  agent.body = [&] {
    while (p.gpu.cmp.fence_interrupts() == 0) wait(sc_time(50, SC_NS));
    wait(us(10));  // B exists and its waiter is registered (checked below), the ISR has not run
    if (!fb) return;
    r.b_cv_written = sc_time_stamp();
    r.b_mv_at_cv_write = b.os_mv(fb);
    r.b_waiters_at_cv_write = fb->waiters.size();
    agent.bus.post64(fb->cv_addr, 1);
  };
  sc_start();
  return r;
}
}  // namespace

TEST_CASE(
    "Slot reuse: a stale event entry names the destroyed fence, not the new one in its slot, and the OS bug checks "
    "with its handle",
    "[F11][F12]") {
  auto o = kLateIsr;
  o["kmd.validate_signaled_handles"] = "false";  // the KMD forwards what the CMP wrote
  FenceBench b(o);
  const StaleEntry r = stale_entry_after_slot_reuse(b);
  REQUIRE(r.slot_b == r.slot_a);                         // B reuses A's slot...
  CHECK(r.handle_b != r.handle_a);                       // ...not A's handle (F11)
  REQUIRE(r.b_created < b.first_native_notification());  // B existed when the ISR handled A's entry
  REQUIRE(b.p.vidsch.bugchecked());
  CHECK(b.p.vidsch.bugcheck_code() == 0x113);
  CHECK(b.p.vidsch.bugcheck_params().at(0) == 0x3A);
  CHECK(b.p.vidsch.bugcheck_params().at(1) == r.handle_a);  // P2: the destroyed fence's handle
}

TEST_CASE("Slot reuse: a stale event entry of a destroyed fence does not wake the waiter of the new fence in its slot",
          "[F11][F12]") {
  FenceBench b(kLateIsr);  // kmd.validate_signaled_handles = true: the KMD drops A's handle
  const StaleEntry r = stale_entry_after_slot_reuse(b);
  REQUIRE(r.slot_b == r.slot_a);
  CHECK(r.handle_b != r.handle_a);
  REQUIRE(r.b_created < b.first_native_notification());
  // B's waiter was registered and MV lowered to 0 when the agent wrote CV, so only a later scan of B
  // could wake it (an F8 re-read after the write would wake it too, and fail this test, not pass it).
  REQUIRE(r.b_waiters_at_cv_write == 1);
  REQUIRE(r.b_mv_at_cv_write == 0);
  REQUIRE(r.b_cv_written < b.first_native_notification());
  CHECK_FALSE(b.p.vidsch.bugchecked());
  CHECK(b.p.gpu.cmp.fence_names(r.slot_b).handle == r.handle_b);  // the slot's entries now name B
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);                     // A's only
  CHECK_FALSE(r.b_woken);                                         // A's entry did not name B: B's waiter timed out
  for (const auto& d : b.notified)
    for (uint32_t h : d.signaled) CHECK(h != r.handle_b);
}

namespace {
bool null_array(const DxgkInterruptData& d) {
  return d.type == DxgkInterruptData::NativeFenceSignaled && d.signaled_array_null;
}
bool null_array_with_legacy(const DxgkInterruptData& d) { return null_array(d) && d.evaluate_legacy_monitored_fences; }
bool legacy_signaled(const DxgkInterruptData& d) { return d.type == DxgkInterruptData::MonitoredFenceSignaled; }

// F12: a native fence N and a legacy (monitored) fence L, each with a CPU waiter on 1. After 50 us the GPU
// either signals L (its WRITE64, BARRIER and monitored fence signaled interrupt) or only writes L's CV with
// WRITE64 (no interrupt), then signals N. With cmp.report_fence_set = false, N's interrupt names no fence:
// the KMD reports a NULL array.
struct NullArrayRun {
  bool native_woken = false, legacy_woken = false;
  sc_time legacy_cv_visible = sc_max_time();
};
NullArrayRun null_array_beside_legacy(FenceBench& b, bool signal_legacy) {
  auto& p = b.p;
  NullArrayRun r;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* n = p.vidsch.CreateNativeFence(1, Segment::System, false);
    NativeFence* l = p.vidsch.CreateNativeFence(1, Segment::System, false, /*legacy*/ true);
    p.sysmem.watch(l->cv_addr, 8, [&r](uint64_t, unsigned) { r.legacy_cv_visible = sc_time_stamp(); });
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(100000);  // 50 us: both waiters are registered first
    if (signal_legacy)
      VidSch::gpu_signal(w, *l, 1, 1);
    else
      w.write64(l->cv_addr, 1);
    w.signal(VidSch::va(*n, 1), 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.spawn_thread("legacy waiter", [&, l] { r.legacy_woken = p.vidsch.WaitFromCpu(l, 1, us(100)); });
    r.native_woken = p.vidsch.WaitFromCpu(n, 1, us(100));
  });
  sc_start();
  return r;
}

// F12: a 4-entry event ring and eight native fences signalled back to back after 50 us, each with a
// CPU waiter: the CMP drops the entries that do not fit and the KMD reports a NULL array. With a legacy
// (monitored) fence L, L also has a CPU waiter and the GPU writes L's CV = 1 among the native signals:
// `Legacy::Signal` with its monitored fence signaled interrupt, whose event the full ring drops too;
// `Legacy::WriteOnly` with a bare WRITE64 (no interrupt of L's own).
enum class Legacy { None, Signal, WriteOnly };
struct OverflowRun {
  int native_woken = 0;
  bool legacy_woken = false;
  bool held_ran = false;  // with `held`: node 1's work held on L = 1 ran
};
// `held`: L has no CPU waiter but node 1's work held on L = 1 (SubmitAfterWait) instead.
OverflowRun overflow(FenceBench& b, Legacy legacy, bool held = false) {
  auto& p = b.p;
  OverflowRun r;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    std::vector<NativeFence*> f;
    for (int i = 0; i < 8; ++i) f.push_back(p.vidsch.CreateNativeFence(1, Segment::System, false));
    NativeFence* l = legacy != Legacy::None ? p.vidsch.CreateNativeFence(1, Segment::System, false, true) : nullptr;
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(100000);
    for (size_t i = 0; i < f.size(); ++i) {
      w.signal(VidSch::va(*f[i], 1), 1);
      if (i == 5 && legacy == Legacy::Signal) VidSch::gpu_signal(w, *l, 1, 1);  // the ring is full by then
      if (i == 5 && legacy == Legacy::WriteOnly) w.write64(l->cv_addr, 1);
    }
    if (held) {
      PacketWriter after;
      after.timestamp(p.kmd.scratch());
      p.vidsch.SubmitAfterWait(p.kmd.DxgkDdiCreateHwQueue(1), l, 1, after);
    }
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    if (l && !held) p.cpu.spawn_thread("legacy", [&, l] { r.legacy_woken = p.vidsch.WaitFromCpu(l, 1, us(100)); });
    for (size_t i = 1; i < f.size(); ++i)
      p.cpu.spawn_thread("w" + std::to_string(i),
                         [&, x = f[i]] { r.native_woken += p.vidsch.WaitFromCpu(x, 1, us(100)); });
    r.native_woken += p.vidsch.WaitFromCpu(f[0], 1, us(100));
  });
  sc_start();
  r.held_ran = held && p.sysmem.peek64(p.kmd.scratch()) != 0;
  return r;
}
const std::map<std::string, std::string> kNullArray = {{"cmp.report_fence_set", "false"}};
const std::map<std::string, std::string> kSmallRing = {{"kmd.event_ring_entries", "4"}};
}  // namespace

TEST_CASE(
    "NULL array because the CMP names no fence: no EvaluateLegacyMonitoredFences, the legacy waiter is woken by its "
    "own MonitoredFenceSignaled",
    "[F12][F5]") {
  FenceBench b(kNullArray);
  const NullArrayRun r = null_array_beside_legacy(b, /*signal_legacy*/ true);
  CHECK(r.native_woken);
  CHECK(r.legacy_woken);
  CHECK(b.count_notified(null_array) >= 1);              // N's interrupt: NULL
  CHECK(b.count_notified(null_array_with_legacy) == 0);  // nothing was dropped: legacy entries go as such
  CHECK(b.count_notified(legacy_signaled) >= 1);         // L's entry, typed legacy by the CMP
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE(
    "A NULL array without EvaluateLegacyMonitoredFences scans native waiters only, not a legacy fence whose CV changed",
    "[F12]") {
  FenceBench b(kNullArray);
  const NullArrayRun r = null_array_beside_legacy(b, /*signal_legacy*/ false);
  REQUIRE(b.count_notified(null_array) >= 1);
  REQUIRE(r.legacy_cv_visible < b.first_native_notification());  // L's CV = 1 was there to be scanned
  CHECK(b.count_notified(null_array_with_legacy) == 0);
  CHECK(b.count_notified(legacy_signaled) == 0);
  CHECK(r.native_woken);
  CHECK_FALSE(r.legacy_woken);  // the document's default: a NULL scan leaves legacy waiters alone (timed out)
}

TEST_CASE(
    "Event ring overflow that drops a monitored fence's event: EvaluateLegacyMonitoredFences, the NULL scan wakes the "
    "legacy waiter",
    "[F12]") {
  FenceBench b(kSmallRing);
  const OverflowRun r = overflow(b, Legacy::Signal);
  REQUIRE(b.count_notified(null_array) >= 1);  // entries were dropped
  CHECK(b.count_notified(null_array_with_legacy) >= 1);
  CHECK(b.count_notified(legacy_signaled) == 0);  // L's own event was among the dropped: only the flag's scan found it
  CHECK(r.native_woken == 8);
  CHECK(r.legacy_woken);
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE(
    "Event ring overflow that drops a monitored fence's event: the NULL scan also releases GPU work held on it (no CPU "
    "waiter)",
    "[F12][F5]") {
  FenceBench b(kSmallRing);
  const OverflowRun r = overflow(b, Legacy::Signal, /*held*/ true);
  REQUIRE(b.count_notified(null_array_with_legacy) >= 1);
  CHECK(b.count_notified(legacy_signaled) == 0);  // L's own event was dropped
  CHECK(r.held_ran);                              // VidSch found L's held work in the flagged scan
  CHECK(r.native_woken == 8);
}

TEST_CASE(
    "Event ring overflow that drops native events only: no EvaluateLegacyMonitoredFences, though a monitored fence's "
    "CV changed",
    "[F12]") {
  // The CMP counts dropped monitored fence events apart from native ones: L raised no interrupt (a bare
  // WRITE64), so nothing of L's was dropped and the NULL scan leaves legacy waiters alone (the document's
  // default); L's waiter times out. A KMD that flagged every overflow would wake it.
  FenceBench b(kSmallRing);
  const OverflowRun r = overflow(b, Legacy::WriteOnly);
  REQUIRE(b.count_notified(null_array) >= 1);
  CHECK(b.count_notified(null_array_with_legacy) == 0);
  CHECK(r.native_woken == 8);
  CHECK_FALSE(r.legacy_woken);
}

TEST_CASE(
    "No legacy fence on the adapter: an event ring overflow gives a NULL array without EvaluateLegacyMonitoredFences",
    "[F12]") {
  FenceBench b(kSmallRing);
  const OverflowRun r = overflow(b, Legacy::None);
  REQUIRE(b.count_notified(null_array) >= 1);
  CHECK(b.count_notified(null_array_with_legacy) == 0);
  CHECK(r.native_woken == 8);
  CHECK(b.mon.lost_interrupts() == 0);
}

namespace {
// F9, F5: a monitored fence on an adapter whose OS did not enable DXGK_FEATURE_NATIVE_FENCE (the driver
// asks, and so does not advertise NativeGpuFence): node 1's work is held on value 1 and a CPU thread
// waits for it; after 50 us of compute node 0 signals it the WDDM 2.x way (VidSch::gpu_signal).
struct Wddm2Run {
  bool started = false, waiter_woken = false, legacy = false;
  uint32_t handle = ~0u;
  sc_time cv_visible = sc_max_time(), woke = sc_max_time();
  uint64_t held_ts = 0;  // node 1's TIMESTAMP (ps): when the released work ran
};
Wddm2Run wddm2_signal(FenceBench& b) {
  auto& p = b.p;
  Wddm2Run r;
  p.cpu.spawn_thread("app", [&] {
    r.started = DxgkrnlStartAdapter(p.kmd, "dGPU").started;
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);  // not legacy by request
    r.legacy = f->legacy;
    r.handle = f->handle;
    p.sysmem.watch(f->cv_addr, 8, [&r](uint64_t, unsigned) { r.cv_visible = sc_time_stamp(); });
    KmdHwQueue* qa = p.kmd.DxgkDdiCreateHwQueue(0);
    KmdHwQueue* qb = p.kmd.DxgkDdiCreateHwQueue(1);
    PacketWriter held;
    held.timestamp(p.kmd.scratch());
    p.vidsch.SubmitAfterWait(qb, f, 1, held);
    PacketWriter a;
    a.compute(100000);  // 50 us: the waiter and the held work are registered first
    VidSch::gpu_signal(a, *f, 1, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, a);
    r.waiter_woken = p.vidsch.WaitFromCpu(f, 1, us(200));
    r.woke = sc_time_stamp();
  });
  sc_start();
  r.held_ts = p.sysmem.peek64(p.kmd.scratch());
  return r;
}
}  // namespace

TEST_CASE(
    "A monitored fence's signal: the BARRIER keeps the CV write ahead of the interrupt even when the write buffer "
    "holds it longer than the CMP takes",
    "[F5][F1]") {
  // node.write_buffer_ns = 5 us: the CV write leaves the engine 5 us after the WRITE64, far later than
  // the CMP's interrupt work (32 cycles and the event entry's and write index's posts, about 1.3 us with
  // a cold TLB). Without the BARRIER the MSI would go first and the DPC would read the old CV: no wake
  // from this interrupt, the waiter's 200 us timeout instead. With it: CV visible, then the MSI.
  FenceBench b({{"os.native_fence_feature", "disabled"}, {"gpu.nodes", "2"}, {"node.write_buffer_ns", "5000"}});
  const Wddm2Run r = wddm2_signal(b);
  REQUIRE(r.started);
  CHECK(r.cv_visible <= b.p.gpu.cmp.last_msi_issued());
  CHECK(r.waiter_woken);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);
  CHECK(b.p.vidsch.spurious_interrupts() == 0);  // the one interrupt's DPC found CV = 1
  CHECK(r.held_ts != 0);
}

TEST_CASE(
    "A monitored fence stands alone without the native fence feature: no native fence DDI, its GPU signal interrupts, "
    "the CPU waiter and the held work wake",
    "[F9][F5]") {
  FenceBench b({{"os.native_fence_feature", "disabled"}, {"gpu.nodes", "2"}});
  const Wddm2Run r = wddm2_signal(b);
  REQUIRE(r.started);  // the driver asked (if_enabled) and did not advertise native fences
  CHECK(r.legacy);
  CHECK(r.handle == 0);                           // no hGlobalNativeFence: the driver never heard of it
  CHECK(b.p.kmd.native_fences_created() == 0);    // "Dxgkrnl calls them only if the OS enabled" the feature
  CHECK_FALSE(b.p.gpu.cmp.fence(0)->valid());     // no CMP slot
  CHECK(b.count_notified(legacy_signaled) == 1);  // DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED, once
  CHECK(b.count_notified(null_array) == 0);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);
  CHECK(b.p.gpu.cmp.gpu_unblocks() == 0);  // F5: no GPU wait on a monitored fence
  CHECK(r.waiter_woken);
  // CV is visible before the CMP issues the MSI, so the DPC's read of CV finds the value (with the default
  // write buffer this order holds even without the UMD's BARRIER; the test above shows the BARRIER alone).
  CHECK(r.cv_visible <= b.p.gpu.cmp.last_msi_issued());
  // The held work ran after the interrupt was notified (its DPC submitted it): its TIMESTAMP, taken after
  // the doorbell, the fetch and the decode, is later than the ISR's notification.
  REQUIRE(r.held_ts != 0);
  CHECK(sc_time(double(r.held_ts), SC_PS) > b.notified_at.at(0));
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE(
    "Destroying a monitored fence: no native fence DDI, its CPU waiter fails, its held work is dropped, native fences "
    "after it get slots of their own",
    "[F5][F11]") {
  FenceBench b(std::map<std::string, std::string>{{"gpu.nodes", "2"}});
  auto& p = b.p;
  bool waited = true;
  NativeFence *l = nullptr, *n1 = nullptr, *n2 = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    l = p.vidsch.CreateMonitoredFence(1, Segment::System, false);
    PacketWriter after;
    after.timestamp(p.kmd.scratch());
    p.vidsch.SubmitAfterWait(p.kmd.DxgkDdiCreateHwQueue(1), l, 1, after);
    p.cpu.spawn_thread("waiter", [&] { waited = p.vidsch.WaitFromCpu(l, 1); });  // untimed
    p.cpu.sleep(us(10));
    p.vidsch.DestroySynchronizationObject(1, l);  // the last close
    n1 = p.vidsch.CreateNativeFence(1, Segment::System, false);
    n2 = p.vidsch.CreateNativeFence(1, Segment::System, false);
    p.cpu.sleep(us(10));
    p.vidsch.SignalFromCpu(l, 1);  // a late signal finds nothing to release
  });
  sc_start();
  REQUIRE(l);
  CHECK(l->destroyed);
  CHECK_FALSE(waited);                          // the waiter failed with the fence
  CHECK(b.p.kmd.native_fences_created() == 2);  // n1 and n2 only
  CHECK(p.vidsch.slot(*n1) != p.vidsch.slot(*n2));
  CHECK(p.sysmem.peek64(p.kmd.scratch()) == 0);  // the held work was dropped, never submitted
}

TEST_CASE(
    "The lost-interrupt monitor watches a monitored fence: a CV write with no interrupt leaves its waiter lost when "
    "the run goes idle",
    "[F5]") {
  // A bare WRITE64 of the value (no BARRIER, no INTERRUPT: a broken UMD) reaches CV; nothing tells the OS,
  // so the untimed waiter waits as the run goes idle: lost (and lost at idle), as the monitor says.
  FenceBench b;
  auto& p = b.p;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* l = p.vidsch.CreateMonitoredFence(1, Segment::System, false);
    {  // nothing of the heap may stay on this thread's stack: it never returns from the wait (the leak check)
      PacketWriter w;
      w.compute(20000).write64(l->cv_addr, 1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(p.kmd.DxgkDdiCreateHwQueue(0), w);
    }
    p.vidsch.WaitFromCpu(l, 1);
  });
  sc_start();
  Results r;
  b.mon.finish(r);
  CHECK(b.mon.lost_interrupts() == 1);
  CHECK(r.metrics["lost_at_idle"].get<uint64_t>() == 1);
}

namespace {
// F13: queue B (node 1) waits on the GPU for CV >= 5 before a TIMESTAMP, a CPU thread waits for 5 too.
// 20 us after setup the OS either signals from the CPU (the KMD stores CV) or, with `agent_writes`,
// forwards the value an independent agent stored before, at 15 us (NotificationOnly: the KMD must not
// store it).
struct CvChange {
  bool cpu_woken = false;
  sc_time os_called, b_ran;
  int cv_writes = 0;  // writes to the CV word that became visible after the fence's creation
  uint64_t cv = 0;
};
CvChange cv_change(FenceBench& b, bool agent_writes) {
  auto& p = b.p;
  CvChange r;
  NativeFence* f = nullptr;
  uint64_t ts = 0;
  Probe agent("agent");  // another device sharing the fence's CV
  agent.sock.bind(p.rc.tsock);
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, /*shareable*/ true);
    p.sysmem.watch(f->cv_addr, 8, [&r](uint64_t, unsigned) { ++r.cv_writes; });
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1);
    ts = p.kmd.scratch();
    PacketWriter w;
    w.timestamp(ts);
    p.vidsch.SubmitAfterWait(q, f, 5, w);
    p.cpu.spawn_thread("waiter", [&p, f, &r] { r.cpu_woken = p.vidsch.WaitFromCpu(f, 5, us(100)); });
    p.cpu.sleep(us(20));
    r.os_called = sc_time_stamp();
    if (agent_writes)
      p.vidsch.NotifyCurrentValueChanged(f, 5);  // NotificationOnly = TRUE
    else
      p.vidsch.SignalFromCpu(f, 5);  // NotificationOnly = FALSE
  });
  agent.body = [&] {
    if (!agent_writes) return;
    wait(us(15));
    agent.bus.post64(f->cv_addr, 5);
  };
  sc_start();
  r.b_ran = sc_time(double(p.sysmem.peek64(ts)), SC_PS);
  r.cv = p.sysmem.peek64(f->cv_addr);
  return r;
}
}  // namespace

TEST_CASE(
    "NotificationOnly: a CV another agent wrote unblocks the GPU wait at the derived time and wakes the CPU waiter, "
    "the KMD writes no CV",
    "[F13][F5]") {
  FenceBench b;
  const CvChange r = cv_change(b, /*agent_writes*/ true);
  CHECK(r.cpu_woken);
  CHECK(r.cv == 5);
  CHECK(r.cv_writes == 1);  // the agent's: with NotificationOnly the KMD does not store CV
  using namespace tb::dflt;
  // The KMD only posts the 4-byte notify (root complex, 28-byte TLP, hop, BAR0 write latency); the CMP
  // spends 20 cycles at 1 GHz, reads CV across the link, unblocks B, which decodes its fetched TIMESTAMP.
  const sc_time notify_at_cmp = kRc + ser(4 + 24, kRate) + kHop + kBarWrite;
  CHECK(r.b_ran == r.os_called + notify_at_cmp + sc_time(20, SC_NS) + sysmem_read(8) + kDecode);
  CHECK(b.p.gpu.cmp.gpu_unblocks() == 1);
  CHECK(b.p.gpu.cmp.fence_interrupts() == 0);
}

TEST_CASE("Without NotificationOnly the KMD stores the CPU's CV, once, before the notify", "[F13][F5]") {
  FenceBench b;
  const CvChange r = cv_change(b, /*agent_writes*/ false);
  CHECK(r.cpu_woken);
  CHECK(r.cv == 5);
  CHECK(r.cv_writes == 1);  // the KMD's store
  using namespace tb::dflt;
  // As above, after the KMD's 8-byte CV store at 20 GB/s.
  const sc_time notify_at_cmp = sc_time(8 / 20.0, SC_NS) + kRc + ser(4 + 24, kRate) + kHop + kBarWrite;
  CHECK(r.b_ran == r.os_called + notify_at_cmp + sc_time(20, SC_NS) + sysmem_read(8) + kDecode);
  CHECK(b.p.gpu.cmp.gpu_unblocks() == 1);
}
