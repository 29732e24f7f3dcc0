#include "hw_model/interconnect/router.h"

#include "hw_model/core/tlm_check.h"

namespace gpumodel {

using namespace sc_core;

Router::Router(sc_module_name name, sc_time latency)
    : sc_module(name), tsock("tsock"), isock("isock"), latency_(latency) {
  tsock.register_b_transport(this, &Router::b_transport);
}

void Router::map(uint64_t base, uint64_t size, int port, const std::string& what) {
  for (auto& r : ranges_) {
    if (base < r.base + r.size && r.base < base + size) {
      SC_REPORT_ERROR("gpumodel/router", (std::string(name()) + ": " + what + " overlaps " + r.what).c_str());
    }
  }
  ranges_.push_back({base, size, port, what});
}

void Router::b_transport(int, tlm::tlm_generic_payload& t, sc_time& delay) {
  const uint64_t a = t.get_address();
  int port = default_port_;
  for (auto& r : ranges_) {
    if (a >= r.base && a - r.base < r.size) {
      port = r.port;
      break;
    }
  }
  if (port < 0) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  delay += latency_;
  checked_b_transport(isock[port], t, delay, isock.name(), port);
  if (t.is_read()) delay += latency_;  // the completion crosses back
}

}  // namespace gpumodel
