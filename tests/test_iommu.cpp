// The host IOMMU and the memory controller alone, between an initiator and system memory: what a
// translation costs, and the order of a read and a write that arrive together.
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/iommu.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;

TEST_CASE("IOMMU: an IOTLB miss walks four table levels, one iommu.walk_read_ns each, a hit costs nothing",
          "[A3][H2]") {
  // A four-level table (VT-d second-level style: 9 bits a level over 4 KiB pages) in system memory maps
  // DMA page 0x12345 to frame F. The first read of the page misses the IOTLB and walks: 4 reads of
  // iommu.walk_read_ns (310 ns here, an odd figure so that 3 or 5 levels cannot match); the same read
  // again hits. Both then take the same memory time, so the difference of the two read durations is
  // the walk alone: 4 x 310 = 1,240 ns.
  auto ps = params({{"iommu.model", "gpuva_iommu"}, {"iommu.walk_read_ns", "310"}});
  Memory mem("sysmem", ps, "sysmem.", regs::kSysmemBase);
  Iommu iommu("iommu", ps, mem, 0xFEE00000ull, 0x100000ull);
  Probe dma("dma"), host("host");
  dma.sock.bind(iommu.tsock);
  host.sock.bind(iommu.regs);
  iommu.isock.bind(mem.tsock);

  const uint64_t base = regs::kSysmemBase, root = base + 0x10000, dma_addr = 0x12345000ull;
  const uint64_t frame = (base + 0x800000) >> 12;
  uint64_t table = root;
  for (int level = 3; level >= 1; --level) {  // root -> L2 -> L1 -> L0 tables, one page apart
    const uint64_t next = table + 0x1000;
    const uint64_t e = next | 1;
    mem.poke(table + 8 * ((dma_addr >> (12 + 9 * level)) & 511), &e, 8);
    table = next;
  }
  const uint64_t leaf = (frame << 12) | 1;
  mem.poke(table + 8 * ((dma_addr >> 12) & 511), &leaf, 8);
  const uint64_t want = 0x1122334455667788ull;
  mem.poke(frame << 12, &want, 8);

  sc_time miss, hit;
  uint64_t got_miss = 0, got_hit = 0;
  dma.body = [&] {
    host.bus.post(Iommu::kBase + Iommu::kRoot, &root, 8);  // port 0's domain
    sc_core::wait(1, SC_NS);
    sc_time t0 = sc_core::sc_time_stamp();
    dma.bus.read(dma_addr, &got_miss, 8);
    miss = sc_core::sc_time_stamp() - t0;
    t0 = sc_core::sc_time_stamp();
    dma.bus.read(dma_addr, &got_hit, 8);
    hit = sc_core::sc_time_stamp() - t0;
  };
  sc_core::sc_start();
  CHECK(got_miss == want);
  CHECK(got_hit == want);
  CHECK(iommu.misses() == 1);
  CHECK(iommu.hits() == 1);
  CHECK(miss - hit == sc_time(4 * 310, SC_NS));
}

TEST_CASE(
    "Memory: a read arriving at the same instant as an earlier write sees the write, however short its own latency",
    "[F1][H2]") {
  // A write of 8 bytes, then a read of the same bytes, both reaching the controller at t = 0 (the
  // fence_stress case: eight queues' CV writes and the CMP's reads meet in one instant). Writes take
  // 500 ns to become visible here, reads sample after 10 ns: the read must not pass the write that
  // reached the controller with it (arrival <= arrival), so it waits for the write's visibility:
  // port time of the write (8 B at 76.8 GB/s, 104 ps) + 500 ns, and returns the new value.
  auto ps = params({{"sysmem.write_latency_ns", "500"}, {"sysmem.read_latency_ns", "10"}});
  Memory mem("sysmem", ps, "sysmem.", regs::kSysmemBase);
  Probe cpu("cpu");
  cpu.sock.bind(mem.tsock);
  const uint64_t a = regs::kSysmemBase + 0x40;
  const uint64_t old_v = 1, new_v = 0xABCDEF0123456789ull;
  mem.poke(a, &old_v, 8);
  uint64_t got = 0;
  sc_time done;
  cpu.body = [&] {
    cpu.bus.post(a, &new_v, 8);
    cpu.bus.read(a, &got, 8);
    done = sc_core::sc_time_stamp();
  };
  sc_core::sc_start();
  CHECK(got == new_v);
  CHECK(done == sc_time(104, SC_PS) + sc_time(500, SC_NS));
}
