// GPU virtual memory and the memory manager (Allocation notifications, SPEC A1-A4, F10): the GPU MMU's translation and
// TLB timing, page faults, TLB invalidation, the IOMMU, VidMm's notifications and the paging process's VA.
// Exact times come from the default parameters: a walk is four reads of VRAM (vram.read_latency_ns 250 ns
// plus the transfer at 1008 GB/s; gpu.fabric_latency_ns 0), three of 8 bytes and the dual PDE's 16.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "hw_model/gpu/regs.h"
#include "kernel_stub/dxgkrnl/packet_sched.h"
#include "platform/platform.h"
#include "scenarios/vidmm/vidmm_monitor.h"

using namespace tb;
using namespace tb::dflt;
using namespace sc_core;

namespace {

// L3, L2 (8 B each), the L1 dual PDE (16 B), the PTE (8 B): sequential reads of VRAM.
sc_time walk4() { return 3 * (kVram + vram_xfer(8)) + kVram + vram_xfer(16); }

}  // namespace

TEST_CASE(
    "GPU MMU: a TLB miss walks the four levels through TLM reads, a page-walk cache hit reads the PTE, a TLB hit adds "
    "nothing",
    "[H2]") {
  Bench b;
  auto& p = b.p;
  uint64_t ts = 0, buf = 0, buf2 = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    buf = p.vidmm.allocate(Segment::Local, 4096);
    buf2 = p.vidmm.allocate(Segment::Local, 4096);  // the next 4 KiB page: the same 2 MiB region
    ts = p.kmd.scratch();
    PacketWriter warm;
    warm.timestamp(ts).interrupt(1);  // the scratch page's translation is in the TLB afterwards
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, warm);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    PacketWriter w;
    // Each TIMESTAMP samples after its decode; its write hits. buf: a cold region, the full walk;
    // buf2: its region's dual PDE is in the page-walk cache, only the PTE; buf + 8: a TLB hit.
    w.timestamp(ts + 8).write64(buf, 1).timestamp(ts + 16).write64(buf2, 2).timestamp(ts + 24);
    w.write64(buf + 8, 3).timestamp(ts + 32).interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
  });
  sc_start();
  REQUIRE(buf2 == buf + 4096);
  REQUIRE(buf / (2u << 20) == buf2 / (2u << 20));
  CHECK(b.ts(ts + 16) - b.ts(ts + 8) == kDecode + walk4() + kDecode);
  CHECK(b.ts(ts + 24) - b.ts(ts + 16) == kDecode + (kVram + vram_xfer(8)) + kDecode);  // the PTE read alone
  CHECK(b.ts(ts + 32) - b.ts(ts + 24) == kDecode + kDecode);                           // a hit: the decodes only
  CHECK(p.gpu.vram.peek64(buf) == 1);
  CHECK(p.gpu.vram.peek64(buf2) == 2);
  const GpuMmu& m = p.gpu.nodes[0]->mmu();
  CHECK(m.pwc_hits() > 0);
  CHECK(m.faults() == 0);
}

TEST_CASE("GPU MMU: a 64 KiB page is one TLB entry for all of it", "[H2]") {
  Bench b;
  auto& p = b.p;
  uint64_t ts = 0, misses_before = 0, misses_after = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    const uint64_t big = p.vidmm.allocate(Segment::Local, 65536, 65536);  // one 64 KiB page
    ts = p.kmd.scratch();
    PacketWriter warm;
    warm.timestamp(ts).interrupt(1);  // the scratch page and the ring are in the TLB afterwards
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, warm);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    misses_before = p.gpu.nodes[0]->mmu().misses();
    PacketWriter w;
    w.timestamp(ts + 8).write64(big, 1).write64(big + 61440, 2).timestamp(ts + 16).interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    misses_after = p.gpu.nodes[0]->mmu().misses();
  });
  sc_start();
  CHECK(misses_after - misses_before == 1);  // the 64 KiB page; its last 4 KiB hit the same entry
  // The miss walks the small table first when the 2 MiB region has one (a fifth read), else four.
  const sc_time d = b.ts(ts + 16) - b.ts(ts + 8) - 3 * kDecode;
  CHECK((d == walk4() || d == walk4() + kVram + vram_xfer(8)));
}

TEST_CASE("GPU MMU: an access to an unmapped VA is a page fault reported as DMA_FAULTED, and the model runs on",
          "[H2][H3]") {
  Bench b;
  auto& p = b.p;
  bool second_ran = false;
  const uint64_t bad = 0x7000'0000'0000ull;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q0 = p.kmd.DxgkDdiCreateHwQueue(0);
    KmdHwQueue* q1 = p.kmd.DxgkDdiCreateHwQueue(1);
    PacketWriter w;
    w.write64(bad, 1).interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q0, w);
    PacketWriter ok;
    ok.interrupt(2);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q1, ok);
    second_ran = p.cpu.wait_for(p.vidsch.interrupt_event(2), sc_time(1, SC_MS));
  });
  sc_start(sc_time(2, SC_MS));
  const Node& n = *p.gpu.nodes[0];
  CHECK(n.page_faults() == 1);
  CHECK(n.last_fault_va() == bad);
  REQUIRE(n.fault_messages().size() == 1);
  CHECK(n.fault_messages()[0].find("page fault") != std::string::npos);
  CHECK(p.gpu.cmp.queue(0).faulted);  // the queue stopped at the packet
  CHECK(p.kmd.dma_faults() == 1);     // the ISR found the node by its fault count
  REQUIRE(p.vidsch.dma_faults().size() == 1);
  CHECK(p.vidsch.dma_faults()[0].node == 0);
  CHECK(p.vidsch.dma_faults()[0].va == bad);
  CHECK(second_ran);  // another queue still runs
}

TEST_CASE("GPU MMU: a changed entry is not seen until the TLB is invalidated, by FLUSH_TLB or by BAR0", "[H2]") {
  Bench b;
  auto& p = b.p;
  uint64_t a = 0, b1 = 0, b2 = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    a = p.vidmm.allocate(Segment::Local, 4096);
    b1 = p.vidmm.allocate(Segment::Local, 4096);
    b2 = p.vidmm.allocate(Segment::Local, 4096);
    const uint64_t root = p.vidmm.space(1).root();
    auto run = [&](PacketWriter& w) {
      w.interrupt(1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
      p.cpu.wait_for(p.vidsch.interrupt_event(1));
    };
    PacketWriter w1;
    w1.write64(a, 1);  // the TLB now holds a -> a
    run(w1);
    std::vector<PteWrite> e;
    p.vidmm.space(1).map(a, b1, 4096, false, e);  // a -> b1, written into the table, no invalidation
    p.vidmm.write_entries(e);
    PacketWriter w2;
    w2.write64(a + 8, 2);  // stale: still lands in a's page
    run(w2);
    PacketWriter w3;
    w3.flush_tlb(root).write64(a + 16, 3);  // after FLUSH_TLB: b1's page
    run(w3);
    e.clear();
    p.vidmm.space(1).map(a, b2, 4096, false, e);
    p.vidmm.write_entries(e);
    p.kmd.invalidate_tlbs(root);  // the MMIO path
    PacketWriter w4;
    w4.write64(a + 24, 4);
    run(w4);
  });
  sc_start();
  auto& v = p.gpu.vram;
  CHECK(v.peek64(a) == 1);
  CHECK(v.peek64(a + 8) == 2);  // the stale translation
  CHECK(v.peek64(b1 + 8) == 0);
  CHECK(v.peek64(b1 + 16) == 3);  // FLUSH_TLB
  CHECK(v.peek64(a + 16) == 0);
  CHECK(v.peek64(b2 + 24) == 4);  // BAR0 kMmuInvalidate
  CHECK(v.peek64(b1 + 24) == 0);
  CHECK(p.gpu.nodes[0]->mmu().invalidations() == 2);
}

namespace {
void check_flags(bool on) {
  const std::string v = on ? "true" : "false";
  Bench b(std::map<std::string, std::string>{{"kmd.notify_eviction", v}, {"kmd.notify_iommu_unmap", v}});
  DxgkCreateAllocationArgs c, k, n;
  c.compressed = k.driver_cached = true;
  c.bytes = k.bytes = n.bytes = 65536;
  const DxgkAllocationInfoFlags2 fc = b.p.kmd.DxgkDdiCreateAllocation(c), fk = b.p.kmd.DxgkDdiCreateAllocation(k),
                                 fn = b.p.kmd.DxgkDdiCreateAllocation(n);
  CHECK(fc.notify_eviction == on);
  CHECK(!fc.notify_iommu_unmap);
  CHECK(fk.notify_iommu_unmap == on);
  CHECK(!fk.notify_eviction);
  CHECK((!fn.notify_eviction && !fn.notify_iommu_unmap));
}
}  // namespace

TEST_CASE("A1: DxgkDdiCreateAllocation sets NotifyEviction on compressed and NotifyIoMmuUnmap on cached allocations",
          "[A1]") {
  check_flags(true);
}

TEST_CASE("A1: a driver that does not ask for notifications sets neither flag", "[A1]") { check_flags(false); }

TEST_CASE(
    "A4: the paging process has a GPU VA only with a local segment or hardware scheduling, sized max(1/4 local, logs)",
    "[A4]") {
  CHECK(VidMm::paging_va_exists(16ull << 30, false));
  CHECK(VidMm::paging_va_exists(0, true));
  CHECK(!VidMm::paging_va_exists(0, false));
  CHECK(VidMm::paging_va_default(16ull << 30, 8192) == 4ull << 30);
  CHECK(VidMm::paging_va_default(16ull << 20, 64ull << 20) == 64ull << 20);  // the logs are larger
}

TEST_CASE(
    "A4: DXGKQAITYPE_PAGINGPROCESSGPUVASIZE: the driver's rule or override, and 0 or a failed call let the OS "
    "decide",
    "[A4]") {
  // The OS's default on the dGPU: a quarter of the 16 GiB local segment (the page-table memory included).
  const uint64_t os = (uint64_t(16) << 30) / 4;
  for (auto [arg, want, driver] :
       {std::tuple{"--kmd.paging_va_answer=override --kmd.paging_va_mb=16", uint64_t(16) << 20, true},
        std::tuple{"--kmd.paging_va_answer=override --kmd.paging_va_mb=0", os, false},
        std::tuple{"--kmd.paging_va_answer=fail", os, false},
        // The rule on a large local segment: 0, the OS decides.
        std::tuple{"--kmd.paging_va_answer=rule", os, false}}) {
    INFO(arg);
    const auto j = run_json(scenario("paging_va_size") + " " + arg + " --workload.alloc_mb=64", "va");
    CHECK(j["metrics"]["paging_va_mb"].get<uint64_t>() == want >> 20);
    CHECK(j["metrics"]["paging_va_from_driver"].get<bool>() == driver);
    // Fill, transfer and notify are chunked by it: ceil(64 MiB / VA).
    CHECK(j["metrics"]["chunks"].get<uint64_t>() == ((uint64_t(64) << 20) + want - 1) / want);
    CHECK(j["metrics"]["fill_chunks"].get<uint64_t>() == ((uint64_t(64) << 20) + want - 1) / want);
    CHECK(j["monitors"]["paging_va_too_small"]["violations"].get<int>() == 0);
    // Its page tables are always resident: per 2 MiB a 4 KiB small-page table and a 256 B big-page table,
    // per 1 GiB an 8 KiB L1 table (dual PDEs), per 512 GiB a 4 KiB L2 table.
    const uint64_t pt = (want >> 21) * (4096 + 256) + ((want + (1ull << 30) - 1) >> 30) * 8192 +
                        ((want + (1ull << 39) - 1) >> 39) * 4096;
    CHECK(j["metrics"]["paging_page_table_bytes"].get<uint64_t>() == pt);
  }
}

TEST_CASE("A2: each NotifyEviction chunk is one paging packet: map into the paging VA, the driver's work, unmap",
          "[A2][A4]") {
  Bench b(std::map<std::string, std::string>{{"kmd.paging_va_answer", "override"}, {"kmd.paging_va_mb", "1"}});
  auto& p = b.p;
  std::vector<PacketWriter> paging;
  p.vidsch.packets().observer.submitted = [&](const DmaPacket& d, bool) {
    if (d.paging) paging.push_back(d.commands);
  };
  VidMmAllocation* a = nullptr;
  std::vector<uint64_t> notified;
  p.vidmm.observer.eviction_notified = [&](const VidMmAllocation&, uint64_t off, uint64_t n) {
    notified.push_back(off);
    CHECK(n == (1u << 20));
  };
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    DxgkCreateAllocationArgs args;
    args.bytes = 3 << 20;
    args.compressed = true;
    a = p.vidmm.CreateAllocation(1, Segment::Aperture, args);
    p.vidmm.Evict(a);
  });
  sc_start();
  REQUIRE(a);
  CHECK(!a->resident);
  CHECK(p.vidmm.notify_chunks() == 3);
  CHECK(notified == std::vector<uint64_t>{0, 1 << 20, 2 << 20});
  REQUIRE(paging.size() == 4);  // three chunks, then the process's VA unmapped
  const uint64_t window = VidMm::kPagingVaBase;
  for (int c = 0; c < 3; ++c) {
    // COPY(staging -> page table)+ FLUSH_TLB, COMPUTE, COPY(window -> window), COPY+ FLUSH_TLB.
    std::vector<DecodedPacket> pk;
    const auto& dw = paging[size_t(c)].dwords();
    for (size_t i = 0; i < dw.size();) {
      const DecodedPacket d = decode_packet(dw.data() + i, dw.size() - i);
      REQUIRE(d.ok());
      pk.push_back(d);
      i += d.dwords;
    }
    auto flush1 = std::find_if(pk.begin(), pk.end(), [](const DecodedPacket& d) { return d.op == Op::FlushTlb; });
    REQUIRE(flush1 != pk.end());
    CHECK(flush1->arg[0] == p.vidmm.system_root());
    auto notify = flush1 + 1;
    REQUIRE(notify != pk.end());
    CHECK(notify->op == Op::Compute);  // the decompression pass: kmd.notify_eviction_cycles_per_kb x 1024 KiB
    CHECK(notify->arg[0] == 256u * 1024u);
    CHECK((notify + 1)->op == Op::Copy);
    CHECK((notify + 1)->arg[0] == window);  // in place, at the paging process's VA
    CHECK((notify + 1)->arg[1] == window);
    CHECK((notify + 1)->arg[2] == (1u << 20));
    CHECK(pk.back().op == Op::FlushTlb);  // unmapped again before the next chunk
    CHECK(std::all_of(pk.begin(), flush1, [](const DecodedPacket& d) { return d.op == Op::Copy; }));
  }
  // Nothing touched the evicted allocation: the monitors' rule holds.
  CHECK(p.gpu.nodes[0]->page_faults() == 0);
}

TEST_CASE("A2: NotifyEviction is sent only for an aperture or the implicit system segment, never for local memory",
          "[A2]") {
  Bench b(std::map<std::string, std::string>{{"kmd.paging_va_answer", "override"}, {"kmd.paging_va_mb", "1"}});
  auto& p = b.p;
  uint64_t after_local = 99, after_system = 99, moved_local = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    DxgkCreateAllocationArgs args;
    args.bytes = 2 << 20;
    args.compressed = true;
    VidMmAllocation* local = p.vidmm.CreateAllocation(1, Segment::Local, args);
    p.vidmm.Evict(local);
    after_local = p.vidmm.notify_chunks();
    moved_local = p.vidmm.bytes_moved();
    VidMmAllocation* sys = p.vidmm.CreateAllocation(1, Segment::System, args);
    p.vidmm.Evict(sys);
    after_system = p.vidmm.notify_chunks();
  });
  sc_start();
  CHECK(after_local == 0);           // local: transferred to system memory, no notification
  CHECK(moved_local == (2u << 20));  // its bytes moved once
  CHECK(after_system == 2);          // the implicit system segment: two 1 MiB chunks
}

TEST_CASE("A2: the eviction_without_notify monitor reports VidMm skipping the notification", "[A2]") {
  const auto good = run_json(scenario("eviction_notify"), "good");
  CHECK(good["monitors"]["eviction_without_notify"]["violations"].get<int>() == 0);
  CHECK(good["monitors"]["use_after_unmap"]["violations"].get<int>() == 0);
  CHECK(good["metrics"]["chunks"].get<int>() == 4);  // 32 MiB / the 8 MiB paging VA
  const auto bad = run_json(scenario("eviction_notify") + " --vidmm.fault_skip_eviction_notify=true", "skip", 1);
  CHECK(bad["monitors"]["eviction_without_notify"]["violations"].get<int>() == 1);
}

TEST_CASE(
    "A3: NotifyIoMmuUnmap runs, every paging operation completes, then the IOMMU unmap, only under an IOMMU model",
    "[A3]") {
  const auto j = run_json(scenario("iommu_unmap_notify"), "iommu");
  CHECK(j["monitors"]["eviction_without_notify"]["violations"].get<int>() == 0);
  CHECK(j["monitors"]["use_after_unmap"]["violations"].get<int>() == 0);
  CHECK(j["metrics"]["iommu_faults"].get<int>() == 0);
  // The notified unmap costs the driver's flush (kmd.notify_iommu_unmap_cycles: 1 us at 2 GHz) and its
  // packet's round trip: more than the plain one, by at least the flush.
  CHECK(j["metrics"]["unmap_ns"].get<double>() >= j["metrics"]["unmap_ns_without_notify"].get<double>() + 1000.0);
  // VidMm unmapping from the IOMMU without the notification: the monitor reports it.
  const auto skip = run_json(scenario("iommu_unmap_notify") + " --vidmm.fault_skip_eviction_notify=true", "iskip", 1);
  CHECK(skip["monitors"]["eviction_without_notify"]["violations"].get<int>() == 1);
  // Physical addressing: the scenario refuses (A3 has nothing to send).
  const Run r = run_cli(scenario("iommu_unmap_notify") + " --iommu.model=physical");
  CHECK(r.code == 2);
  CHECK(r.err.find("iommu.model") != std::string::npos);
}

TEST_CASE("A3: unmapping from the IOMMU without waiting for the paging operations is caught: the engine's DMA faults",
          "[A3]") {
  const std::string args = scenario("eviction_notify") + " --iommu.model=gpuva_iommu";
  const auto good = run_json(args, "wait");
  CHECK(good["monitors"]["use_after_unmap"]["violations"].get<int>() == 0);
  CHECK(good["metrics"]["iommu_faults"].get<int>() == 0);  // the OS read the IOMMU's fault log
  const auto bad = run_json(args + " --vidmm.fault_iommu_unmap_without_wait=true", "nowait", 1);
  CHECK(bad["monitors"]["use_after_unmap"]["violations"].get<int>() > 0);
}

TEST_CASE("use_after_unmap: an app touching an evicted allocation's VA faults (DMA_FAULTED) and the monitor reports it",
          "[A2][A3]") {
  const auto bad = run_json(scenario("eviction_notify") + " --workload.touch_after_evict=true", "touch", 1);
  CHECK(bad["monitors"]["use_after_unmap"]["violations"].get<int>() == 1);
  bool page_fault = false;
  for (auto& f : bad["why_failed"])
    page_fault = page_fault || f.get<std::string>().find("page fault") != std::string::npos;
  CHECK(page_fault);
}

TEST_CASE("IOMMU: under GpuVaIoMmu the adapter's DMA to system memory is remapped through the IOTLB", "[A3]") {
  Bench b(std::map<std::string, std::string>{{"iommu.model", "gpuva_iommu"}});
  auto& p = b.p;
  uint64_t buf = 0, faults = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    buf = p.vidmm.allocate(Segment::System, 8192);
    PacketWriter w;
    w.write64(buf, 1).write64(buf + 8, 2).barrier().interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    faults = p.cpu.mmio_read64(Iommu::kBase + Iommu::kFaults);
  });
  const uint64_t m0 = 0;
  sc_start();
  CHECK(p.sysmem.peek64(buf) == 1);
  CHECK(p.sysmem.peek64(buf + 8) == 2);
  CHECK(p.iommu.misses() > m0);
  CHECK(p.iommu.hits() > 0);  // buf + 8 hit the entry buf's write loaded
  CHECK(faults == 0);
}

namespace {
void check_f10(bool map) {
  Bench b(std::map<std::string, std::string>{{"kmd.native_fence_map_to_system_process", map ? "true" : "false"}});
  auto& p = b.p;
  NativeFence* f = nullptr;
  bool woke = false;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.signal(VidSch::va(*f, 1), 5);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    woke = p.vidsch.WaitFromCpu(f, 5, sc_time(1, SC_MS));
  });
  sc_start(sc_time(2, SC_MS));
  REQUIRE(f);
  CHECK(p.kmd.DxgkDdiQueryAdapterInfoNativeFenceCaps().map_to_gpu_system_process == map);
  const FenceEntry* e = p.gpu.cmp.fence(p.vidsch.slot(*f));
  if (map) {
    CHECK(e->cv_addr >= VidMm::kAliasVaBase);  // a VA of the system process, away from the CPU's address
    CHECK(e->cv_addr != f->cv_addr);
    CHECK((e->cv_addr & 0xfff) == (f->cv_addr & 0xfff));
    CHECK(p.gpu.cmp.fence_names(p.vidsch.slot(*f)).mv_addr >= VidMm::kAliasVaBase);
  } else {
    CHECK(e->cv_addr == f->cv_addr);  // the driver's own mapping
  }
  CHECK(p.sysmem.peek64(f->cv_addr) == 5);  // the engine's write through the CMP's VA reached the CV
  CHECK(woke);
  CHECK(p.gpu.cmp.page_faults() == 0);
}
}  // namespace

TEST_CASE("F10: with MapToGpuSystemProcess the CMP holds the system-process VAs the OS mapped, not the CPU's addresses",
          "[F10]") {
  check_f10(true);
}

TEST_CASE("F10: without MapToGpuSystemProcess the OS passes no VAs and the KMD programs its own mapping", "[F10]") {
  check_f10(false);
}

TEST_CASE("Copy engine: each page of a copy misses once (the walkers run ahead, the tags' misses coalesce with them)",
          "[H2]") {
  Bench b;
  auto& p = b.p;
  uint64_t before = 0, after = 0, src = 0, dst = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    src = p.vidmm.allocate(Segment::Local, 1 << 20);  // >= 1 MiB: 64 KiB aligned, sixteen 64 KiB pages
    dst = p.vidmm.allocate(Segment::System, 1 << 20);
    PacketWriter warm;
    warm.interrupt(1);  // the ring's page is in the TLB afterwards
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, warm);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    before = p.gpu.nodes[0]->mmu().misses();
    PacketWriter w;
    w.copy(src, dst, 1 << 20).interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    after = p.gpu.nodes[0]->mmu().misses();
  });
  sc_start();
  CHECK(src % 65536 == 0);
  CHECK(dst % 65536 == 0);
  // 16 source pages and 16 destination pages, each walked once; the 16 DMA tags hit or wait.
  CHECK(after - before == 32);
  CHECK(p.gpu.nodes[0]->mmu().faults() == 0);
}

TEST_CASE("SET_PAGE_TABLE switches the context's space, and the TLB and page-walk cache keep two processes apart",
          "[H2]") {
  Bench b;
  auto& p = b.p;
  VidMmAllocation *a2 = nullptr, *a3 = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);  // process 1's queue
    DxgkCreateAllocationArgs args;
    args.bytes = 1 << 20;
    a2 = p.vidmm.CreateAllocation(2, Segment::Local, args);  // each process's first private allocation:
    a3 = p.vidmm.CreateAllocation(3, Segment::Local, args);  // the same VA, different pages
    const uint64_t r2 = p.vidmm.space(2).root(), r3 = p.vidmm.space(3).root();
    PacketWriter w;
    w.set_page_table(r2).write64(a2->va, 0x22).set_page_table(r3).write64(a3->va, 0x33);
    // The next 64 KiB page of the same 2 MiB region: a TLB miss each, the region's PDE in the walk cache.
    w.set_page_table(r2).write64(a2->va + 65536, 0x24).set_page_table(r3).write64(a3->va + 65536, 0x34);
    w.barrier().interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
  });
  sc_start();
  REQUIRE(a2->va == a3->va);
  REQUIRE(a2->addr != a3->addr);
  auto& v = p.gpu.vram;
  CHECK(v.peek64(a2->addr) == 0x22);
  CHECK(v.peek64(a3->addr) == 0x33);
  CHECK(v.peek64(a2->addr + 65536) == 0x24);
  CHECK(v.peek64(a3->addr + 65536) == 0x34);
  CHECK(p.gpu.nodes[0]->page_faults() == 0);  // the VA exists only in processes 2 and 3, not in the queue's 1
  CHECK(p.gpu.nodes[0]->mmu().pwc_hits() > 0);
}

TEST_CASE("FLUSH_TLB clears the page-walk cache too: the next miss in the region is a full walk again", "[H2]") {
  Bench b;
  auto& p = b.p;
  uint64_t ts = 0, buf = 0;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    buf = p.vidmm.allocate(Segment::Local, 3 * 4096);
    ts = p.kmd.scratch();
    const uint64_t root = p.vidmm.space(1).root();
    PacketWriter warm;
    warm.timestamp(ts).write64(buf, 1).interrupt(1);  // the scratch page and buf's region are walked
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, warm);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    PacketWriter w;
    w.flush_tlb(root).timestamp(ts + 8).write64(buf + 4096, 2).timestamp(ts + 16).interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
  });
  sc_start();
  // After the flush: the TIMESTAMP's own write misses (scratch: a full walk, after its sample), then buf's
  // next page misses in a region the walk cache no longer holds: a full walk, not one PTE read.
  CHECK(b.ts(ts + 16) - b.ts(ts + 8) == walk4() + kDecode + walk4() + kDecode);
}

TEST_CASE("IOMMU: after an eviction's IOMMU unmap a stale GPU mapping's DMA faults, the write is dropped and counted",
          "[A3]") {
  Bench b(std::map<std::string, std::string>{{"iommu.model", "gpuva_iommu"}});
  auto& p = b.p;
  VidMmAllocation* a = nullptr;
  uint64_t faults_before = 0, faults_after = 0;
  const uint64_t rogue = 0x5000'0000'0000ull;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(0);
    DxgkCreateAllocationArgs args;
    args.bytes = 65536;
    a = p.vidmm.CreateAllocation(1, Segment::System, args);
    // A second GPU mapping of its first page that VidMm does not know of (a driver's stale mapping).
    std::vector<PteWrite> e;
    p.vidmm.space(1).map(rogue, a->addr, 4096, true, e);
    p.vidmm.write_entries(e);
    auto run = [&](uint64_t v) {
      PacketWriter w;
      w.write64(rogue, v).barrier().interrupt(1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
      p.cpu.wait_for(p.vidsch.interrupt_event(1));
    };
    run(1);  // the IOTLB now holds the page
    faults_before = p.cpu.mmio_read64(Iommu::kBase + Iommu::kFaults);
    p.vidmm.Evict(a);  // ... until the IOMMU unmap invalidates it
    run(2);
    faults_after = p.cpu.mmio_read64(Iommu::kBase + Iommu::kFaults);
  });
  sc_start();
  CHECK(faults_before == 0);
  CHECK(faults_after == 1);
  CHECK(p.sysmem.peek64(a->addr) == 1);  // the second write was dropped
}

TEST_CASE("IOMMU: an MSI does not pass the posted writes before it, so the ISR finds the event entry it reports",
          "[A3]") {
  // fence_signal under GpuVaIoMmu with the CPU's interrupt path at zero cost: the CMP's event-ring entry
  // misses the IOTLB (a 4 x 90 ns walk) and its MSI, not remapped, follows at once. Were the MSI to pass
  // the entry, the ISR would read the ring before the entry is there and the waiter would never wake.
  const auto j = run_json(scenario("fence_signal") +
                              " --iommu.model=gpuva_iommu --cpu.interrupt_entry_ns=0 --cpu.isr_ns=0 --cpu.dpc_ns=0"
                              " --cpu.thread_wake_ns=0 --cpu.c1_exit_ns=0",
                          "msi_order");
  CHECK(j["verdict"] == "pass");
  CHECK(j["monitors"]["lost_interrupt"]["violations"].get<int>() == 0);
}

TEST_CASE("eviction_without_notify: an eviction whose NotifyEviction operations cover half the allocation is reported",
          "[A2]") {
  // eviction_notify as its file sets it (32 MiB allocations, an 8 MiB paging VA: four chunks, each
  // NotifyEviction'd before the unmap). The monitor is shown every other chunk's notification only (the
  // test filters what reaches it; the run is the same): 16 of 32 MiB covered at the unmap, which A2
  // forbids, so one violation naming the bytes. With every chunk shown the scenario's own run reports
  // none (the eviction_notify tests).
  auto ps = params({{"kmd.paging_va_answer", "override"},
                    {"kmd.paging_va_mb", "8"},
                    {"vidmm.system_budget_mb", "64"},
                    {"sim.limit_ms", "5000"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  AllocationRulesMonitor monitor(p);
  auto inner = p.vidmm.observer.eviction_notified;
  int shown = 0;
  p.vidmm.observer.eviction_notified = [&](const VidMmAllocation& a, uint64_t off, uint64_t n) {
    if (shown++ % 2 == 0) inner(a, off, n);
  };
  Results r;
  auto driver = find_scenario("eviction_notify")->make(ps);
  driver->build(p, r);
  sc_start(sc_time(5000, sc_core::SC_MS));
  monitor.finish(r);
  CHECK(shown == 4);
  CHECK(r.monitors["eviction_without_notify"] == 1);
  bool named = false;
  for (auto& f : r.failures) named = named || f.find("16777216 of 33554432 bytes notified") != std::string::npos;
  for (auto& f : r.why_failed()) named = named || f.find("eviction_without_notify") != std::string::npos;
  CHECK(named);
}

TEST_CASE(
    "A zero fill's DMA packet is the size the TDR scenarios' ring check derives: SET_PAGE_TABLE and FENCE plus one "
    "COPY per 64 KiB",
    "[T2]") {
  // Kmd::fill_packet_bytes refuses a TDR paging load whose fill cannot fit the ring before the run; it
  // must be what DxgkDdiBuildPagingBuffer writes, plus DxgkDdiSubmitCommand's SET_PAGE_TABLE (12 B) and
  // FENCE (24 B): 36 B + 28 B per COPY.
  Bench b;
  for (uint64_t bytes : {4096ull, 65536ull, 65537ull, 153288704ull, 153288705ull, 1073741824ull}) {
    PacketWriter w;
    DxgkPagingOp op;
    op.kind = DxgkPagingOp::Fill;
    op.dst = 0x1000'0000;
    op.bytes = bytes;
    b.p.kmd.DxgkDdiBuildPagingBuffer(op, w);
    CHECK(Kmd::fill_packet_bytes(bytes) == 36 + w.bytes());
  }
  CHECK(Kmd::fill_packet_bytes(153288704) == 65528);  // 2,339 copies: fits the default 65,536 B ring
  CHECK(Kmd::fill_packet_bytes(153288705) == 65556);  // a 2,340th copy: it does not
  CHECK(Kmd::fill_packet_bytes(1073741824) == 458788);
}

TEST_CASE("TDR scenarios accept a zero fill that fills the ring exactly and refuse one byte more", "[T2]") {
  // 153,288,704 B is 2,339 copies: 36 + 2,339 x 28 = 65,528 B, within the default 65,536 B ring (a
  // 2,340th copy, 65,556 B, is not). 5 ms between operations is within the link's line-rate bound.
  auto with = [](const char* bytes) {
    ParamSet ps = params({{"gpu.nodes", "3"}, {"workload.paging_bytes", bytes}, {"workload.paging_every_us", "5000"}});
    ps.apply_scenario_defaults("tdr_engine_reset");
    return ps;
  };
  CHECK_NOTHROW(validate_scenario(with("153288704"), "tdr_engine_reset"));
  CHECK_THROWS_AS(validate_scenario(with("153288705"), "tdr_engine_reset"), ConfigError);
}
