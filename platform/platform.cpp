#include "platform/platform.h"

#include "hw_model/gpu/regs.h"
#include "platform/energy.h"

namespace gpumodel {

// sysmem.size_bytes's maximum (1020 GiB) is the room between system memory's base and the VRAM aperture.
static_assert(regs::kVramBase - regs::kSysmemBase == uint64_t(1020) << 30, "sysmem.size_bytes range");
// The iGPU's BAR0 lies below the dGPU's and clear of it.
static_assert(regs::kIgpuBar0Base + regs::kBar0Size <= regs::kBar0Base, "iGPU BAR0 overlaps the dGPU's");

namespace {
constexpr uint32_t kIgpuMsiDataBase = Kmd::kMsiDataBase + Kmd::kMsiVectors;  // after the dGPU's vectors
// Which adapter drives the panel: "gpu", "igpu" or "".
std::string display_adapter(const ParamSet& ps, Topology t) {
  const std::string& a = ps.get_enum("display.adapter");
  if (a == "auto") return t == Topology::Hybrid ? "igpu" : "";
  return a == "none" ? "" : a;
}
uint64_t stolen_bytes(const ParamSet& ps, Topology t) {
  return t == Topology::Hybrid ? uint64_t(ps.get_int("igpu.stolen_bytes")) : 0;
}
}  // namespace

void Platform::declare_params(ParamSet& ps) {
  ps.declare_enum("platform.topology", "dgpu", {"dgpu", "hybrid"},
                  "A: dgpu = one discrete adapter behind the link (a desktop); hybrid = an integrated "
                  "adapter on the host side plus the discrete one (a hybrid laptop, CASO support)");
  Memory::declare_params(ps, "sysmem.", false);
  ps.declare_real("rc.latency_ns", 30, "ns", 0, 1e6,
                  "A: root-complex crossing each way; with 2 x 200 ns link hops and 90 ns DRAM it "
                  "reproduces the 550 ns small-read round trip (docs/calibration.md, pcie-bench)");
  PcieLink::declare_params(ps);
  Iommu::declare_params(ps);
  VidMm::declare_params(ps);
  GpuAdapter::declare_params(ps);
  GpuAdapter::declare_integrated_params(ps);
  ps.declare_enum("display.adapter", "auto", {"auto", "none", "gpu", "igpu"},
                  "A: which adapter drives the panel; auto = the iGPU on a hybrid platform (CASO support: the "
                  "integrated adapter drives a laptop's panel), none on a dgpu platform");
  DisplayEngine::declare_params(ps);
  Cpu::declare_params(ps);
  EnergyModel::declare_params(ps);
  VidSch::declare_params(ps);
  Kmd::declare_params(ps);
  Kmd::declare_adapter_params(ps, "gpu");
  Kmd::declare_adapter_params(ps, "igpu");
  RuntimePm::declare_params(ps);
  ps.declare_int("vidmm.page_table_mb", 64, "MiB", 1, 1 << 16,
                 "A: local memory VidMm keeps for GPU page tables (at most a quarter of the local segment): "
                 "4 KiB of PTEs map 2 MiB in 4 KiB pages, so 64 MiB maps 32 GiB at the worst");
  ps.declare_real("sim.limit_ms", 1000, "ms", 0.001, 1e7,
                  "A: simulated-time budget; a run still busy at this time fails its check");
}

Topology Platform::topology_of(const ParamSet& ps) {
  return ps.get_enum("platform.topology") == "hybrid" ? Topology::Hybrid : Topology::Dgpu;
}

void Platform::validate_linked_engines(const ParamSet& ps) {
  // T2: every engine of a linked adapter has the same number of nodes.
  if (ps.get_int("gpu.nodes") % ps.get_int("gpu.linked_engines") != 0)
    throw ConfigError(
        "gpu.nodes = " + std::to_string(ps.get_int("gpu.nodes")) +
        " cannot be split evenly over gpu.linked_engines = " + std::to_string(ps.get_int("gpu.linked_engines")) +
        " (every engine of a linked adapter has the same node count, TDR in Windows 8 and later); allowed: gpu.nodes a "
        "multiple of gpu.linked_engines");
}

void Platform::validate(const ParamSet& ps) {
  // A key of a node the platform lacks (gpu.node9.reset_ns on three nodes) configures nothing.
  std::vector<std::string> nodes = GpuAdapter::node_instances(ps, "gpu");
  if (topology_of(ps) == Topology::Hybrid)
    for (auto& n : GpuAdapter::node_instances(ps, "igpu")) nodes.push_back(n);
  ps.check_instances(nodes);
  // A node fetches whole chunks into its FIFO: a chunk larger than the FIFO never fits (each node's own).
  for (auto& n : nodes) {
    auto key = [&](const std::string& k) { return ps.was_set(n + "." + k) ? n + "." + k : "node." + k; };
    const int64_t fetch = ps.get_int(n, "node.fetch_bytes"), fifo = ps.get_int(n, "node.fifo_bytes");
    if (fetch > fifo)
      throw ConfigError(key("fetch_bytes") + " = " + std::to_string(fetch) + " is larger than " + key("fifo_bytes") +
                        " = " + std::to_string(fifo) + ": a ring fetch must fit in the command FIFO; allowed: " +
                        key("fetch_bytes") + " <= " + key("fifo_bytes"));
  }
  DisplayEngine::validate(ps);
  PcieLink::validate(ps);
  validate_linked_engines(ps);
  // F19: the optimized interrupt names a queue whose log the OS reads; without logs it names nothing.
  if (ps.get_bool("kmd.optimized_native_fence_signaled_interrupt") && !ps.get_bool("vidsch.native_fence_logs"))
    throw ConfigError(
        "kmd.optimized_native_fence_signaled_interrupt = true needs vidsch.native_fence_logs = true: the "
        "optimized interrupt names the HW queue whose log holds the signal (Native GPU fence object); allowed: "
        "vidsch.native_fence_logs = true, or kmd.optimized_native_fence_signaled_interrupt = false");
  // A4: the paging process's window keeps its page tables resident in the dGPU's page-table memory; a
  // window whose tables would take more than half of it cannot be built.
  {
    const uint64_t local = uint64_t(ps.get_int("vram.size_bytes"));
    const uint64_t table_mem = std::min<uint64_t>(uint64_t(ps.get_int("vidmm.page_table_mb")) << 20, local / 4);
    const std::string& answer = ps.get_enum("kmd.paging_va_answer");
    if (answer != "override" && ps.was_set("kmd.paging_va_mb"))
      throw ConfigError("kmd.paging_va_mb is the driver's answer only under kmd.paging_va_answer = override (it is " +
                        answer + "); allowed: set kmd.paging_va_answer = override, or drop kmd.paging_va_mb");
    const uint64_t os_default =
        VidMm::paging_va_default(local, VidMm::log_buffer_bytes(uint32_t(ps.get_int("gpu.hw_queues"))));
    uint64_t mb = answer == "override" ? uint64_t(ps.get_int("kmd.paging_va_mb")) : 0;
    if (answer == "rule")
      mb = Kmd::paging_va_rule_mb(
          os_default, Kmd::largest_allocation_bytes(local, uint64_t(ps.get_int("kmd.largest_allocation_mb"))));
    const uint64_t window = mb ? mb << 20 : os_default;
    const uint64_t tables = (window + (2ull << 20) - 1) / (2ull << 20) * (4096 + 256) +
                            (window + (1ull << 30) - 1) / (1ull << 30) * 8192 +
                            (window + (1ull << 39) - 1) / (1ull << 39) * 4096;
    // Where the window's size came from, in the driver's and the OS's words.
    const std::string origin =
        answer == "override" && mb ? "the driver's answer kmd.paging_va_mb = " + std::to_string(mb)
        : answer == "rule" && mb
            ? "the driver's answer: its largest allocation, " + std::to_string(mb) + " MB (" +
                  (ps.get_int("kmd.largest_allocation_mb")
                       ? std::string("kmd.largest_allocation_mb")
                       : std::string("kmd.largest_allocation_mb = 0: Direct3D 12's resource-size limit for this "
                                     "local segment")) +
                  "), does not fit the OS's default"
            : std::string("the OS's default, a quarter of the ") + std::to_string(local) +
                  "-byte local segment (vram.size_bytes) or the log buffers if larger; the driver's answer (" +
                  "kmd.paging_va_answer = " + answer + ") " + (answer == "fail" ? "failed" : "was 0, the OS decides");
    // The refusal leads with what the user set among the keys that decide it, so it says what to change.
    std::string led;
    // (kmd.paging_va_answer last: kmd.paging_va_mb implies it, so it is set whenever that is.)
    for (const char* k : {"vram.size_bytes", "vidmm.page_table_mb", "gpu.hw_queues", "kmd.paging_va_mb",
                          "kmd.largest_allocation_mb", "kmd.paging_va_answer"})
      if (ps.was_set(k))
        led += (led.empty() ? "" : ", ") + std::string(k) + " = " +
               (ps.spec(k).kind == ParamKind::Enum ? ps.get_enum(k) : std::to_string(ps.get_int(k)));
    if (tables > table_mem / 2)
      throw ConfigError(
          (led.empty() ? std::string("the platform's defaults") : led) + ": the paging process's " +
          std::to_string(window >> 20) + " MiB VA (" + origin + ") needs " + std::to_string(tables) +
          " bytes of resident page tables, more than half of the " + std::to_string(table_mem) +
          " bytes of page-table memory (vidmm.page_table_mb, at most a quarter of "
          "vram.size_bytes); allowed: a smaller paging VA (kmd.paging_va_answer = override with a smaller "
          "kmd.paging_va_mb, or a smaller kmd.largest_allocation_mb), or a larger vidmm.page_table_mb");
  }
  const Topology t = topology_of(ps);
  if (t == Topology::Dgpu && ps.get_enum("display.adapter") == "igpu")
    throw ConfigError(
        "display.adapter = igpu needs the integrated adapter, which only platform.topology = hybrid "
        "has (platform.topology is dgpu); allowed: display.adapter = auto, none or gpu");
  // A key that configures hardware the platform does not have means nothing: a typo'd topology or
  // display adapter would otherwise run silently without it.
  auto refuse_set_keys = [&](const std::string& prefix, const std::string& except, const std::string& why) {
    for (auto& k : ps.set_keys())
      if (k.rfind(prefix, 0) == 0 && k != except) throw ConfigError(k + why + k);
  };
  if (display_adapter(ps, t).empty())  // display.adapter = none, or auto on the dGPU platform
    refuse_set_keys("display.", "display.adapter",
                    " configures a display engine, and this platform has none (display.adapter = " +
                        ps.get_enum("display.adapter") + " on platform.topology = " + ps.get_enum("platform.topology") +
                        "); allowed: display.adapter = gpu or igpu, or drop ");
  if (t == Topology::Dgpu) {
    refuse_set_keys("igpu.", "",
                    " configures the integrated adapter, which only platform.topology = hybrid has "
                    "(platform.topology is dgpu); allowed: set platform.topology = hybrid, or drop ");
  } else {
    const uint64_t sys = uint64_t(ps.get_int("sysmem.size_bytes")), stolen = stolen_bytes(ps, t);
    if (stolen > sys / 2)
      throw ConfigError("igpu.stolen_bytes = " + std::to_string(stolen) + " leaves too little of sysmem.size_bytes = " +
                        std::to_string(sys) + " to the OS; allowed: igpu.stolen_bytes <= sysmem.size_bytes / 2");
  }
}

AdapterDriver::AdapterDriver(const ParamSet& ps, Cpu& cpu, Vcd& vcd, PhysHeap& system, Memory& sysmem,
                             const GpuAdapter& hw, const KmdConfig& cfg, unsigned iommu_port)
    : vidmm(system, hw.local_base(), hw.local_size(), hw.config.integrated ? "igpu.stolen_bytes" : "vram.size_bytes",
            &hw.vram, std::min<uint64_t>(uint64_t(ps.get_int("vidmm.page_table_mb")) << 20, hw.local_size() / 4)),
      vidsch(ps, cpu, vidmm, vcd, hw.config.key),
      kmd(ps, cpu, vidmm, vidsch, cfg),
      pm(ps, cpu, kmd, vidmm, vcd, hw.config.key, PcieLink::kRootPortBase, !hw.config.integrated && !hw.display) {
  vidsch.connect(kmd);
  vidmm.connect(ps, cpu, kmd, vidsch.packets(), sysmem, iommu_port, vcd, hw.config.key);
  if (pm.enabled()) {  // runtime D3cold: every way to the adapter takes a use first (runtime_pm.h)
    vidsch.set_runtime_pm(&pm);
    auto ref = [this](bool take) { take ? pm.acquire() : pm.release(); };
    vidsch.packets().power_ref = ref;
    kmd.power_ref = ref;
  }
}

std::vector<std::unique_ptr<GpuAdapter>> Platform::make_hardware() {
  std::vector<std::unique_ptr<GpuAdapter>> hw;
  AdapterConfig d;
  d.display = display_adapter(params, topology) == "gpu";
  hw.push_back(std::make_unique<GpuAdapter>("gpu", params, vcd, d));
  if (topology == Topology::Hybrid) {
    AdapterConfig c;
    c.key = "igpu";
    c.bar0_base = regs::kIgpuBar0Base;
    c.integrated = true;
    c.host_memory = &sysmem;
    c.local_size = stolen_bytes(params, topology);
    c.local_base = sysmem.base() + sysmem.size() - c.local_size;
    c.display = display_adapter(params, topology) == "igpu";
    hw.push_back(std::make_unique<GpuAdapter>("igpu", params, vcd, c));
  }
  return hw;
}

std::vector<std::unique_ptr<AdapterDriver>> Platform::make_drivers() {
  std::vector<std::unique_ptr<AdapterDriver>> d;
  d.push_back(std::make_unique<AdapterDriver>(params, cpu, vcd, system_heap_, sysmem, *hw_[0], KmdConfig{}, 0));
  if (hw_.size() > 1)
    d.push_back(std::make_unique<AdapterDriver>(params, cpu, vcd, system_heap_, sysmem, *hw_[1],
                                                KmdConfig{regs::kIgpuBar0Base, kIgpuMsiDataBase, "igpu"}, 1));
  return d;
}

Platform::Platform(const ParamSet& ps, Vcd& v, uint64_t seed)
    : params(ps),
      vcd(v),
      rng(seed),
      topology(topology_of(ps)),
      sysmem("sysmem", ps, "sysmem.", regs::kSysmemBase),
      intc("intc", v),
      rc("rc", ps.get_ns("rc.latency_ns")),
      iommu("iommu", ps, sysmem, InterruptController::kMsiBase, InterruptController::kMsiSize),
      link("link", ps, v),
      hw_(make_hardware()),
      gpu(*hw_[0]),
      igpu(hw_.size() > 1 ? hw_[1].get() : nullptr),
      cpu("cpu", ps, v, intc),
      system_heap_(regs::kSysmemBase, sysmem.size() - stolen_bytes(ps, topology), "sysmem.size_bytes"),
      drivers_(make_drivers()),
      vidmm(drivers_[0]->vidmm),
      vidsch(drivers_[0]->vidsch),
      kmd(drivers_[0]->kmd),
      igpu_driver(drivers_.size() > 1 ? drivers_[1].get() : nullptr) {
  rc.isock.bind(sysmem.tsock);  // port 0
  rc.isock.bind(intc.tsock);    // port 1
  rc.isock.bind(link.down_in);  // port 2
  rc.map(regs::kSysmemBase, sysmem.size(), 0, "system memory");
  rc.map(InterruptController::kMsiBase, InterruptController::kMsiSize, 1, "MSI window");
  rc.map(regs::kBar0Base, regs::kBar0Size, 2, "GPU BAR0");
  rc.map(regs::kVramBase, gpu.vram.size(), 2, "GPU BAR2 (VRAM aperture)");
  rc.isock.bind(iommu.regs);  // port 3
  rc.map(Iommu::kBase, Iommu::kSize, 3, "IOMMU registers");
  rc.isock.bind(link.port);  // port 4: the dGPU's root port (its configuration space)
  rc.map(PcieLink::kRootPortBase, PcieLink::kRootPortSize, 4, "the dGPU's root port configuration space");
  cpu.isock.bind(rc.tsock);
  link.up_out.bind(iommu.tsock);  // the dGPU's DMA: IOMMU port 0
  iommu.isock.bind(rc.tsock);
  link.down_out.bind(gpu.host_if.tsock);
  gpu.fabric.isock.bind(link.up_in);  // fabric port 1: everything outside VRAM goes up the link
  if (igpu) {
    rc.isock.bind(igpu->host_if.tsock);  // port 5: the iGPU's registers, on the host side
    rc.map(regs::kIgpuBar0Base, regs::kBar0Size, 5, "iGPU BAR0");
    igpu->fabric.isock.bind(iommu.tsock);
    iommu.add_bypass(igpu->local_base(), igpu->local_size());  // stolen memory: an RMRR  // the SoC fabric: through the
                                                               // IOMMU (port 1) to system memory and MSI
    // F20: the cross-adapter doorbells are peer-to-peer register writes, not remapped (as MSI is not).
    iommu.add_bypass(regs::kBar0Base + regs::kXDoorbell, 8);
    iommu.add_bypass(regs::kIgpuBar0Base + regs::kXDoorbell, 8);
  }
  // The host package's holds (cpu/package.h): the link until it enters L1 (with link.aspm = off, never),
  // an integrated display while it fetches from system memory (not in panel self refresh).
  cpu.package().hold(Package::kLink, true);
  link.on_l1 = [this](bool l1) { cpu.package().hold(Package::kLink, !l1); };
  // Runtime D3cold: the dGPU's engines keep their clocks' state while the slot is off; the energy model
  // takes the off time out of that state (DgpuPower), and the local memory is in self refresh or off.
  dgpu_power.node_off.assign(gpu.nodes.size(), std::vector<sc_core::sc_time>(Node::states(), sc_core::SC_ZERO_TIME));
  dgpu_power.node_at_off = dgpu_power.node_off;
  link.on_slot_power = [this](bool on) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    for (size_t i = 0; i < gpu.nodes.size(); ++i)
      for (size_t s = 0; s < Node::states(); ++s) {
        const sc_core::sc_time t = gpu.nodes[i]->clock().time_in(s, now);
        if (on)
          dgpu_power.node_off[i][s] += t - dgpu_power.node_at_off[i][s];
        else
          dgpu_power.node_at_off[i][s] = t;
      }
    dgpu_power.vram.set(on ? 0 : gpu.bar0->vram_self_refresh() ? 1 : 2, now);
  };
  if (igpu && igpu->display)
    igpu->display->on_fetching = [this](bool fetching) { cpu.package().hold(Package::kDisplay, fetching); };
  xfences.add_adapter("dGPU", vidsch, vidmm, kmd, regs::kBar0Base + regs::kXDoorbell);
  if (igpu_driver)
    xfences.add_adapter("iGPU", igpu_driver->vidsch, igpu_driver->vidmm, igpu_driver->kmd,
                        regs::kIgpuBar0Base + regs::kXDoorbell);
}

}  // namespace gpumodel
