// A GPU adapter: BAR0 registers, CMP, nodes and the memory of its local segment, behind two routers:
//  * fabric: the adapter's own initiators (nodes, CMP) -> its local memory; everything else to the host
//    side (a discrete adapter: up the link; an integrated one: the SoC fabric into the host's decoder);
//  * host_if: what arrives from the host -> BAR0 registers or local memory (a discrete adapter's BAR2).
// A discrete adapter (the dGPU, key "gpu") owns its VRAM: bind link.down_out to host_if.tsock and
// fabric.isock (after construction) to link.up_in. An integrated adapter (the iGPU, key "igpu") has no
// memory of its own: its local segment is stolen system memory, so `vram` is the platform's system
// memory; bind the host side to host_if.tsock and fabric.isock to the host's decoder.
//
// Parameters: <key>.nodes, <key>.hw_queues, <key>.fabric_latency_ns, <key>.engine_clock_mhz,
// <key>.timestamp_tick_ps, <key>.bar0_*; node.* and cmp.* are shared by every adapter (one engine and
// scheduler microarchitecture); vram.* (discrete) or igpu.stolen_bytes (integrated); display.* for the
// display engine of the adapter display.adapter names (its registers are a 4 KiB window of BAR0 at
// regs::kDisplayOffset; it scans out through the adapter's fabric like the engines).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/display/display_engine.h"
#include "hw_model/gpu/bar0.h"
#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/node.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/router.h"
#include "hw_model/memory/memory.h"

namespace gpumodel {

struct AdapterConfig {
  std::string key = "gpu";               // parameter prefix and trace prefix
  uint64_t bar0_base = regs::kBar0Base;  // where the host maps its BAR0
  // Integrated: no memory of its own; the local segment is [local_base, local_base + local_size) of
  // `host_memory` (stolen system memory).
  bool integrated = false;
  Memory* host_memory = nullptr;
  uint64_t local_base = 0, local_size = 0;
  bool display = false;  // a display engine, its registers at bar0_base + regs::kDisplayOffset
};

class GpuAdapter : public sc_core::sc_module {
 public:
  static void declare_params(ParamSet& ps);             // the discrete adapter: gpu.*, vram.*, node.*, cmp.*
  static void declare_integrated_params(ParamSet& ps);  // the integrated adapter: igpu.*
  GpuAdapter(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd, const AdapterConfig& cfg = {});
  // The nodes the adapter `key` builds, as instance paths ("gpu.node0", ...): their own keys
  // (gpu.node1.reset_ns) may be set, and no others.
  static std::vector<std::string> node_instances(const ParamSet& ps, const std::string& key);

  const AdapterConfig config;
  Router fabric;
  Router host_if;

 private:
  std::unique_ptr<Memory> own_vram_;  // a discrete adapter's VRAM

 public:
  // The memory that holds the local segment: the dGPU's VRAM, or the host's system memory (stolen).
  Memory& vram;
  uint64_t local_base() const { return config.integrated ? config.local_base : vram.base(); }
  uint64_t local_size() const { return config.integrated ? config.local_size : vram.size(); }
  Cmp cmp;
  std::vector<std::unique_ptr<Node>> nodes;
  std::unique_ptr<Bar0> bar0;
  std::unique_ptr<DisplayEngine> display;  // when the adapter drives a panel (display.adapter)
};

}  // namespace gpumodel
