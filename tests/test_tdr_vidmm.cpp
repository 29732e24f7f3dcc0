// T7 for VidMm's own paging (TDR in Windows 8 and later; Allocation notifications): the allocations belong to the
// process devices that own them, a hung paging packet of VidMm's puts those devices in error state and not the system
// device, the adapter reset that follows loses the local memory (BACO) and VidMm restores what was resident, and the
// paging operation the reset aborted is submitted again, never counted done. Checked by content: the bytes after
// recovery.
#include <algorithm>
#include <vector>

#include "bench.h"
#include "hw_model/gpu/regs.h"
#include "scenarios/tdr/tdr_monitor.h"

using namespace tb;
using namespace sc_core;

namespace {
std::vector<uint8_t> seeded_pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 13 + seed);
  return v;
}
}  // namespace

namespace {
// A paging hang that resets the adapter quickly: a 1 MiB paging VA (the driver's answer overridden, so
// transfers and notifications come in 1 MiB chunks), a 1 ms quantum and TDR delay (the hung packet times
// out 2 ms after it reached the head), and a 1 s adapter reset (T7).
std::map<std::string, std::string> hung_paging_params() {
  return {{"kmd.paging_va_answer", "override"},
          {"kmd.paging_va_mb", "1"},
          {"vidsch.quantum_ms", "1"},
          {"vidsch.tdr_delay_ms", "1"},
          {"cmp.adapter_reset_ms", "1000"}};
}
}  // namespace

TEST_CASE(
    "VidMm's eviction transfer hangs on its writer - its process device goes to error state and not the system "
    "device - the adapter reset loses local memory - VidMm restores it and redoes the aborted transfer so the evicted "
    "bytes are the allocation's",
    "[T7][T5]") {
  // vidsch.quantum_ms = 1 and vidsch.tdr_delay_ms = 1: the hung transfer times out 2 ms after it reached the head;
  // the engine reset hits a paging packet, so the adapter resets (T7, cmp.adapter_reset_ms = 1000).
  Bench b(hung_paging_params());
  auto& p = b.p;
  PacketScheduler& ps = p.vidsch.packets();
  TdrRulesMonitor mon(p);
  const uint64_t bytes = 256 << 10;
  const std::vector<uint8_t> data_a = seeded_pattern(bytes, 1), data_o = seeded_pattern(bytes, 99);
  SchedDevice* dev = nullptr;
  VidMmAllocation *a = nullptr, *other = nullptr;
  std::vector<uint8_t> at_lost(bytes), evicted(bytes), other_after(bytes), a_after(bytes);
  chain(p.vidmm.observer.vram_lost, [&] { p.gpu.vram.peek(other->addr, at_lost.data(), unsigned(bytes)); });
  sc_time recovered = SC_ZERO_TIME, restored = SC_ZERO_TIME;
  chain(ps.observer.step, [&](const TdrStepRecord& s) {
    if (s.step == TdrStep::AdapterRecovered) recovered = s.at;
    if (s.step == TdrStep::VramRestored) restored = s.at;
  });
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    dev = ps.CreateDevice(false, 1);
    DxgkCreateAllocationArgs args;
    args.bytes = bytes;
    a = p.vidmm.CreateAllocation(1, Segment::Local, args, dev);
    other = p.vidmm.CreateAllocation(2, Segment::Local, args);  // process 2's: the device VidMm keeps for it
    p.sysmem.poke(a->shadow, data_a.data(), unsigned(bytes));
    p.sysmem.poke(other->shadow, data_o.data(), unsigned(bytes));
    p.vidmm.Upload(a);
    p.vidmm.Upload(other);
    NativeFence* never = p.vidsch.CreateNativeFence(1, Segment::System, false);
    p.vidsch.OpenNativeFence(0, never);
    p.vidmm.Evict(a, VidSch::va(*never, 0), 1);  // after its last writer, which never finishes
    p.sysmem.peek(a->evicted_to, evicted.data(), unsigned(bytes));
    p.gpu.vram.peek(other->addr, other_after.data(), unsigned(bytes));
  });
  sc_start(sc_time(3, SC_SEC));
  REQUIRE(a != nullptr);
  CHECK(ps.adapter_reset_cause() == "paging_hit");
  CHECK(ps.engine_resets() == 1);
  CHECK(ps.adapter_resets() == 1);
  // T7: the owner of the allocation the hung packet referenced, and only it (not process 2's, not the system's).
  CHECK(dev->error);
  CHECK(ps.devices_in_error() == 1);
  // BACO lost the local memory: process 2's allocation read as poison right after the reset...
  CHECK(std::all_of(at_lost.begin(), at_lost.end(), [](uint8_t v) { return v == VidMm::kPoison; }));
  // ... and holds its data again after VidMm's restore.
  CHECK(other_after == data_o);
  // The aborted transfer was redone after the restore (not counted done when aborted): the evicted bytes are the
  // allocation's, not the fresh system memory's zeros nor the poison.
  CHECK(evicted == data_a);
  CHECK(p.vidmm.paging_redone() == 1);
  CHECK(p.vidmm.restored_bytes() == 2 * bytes);
  CHECK(p.vidmm.restores() == 1);
  // The restore is part of the recovery: both allocations' bytes cross the link after the restart, at most at its
  // line rate (Gen4 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 B/ns).
  REQUIRE(restored > recovered);
  const double line = 16.0 * 16 * (128.0 / 130.0) / 8.0;
  CHECK((restored - recovered).to_seconds() * 1e9 >= 2.0 * double(bytes) / line);
  Results r;  // the monitor's end-of-run rules too (every aborted packet of VidMm's redone)
  mon.finish(r);
  CHECK(mon.violations() == 0);
}

TEST_CASE(
    "tdr_rules: a VidMm paging packet aborted by a reset and never submitted again - a render packet submitted before "
    "the restore - and local memory not restored after BACO - are violations",
    "[T7]") {
  Bench b;
  auto& p = b.p;
  TdrRulesMonitor mon(p);
  PacketSchedObserver& o = p.vidsch.packets().observer;
  uint64_t before = 0, after_restore = 0;
  VidMmAllocation* a = nullptr;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    DxgkCreateAllocationArgs args;
    args.bytes = 65536;
    a = p.vidmm.CreateAllocation(1, Segment::Local, args);
    p.vidmm.Upload(a);  // VidMm's paging context exists from here
  });
  sc_start();
  REQUIRE(p.vidmm.paging_context() != nullptr);
  DmaPacket pk;
  pk.paging = true;
  pk.ctx = const_cast<SchedContext*>(p.vidmm.paging_context());
  pk.state = DmaPacket::Aborted;
  o.retired(pk);  // aborted, and VidMm never redoes it
  // BACO: the adapter reset; the local memory changes and the restore brings back something else.
  o.step({-1, TdrStep::AdapterReset, SC_ZERO_TIME});
  p.vidmm.observer.vram_lost();
  const uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  p.gpu.vram.poke(a->addr, junk, 8);
  before = mon.violations();
  o.step({-1, TdrStep::AdapterRecovered, SC_ZERO_TIME});
  SchedDevice app{1, false};
  SchedContext ctx{1, &app, 0, 1};
  DmaPacket render;
  render.ctx = &ctx;
  render.fence_id = 1000;      // above what the uploads used
  o.submitted(render, false);  // before VidMm's restore
  const uint64_t after_render = mon.violations();
  CHECK(after_render == before + 1);
  before = after_render;
  p.vidmm.observer.vram_restored();
  after_restore = mon.violations();
  CHECK(before == 1);
  CHECK(after_restore == 2);  // the content differs from the one at the reset
  Results r;
  mon.finish(r);
  CHECK(mon.violations() == 3);  // and the aborted packet never came back
  // A packet counted done that did not complete.
  pk.state = DmaPacket::Aborted;
  p.vidmm.observer.paging_done(pk);
  CHECK(mon.violations() == 4);
}

TEST_CASE(
    "VidMm's NotifyEviction packet hangs on its writer - the allocation's process device goes to error state and not "
    "the system device - the notification is redone after the adapter reset and each chunk is notified once",
    "[T7][A2]") {
  // An aperture allocation of 3 MiB with NotifyEviction (compressed), a 1 MiB paging VA: three NOTIFY_ALLOC chunks,
  // the first waiting for the allocation's last writer, which never finishes. The timeout's engine reset hits that
  // paging packet: the adapter resets (T7). Its chunk was not notified; after the reset VidMm submits it again
  // (without the wait) and it completes: chunks 0, 1 and 2 notified, each once, in order.
  Bench b(hung_paging_params());
  auto& p = b.p;
  PacketScheduler& ps = p.vidsch.packets();
  TdrRulesMonitor mon(p);
  std::vector<uint64_t> notified;
  chain(p.vidmm.observer.eviction_notified,
        [&](const VidMmAllocation&, uint64_t off, uint64_t) { notified.push_back(off); });
  SchedDevice* dev = nullptr;
  VidMmAllocation* a = nullptr;
  bool evicted = false;
  p.cpu.spawn_thread("app", [&] {
    REQUIRE(p.kmd.DxgkDdiStartDevice(nullptr));
    dev = ps.CreateDevice(false, 1);
    DxgkCreateAllocationArgs args;
    args.bytes = 3 << 20;
    args.compressed = true;
    a = p.vidmm.CreateAllocation(1, Segment::Aperture, args, dev);
    NativeFence* never = p.vidsch.CreateNativeFence(1, Segment::System, false);
    p.vidsch.OpenNativeFence(0, never);
    p.vidmm.Evict(a, VidSch::va(*never, 0), 1);
    evicted = true;
  });
  sc_start(sc_time(3, SC_SEC));
  REQUIRE(a != nullptr);
  CHECK(ps.adapter_reset_cause() == "paging_hit");
  CHECK(dev->error);
  CHECK(ps.devices_in_error() == 1);  // the owner only: never the system device
  CHECK(p.vidmm.paging_redone() == 1);
  CHECK(evicted);
  CHECK_FALSE(a->resident);
  CHECK(notified == std::vector<uint64_t>{0, 1 << 20, 2 << 20});
  Results r;
  mon.finish(r);
  CHECK(mon.violations() == 0);
}
