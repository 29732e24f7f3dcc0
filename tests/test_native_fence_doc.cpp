// The native fence as the document states it: the feature interface negotiated at initialisation, the DDIs
// with their arguments (fence type, per-process opens, NT-handle sharing), per-process mappings and the
// GPU's rights on them, mandatory logging (every signal and wait, the KMD's and the OS's included), the
// optimized interrupt's payload and its device scope, the combined-interrupt caps mode, and the worked
// example of the document's captions (CV 41, MV 41, a waiter on 42).
#include "fence_bench.h"
#include "hw_model/gpu/fence_log.h"

using namespace tb;
using namespace sc_core;
namespace fl = gpumodel::fence_log;

namespace {
// Adapter start, then `calls` caps queries; the OS's feature switch as given.
void feature_negotiation(const char* feature, bool want_enabled) {
  FenceBench b(Overrides{{"os.native_fence_feature", feature}});
  auto& p = b.p;
  std::vector<bool> answers;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    for (int i = 0; i < 5; ++i) answers.push_back(p.kmd.DxgkDdiQueryAdapterInfoVidSchCaps().native_gpu_fence);
  });
  sc_start();
  REQUIRE(answers.size() == 5);
  for (bool a : answers) CHECK(a == want_enabled);
  // Once, at initialisation: DxgkCbIsFeatureEnabled2, then (enabled) QueryFeatureInterface for its
  // version; five caps calls later the OS has been asked nothing more.
  CHECK(p.vidsch.feature_queries() == (want_enabled ? 2u : 1u));
  CHECK(p.kmd.native_fence_feature_version() == (want_enabled ? 1u : 0u));
  // DXGKARGCB_FEATURE_NATIVEFENCE_CAPS_1 through the table: INTRA_GPU is not supported by this OS.
  CHECK_FALSE(p.kmd.native_fence_os_caps().support_intra_gpu_fence_type);
  CHECK(p.kmd.native_fence_os_caps().support_optimized_default_fence_type == want_enabled);
  // D3DKMT_WDDM_3_1_CAPS::NativeGpuFenceSupported answers user mode.
  CHECK(p.vidsch.D3DKMTQueryAdapterInfoWddm31Caps().native_gpu_fence_supported == want_enabled);
}
}  // namespace

TEST_CASE("Feature interface: the KMD negotiates DXGK_FEATURE_NATIVE_FENCE version 1 once and answers caps from it",
          "[F9]") {
  feature_negotiation("enabled", true);
}

TEST_CASE("Feature interface: with the feature off the KMD asks once, gets no table and never advertises", "[F9]") {
  feature_negotiation("disabled", false);
}

TEST_CASE("D3DDDI_NATIVEFENCE_TYPE: DEFAULT is created, INTRA_GPU refused as the OS does today", "[F11]") {
  FenceBench b;
  auto& p = b.p;
  NativeFence *def = nullptr, *intra = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    intra = p.vidsch.D3DKMTCreateNativeFence(1, NativeFenceType::IntraGpu, Segment::System, false);
    def = p.vidsch.D3DKMTCreateNativeFence(1, NativeFenceType::Default, Segment::System, false);
  });
  sc_start();
  CHECK(intra == nullptr);
  CHECK(p.vidsch.refused_creates() == 1);
  REQUIRE(def != nullptr);
  CHECK(def->type == NativeFenceType::Default);
  CHECK(p.kmd.native_fences_created() == 1);  // the refused one never reached the driver
}

TEST_CASE(
    "A shared fence opens from its NT handle in another process with its own handles and mappings and its queue's "
    "signal wakes the first process while the log entry names the second process's handle",
    "[F10][F11][F16]") {
  // The optimized interrupt names the signalling queue, so the OS reads process 2's log. (Without it the
  // OS reads "the log buffers of all [the] HWQueues" of the fence's parent device, process 1: a shared
  // fence signalled from another process's queue leaves its entry unread there; CV still wakes the waiter.)
  FenceBench b(Overrides{{"kmd.optimized_native_fence_signaled_interrupt", "true"}});
  auto& p = b.p;
  NativeFence *f = nullptr, *opened = nullptr, *unshared_open = nullptr, *bogus = nullptr;
  uint64_t nt = 0, nt_unshared = 0;
  bool woke = false;
  std::vector<fl::Entry> read;
  p.vidsch.observer.log_entry_read = [&](int, uint32_t type, uint64_t, const fl::Entry& e) {
    if (type == fl::kSignals) read.push_back(e);
  };
  p.cpu.spawn_thread("process1", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.D3DKMTCreateNativeFence(1, NativeFenceType::Default, Segment::System, true);
    NativeFence* mine = p.vidsch.CreateNativeFence(1, Segment::System, false);
    nt = p.vidsch.ShareObject(f);
    nt_unshared = p.vidsch.ShareObject(mine);
    unshared_open = p.vidsch.D3DKMTOpenNativeFenceFromNTHandle(2, nt_unshared);
    bogus = p.vidsch.D3DKMTOpenNativeFenceFromNTHandle(2, nt + 4);
    p.cpu.spawn_thread("process2", [&] {
      opened = p.vidsch.D3DKMTOpenNativeFenceFromNTHandle(2, nt);
      KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 2);
      PacketWriter w;
      w.compute(40000);  // 20 us: process 1's waiter is armed by then
      VidSch::gpu_signal(w, *opened, 1, 2);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    });
    woke = p.vidsch.WaitFromCpu(f, 1, us(200));
  });
  sc_start();
  REQUIRE(f);
  CHECK(nt != 0);
  CHECK(nt_unshared == 0);  // created without the shared flag: no NT handle
  CHECK(unshared_open == nullptr);
  CHECK(bogus == nullptr);
  REQUIRE(opened == f);
  REQUIRE(f->local_handles.size() == 2);
  CHECK(f->local_handles.at(1) != f->local_handles.at(2));
  CHECK(f->kmd_handles.at(1) != f->kmd_handles.at(2));
  // Each process its own mappings of the same values (in its own space; the numbers may coincide), and
  // neither the CMP's system-process VA.
  CHECK(f->va.count(1) == 1);
  CHECK(f->va.count(2) == 1);
  CHECK(f->va.at(2).cv != p.gpu.cmp.fence(f->slot)->cv_addr);
  CHECK(woke);
  REQUIRE(read.size() == 1);
  CHECK(read[0].h_native_fence == f->local_handles.at(2));  // the signalling queue's process's handle
  CHECK(read[0].fence_value == 1);
}

TEST_CASE("Each process's packets reach the fence through that process's VAs, in its space", "[F10]") {
  FenceBench b;
  auto& p = b.p;
  NativeFence* f = nullptr;
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (root, va) of every node-0 translation
  p.gpu.nodes[0]->on_translate() = [&](uint64_t root, uint64_t va, uint64_t, bool) { seen.emplace_back(root, va); };
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, true);
    p.vidsch.OpenNativeFence(2, f);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0, 0, 0, 2);
    PacketWriter w;
    w.signal(VidSch::va(*f, 2), 3).wait(VidSch::va(*f, 2), 3);  // the WAIT is satisfied at once
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    wait(us(20));
  });
  sc_start();
  // The CV write and the WAIT's CV read each translated once, in process 2's space at process 2's VA;
  // nothing in process 1's space; in the system process's only the CMP's shadow MV the conditional check
  // reads (the CMP's memory).
  const uint64_t root2 = p.vidmm.space(2).root();
  CHECK(std::count(seen.begin(), seen.end(), std::make_pair(root2, f->va.at(2).cv)) == 2);
  for (const auto& [root, va] : seen) {
    CHECK(root != p.vidmm.space(1).root());
    if (root == p.vidmm.system_root()) CHECK(va == p.gpu.cmp.shadow_mv_addr(f->slot));
  }
  CHECK(p.sysmem.peek64(f->cv_addr) == 3);
}

namespace {
// A WRITE64 of 5 to the process's mapping of f's MV (mv) or CV (cv); `warm`: after a COPY that read the
// same page through the same MMU, so the write's translation is a TLB hit.
void write_through_mapping(bool mv, bool warm = false) {
  FenceBench b;
  auto& p = b.p;
  NativeFence* f = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    const uint64_t va = mv ? VidSch::va(*f, 1).mv : VidSch::va(*f, 1).cv;
    if (warm) w.copy(va, p.kmd.scratch(), 8).barrier();
    w.write64(va, 5);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    wait(us(20));
  });
  sc_start();
  const Node& n = *p.gpu.nodes[0];
  if (mv) {
    // "readable using GPU VA, no write access": a protection fault stops the queue; MV is untouched.
    CHECK(n.faults() == 1);
    CHECK(n.page_faults() == 1);
    CHECK(p.sysmem.peek64(f->mv_addr) == UINT64_MAX);
  } else {
    CHECK(n.faults() == 0);
    CHECK(p.sysmem.peek64(f->cv_addr) == 5);
  }
}
}  // namespace

TEST_CASE("MonitoredValue is read-only to the GPU: an engine's write through its mapping faults", "[F2][F10]") {
  write_through_mapping(true);
}

TEST_CASE("MonitoredValue stays read-only on a TLB hit: a write after a read of its page faults", "[F2][F10]") {
  write_through_mapping(true, true);
}

TEST_CASE("CurrentValue is writable through the same process's mapping", "[F1][F10]") { write_through_mapping(false); }

TEST_CASE(
    "Logging is mandatory: every signal and wait is logged with the KMD's progress fence and the OS's held work "
    "included and each has its queued event with the CPU time before the GPU's",
    "[F14][F16]") {
  FenceBench b;  // defaults: vidsch.native_fence_logs = true
  auto& p = b.p;
  NativeFence *f = nullptr, *progress = nullptr, *legacy = nullptr;
  KmdHwQueue *q = nullptr, *q2 = nullptr;
  struct Queued {
    int queue;
    uint32_t type, handle;
    uint64_t value;
    sc_time at;
  };
  std::vector<Queued> queued;
  p.vidsch.observer.fence_queued = [&](int qid, uint32_t type, uint32_t h, uint64_t v) {
    queued.push_back({qid, type, h, v, sc_time_stamp()});
  };
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    progress = p.vidsch.CreateNativeFence(1, Segment::System, false);
    legacy = p.vidsch.CreateNativeFence(1, Segment::System, false, true);
    q = p.vidsch.CreateHwQueue(0, 0, progress->handle, 1);  // F14: the KMD signals the progress fence
    q2 = p.vidsch.CreateHwQueue(1, 0, 0, 1);
    PacketWriter w;
    w.wait(VidSch::va(*f, 1), 0).compute(2000);
    VidSch::gpu_signal(w, *f, 7, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    // Work held on the CPU behind a monitored fence (F5), released by the OS after the CPU signal.
    PacketWriter held;
    VidSch::gpu_signal(held, *f, 9, 1);
    p.vidsch.SubmitAfterWait(q2, legacy, 1, held);
    wait(us(10));
    p.vidsch.SignalFromCpu(legacy, 1);
    wait(us(30));
  });
  sc_start();
  REQUIRE(q);
  REQUIRE(q2);
  auto log_of = [&](KmdHwQueue* queue, uint32_t type) {
    const auto* st = p.vidsch.log_state(queue->id, type);
    REQUIRE(st);
    const uint64_t h = p.gpu.vram.peek64(st->cpu_va);
    std::vector<fl::Entry> out(fl::position(h, fl::kEntries));
    for (uint32_t i = 0; i < out.size(); ++i) p.gpu.vram.peek(st->cpu_va + fl::entry_offset(i), &out[i], sizeof out[i]);
    return out;
  };
  const auto sig = log_of(q, fl::kSignals), wai = log_of(q, fl::kWaits), sig2 = log_of(q2, fl::kSignals);
  // Queue q: the UMD's signal of f (7) and the KMD's progress signal (1), in ring order; its wait of f.
  REQUIRE(sig.size() == 2);
  CHECK(sig[0].h_native_fence == f->local_handles.at(1));
  CHECK(sig[0].fence_value == 7);
  CHECK(sig[1].h_native_fence == progress->local_handles.at(1));
  CHECK(sig[1].fence_value == 1);
  REQUIRE(wai.size() == 1);
  CHECK(wai[0].operation_type == fl::kWaitUnblocked);
  CHECK(wai[0].h_native_fence == f->local_handles.at(1));
  // Queue q2: the held signal, logged when the OS released it.
  REQUIRE(sig2.size() == 1);
  CHECK(sig2[0].fence_value == 9);
  // Every logged operation was queued first: FENCE_*_QUEUED with its CPU time, before the GPU's end time.
  REQUIRE(queued.size() == 4);
  CHECK(p.vidsch.fence_ops_queued() == 4);
  const uint64_t tick_ps = uint64_t(p.params.get_int("gpu.timestamp_tick_ps"));
  for (const auto& e : {sig[0], sig[1], wai[0], sig2[0]}) {
    auto it = std::find_if(queued.begin(), queued.end(),
                           [&](const Queued& x) { return x.handle == e.h_native_fence && x.value == e.fence_value; });
    REQUIRE(it != queued.end());
    CHECK(uint64_t(it->at.value()) / tick_ps <= e.fence_end_gpu_timestamp);
  }
}

TEST_CASE(
    "Optimized interrupt: it names the HW queue with its NodeOrdinal and EngineOrdinal and carries no fence array",
    "[F19]") {
  FenceBench b(Overrides{{"kmd.optimized_native_fence_signaled_interrupt", "true"}});
  auto& p = b.p;
  KmdHwQueue* q = nullptr;
  bool woke = false;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    q = p.vidsch.CreateHwQueue(1, 0, 0, 1);
    PacketWriter w;
    w.compute(40000);
    VidSch::gpu_signal(w, *f, 1, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    woke = p.vidsch.WaitFromCpu(f, 1, us(200));
  });
  sc_start();
  CHECK(woke);
  const auto native = [](const DxgkInterruptData& d) { return d.type == DxgkInterruptData::NativeFenceSignaled; };
  REQUIRE(b.count_notified(native) == 1);
  const DxgkInterruptData& d = *std::find_if(b.notified.begin(), b.notified.end(), native);
  CHECK(d.signaled.empty());
  CHECK_FALSE(d.signaled_array_null);
  REQUIRE(d.hw_queues.size() == 1);
  CHECK(d.hw_queues[0] == q->id);
  CHECK(d.null_queue_nodes.empty());
  CHECK(d.node_ordinal == 1);  // node 1 of engine 0 (one engine, two nodes)
  CHECK(d.engine_ordinal == 0);
  CHECK(p.vidsch.log_queues_scanned() == 1);  // only the named queue's logs were read
}

TEST_CASE("A log overrun's fallback reads the fences of the overrun queue's device, not of the adapter", "[F18]") {
  // Process 1 signals its fence 90 times (84 entries: an overrun) while process 2 holds ten fences of its
  // own; the fallback reads process 1's fences only.
  FenceBench b(Overrides{{"kmd.optimized_native_fence_signaled_interrupt", "true"}});
  auto& p = b.p;
  NativeFence* f = nullptr;
  bool woke = false;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    NativeFence* other1 = p.vidsch.CreateNativeFence(1, Segment::System, false);
    (void)other1;
    for (int i = 0; i < 10; ++i) p.vidsch.CreateNativeFence(2, Segment::System, false);
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    PacketWriter w;
    w.compute(40000);
    for (uint64_t v = 1; v <= 90; ++v) VidSch::gpu_signal(w, *f, v, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    woke = p.vidsch.WaitFromCpu(f, 90, us(500));
  });
  sc_start();
  CHECK(woke);
  CHECK(p.vidsch.log_overruns() >= 1);
  REQUIRE(p.vidsch.fallback_scans() >= 1);
  CHECK(p.vidsch.fallback_fences_read() == 2 * p.vidsch.fallback_scans());  // process 1's two fences
}

namespace {
// Both kinds of waiter on `b`'s platform: a monitored fence's signal, then a native fence's; true when both woke
// and every notification the KMD gave Dxgkrnl was the combined one (the native interrupt, a NULL array,
// EvaluateLegacyMonitoredFences), at least one per signal.
void combined_interrupt_wakes_both(FenceBench& b) {
  auto& p = b.p;
  bool woke_native = false, woke_legacy = false;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* n = p.vidsch.CreateNativeFence(1, Segment::System, false);
    NativeFence* l = p.vidsch.CreateNativeFence(1, Segment::System, false, true);
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    PacketWriter w;
    w.compute(40000);
    VidSch::gpu_signal(w, *l, 1, 1);  // the monitored fence's WRITE64, BARRIER, INTERRUPT
    w.compute(40000);
    VidSch::gpu_signal(w, *n, 1, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.spawn_thread("legacy_waiter", [&, l] { woke_legacy = p.vidsch.WaitFromCpu(l, 1, us(300)); });
    woke_native = p.vidsch.WaitFromCpu(n, 1, us(300));
  });
  sc_start();
  CHECK(woke_native);
  CHECK(woke_legacy);
  const auto legacy_irq = [](const DxgkInterruptData& d) {
    return d.type == DxgkInterruptData::MonitoredFenceSignaled;
  };
  const auto combined = [](const DxgkInterruptData& d) {
    return d.type == DxgkInterruptData::NativeFenceSignaled && d.signaled_array_null &&
           d.evaluate_legacy_monitored_fences && d.signaled.empty();
  };
  CHECK(b.count_notified(legacy_irq) == 0);
  CHECK(b.count_notified(combined) == b.notified.size());
  CHECK(b.count_notified(combined) >= 2);
}
}  // namespace

TEST_CASE(
    "Combined interrupt caps: hardware that cannot tell the fences apart raises only the native interrupt with a "
    "NULL array and EvaluateLegacyMonitoredFences and both kinds of waiter wake",
    "[F12]") {
  // The driver build that raises the combined interrupt (kmd.native_fence_interrupt = combined).
  FenceBench b(Overrides{{"kmd.native_fence_interrupt", "combined"}});
  combined_interrupt_wakes_both(b);
}

TEST_CASE(
    "A command processor of one event kind: the KMD learns it from CAPS and raises the combined interrupt, and "
    "both kinds of waiter wake",
    "[F12]") {
  // The hardware (cmp.fence_event_kinds = combined) reports a monitored fence's signal as a NULL native event;
  // the driver is the default build. A KMD that ignored CAPS would report a NULL native array without
  // EvaluateLegacyMonitoredFences, and the monitored fence's waiter would never wake.
  FenceBench b(Overrides{{"cmp.fence_event_kinds", "combined"}});
  combined_interrupt_wakes_both(b);
}

TEST_CASE(
    "The document's worked example: CV and MV at 41 with waiters on 42 and 43 then the GPU writes 42 and the CMP "
    "interrupts so the waiter on 42 wakes and MV moves to 42",
    "[F2][F3][F4]") {
  FenceBench b;
  auto& p = b.p;
  NativeFence* f = nullptr;
  uint64_t cv_before = 0, mv_before = 0, shadow_before = 0, mv_after = 0, shadow_after = 0;
  bool woke42 = false, woke43 = true;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    p.vidsch.SignalFromCpu(f, 41);  // "the GPU has completed all work up to fence value 41"
    p.cpu.spawn_thread("w43", [&] { woke43 = p.vidsch.WaitFromCpu(f, 43, us(200)); });
    p.cpu.spawn_thread("w42", [&] {
      wait(us(5));
      woke42 = p.vidsch.WaitFromCpu(f, 42, us(200));
      mv_after = b.os_mv(f), shadow_after = b.shadow(f);
    });
    wait(us(20));
    cv_before = p.sysmem.peek64(f->cv_addr), mv_before = b.os_mv(f), shadow_before = b.shadow(f);
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    PacketWriter w;
    VidSch::gpu_signal(w, *f, 42, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  sc_start();
  // The captions' state: CV = MV = 41 ("the CPU doesn't wait on any fence value <= 41").
  CHECK(cv_before == 41);
  CHECK(mv_before == 41);
  CHECK(shadow_before == 41);
  // 42 > 41: the CMP interrupts; the waiter on 42 wakes, MV advances to the next waiter's 43 - 1 = 42.
  CHECK(p.gpu.cmp.fence_interrupts() == 1);
  CHECK(woke42);
  CHECK(mv_after == 42);
  CHECK(shadow_after == 42);
  CHECK_FALSE(woke43);  // nothing signals 43: it times out
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE(
    "Without the optimized interrupt the OS reads the logs of the signaled fence's device only, not another "
    "process's queues",
    "[F16][F17]") {
  FenceBench b;
  auto& p = b.p;
  bool woke = false;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    p.vidsch.CreateHwQueue(1, 0, 0, 2);  // process 2's two queues: another device
    p.vidsch.CreateHwQueue(1, 0, 0, 2);
    PacketWriter w;
    w.compute(40000);
    VidSch::gpu_signal(w, *f, 1, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    woke = p.vidsch.WaitFromCpu(f, 1, us(200));
  });
  sc_start();
  CHECK(woke);
  const auto with_array = [](const DxgkInterruptData& d) {
    return d.type == DxgkInterruptData::NativeFenceSignaled && !d.signaled.empty();
  };
  REQUIRE(b.count_notified(with_array) == 1);
  CHECK(p.vidsch.log_queues_scanned() == 1);  // the fence's parent device has one queue
  CHECK(p.vidsch.log_headers_read() == 2);    // its two logs' headers
}
