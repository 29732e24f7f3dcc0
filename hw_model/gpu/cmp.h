// Context management processor: owns the HW queues and the run list of every node, reacts to
// doorbells, arbitrates between the queues of a node (priority, then round robin with a time slice),
// and sends MSI on behalf of the engines. A microcontroller: one resource, every action costs CMP cycles.
//
// Parameters: cmp.clock_mhz, cmp.doorbell_cycles, cmp.interrupt_cycles, cmp.timeslice_us.
// Ports: isock (MSI and, later, fence reads/writes through the GPU fabric).
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw_model/core/bus.h"
#include "hw_model/core/deferred.h"
#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/hw_queue.h"

namespace gpumodel {

class Node;

class Cmp : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Cmp> isock;

  static void declare_params(ParamSet& ps);
  Cmp(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd, int queues);

  void attach(Node* n) { nodes_.push_back(n); }
  HwQueue& queue(int q) { return queues_.at(size_t(q)); }
  int queue_count() const { return int(queues_.size()); }

  // Register side effects, called by BAR0 when the write arrives.
  void doorbell(int q, uint64_t wptr);
  void queue_enabled(int q);
  void set_msi(uint64_t addr, uint32_t data_base) {
    msi_addr_ = addr;
    msi_data_ = data_base;
  }

  // Sideband from the nodes.
  HwQueue* pick(int node);                            // next queue for an idle node, or null
  bool should_switch(int node, const HwQueue& current, const sc_core::sc_time& since) const;
  void raise_interrupt(uint32_t vector);              // an engine's INTERRUPT packet

  sc_core::sc_time clock_period() const { return period_; }
  uint64_t msi_sent() const { return msi_sent_; }

 private:
  sc_core::sc_time reserve(uint64_t cycles);  // occupies the CMP; returns when the action is done

  BusMaster<Cmp> bus_;
  Deferred deferred_;
  Vcd& vcd_;
  std::vector<HwQueue> queues_;
  std::vector<Node*> nodes_;
  std::vector<int> last_pick_;  // per node, for round robin
  sc_core::sc_time period_, busy_until_ = sc_core::SC_ZERO_TIME, timeslice_;
  uint64_t doorbell_cycles_, interrupt_cycles_;
  uint64_t msi_addr_ = 0;
  uint32_t msi_data_ = 0;
  uint64_t msi_sent_ = 0;
  Vcd::Id busy_id_;
};

}  // namespace gpumodel
