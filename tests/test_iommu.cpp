// The host IOMMU and the memory controller alone, between an initiator and system memory: what a
// translation costs, and the order of a read and a write that arrive together.
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/iommu.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;

namespace {
// System memory behind the host IOMMU, a DMA initiator on its translated port and the host on its
// registers.
struct IommuRig {
  ParamSet ps;
  Memory mem;
  Iommu iommu;
  Probe dma, host;
  explicit IommuRig(ParamSet p)
      : ps(std::move(p)),
        mem("sysmem", ps, "sysmem.", regs::kSysmemBase),
        iommu("iommu", ps, mem, 0xFEE00000ull, 0x100000ull),
        dma("dma"),
        host("host") {
    dma.sock.bind(iommu.tsock);
    host.sock.bind(iommu.regs);
    iommu.isock.bind(mem.tsock);
  }
};

// The root, L2 and L1 tables for DMA address `va` (VT-d second-level style: 9 bits a level over 4 KiB
// pages), one page apart from `root` up; returns the L0 (leaf) table's address.
uint64_t map_upper_levels(Memory& mem, uint64_t root, uint64_t va) {
  uint64_t table = root;
  for (int level = 3; level >= 1; --level) {
    const uint64_t next = table + 0x1000;
    const uint64_t e = next | 1;
    mem.poke(table + 8 * ((va >> (12 + 9 * level)) & 511), &e, 8);
    table = next;
  }
  return table;
}
}  // namespace

TEST_CASE("IOMMU: an IOTLB miss walks four table levels, one iommu.walk_read_ns each, a hit costs nothing",
          "[A3][H2]") {
  // A four-level table (VT-d second-level style: 9 bits a level over 4 KiB pages) in system memory maps
  // DMA page 0x12345 to frame F. The first read of the page misses the IOTLB and walks: 4 reads of
  // iommu.walk_read_ns (310 ns here, an odd figure so that 3 or 5 levels cannot match); the same read
  // again hits. Both then take the same memory time, so the difference of the two read durations is
  // the walk alone: 4 x 310 = 1,240 ns.
  IommuRig rig(params({{"iommu.model", "gpuva_iommu"}, {"iommu.walk_read_ns", "310"}}));
  Memory& mem = rig.mem;
  Probe &dma = rig.dma, &host = rig.host;
  const uint64_t base = regs::kSysmemBase, root = base + 0x10000, dma_addr = 0x12345000ull;
  const uint64_t frame = (base + 0x800000) >> 12;
  const uint64_t table = map_upper_levels(mem, root, dma_addr);
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
  CHECK(rig.iommu.misses() == 1);
  CHECK(rig.iommu.hits() == 1);
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

TEST_CASE("IOMMU: a full IOTLB replaces its least recently used entry, and an invalidation makes the next access walk",
          "[A3][H2]") {
  // Two IOTLB entries, iommu.walk_read_ns 310 (odd, as above): a read that misses costs 4 x 310 = 1,240 ns
  // more than one that hits, every other term (the memory's 8-byte read) being the same for each read.
  // Pages P0, P1, P2 (one leaf table) map to three frames. The reads, and what the IOTLB holds after each:
  //   P0 miss {P0}; P0 hit (the reference duration); P1 miss {P0,P1}; P0 hit (P0 now the most recent);
  //   P2 miss: P1 is the least recently used, so {P0,P2}; P0 hit; P1 miss: P2 out, {P0,P1};
  //   the host invalidates the domain's root; P0 miss.
  // Evicting the most recent entry instead makes the sixth read miss; an invalidation that leaves the
  // entries makes the last one hit.
  IommuRig rig(params({{"iommu.model", "gpuva_iommu"}, {"iommu.walk_read_ns", "310"}, {"iommu.iotlb_entries", "2"}}));
  Memory& mem = rig.mem;
  Probe &dma = rig.dma, &host = rig.host;
  const uint64_t base = regs::kSysmemBase, root = base + 0x10000, p0 = 0x12345000ull;
  const uint64_t table = map_upper_levels(mem, root, p0);
  for (uint64_t i = 0; i < 3; ++i) {
    const uint64_t frame = (base + 0x800000) / 0x1000 + i;
    const uint64_t leaf = (frame << 12) | 1, value = 0xA0 + i;
    mem.poke(table + 8 * (((p0 >> 12) + i) & 511), &leaf, 8);
    mem.poke(frame << 12, &value, 8);
  }
  const int order[] = {0, 0, 1, 0, 2, 0, 1, -1, 0};  // -1: the host invalidates the root
  const bool miss[] = {true, false, true, false, true, false, true, false, true};
  std::vector<sc_time> took;
  std::vector<uint64_t> got;
  dma.body = [&] {
    host.bus.post(Iommu::kBase + Iommu::kRoot, &root, 8);
    sc_core::wait(1, SC_NS);
    for (int page : order) {
      if (page < 0) {
        host.bus.post(Iommu::kBase + Iommu::kInvalidate, &root, 8);
        sc_core::wait(1, sc_core::SC_US);
        took.push_back(sc_core::SC_ZERO_TIME);
        got.push_back(0);
        continue;
      }
      uint64_t v = 0;
      const sc_time t0 = sc_core::sc_time_stamp();
      dma.bus.read(p0 + 0x1000ull * uint64_t(page), &v, 8);
      took.push_back(sc_core::sc_time_stamp() - t0);
      got.push_back(v);
    }
  };
  sc_core::sc_start();
  REQUIRE(took.size() == 9);
  const sc_time hit = took[1];
  for (size_t i = 0; i < 9; ++i) {
    if (order[i] < 0) continue;
    INFO("read " << i << " of page P" << order[i]);
    CHECK(got[i] == 0xA0u + uint64_t(order[i]));
    CHECK(took[i] == hit + (miss[i] ? sc_time(4 * 310, SC_NS) : sc_core::SC_ZERO_TIME));
  }
  CHECK(rig.iommu.misses() == 5);
  CHECK(rig.iommu.hits() == 3);
}
