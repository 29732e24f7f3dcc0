// The host's IOMMU (DMA remapping, in the root complex): translates the adapters' DMA into system
// memory under the addressing model iommu.model (Allocation notifications, A3):
//  * physical: no remapping; a DMA address is a physical address (the IOMMU passes it through).
//  * gpuva_iommu: each adapter has its own domain (a root table per requester port).
//  * gpuva_iommu_global: every adapter shares one domain (the OS programs the same root for each port).
// The OS maps and unmaps pages in a domain's tables (in system memory) and invalidates the IOTLB through
// the IOMMU's registers. Tables: 4 levels of 512 eight-byte entries (VA[47:39] .. VA[20:12]), 4 KiB
// pages, bit 0 valid, bits [51:12] the address (the GPU MMU's pt:: layout without dual PDEs).
//
// A translation is looked up in the IOTLB (iommu.iotlb_entries, fully associative, LRU, tagged by the
// domain root); a miss walks the tables next to the memory controller: iommu.walk_read_ns per level.
// Translations are served in arrival order (a miss holds the ones behind it), so posted writes keep
// their order. An access to an unmapped page is a fault: recorded (count, address, port; readable in
// the fault registers), a write is dropped, a read returns all ones (an Unsupported Request completion);
// the model runs on. MSI writes (the interrupt window) are not remapped.
//
// Ports: tsock (upstream DMA: port 0 the dGPU's link, port 1 the iGPU), isock (to the root complex),
// regs (the register window at kBase, mapped by the root complex). Parameters: iommu.*.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/deferred.h"
#include "hw_model/core/params.h"
#include "hw_model/memory/memory.h"

namespace gpumodel {

class Iommu : public sc_core::sc_module {
 public:
  enum class Model { Physical, GpuVaIoMmu, GpuVaIoMmuGlobal };
  static constexpr uint64_t kBase = 0xFED9'0000ull, kSize = 0x1000;  // register window (VT-d's usual base)
  static constexpr uint64_t kRoot = 0x00;        // RW 64 per port p: kRoot + 8 p: the domain's root table
  static constexpr uint64_t kInvalidate = 0x40;  // W 64: invalidate the IOTLB of that root (0: all)
  static constexpr uint64_t kFaults = 0x48;      // RO 64: faults so far
  static constexpr uint64_t kFaultAddr = 0x50;   // RO 64: the last fault's DMA address
  static constexpr uint64_t kFaultPort = 0x58;   // RO 64: the last fault's requester port
  static constexpr unsigned kPorts = 8;

  tlm_utils::multi_passthrough_target_socket<Iommu> tsock;
  tlm_utils::simple_initiator_socket<Iommu> isock;
  tlm_utils::simple_target_socket<Iommu> regs;

  static void declare_params(ParamSet& ps);
  static Model model_of(const ParamSet& ps);
  // `tables`: the memory that holds the tables (system memory; the walker reads it beside the controller).
  Iommu(sc_core::sc_module_name name, const ParamSet& ps, Memory& tables, uint64_t msi_base, uint64_t msi_size);
  Model model() const { return model_; }
  // A range the IOMMU does not remap (an RMRR: the iGPU's stolen memory, identity-mapped for its firmware).
  void add_bypass(uint64_t base, uint64_t size) { bypass_.push_back({base, size}); }

  // Counters, and an observer for monitors (every fault as it happens; it must not drive the model).
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t faults() const { return faults_; }
  std::function<void(unsigned port, uint64_t addr, bool write)> on_fault;
  // Every remapped DMA as it is translated (monitors only): port, address, length, time it is translated.
  std::function<void(unsigned port, uint64_t addr, unsigned len, const sc_core::sc_time& at, bool ok)> on_dma;

 private:
  void b_transport(int port, tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void b_regs(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  bool walk(uint64_t root, uint64_t addr, uint64_t& frame);
  bool translate_page(uint64_t root, uint64_t page, uint64_t& frame, sc_core::sc_time& at);
  std::vector<std::pair<uint64_t, uint64_t>> bypass_;
  struct Entry {
    uint64_t root = 0, page = 0, frame = 0, lru = 0;
    bool valid = false;
  };
  Model model_;
  Memory& tables_;
  uint64_t msi_base_, msi_size_;
  sc_core::sc_time walk_read_;
  std::vector<Entry> iotlb_;
  uint64_t tick_ = 0;
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;  // the translation pipe (in order)
  uint64_t root_[kPorts] = {};
  Deferred deferred_;  // a register write takes effect when it arrives
  uint64_t hits_ = 0, misses_ = 0, faults_ = 0, fault_addr_ = 0, fault_port_ = 0;
};

}  // namespace gpumodel
