// Interrupt controller (the CPU's local APIC as an MSI target). An MSI is a 4-byte posted memory write
// to this block's address window carrying the vector in its data. When the write becomes visible the
// vector is latched and the CPU's interrupt line (an event) fires; the CPU takes vectors in order.
// Anything else (a read, another size, byte enables, streaming) is refused with an error response.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/vcd.h"

namespace gpumodel {

class InterruptController : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<InterruptController> tsock;
  static constexpr uint64_t kMsiBase = 0xFEE00000ull;  // x86 MSI address window (Intel SDM vol. 3, 11.11)
  static constexpr uint64_t kMsiSize = 0x100000ull;

  InterruptController(sc_core::sc_module_name name, Vcd& vcd);

  const sc_core::sc_event& irq() const { return irq_ev_; }  // the CPU's interrupt line
  bool pending() const { return !latched_.empty(); }
  // Takes the oldest latched vector and the time its MSI arrived.
  bool take(uint32_t& vector, sc_core::sc_time& arrived);

  uint64_t msi_count() const { return msi_count_; }
  // Observer (monitors only; it must not drive the model): called when MSIs are latched.
  std::function<void()> on_latched;

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void serve(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void deliver();  // SC_METHOD at an MSI's arrival time

  struct Msi {
    sc_core::sc_time at;
    uint64_t seq;
    uint32_t vector;
    bool operator>(const Msi& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Msi, std::vector<Msi>, std::greater<Msi>> in_flight_;
  std::deque<std::pair<uint32_t, sc_core::sc_time>> latched_;
  sc_core::sc_event arrive_ev_, irq_ev_;
  uint64_t seq_ = 0, msi_count_ = 0;
  Vcd& vcd_;
  Vcd::Id msi_id_, vector_id_;
};

}  // namespace gpumodel
