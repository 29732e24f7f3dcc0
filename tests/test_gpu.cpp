// The adapter driven by the KMD: ring fetch after a doorbell, BARRIER completion, MSI delivery and the
// CPU's interrupt path. GPU timestamps use a 1 ps tick here so times are asserted exactly.
#include "bench.h"
#include "hw_model/gpu/regs.h"

using namespace tb;
using namespace sc_core;

using namespace tb::dflt;

namespace {}  // namespace

TEST_CASE("Ring fetch: from the doorbell write to the first packet's execution", "[H2][H3]") {
  Bench b;
  auto& p = b.p;
  sc_time t_submit;
  uint64_t ts = 0;
  bool started = false;
  KmdHwQueue* q = nullptr;
  p.cpu.spawn_thread("app", [&] {
    started = p.kmd.DxgkDdiStartDevice(nullptr);
    q = p.kmd.DxgkDdiCreateHwQueue(0);
    wait(ns_(10000));  // every register write has landed
    ts = p.kmd.scratch();
    PacketWriter w;
    w.timestamp(ts);
    t_submit = sc_time_stamp();
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  sc_start();
  REQUIRE(started);
  REQUIRE(q);
  // The 12-byte packet: ring store, doorbell, CMP (tb::dflt::submit_to_kick), then the node fetches
  // it from the ring in system memory (sysmem_read) and decodes it. The node's first fetch of the ring
  // misses its cold TLB: a full walk (tb::dflt::walk) before the read, which caches the dual PDE of
  // the ring's 2 MiB region in the node's page-walk cache.
  PwcTrace node;
  CHECK(p.sysmem.peek64(ts) ==
        (t_submit + submit_to_kick(12) + node.miss(q->ring_base) + sysmem_read(12) + kDecode).value());
  CHECK(p.gpu.nodes[0]->packets_executed() == 1);
  // Three misses: the ring's page, then the TIMESTAMP's write to the scratch page (after its value was
  // taken) and the read-pointer write-back to its own page as the queue drains: each a PTE read where
  // its region is the ring's (with the driver's default layout, both: 2 PWC hits, 4 + 1 + 1 reads).
  node.miss(ts);
  node.miss(q->rptr_addr);
  CHECK(p.gpu.nodes[0]->mmu().misses() == node.misses());
  CHECK(p.gpu.nodes[0]->mmu().pwc_hits() == node.hits);
  CHECK(p.gpu.nodes[0]->mmu().walk_reads() == node.walk_reads());
}

TEST_CASE("BARRIER completes when the node's earlier writes are visible, plus its scope's handshake", "[H2]") {
  Bench b;
  auto& p = b.p;
  uint64_t sysx = 0, vramx = 0;  // a page of system memory and one of VRAM, mapped through VidMm
  uint64_t ts = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    sysx = p.vidmm.allocate(Segment::System, 4096);
    vramx = p.vidmm.allocate(Segment::Local, 4096);
    ts = p.kmd.scratch();
    PacketWriter w1, w2, w3;
    w1.timestamp(ts).write64(sysx, 1).barrier().timestamp(ts + 8);  // system scope
    w2.timestamp(ts + 16).write64(sysx + 8, 2).timestamp(ts + 24);  // no barrier
    // Device scope: every write of this stream stays in VRAM (a timestamp to system memory would make
    // the barrier wait for it too, at system scope).
    w3.timestamp(vramx + 8).write64(vramx, 3).barrier().timestamp(vramx + 16);
    for (auto* w : {&w1, &w2, &w3}) {
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, *w);
      wait(ns_(20000));
    }
  });
  sc_start();
  auto t = [&](int i) { return sc_time(double(p.sysmem.peek64(ts + 8 * uint64_t(i))), SC_PS); };
  // WRITE64 posts one decode after the first timestamp; it leaves the 100 ns write buffer and is
  // visible after a 32-byte TLP, the hop, the root complex and DRAM. The barrier then adds the 200 ns
  // system-scope handshake, and the last TIMESTAMP its decode. Two TLB misses hold the executor on the
  // way: the first TIMESTAMP's write to the scratch page (after its value was taken), then WRITE64's
  // to sysx's page (allocated after the queue's read pointer, +0x18000). Both lie in the KMD's 2 MiB
  // region of system memory, whose dual PDE the node's page-walk cache holds since its walk for the
  // ring's first fetch: one PTE read each.
  const sc_time write_vis =
      t(0) + pte_read() + kDecode + pte_read() + kWb + ser(8 + 24, kRate) + kHop + kRc + dram_xfer(8) + kDram;
  CHECK(t(1) == write_vis + ns_(200) + kDecode);
  // Without the barrier the second timestamp is taken two decodes later, before the write is visible
  // (the ring's, the scratch page's and sysx's translations are in the TLB now: no walk).
  CHECK(t(3) == t(2) + kDecode + kDecode);
  CHECK(t(3) < t(2) + kDecode + kWb + ser(8 + 24, kRate) + kHop + kRc + dram_xfer(8) + kDram);
  // Local memory: write buffer, 8 bytes at 1008 GB/s, 250 ns write latency, 100 ns device scope. The
  // first TIMESTAMP's write is the node's first touch of vramx's page, and of VRAM at all (no PDE of
  // that region cached): a full walk before WRITE64 decodes.
  const sc_time t4(double(p.gpu.vram.peek64(vramx + 8)), SC_PS), t5(double(p.gpu.vram.peek64(vramx + 16)), SC_PS);
  CHECK(t5 == t4 + walk() + kDecode + kWb + vram_xfer(8) + ns_(250) + ns_(100) + kDecode);
  CHECK(p.gpu.vram.peek64(vramx) == 3);
}

TEST_CASE("MSI: an INTERRUPT packet reaches the interrupt controller as a posted write, then ISR, DPC, thread",
          "[H2][H3]") {
  Bench b;
  auto& p = b.p;
  uint64_t ts = 0;
  sc_time woke;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1);
    ts = p.kmd.scratch();
    PacketWriter w;
    w.timestamp(ts).interrupt(5);
    KEvent& ev = p.vidsch.interrupt_event(5);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(ev);
    woke = sc_time_stamp();
  });
  sc_start();
  const sc_time t_a(double(p.sysmem.peek64(ts)), SC_PS);
  const auto& s = p.cpu.last_interrupt();
  // The TIMESTAMP's write is the node's first touch of the scratch page: a TLB miss holds the executor
  // after the value was taken. Node 1 walked the ring's page in full for the fetch, which cached the
  // dual PDE of the KMD's 2 MiB region of system memory (the scratch page's too) in its page-walk
  // cache: the miss reads only the PTE. INTERRUPT then decodes, the CMP spends 32 cycles at 1 GHz,
  // then the 4-byte MSI write goes up the link (28-byte TLP), across the hop and the root complex to
  // the interrupt controller (an MSI is not translated).
  CHECK(s.msi_arrival == t_a + pte_read() + kDecode + ns_(32) + ser(4 + 24, kRate) + kHop + kRc);
  // The core sat in C1 (the app thread was blocked): 2 us exit, 0.5 us entry + 2 us ISR, 1 us DPC,
  // 2 us to dispatch the woken thread.
  CHECK(s.idle_exit == ns_(2000));
  CHECK(s.isr_start == s.msi_arrival + ns_(2000));
  CHECK(s.isr_end == s.isr_start + ns_(500) + ns_(2000));
  CHECK(s.dpc_start == s.isr_end);
  CHECK(s.dpc_end == s.dpc_start + ns_(1000));
  CHECK(woke == s.dpc_end + ns_(2000));
  CHECK(p.intc.msi_count() == 1);
  CHECK(p.gpu.cmp.msi_sent() == 1);
}

namespace {
// Queue A (priority `pa`) gets 20 x 1 us of COMPUTE then a TIMESTAMP; 5 us later queue B (priority
// `pb`, same node) gets one TIMESTAMP. Returns (A's end, B's TIMESTAMP, B's submit time).
struct TwoQueues {
  sc_time a_done, b_ran, b_submitted;
  uint64_t misses = 0, pwc_hits = 0, walk_reads = 0;  // node 0's TLB misses, PWC hits, table reads
};
TwoQueues two_queues(Bench& b, uint32_t pa, uint32_t pb) {
  auto& p = b.p;
  uint64_t ts = 0;
  TwoQueues r;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* qa = p.kmd.DxgkDdiCreateHwQueue(0, pa);
    KmdHwQueue* qb = p.kmd.DxgkDdiCreateHwQueue(0, pb);
    ts = p.kmd.scratch();
    PacketWriter aw, bw;
    for (int i = 0; i < 20; ++i) aw.compute(2000);  // 20 x 1 us at 2 GHz
    aw.timestamp(ts);
    bw.timestamp(ts + 8);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, aw);
    wait(ns_(5000));
    r.b_submitted = sc_time_stamp();
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qb, bw);
  });
  sc_start();
  r.a_done = sc_time(double(p.sysmem.peek64(ts)), SC_PS);
  r.b_ran = sc_time(double(p.sysmem.peek64(ts + 8)), SC_PS);
  r.misses = p.gpu.nodes[0]->mmu().misses();
  r.pwc_hits = p.gpu.nodes[0]->mmu().pwc_hits();
  r.walk_reads = p.gpu.nodes[0]->mmu().walk_reads();
  return r;
}
// B runs at the first packet boundary after its kick: A finishes the COMPUTE it is in (at most 1 us),
// the node switches, fetches B's 12-byte packet and decodes it. Two TLB misses lie on that path: A's
// read-pointer write-back as it gives the node up (the node's first write to that page; the
// translation holds the executor before the switch), then the fetch of B's ring, a page the node never
// touched. Both are in the KMD's 2 MiB region of system memory, whose dual PDE the node's page-walk
// cache holds since the full walk for A's first ring fetch: one PTE read each.
void check_b_preempts(const TwoQueues& r) {
  const sc_time kick = r.b_submitted + submit_to_kick(12);
  CHECK(r.b_ran >= kick + pte_read() + pte_read() + sysmem_read(12) + kDecode);
  CHECK(r.b_ran <= kick + ns_(1000) + pte_read() + pte_read() + sysmem_read(12) + kDecode);
  // Five misses in all: A's ring and read pointer, B's ring, the scratch page (B's TIMESTAMP) and B's
  // read pointer; A's return hits every page it needs. All five pages are in that one region: one
  // full walk (A's ring), then four PTE reads.
  CHECK(r.misses == 5);
  CHECK(r.pwc_hits == 4);
  CHECK(r.walk_reads == 4 + 4 * 1);
  CHECK(r.a_done > r.b_ran);  // A resumes afterwards and ends after its 20 us of COMPUTE
}
}  // namespace

TEST_CASE("A higher-priority queue preempts at a packet boundary", "[H2]") {
  Bench b;  // default 100 us time slice: only the priority can make B run early
  check_b_preempts(two_queues(b, 0, 1));
}

TEST_CASE("Queues of equal priority share a node by time slice", "[H2]") {
  // A has run 5 us when B arrives, beyond the 1 us slice: B runs at A's next packet boundary.
  Bench b({{"gpu.timestamp_tick_ps", "1"}, {"cmp.timeslice_us", "1"}});
  check_b_preempts(two_queues(b, 0, 0));
}

TEST_CASE("Without a higher priority or an expired slice, a queue waits for the running one", "[H2]") {
  Bench b;  // equal priority, 100 us slice: A's 20 us run is not interrupted
  const TwoQueues r = two_queues(b, 0, 0);
  CHECK(r.b_ran > r.a_done);
}
