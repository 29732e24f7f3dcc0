#include "scenarios/platform.h"

#include "hw_model/gpu/regs.h"

namespace gpumodel {

// sysmem.size_bytes's maximum (1020 GiB) is the room between system memory's base and the VRAM aperture.
static_assert(regs::kVramBase - regs::kSysmemBase == uint64_t(1020) << 30, "sysmem.size_bytes range");

void Platform::declare_params(ParamSet& ps) {
  Memory::declare_params(ps, "sysmem.", false);
  ps.declare_real("rc.latency_ns", 30, "ns", 0, 1e6,
                  "A: root-complex crossing each way; with 2 x 200 ns link hops and 90 ns DRAM it "
                  "reproduces the 550 ns small-read round trip (PARAMETERS.md, pcie-bench)");
  PcieLink::declare_params(ps);
  GpuAdapter::declare_params(ps);
  Cpu::declare_params(ps);
  VidSch::declare_params(ps);
  Kmd::declare_params(ps);
  ps.declare_real("sim.limit_ms", 1000, "ms", 0.001, 1e7,
                  "A: simulated-time budget; a run still busy at this time fails its check");
}

void Platform::validate(const ParamSet& ps) {
  // A node fetches whole chunks into its FIFO: a chunk larger than the FIFO never fits.
  if (ps.get_int("node.fetch_bytes") > ps.get_int("node.fifo_bytes"))
    throw ConfigError("node.fetch_bytes = " + std::to_string(ps.get_int("node.fetch_bytes")) +
                      " is larger than node.fifo_bytes = " + std::to_string(ps.get_int("node.fifo_bytes")) +
                      ": a ring fetch must fit in the command FIFO; allowed: node.fetch_bytes <= node.fifo_bytes");
}

Platform::Platform(const ParamSet& ps, Vcd& v, uint64_t seed)
    : params(ps),
      vcd(v),
      rng(seed),
      sysmem("sysmem", ps, "sysmem.", regs::kSysmemBase),
      intc("intc", v),
      rc("rc", ps.get_ns("rc.latency_ns")),
      link("link", ps, v),
      gpu("gpu", ps, v),
      cpu("cpu", ps, v, intc),
      vidmm(regs::kSysmemBase, sysmem.size(), regs::kVramBase, gpu.vram.size()),
      vidsch(ps, cpu, vidmm),
      kmd(ps, cpu, vidmm, vidsch) {
  vidsch.connect(kmd);
  rc.isock.bind(sysmem.tsock);    // port 0
  rc.isock.bind(intc.tsock);      // port 1
  rc.isock.bind(link.down_in);    // port 2
  rc.map(regs::kSysmemBase, sysmem.size(), 0, "system memory");
  rc.map(InterruptController::kMsiBase, InterruptController::kMsiSize, 1, "MSI window");
  rc.map(regs::kBar0Base, regs::kBar0Size, 2, "GPU BAR0");
  rc.map(regs::kVramBase, gpu.vram.size(), 2, "GPU BAR2 (VRAM aperture)");
  cpu.isock.bind(rc.tsock);
  link.up_out.bind(rc.tsock);
  link.down_out.bind(gpu.host_if.tsock);
  gpu.fabric.isock.bind(link.up_in);  // fabric port 1: everything outside VRAM goes up the link
}

}  // namespace gpumodel
