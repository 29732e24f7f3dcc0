// BAR0: the adapter's register file as the host sees it. Reads are sampled when the request arrives,
// after the register bus latency; writes take effect at their arrival time (doorbells included), so an
// MMIO write's side effect lands exactly when the posted write gets there. Registers take whole
// aligned 32/64-bit accesses: byte enables are refused (TLM_BYTE_ENABLE_ERROR_RESPONSE), streaming and
// other sizes are burst errors, IGNORE a command error.
//
// Parameters: <adapter>.bar0_read_latency_ns, <adapter>.bar0_write_latency_ns (gpu.*, igpu.*).
#pragma once
#include <cstdint>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/deferred.h"
#include "hw_model/core/params.h"
#include "hw_model/core/register_table.h"

namespace gpumodel {

class Cmp;
class Node;

class Bar0 : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Bar0> tsock;

  static void declare_params(ParamSet& ps);
  // `adapter`: the adapter's key (its <adapter>.bar0_* latencies and timestamp tick); `base`: where the
  // BAR is mapped in the platform's address space.
  Bar0(sc_core::sc_module_name name, const ParamSet& ps, Cmp& cmp, std::vector<Node*> nodes,
       const std::string& adapter = "gpu", uint64_t base = 0xF000'0000ull);

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void serve(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void map_registers();

  RegisterTable regs_;

  Cmp& cmp_;
  std::vector<Node*> nodes_;
  Deferred deferred_;
  uint64_t base_;  // where the BAR is mapped
  sc_core::sc_time read_latency_, write_latency_;
  uint64_t tick_ps_;
  uint32_t engines_;
  uint32_t
      link_status_;  // regs::kLinkStatus (0: integrated)  // linked physical adapters (gpu.linked_engines; the iGPU: 1)
  uint64_t msi_addr_ = 0;
  uint32_t msi_data_ = 0;
  bool vram_self_refresh_ = false;  // regs::kVramSelfRefresh

 public:
  bool vram_self_refresh() const { return vram_self_refresh_; }
};

}  // namespace gpumodel
