// Native fences end to end in one process each: MV rules, conditional interrupt and the DPC, lifetime
// and the bug check, CPU signals, progress fences, storage, the torn-value monitor. The ordering
// contract (F7, F8) is in test_fence_ordering.cpp.
#include "fence_bench.h"
#include "hw_model/gpu/regs.h"

using namespace tb;
using namespace sc_core;

TEST_CASE("MonitoredValue is the least waited value - 1, UINT64_MAX without waiters, as waiters come and go", "[F2]") {
  FenceBench b;
  auto& p = b.p;
  NativeFence* f = nullptr;
  bool ok10 = true, ok5 = true;
  p.cpu.spawn_thread("w10", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    ok10 = p.vidsch.WaitFromCpu(f, 10, us(100));  // nobody signals: times out at ~100 us
  });
  p.cpu.spawn_thread("w5", [&] {
    p.cpu.sleep(us(40));
    ok5 = p.vidsch.WaitFromCpu(f, 5, us(30));  // times out at ~70 us
  });
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (OS MV, CMP shadow MV) at 30, 60, 90, 150 us
  sc_spawn([&] {
    for (double t : {30.0, 60.0, 90.0, 150.0}) {
      wait(us(t) - sc_time_stamp());
      seen.emplace_back(b.os_mv(f), b.shadow(f));
    }
  });
  sc_start();
  CHECK_FALSE(ok10);
  CHECK_FALSE(ok5);
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == std::make_pair<uint64_t, uint64_t>(9, 9));  // one waiter on 10
  CHECK(seen[1] == std::make_pair<uint64_t, uint64_t>(4, 4));  // the waiter on 5 is the least
  CHECK(seen[2] == std::make_pair<uint64_t, uint64_t>(9, 9));  // it left: back to 10 - 1
  CHECK(seen[3] == std::make_pair(UINT64_MAX, UINT64_MAX));    // nobody waits
  // Creation (UINT64_MAX) and the four changes above, each one DxgkDdiUpdateMonitoredValues element
  // the CMP applied; nothing else moves MV.
  CHECK(p.gpu.cmp.mv_updates() == 5);
  CHECK(p.vidsch.mv_updates() == 4);
  CHECK(b.mon.lost_interrupts() == 0);
}

TEST_CASE("Only a signal past MV interrupts, the DPC wakes its waiter and moves MV to the next", "[F3][F4]") {
  FenceBench b;
  auto& p = b.p;
  NativeFence* f = nullptr;
  uint64_t mv_after_first = 0;
  std::vector<sc_time> woke;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    for (uint64_t v = 1; v <= 6; ++v) w.compute(60000).signal(VidSch::va(*f, 1), v);  // every 30 us
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.spawn_thread("w6", [&] {
      p.vidsch.WaitFromCpu(f, 6);
      woke.push_back(sc_time_stamp());
    });
    p.vidsch.WaitFromCpu(f, 3);
    woke.push_back(sc_time_stamp());
    mv_after_first = b.os_mv(f);
  });
  sc_start();
  REQUIRE(woke.size() == 2);
  CHECK(p.gpu.cmp.fence_interrupts() == 2);  // signals 3 and 6
  CHECK(p.gpu.cmp.suppressed() == 4);        // 1, 2, 4, 5: CV not past MV
  CHECK(mv_after_first == 5);                // F4: the remaining waiter's 6 - 1
  CHECK(b.os_mv(f) == UINT64_MAX);
  CHECK(p.vidsch.waiters_woken() == 2);
  CHECK(p.vidsch.spurious_interrupts() == 0);
}

TEST_CASE("A GPU wait unblocks on the GPU at the derived time, with no CPU interrupt", "[F5]") {
  FenceBench b;
  auto& p = b.p;
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* qa = p.kmd.DxgkDdiCreateHwQueue(0);
    KmdHwQueue* qb = p.kmd.DxgkDdiCreateHwQueue(1);
    ts = p.kmd.scratch();
    PacketWriter a, w;
    w.timestamp(ts);
    a.compute(40000).signal(VidSch::va(*f, 1), 1);
    p.vidsch.SubmitAfterWait(qb, f, 1, w);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, a);
  });
  sc_start();
  using namespace tb::dflt;
  const sc_time t_s = p.gpu.nodes[0]->last_signal_start();
  // Node 0's TLB is cold for the fence's pages: its CV write and its shadow-MV check walk first (one
  // full walk each: node 0 walked only the KMD's system-memory region before), the MV check returns
  // (250 ns VRAM read + 8 B at 1008 GB/s), the CMP spends 20 cycles, then barriers: the CV write is
  // visible by then, and A's read-pointer write-back (its queue drains with the SIGNAL) is still being
  // translated (a PTE read: its region's PDE is cached since the ring's fetch), so the barrier costs
  // its 200 ns handshake alone
  // (tb::dflt::gpu_wait_unblock); B then resumes and decodes (4 ns) before it takes the timestamp.
  const sc_time expect = t_s + gpu_wait_unblock() + kDecode;
  CHECK(sc_time(double(p.sysmem.peek64(ts)), SC_PS) == expect);
  CHECK(p.cpu.interrupts() == 0);  // nothing went through the CPU
  CHECK(p.gpu.cmp.gpu_unblocks() == 1);
}

TEST_CASE("1,024 HW queues: each has registers of its own, and a GPU wait on the last runs at the derived time",
          "[F5][H2]") {
  // Hardware schedulers manage 1,024 queues. The KMD reads the count from BAR0 caps [31:22],
  // creates all of them (alternating nodes 0 and 1), and runs the F5 case above on the last two: queue
  // 1022 (node 0) signals after 20 us of COMPUTE, queue 1023 (node 1) waits for it on the GPU.
  FenceBench b(std::map<std::string, std::string>{{"gpu.hw_queues", "1024"}});
  auto& p = b.p;
  uint64_t ts = 0;
  DxgkAdapterInfo info;
  std::vector<KmdHwQueue*> q;
  bool refused_1025th = false;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(&info);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    for (int i = 0; i < 1024; ++i) q.push_back(p.kmd.DxgkDdiCreateHwQueue(i % 2));
    refused_1025th = p.kmd.DxgkDdiCreateHwQueue(0) == nullptr;
    ts = p.kmd.scratch();
    PacketWriter a, w;
    w.timestamp(ts);
    a.compute(40000).signal(VidSch::va(*f, 1), 1);
    p.vidsch.SubmitAfterWait(q[1023], f, 1, w);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q[1022], a);
  });
  sc_start();
  CHECK(info.hw_queues == 1024);
  CHECK(refused_1025th);
  REQUIRE(q.size() == 1024);
  // Every queue's registers landed in its own 64-byte slot (the block used to start at 0x1000 and would
  // have run over the node registers at 0x2000 and the doorbells at 0x10000).
  for (int i = 0; i < 1024; ++i) {
    REQUIRE(q[size_t(i)]);
    const HwQueue& hq = p.gpu.cmp.queue(i);
    CHECK(hq.enabled);
    CHECK(hq.node == i % 2);
    CHECK(hq.ring_base == q[size_t(i)]->ring_base);
    CHECK(hq.rptr_addr == q[size_t(i)]->rptr_addr);
  }
  CHECK(p.gpu.nodes[0]->fault_vector() == Kmd::kDmaFaultedVector);  // the node registers are intact
  CHECK(p.gpu.nodes[1]->fault_vector() == Kmd::kDmaFaultedVector);
  // The same derivation as the F5 case with two queues: the queues' rings lie further up system memory,
  // each in a 2 MiB region its node walks once for the ring's fetch, so the same translations lie on
  // the path (tb::dflt::gpu_wait_unblock), then B's decode.
  using namespace tb::dflt;
  const sc_time t_s = p.gpu.nodes[0]->last_signal_start();
  CHECK(sc_time(double(p.sysmem.peek64(ts)), SC_PS) == t_s + gpu_wait_unblock() + kDecode);
  CHECK(p.gpu.cmp.queue(1023).rptr == p.gpu.cmp.queue(1023).wptr);  // the last queue ran to its end
  CHECK(p.gpu.cmp.gpu_unblocks() == 1);
  CHECK(p.cpu.interrupts() == 0);
}

TEST_CASE("Fence lifetime: global and local handles, close then destroy on the last close", "[F11]") {
  FenceBench b;
  auto& p = b.p;
  std::vector<bool> valid;
  uint32_t la = 0, lb = 0, h = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(/*process A*/ 1, Segment::System, /*shareable*/ true);
    h = f->handle;
    lb = p.vidsch.OpenNativeFence(/*process B*/ 2, f);
    la = f->local_handles.at(1);
    auto fence_valid = [&] {
      p.cpu.sleep(us(2));  // let the posted register writes land
      return p.gpu.cmp.fence(p.vidsch.slot(*f))->valid();
    };
    valid.push_back(fence_valid());
    p.vidsch.DestroySynchronizationObject(1, f);  // A closes: DxgkDdiCloseNativeFence only
    valid.push_back(fence_valid());
    p.vidsch.DestroySynchronizationObject(2, f);  // B closes last: close, then destroy
    valid.push_back(fence_valid());
  });
  sc_start();
  CHECK(h != 0);
  CHECK(la != lb);
  CHECK(valid == std::vector<bool>{true, true, false});
}

namespace {
// A waiter on a fence the GPU signals at ~20 us; another thread destroys the fence after the CMP has
// written the interrupt's event entry but before the ISR reads it.
void destroyed_fence_in_flight(FenceBench& b) {
  auto& p = b.p;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(40000).signal(VidSch::va(*f, 1), 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.spawn_thread("destroyer", [&p, f] {
      while (p.gpu.cmp.fence_interrupts() == 0) p.cpu.sleep(sc_time(50, SC_NS));
      p.vidsch.DestroySynchronizationObject(1, f);
    });
    p.vidsch.WaitFromCpu(f, 1);
  });
  sc_start();
}
}  // namespace

TEST_CASE("Naming a destroyed fence in the signaled-fence array is a bug check", "[F11][F12]") {
  FenceBench b(
      std::map<std::string, std::string>{{"gpu.timestamp_tick_ps", "1"}, {"kmd.validate_signaled_handles", "false"}});
  destroyed_fence_in_flight(b);
  REQUIRE(b.p.vidsch.bugchecked());
  CHECK(b.p.vidsch.bugcheck_code() == 0x113);
  CHECK(b.p.vidsch.bugcheck_params().at(1) == 1);  // the destroyed fence's global handle
}

TEST_CASE("A KMD that drops destroyed fences from the array keeps the OS running", "[F11][F12]") {
  FenceBench b;  // kmd.validate_signaled_handles = true
  destroyed_fence_in_flight(b);
  CHECK_FALSE(b.p.vidsch.bugchecked());
  CHECK(b.p.gpu.cmp.fence_interrupts() == 1);
}

TEST_CASE("A CPU signal wakes CPU waiters and, through the notification, unblocks a GPU wait", "[F13][F5]") {
  FenceBench b;
  auto& p = b.p;
  bool cpu_ok = false;
  sc_time signalled;
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1);
    ts = p.kmd.scratch();
    PacketWriter w;
    w.timestamp(ts);
    p.vidsch.SubmitAfterWait(q, f, 5, w);
    p.cpu.spawn_thread("waiter", [&p, f, &cpu_ok] { cpu_ok = p.vidsch.WaitFromCpu(f, 5); });
    p.cpu.sleep(us(20));
    signalled = sc_time_stamp();
    p.vidsch.SignalFromCpu(f, 5);  // DxgkDdiUpdateCurrentValuesFromCpu
  });
  sc_start();
  CHECK(cpu_ok);
  using namespace tb::dflt;
  const sc_time b_ran(double(p.sysmem.peek64(ts)), SC_PS);
  // The KMD stores CV (8 B at 20 GB/s), posts the 4-byte notify (root complex, 28-byte TLP, hop, BAR0
  // write latency); the CMP spends 20 cycles, reads CV across the link, unblocks B, which holds its
  // fetched TIMESTAMP and decodes it.
  const sc_time notify_at_cmp = sc_time(8 / 20.0, SC_NS) + kRc + ser(4 + 24, kRate) + kHop + kBarWrite;
  CHECK(b_ran == signalled + notify_at_cmp + sc_time(20, SC_NS) + sysmem_read(8) + kDecode);
  CHECK(p.gpu.cmp.gpu_unblocks() == 1);
  CHECK(p.gpu.cmp.fence_interrupts() == 0);  // the CPU signalled: no GPU interrupt needed
}

TEST_CASE("A HW queue's native progress fence advances with every submission", "[F14]") {
  FenceBench b;
  auto& p = b.p;
  bool ok = false;
  NativeFence* pf = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    pf = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0, 0, pf->handle);  // NativeProgressFence
    for (int i = 0; i < 3; ++i) {
      PacketWriter w;
      w.compute(1000);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    }
    ok = p.vidsch.WaitFromCpu(pf, 3);
  });
  sc_start();
  CHECK(ok);
  CHECK(p.sysmem.peek64(pf->cv_addr) == 3);
}

TEST_CASE("Fence storage: non-shareable packed at the caps stride, shareable on pages of their own", "[F6]") {
  FenceBench b;
  auto& p = b.p;
  std::vector<NativeFence*> a, s;
  NativeFence *other = nullptr, *local = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    for (int i = 0; i < 3; ++i) a.push_back(p.vidsch.CreateNativeFence(1, Segment::System, false));
    for (int i = 0; i < 2; ++i) s.push_back(p.vidsch.CreateNativeFence(1, Segment::System, true));
    other = p.vidsch.CreateNativeFence(2, Segment::System, false);
    local = p.vidsch.CreateNativeFence(1, Segment::Local, false);
  });
  sc_start();
  const uint64_t stride = 64;  // kmd.fence_stride_bytes
  CHECK(a[1]->cv_addr == a[0]->cv_addr + stride);
  CHECK(a[2]->cv_addr == a[1]->cv_addr + stride);
  CHECK(a[0]->cv_addr / 4096 == a[2]->cv_addr / 4096);  // one shared page
  CHECK(a[0]->mv_addr / 4096 != a[0]->cv_addr / 4096);  // CV and MV stored apart
  for (auto* f : s) {
    CHECK(f->cv_addr % 4096 == 0);
    CHECK(f->mv_addr % 4096 == 0);
  }
  CHECK(s[0]->cv_addr / 4096 != s[1]->cv_addr / 4096);
  CHECK(other->cv_addr / 4096 != a[0]->cv_addr / 4096);  // another process: another page
  CHECK(local->cv_addr >= regs::kVramBase);              // the local segment
  for (auto* f : a) CHECK(f->cv_addr % 8 == 0);          // aligned: 64-bit writes are atomic (F1)
}

TEST_CASE("The torn_value monitor catches a 64-bit value written in two halves", "[F1]") {
  FenceBench b;
  auto& p = b.p;
  Probe bad("bad_agent");  // an agent that (wrongly) writes a CV as two 32-bit stores
  bad.sock.bind(p.gpu.fabric.tsock);
  NativeFence* f = nullptr;
  uint64_t seen = 0;
  // The agent's two stores are timed from the fence's creation (its MV update, and so its duration,
  // includes the CMP's cold-TLB walks): the low half 5 us after it, the high half 25 us after it; the
  // CPU reads 20 us after it, between the two.
  sc_event created;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    created.notify(SC_ZERO_TIME);
    p.cpu.sleep(us(20));  // the bad agent has written the low half only
    seen = p.cpu.mem_read64(f->cv_addr);
  });
  bad.body = [&] {
    wait(created);
    wait(us(5));
    const uint64_t v = 0x0000000500000007ull;
    bad.bus.post(f->cv_addr, &v, 4);  // low half now...
    wait(us(20));
    bad.bus.post(f->cv_addr + 4, reinterpret_cast<const char*>(&v) + 4, 4);  // ...high half later
  };
  sc_start();
  CHECK(seen == 7);  // half old (0), half new (7)
  CHECK(b.mon.torn_values() == 1);
}

TEST_CASE("Event ring overflow: a NULL array with EvaluateLegacyMonitoredFences wakes native and legacy waiters",
          "[F12][F5]") {
  // A 4-entry event ring and nine fences signalled back to back, each with a CPU waiter: the CMP drops
  // what does not fit, the KMD sees the monitored fence drop count move and reports NULL with
  // EvaluateLegacyMonitoredFences, and only that makes the DPC scan the legacy fence, whose own entry was
  // among the dropped.
  FenceBench b(std::map<std::string, std::string>{{"gpu.timestamp_tick_ps", "1"}, {"kmd.event_ring_entries", "4"}});
  auto& p = b.p;
  int woken = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    std::vector<NativeFence*> f;
    for (int i = 0; i < 8; ++i) f.push_back(p.vidsch.CreateNativeFence(1, Segment::System, false));
    f.push_back(p.vidsch.CreateNativeFence(1, Segment::System, false, /*legacy*/ true));
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(100000);                                  // 50 us: every waiter is registered first
    for (auto* x : f) VidSch::gpu_signal(w, *x, 1, 1);  // the monitored fence's: WRITE64, BARRIER, INTERRUPT
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    for (size_t i = 1; i < f.size(); ++i)
      p.cpu.spawn_thread("w" + std::to_string(i), [&, x = f[i]] { woken += p.vidsch.WaitFromCpu(x, 1); });
    woken += p.vidsch.WaitFromCpu(f[0], 1);
  });
  sc_start();
  CHECK(woken == 9);
  CHECK(p.vidsch.null_array_interrupts() >= 1);
  CHECK(b.mon.lost_interrupts() == 0);
}
