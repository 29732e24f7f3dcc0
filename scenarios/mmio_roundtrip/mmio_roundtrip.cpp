// mmio_roundtrip: the two basic latencies of the link, each measured where it is observed.
//   cpu_mmio_read_ns: the CPU's uncached read of a BAR0 register (CPU clock around the load).
//   gpu_read_roundtrip_ns: a GPU DMA read of 8 bytes of system memory, from the node's own
//     performance counter (BAR0 NODE_DMA_READ_LAST), read back by the driver; the node's TLB already
//     holds the page's translation (a second copy of the same bytes), so this is the link round trip.
//   gpu_read_tlb_miss_ns: the same read the first time, with the node's TLB cold for the page: its
//     translation (GPU MMU, page tables in VRAM: one PTE read, the page-walk cache holding the region
//     from the ring fetch), then the round trip.
#include "hw_model/gpu/regs.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {
namespace {

class MmioRoundtrip : public ScenarioDriver {
 public:
  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("app", [&p, &r] { app(p, r); });
  }

 private:
  static void app(Platform& p, Results& r) {
    using namespace regs;
    DxgkAdapterInfo info;
    if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start: BAR0 did not identify the adapter")) return;

    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    const uint32_t id = p.cpu.mmio_read32(kBar0Base + kId);
    const sc_core::sc_time cpu_read = sc_core::sc_time_stamp() - t0;
    r.check(id == kIdValue, "BAR0 ID register read back wrong");

    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    if (!r.check(q != nullptr, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
    const uint64_t src = p.vidmm.allocate(Segment::System, 4096);
    const uint64_t dst = p.vidmm.allocate(Segment::Local, 4096);
    const uint64_t value = 0x0123456789ABCDEFull;
    p.cpu.mem_write(src, &value, 8);
    // The same copy twice: the first read walks the page tables (a cold TLB), the second hits.
    uint64_t read_ps[2] = {0, 0};
    KEvent& done = p.vidsch.interrupt_event(2);
    for (uint64_t& ps : read_ps) {
      PacketWriter w;
      w.copy(src, dst, 8).barrier().interrupt(2);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
      p.cpu.wait_for(done);
      ps = p.cpu.mmio_read64(kBar0Base + kNodeBase + kNDmaReadLastPs);
    }
    uint64_t copied = 0;
    p.cpu.mem_read(dst, &copied, 8);
    r.check(copied == value, "GPU DMA read returned the wrong data");

    r.metric("cpu_mmio_read_ns", to_ns(cpu_read));
    // The waveform's view: the CPU's read of BAR0 (its request up the link, the completion back), the
    // first latency; the GPU's DMA reads come later, after the queue's set-up, and only their length is known.
    r.event("MMIO read", t0.value());
    r.event("read done", (t0 + cpu_read).value());
    r.metric("gpu_read_roundtrip_ns", double(read_ps[1]) / 1000.0);
    r.metric("gpu_read_tlb_miss_ns", double(read_ps[0]) / 1000.0);
  }
};

}  // namespace

ScenarioInfo mmio_roundtrip_scenario() {
  return {
      "mmio_roundtrip", "CPU MMIO read of a BAR register; GPU DMA read of system memory",
      [](ParamSet&, const std::string&) {}, [](const ParamSet&) { return std::make_unique<MmioRoundtrip>(); },
      [](const ParamSet& ps) { require_platform(ps, "mmio_roundtrip", 1, 1, "one queue on node 0 for the DMA read"); }};
}

namespace {
const ScenarioRegistration kMmioRoundtripScenario{mmio_roundtrip_scenario, 2};
}  // namespace

}  // namespace gpumodel
