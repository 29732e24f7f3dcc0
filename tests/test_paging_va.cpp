// The paging process's GPU VA (Allocation notifications, "Paging process GPU VA space size", SPEC A4): the driver's
// answer to DXGKQAITYPE_PAGINGPROCESSGPUVASIZE by its rule, the monitor that reports a driver which gives no size
// where the OS's default is too small, fills chunked by the VA like transfers and notifications, and a promoted
// allocation's contents transferred back.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "kernel_stub/dxgkrnl/packet_sched.h"
#include "platform/platform.h"

using namespace tb;
using namespace tb::dflt;
using namespace sc_core;

namespace {

std::vector<DecodedPacket> decode_all(const PacketWriter& w) {
  std::vector<DecodedPacket> pk;
  const auto& dw = w.dwords();
  for (size_t i = 0; i < dw.size();) {
    const DecodedPacket d = decode_packet(dw.data() + i, dw.size() - i);
    REQUIRE(d.ok());
    pk.push_back(d);
    i += d.dwords;
  }
  return pk;
}

constexpr uint64_t kMiB = 1ull << 20;

}  // namespace

TEST_CASE("A4: the driver's rule answers 0 with a large local segment and its largest allocation's size otherwise",
          "[A4]") {
  // Direct3D 12's resource-size limit: min(max(128 MiB, 1/4 of the local segment), 2048 MiB).
  CHECK(Kmd::largest_allocation_bytes(16ull << 30, 0) == 2048 * kMiB);   // capped
  CHECK(Kmd::largest_allocation_bytes(1ull << 30, 0) == 256 * kMiB);     // a quarter
  CHECK(Kmd::largest_allocation_bytes(256 * kMiB, 0) == 128 * kMiB);     // the floor
  CHECK(Kmd::largest_allocation_bytes(16ull << 30, 300) == 300 * kMiB);  // kmd.largest_allocation_mb
  // The OS's default maps the largest allocation whole: 0, the OS decides (the 16 GiB dGPU: 4 GiB >= 2 GiB).
  CHECK(Kmd::paging_va_rule_mb(4096 * kMiB, 2048 * kMiB) == 0);
  CHECK(Kmd::paging_va_rule_mb(128 * kMiB, 128 * kMiB) == 0);  // exactly whole
  // Too small: the driver must give a size, its largest allocation's in whole MB.
  CHECK(Kmd::paging_va_rule_mb(64 * kMiB, 128 * kMiB) == 128);
  CHECK(Kmd::paging_va_rule_mb(64 * kMiB, 128 * kMiB + 1) == 129);
}

TEST_CASE("A4: a small local segment: the rule gives the size, and a driver that gives none is reported", "[A4]") {
  // A 256 MiB local segment: the OS's default is a quarter, 64 MiB (the 64 HW queues' 512 KiB of logs are
  // smaller); the driver's largest allocation is Direct3D 12's floor, 128 MiB, which 64 MiB cannot map whole.
  const std::string small = scenario("paging_va_size") + " --vram.size_bytes=268435456 --workload.alloc_mb=128";
  const auto rule = run_json(small, "rule");
  CHECK(rule["metrics"]["paging_va_mb"].get<uint64_t>() == 128);
  CHECK(rule["metrics"]["paging_va_from_driver"].get<bool>());
  CHECK(rule["metrics"]["chunks"].get<uint64_t>() == 1);  // mapped whole
  CHECK(rule["metrics"]["fill_chunks"].get<uint64_t>() == 1);
  CHECK(rule["monitors"]["paging_va_too_small"]["violations"].get<int>() == 0);
  // A defective driver answering 0, and one whose call fails: the OS's 64 MiB stays; the 128 MiB allocation
  // does not fit it whole (two chunks) and the monitor fails the verdict.
  for (const char* bad : {" --kmd.paging_va_answer=override --kmd.paging_va_mb=0", " --kmd.paging_va_answer=fail"}) {
    INFO(bad);
    const auto j = run_json(small + bad, "zero", 1);
    CHECK(j["metrics"]["paging_va_mb"].get<uint64_t>() == 64);
    CHECK(!j["metrics"]["paging_va_from_driver"].get<bool>());
    CHECK(j["metrics"]["chunks"].get<uint64_t>() == 2);
    CHECK(j["monitors"]["paging_va_too_small"]["violations"].get<int>() == 1);
  }
  // A size the driver gave, smaller than the allocation, is its choice: chunked, not reported.
  const auto given = run_json(small + " --kmd.paging_va_answer=override --kmd.paging_va_mb=32", "given");
  CHECK(given["metrics"]["chunks"].get<uint64_t>() == 4);
  CHECK(given["monitors"]["paging_va_too_small"]["violations"].get<int>() == 0);
}

TEST_CASE("A4: a fill is chunked by the paging process's VA: per chunk one packet maps it, the pattern's COPYs, unmaps",
          "[A4]") {
  Bench b({{"kmd.paging_va_answer", "override"}, {"kmd.paging_va_mb", "1"}});
  auto& p = b.p;
  std::vector<PacketWriter> paging;
  p.vidsch.packets().observer.submitted = [&](const DmaPacket& d, bool) {
    if (d.paging) paging.push_back(d.commands);
  };
  VidMmAllocation* a = nullptr;
  sc_time t0, t1;
  const uint32_t pattern = 0x1234'5678;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    DxgkCreateAllocationArgs args;
    args.bytes = 3 * kMiB;
    a = p.vidmm.CreateAllocation(1, Segment::Local, args);
    t0 = sc_time_stamp();
    p.vidmm.Fill(a, pattern);
    t1 = sc_time_stamp();
  });
  sc_start();
  REQUIRE(a);
  CHECK(p.vidmm.fill_chunks() == 3);  // ceil(3 MiB / 1 MiB)
  REQUIRE(paging.size() == 3);        // each chunk's 16 COPYs fit one packet: one packet a chunk
  const uint64_t window = VidMm::kPagingVaBase;
  uint64_t pattern_page = 0;
  for (const PacketWriter& w : paging) {
    // COPY(staging -> page table)+ FLUSH_TLB (the chunk mapped), 16 COPYs of 64 KiB from the pattern's page
    // to the window, COPY+ FLUSH_TLB (unmapped before the next chunk reuses the window).
    const auto pk = decode_all(w);
    auto flush1 = std::find_if(pk.begin(), pk.end(), [](const DecodedPacket& d) { return d.op == Op::FlushTlb; });
    REQUIRE(pk.end() - flush1 >= 18);
    CHECK(flush1->arg[0] == p.vidmm.system_root());
    for (int i = 0; i < 16; ++i) {
      const DecodedPacket& c = *(flush1 + 1 + i);
      REQUIRE(c.op == Op::Copy);
      if (!pattern_page) pattern_page = c.arg[0];
      CHECK(c.arg[0] == pattern_page);
      CHECK(c.arg[1] == window + uint64_t(i) * 65536);
      CHECK(c.arg[2] == 65536);
    }
    CHECK((flush1 + 17)->op == Op::Copy);  // the unmap's entries
    CHECK(pk.back().op == Op::FlushTlb);
  }
  // Real bytes: every 64 KiB of the local allocation holds the pattern.
  for (uint64_t off = 0; off < a->bytes; off += 65536) {
    INFO("offset " << off);
    CHECK(p.gpu.vram.peek64(a->addr + off) == 0x1234'5678'1234'5678ull);
    CHECK(p.gpu.vram.peek64(a->addr + off + 65528) == 0x1234'5678'1234'5678ull);
  }
  CHECK(p.sysmem.peek64(pattern_page) == 0x1234'5678'1234'5678ull);
  // Every byte of the 3 MiB crosses the link down from the pattern's page in system memory: at least
  // 3 MiB at the Gen4 x16 payload rate (kRate bytes per ns).
  CHECK(t1 - t0 >= sc_time(double(3 * kMiB) / kRate, SC_NS));
  CHECK(p.gpu.nodes[0]->page_faults() == 0);
}

TEST_CASE(
    "A4: a chunk's fill beyond one paging packet goes on in the next: the map in the first, the unmap in the last",
    "[A4]") {
  // kmd.ring_bytes 4096: a fill's packet carries (4096 / 2 - 36) / 28 = 71 COPYs of 64 KiB (36 B of
  // SET_PAGE_TABLE and FENCE, 28 B a COPY). An 8 MiB allocation in one 8 MiB chunk is 128 COPYs: 71, then 57.
  Bench b({{"kmd.paging_va_answer", "override"}, {"kmd.paging_va_mb", "8"}, {"kmd.ring_bytes", "4096"}});
  auto& p = b.p;
  std::vector<PacketWriter> paging;
  p.vidsch.packets().observer.submitted = [&](const DmaPacket& d, bool) {
    if (d.paging) paging.push_back(d.commands);
  };
  VidMmAllocation* a = nullptr;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    DxgkCreateAllocationArgs args;
    args.bytes = 8 * kMiB;
    a = p.vidmm.CreateAllocation(1, Segment::Local, args);
    p.vidmm.Fill(a, 0xFFFF'0000u);
  });
  sc_start();
  REQUIRE(a);
  CHECK(p.kmd.fill_bytes_per_packet() == 71 * 65536);
  CHECK(p.vidmm.fill_chunks() == 1);
  REQUIRE(paging.size() == 2);
  auto count = [](const std::vector<DecodedPacket>& pk, Op op) {
    return std::count_if(pk.begin(), pk.end(), [op](const DecodedPacket& d) { return d.op == op; });
  };
  const auto first = decode_all(paging[0]), second = decode_all(paging[1]);
  CHECK(count(first, Op::FlushTlb) == 1);  // the map, no unmap
  CHECK(first.back().op == Op::Copy);
  CHECK(first.back().arg[1] == VidMm::kPagingVaBase + 70 * 65536);
  CHECK(count(second, Op::FlushTlb) == 1);  // the unmap, after the rest
  CHECK(second.front().op == Op::Copy);
  CHECK(second.front().arg[1] == VidMm::kPagingVaBase + 71 * 65536);
  CHECK(second.back().op == Op::FlushTlb);
  CHECK(p.gpu.vram.peek64(a->addr) == 0xFFFF'0000'FFFF'0000ull);
  CHECK(p.gpu.vram.peek64(a->addr + a->bytes - 8) == 0xFFFF'0000'FFFF'0000ull);
}

TEST_CASE("A4: a promoted allocation's contents are transferred back from system memory through the paging VA",
          "[A4][A2]") {
  Bench b({{"kmd.paging_va_answer", "override"}, {"kmd.paging_va_mb", "1"}});
  auto& p = b.p;
  VidMmAllocation* a = nullptr;
  uint64_t first_addr = 0, evicted_to = 0, evict_chunks = 0, scratch = 0;
  std::vector<uint64_t> in_system;
  auto value = [](uint64_t i) { return (i + 1) * 0x9E37'79B9'7F4A'7C15ull; };
  const uint64_t bytes = 2 * kMiB, step = bytes / 8;
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    DxgkCreateAllocationArgs args;
    args.bytes = bytes;
    a = p.vidmm.CreateAllocation(1, Segment::Local, args);
    first_addr = a->addr;
    // The app writes eight values through the allocation's process VA (node 1, process 1).
    KmdHwQueue* q = p.kmd.DxgkDdiCreateHwQueue(1, 0, 0, 1);
    PacketWriter w;
    for (uint64_t i = 0; i < 8; ++i) w.write64(a->va + step * i, value(i));
    w.barrier().interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    p.vidmm.Evict(a);
    evicted_to = a->evicted_to;
    evict_chunks = p.vidmm.transfer_chunks();
    for (uint64_t i = 0; i < 8; ++i) in_system.push_back(p.sysmem.peek64(evicted_to + step * i));
    p.vidmm.MakeResident(a);
    // The app reads them back through the same VA: COPYs into its scratch page.
    scratch = p.kmd.scratch();
    PacketWriter r;
    for (uint64_t i = 0; i < 8; ++i) r.copy(a->va + step * i, scratch + 8 * i, 8);
    r.barrier().interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, r);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
  });
  sc_start();
  REQUIRE(a);
  CHECK(a->resident);
  // Eviction: 2 MiB through half of the 1 MiB window each side, 512 KiB a chunk: 4; the promotion 4 more.
  CHECK(evict_chunks == 4);
  CHECK(p.vidmm.transfer_chunks() == 8);
  CHECK(p.vidmm.bytes_moved() == 2 * bytes);
  for (uint64_t i = 0; i < 8; ++i) {
    INFO("value " << i);
    CHECK(in_system[i] == value(i));                           // evicted: in system memory
    CHECK(p.gpu.vram.peek64(a->addr + step * i) == value(i));  // promoted: back in the local segment...
    CHECK(p.sysmem.peek64(scratch + 8 * i) == value(i));       // ...where the process's VA now leads
  }
  CHECK(a->addr != first_addr);  // placed anew
  CHECK(a->evicted_to == 0);
  CHECK(p.gpu.nodes[0]->page_faults() == 0);
  CHECK(p.gpu.nodes[1]->page_faults() == 0);
}

TEST_CASE("On a linked adapter the OS asks the paging process VA size of each physical adapter by its index",
          "[A4][T2]") {
  // Allocation notifications: "pInputData points to a UINT value that specifies the physical adapter index in
  // an LDA configuration. Dxgkrnl sets it to 0 for non-LDA configurations".
  const auto one = run_json(scenario("paging_va_size"), "lda1");
  CHECK(one["verdict"] == "pass");
  CHECK(one["metrics"]["paging_va_indexes_asked"] == nlohmann::json::array({0}));
  const auto two = run_json(scenario("paging_va_size") + " --gpu.linked_engines=2 --gpu.nodes=4", "lda2");
  CHECK(two["verdict"] == "pass");
  CHECK(two["metrics"]["paging_va_indexes_asked"] == nlohmann::json::array({0, 1}));
  // Its physical adapters are alike, so the window is the same size.
  CHECK(two["metrics"]["paging_va_mb"] == one["metrics"]["paging_va_mb"]);
}
