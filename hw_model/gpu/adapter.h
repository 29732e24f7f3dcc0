// The GPU adapter: BAR0 registers, CMP, nodes and local memory behind two routers:
//  * fabric: the GPU's own initiators (nodes, CMP) -> local memory, everything else up the link;
//  * host_if: what arrives from the link -> BAR0 registers or local memory (the BAR2 aperture).
// Bind link.down_out to host_if.tsock and fabric.isock (after construction) to link.up_in.
#pragma once
#include <memory>
#include <vector>

#include <systemc>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/bar0.h"
#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/node.h"
#include "hw_model/interconnect/router.h"
#include "hw_model/memory/memory.h"

namespace gpumodel {

class GpuAdapter : public sc_core::sc_module {
 public:
  static void declare_params(ParamSet& ps);
  GpuAdapter(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd);

  Router fabric;
  Router host_if;
  Memory vram;
  Cmp cmp;
  std::vector<std::unique_ptr<Node>> nodes;
  std::unique_ptr<Bar0> bar0;
};

}  // namespace gpumodel
