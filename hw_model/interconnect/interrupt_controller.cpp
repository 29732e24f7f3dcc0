#include "hw_model/interconnect/interrupt_controller.h"

#include <cstring>

#include "hw_model/core/tlm_check.h"

namespace gpumodel {

using namespace sc_core;

InterruptController::InterruptController(sc_module_name name, Vcd& vcd) : sc_module(name), tsock("tsock"), vcd_(vcd) {
  tsock.register_b_transport(this, &InterruptController::b_transport);
  msi_id_ = vcd_.add(std::string(basename()) + ".msi", 1);
  vector_id_ = vcd_.add(std::string(basename()) + ".vector", 32);
  SC_HAS_PROCESS(InterruptController);
  SC_METHOD(deliver);
  sensitive << arrive_ev_;
  dont_initialize();
}

void InterruptController::b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
  checked_target(t, delay, name(), tlm_check::TargetCaps{},
                 [this](tlm::tlm_generic_payload& tt, sc_time& d) { serve(tt, d); });
}

void InterruptController::serve(tlm::tlm_generic_payload& t, sc_time& delay) {
  if (!t.is_write() || t.get_data_length() != 4) {
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);  // MSI is exactly a 4-byte write
    return;
  }
  if (t.get_byte_enable_ptr()) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);  // the vector is written whole
    return;
  }
  if (t.get_streaming_width() < 4) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  uint32_t vector;
  std::memcpy(&vector, t.get_data_ptr(), 4);
  const sc_time at = sc_time_stamp() + delay;
  in_flight_.push({at, seq_++, vector});
  arrive_ev_.notify(in_flight_.top().at - sc_time_stamp());
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

void InterruptController::deliver() {
  const sc_time now = sc_time_stamp();
  bool any = false;
  while (!in_flight_.empty() && in_flight_.top().at <= now) {
    const Msi m = in_flight_.top();
    in_flight_.pop();
    latched_.emplace_back(m.vector, m.at);
    ++msi_count_;
    vcd_.set(msi_id_, 1, now);
    vcd_.set(vector_id_, m.vector, now);
    vcd_.set(msi_id_, 0, now + sc_time(1, SC_NS));  // a visible pulse
    any = true;
  }
  if (any) irq_ev_.notify(SC_ZERO_TIME);
  if (any && on_latched) on_latched();
  if (!in_flight_.empty()) arrive_ev_.notify(in_flight_.top().at - now);
}

bool InterruptController::take(uint32_t& vector, sc_time& arrived) {
  if (latched_.empty()) return false;
  vector = latched_.front().first;
  arrived = latched_.front().second;
  latched_.pop_front();
  return true;
}

}  // namespace gpumodel
