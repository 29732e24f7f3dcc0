// Native fence lifetime and what the OS is told: global handles never reused while an event entry may
// name them (F11), EvaluateLegacyMonitoredFences only when legacy waiters cannot be reported otherwise
// (F12), and NotificationOnly for a CurrentValue another agent wrote (F13).
#include "hw_model/gpu/regs.h"
#include "scenarios/monitors.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {
sc_time us(double v) { return sc_time(v, SC_US); }
struct FenceBench {
  ParamSet ps;
  Vcd vcd;
  Platform p;
  Monitors mon;
  std::vector<DxgkInterruptData> notified;  // every DxgkCbNotifyInterrupt the OS got, in order...
  std::vector<sc_time> notified_at;         // ...and when
  explicit FenceBench(std::map<std::string, std::string> o = {})
      : ps(params(with_tick(std::move(o)))), p(ps, vcd, 1), mon(p) {
    p.vidsch.observer.interrupt_notified = [this](const DxgkInterruptData& d) {
      notified.push_back(d);
      notified_at.push_back(sc_time_stamp());
    };
  }
  static std::map<std::string, std::string> with_tick(std::map<std::string, std::string> o) {
    o.emplace("gpu.timestamp_tick_ps", "1");
    return o;
  }
  uint64_t os_mv(const NativeFence* f) { return p.sysmem.peek64(f->mv_addr); }
  sc_time first_native_notification() const {  // the first NativeFenceSignaled, from the ISR
    for (size_t i = 0; i < notified.size(); ++i)
      if (notified[i].type == DxgkInterruptData::NativeFenceSignaled) return notified_at[i];
    return sc_max_time();
  }
};

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
    w.compute(40000).signal(r.slot_a, 1);  // 20 us, then A's signal interrupts (A has a waiter)
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
    while (b.p.gpu.cmp.fence_interrupts() == 0) wait(sc_time(50, SC_NS));
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

TEST_CASE("Slot reuse: a stale event entry names the destroyed fence, not the new one in its slot, and the OS bug checks with its handle", "[F11][F12]") {
  auto o = kLateIsr;
  o["kmd.validate_signaled_handles"] = "false";  // the KMD forwards what the CMP wrote
  FenceBench b(o);
  const StaleEntry r = stale_entry_after_slot_reuse(b);
  REQUIRE(r.slot_b == r.slot_a);                                // B reuses A's slot...
  CHECK(r.handle_b != r.handle_a);                              // ...not A's handle (F11)
  REQUIRE(r.b_created < b.first_native_notification());       // B existed when the ISR read A's entry
  REQUIRE(b.p.vidsch.bugchecked());
  CHECK(b.p.vidsch.bugcheck_code() == 0x113);
  CHECK(b.p.vidsch.bugcheck_params().at(0) == 0x3A);
  CHECK(b.p.vidsch.bugcheck_params().at(1) == r.handle_a);     // P2: the destroyed fence's handle
}

TEST_CASE("Slot reuse: a stale event entry of a destroyed fence does not wake the waiter of the new fence in its slot", "[F11][F12]") {
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
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);  // A's only
  CHECK_FALSE(r.b_woken);                      // A's entry did not name B: B's waiter timed out
  for (const auto& d : b.notified)
    for (uint32_t h : d.signaled) CHECK(h != r.handle_b);
}
