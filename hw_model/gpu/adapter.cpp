#include "hw_model/gpu/adapter.h"

#include "hw_model/gpu/regs.h"

namespace gpumodel {

using namespace sc_core;

void GpuAdapter::declare_params(ParamSet& ps) {
  ps.declare_int("gpu.nodes", 2, "nodes", 1, 16, "A: two engines (3D/compute and copy) by default");
  ps.declare_int("gpu.hw_queues", 8, "queues", 1, 64, "A: eight HW queues (run-list slots)");
  ps.declare_real("gpu.fabric_latency_ns", 0, "ns", 0, 1e6,
                  "D: 0, already inside the 500-cycle local access and the device-measured 550 ns "
                  "DMA round trip (PARAMETERS.md); raise it to model a deeper on-chip network");
  Memory::declare_params(ps, "vram.", true);
  Cmp::declare_params(ps);
  Node::declare_params(ps);
  Bar0::declare_params(ps);
}

GpuAdapter::GpuAdapter(sc_module_name name, const ParamSet& ps, Vcd& vcd)
    : sc_module(name),
      fabric("fabric", ps.get_ns("gpu.fabric_latency_ns")),
      host_if("host_if", ps.get_ns("gpu.fabric_latency_ns")),
      vram("vram", ps, "vram.", regs::kVramBase),
      cmp("cmp", ps, vcd, int(ps.get_int("gpu.hw_queues"))) {
  std::vector<Node*> raw;
  for (int i = 0; i < ps.get_int("gpu.nodes"); ++i) {
    nodes.push_back(std::make_unique<Node>(("node" + std::to_string(i)).c_str(), ps, vcd, i, cmp));
    cmp.attach(nodes.back().get());
    raw.push_back(nodes.back().get());
  }
  bar0 = std::make_unique<Bar0>("bar0", ps, cmp, raw);

  for (auto& n : nodes) n->isock.bind(fabric.tsock);
  cmp.isock.bind(fabric.tsock);
  fabric.isock.bind(vram.tsock);  // port 0; port 1 (the link) is bound by the platform
  fabric.map(regs::kVramBase, vram.size(), 0, "vram");
  fabric.set_default(1);

  host_if.isock.bind(bar0->tsock);  // port 0
  host_if.isock.bind(vram.tsock);   // port 1
  host_if.map(regs::kBar0Base, regs::kBar0Size, 0, "bar0");
  host_if.map(regs::kVramBase, vram.size(), 1, "vram aperture");
}

}  // namespace gpumodel
