#include "hw_model/gpu/adapter.h"

namespace gpumodel {

using namespace sc_core;

void GpuAdapter::declare_params(ParamSet& ps) {
  ps.declare_int("gpu.nodes", 2, "nodes", 1, regs::kMaxNodes,
                 "A: two engines by default: a 3D engine and, unless node.kind says otherwise, a compute engine");
  ps.declare_int(
      "gpu.linked_engines", 1, "adapters", 1, 2,
      "Q: TDR in Windows 8 and later T2, a logical adapter of 1 or 2 linked physical adapters (engines), each with "
      "the same node count: gpu.nodes is split evenly, engine e owning nodes [e*n/2, (e+1)*n/2); "
      "A: 1 (a single GPU)");
  ps.declare_int("gpu.hw_queues", 8, "queues", 1, regs::kMaxHwQueues,
                 "A: eight HW queues (run-list slots); at most 1,024, as many as hardware schedulers "
                 "manage (BAR0 caps [31:22])");
  ps.declare_real("gpu.fabric_latency_ns", 0, "ns", 0, 1e6,
                  "D: 0, already inside the 500-cycle local access and the device-measured 550 ns "
                  "DMA round trip (docs/calibration.md); raise it to model a deeper on-chip network");
  Memory::declare_params(ps, "vram.", true);
  Cmp::declare_params(ps);
  GpuMmu::declare_params(ps);
  Node::declare_params(ps);
  Bar0::declare_params(ps);
}

void GpuAdapter::declare_integrated_params(ParamSet& ps) {
  ps.declare_int("igpu.nodes", 2, "nodes", 1, regs::kMaxNodes,
                 "A: two engines (3D/compute and copy), as the dGPU; topology = hybrid only");
  ps.declare_int("igpu.hw_queues", 8, "queues", 1, regs::kMaxHwQueues,
                 "A: eight HW queues; at most 1,024, as gpu.hw_queues; topology = hybrid only");
  ps.declare_real("igpu.fabric_latency_ns", 100, "ns", 0, 1e6,
                  "A: the SoC fabric between the iGPU and the host's memory decoder, each way (ring and "
                  "system agent); with the 30 ns decoder and 90 ns DRAM a 250 ns read; topology = hybrid only");
  ps.declare_real("igpu.engine_clock_mhz", 1300, "MHz", 1, 1e5,
                  "A: a laptop iGPU's graphics clock (Intel Xe-LP parts boost to 1.3-1.45 GHz); "
                  "topology = hybrid only");
  ps.declare_int("igpu.timestamp_tick_ps", 52083, "ps", 1, 1000000,
                 "Q: docs/calibration.md GPU timestamp tick, iGPU 52.08 ns (19.2 MHz, Intel Gen11/12, Mesa "
                 "intel_device_info); topology = hybrid only");
  ps.declare_real("igpu.bar0_read_latency_ns", 170, "ns", 0, 1e6,
                  "A: an uncached MMIO read of an on-die register block: 0.3 us end to end with the "
                  "decoder's 2 x 30 ns and the fabric's 2 x 100 ns (no link); topology = hybrid only");
  ps.declare_real("igpu.bar0_write_latency_ns", 20, "ns", 0, 1e6,
                  "A: as gpu.bar0_write_latency_ns; topology = hybrid only");
  ps.declare_int("igpu.stolen_bytes", int64_t(256) << 20, "bytes", int64_t(16) << 20, int64_t(64) << 30,
                 "A: the iGPU's local segment, carved from the top of system memory at boot (Intel DSM, "
                 "'DVMT pre-allocated'); topology = hybrid only");
}

namespace {
Memory* own_vram_or_null(const AdapterConfig& cfg, const ParamSet& ps) {
  return cfg.integrated ? nullptr : new Memory("vram", ps, "vram.", regs::kVramBase);
}
}  // namespace

std::vector<std::string> GpuAdapter::node_instances(const ParamSet& ps, const std::string& key) {
  std::vector<std::string> v;
  for (int i = 0; i < ps.get_int(key + ".nodes"); ++i) v.push_back(key + ".node" + std::to_string(i));
  return v;
}

GpuAdapter::GpuAdapter(sc_module_name name, const ParamSet& ps, Vcd& vcd, const AdapterConfig& cfg)
    : sc_module(name),
      config(cfg),
      fabric("fabric", ps.get_ns(cfg.key + ".fabric_latency_ns")),
      host_if("host_if", ps.get_ns(cfg.key + ".fabric_latency_ns")),
      own_vram_(own_vram_or_null(cfg, ps)),
      vram(cfg.integrated ? *cfg.host_memory : *own_vram_),
      cmp("cmp", ps, vcd, int(ps.get_int(cfg.key + ".hw_queues")), cfg.key) {
  std::vector<Node*> raw;
  const std::vector<std::string> instances = node_instances(ps, cfg.key);
  for (int i = 0; i < int(instances.size()); ++i) {
    const std::string name = instances[size_t(i)].substr(cfg.key.size() + 1);
    nodes.push_back(std::make_unique<Node>(name.c_str(), ps, vcd, i, cmp, cfg.key));
    cmp.attach(nodes.back().get());
    raw.push_back(nodes.back().get());
  }
  bar0 = std::make_unique<Bar0>("bar0", ps, cmp, raw, cfg.key, cfg.bar0_base);

  for (auto& n : nodes) n->isock.bind(fabric.tsock);
  cmp.isock.bind(fabric.tsock);
  if (!cfg.integrated) {
    fabric.isock.bind(vram.tsock);  // port 0; port 1 (the link) is bound by the platform
    fabric.map(regs::kVramBase, vram.size(), 0, "vram");
    fabric.set_default(1);
  } else {
    fabric.set_default(0);  // port 0 (the host's decoder) is bound by the platform: stolen memory is there
  }

  host_if.isock.bind(bar0->tsock);  // port 0
  if (!cfg.display) {
    host_if.map(cfg.bar0_base, regs::kBar0Size, 0, "bar0");
  } else {  // BAR0 around the display engine's window
    const uint64_t win = cfg.bar0_base + regs::kDisplayOffset;
    host_if.map(cfg.bar0_base, regs::kDisplayOffset, 0, "bar0");
    host_if.map(win + DisplayEngine::kRegsSize, regs::kBar0Size - regs::kDisplayOffset - DisplayEngine::kRegsSize, 0,
                "bar0");
  }
  if (!cfg.integrated) {
    host_if.isock.bind(vram.tsock);  // port 1
    host_if.map(regs::kVramBase, vram.size(), 1, "vram aperture");
  }
  if (cfg.display) {
    display = std::make_unique<DisplayEngine>("display", ps, vcd, cfg.bar0_base + regs::kDisplayOffset);
    display->isock.bind(fabric.tsock);
    host_if.isock.bind(display->regs);  // the next port
    host_if.map(cfg.bar0_base + regs::kDisplayOffset, DisplayEngine::kRegsSize, cfg.integrated ? 1 : 2, "display");
  }
}

}  // namespace gpumodel
