// Address-decoding router (root complex, GPU fabric, GPU host interface). Adds its crossing latency
// to each request and, for reads, to each completion. An unmapped address is an address error, which
// the initiator reports as a model fault.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

namespace gpumodel {

class Router : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Router> tsock;
  tlm_utils::multi_passthrough_initiator_socket<Router> isock;

  Router(sc_core::sc_module_name name, sc_core::sc_time latency);

  // Routes [base, base + size) to initiator port `port` (ports are numbered in binding order).
  void map(uint64_t base, uint64_t size, int port, const std::string& what);
  // Everything not mapped goes to `port` (-1: nothing, an address error).
  void set_default(int port) { default_port_ = port; }

 private:
  void b_transport(int in, tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  struct Range {
    uint64_t base, size;
    int port;
    std::string what;
  };
  std::vector<Range> ranges_;
  int default_port_ = -1;
  sc_core::sc_time latency_;
};

}  // namespace gpumodel
