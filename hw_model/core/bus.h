// Initiator-side helpers for TLM-2.0 loosely-timed transport.
//
// Timing contract used throughout the model (one rule, every target and interconnect keeps it):
//  * A write is posted. Each hop adds its latency to the annotated delay; the target records the data as
//    pending and makes it visible at now + delay. The returned delay is therefore the write's
//    visibility time, which the initiator's write buffer keeps for barriers. The initiator does not wait.
//  * A read is synchronous where its data is sampled: the target waits until the request arrives
//    (now + delay), samples what is visible then, and returns; the return path adds its latency to the
//    delay, and the initiator waits for it. So a read sees exactly the writes visible when it arrives.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/tlm_check.h"

namespace gpumodel {

// Posted-write flow control (PCIe posted credits). An initiator that can hold a write (an engine's
// write buffer, a DMA tag) attaches this; a link whose posted egress buffer is full refuses the write
// (TLM_INCOMPLETE_RESPONSE, `refused` set) instead of taking it, queues the requester in arrival order,
// and notifies `grant` when it is the requester's turn and there is room. Writes without it (the
// CMP's control writes) are always taken. One instance per requester: its address is its identity.
struct PostedFlowControl : tlm::tlm_extension<PostedFlowControl> {
  sc_core::sc_event* grant = nullptr;
  bool refused = false;
  double bytes = 0;  // set by the link when it refuses: the write's size on the wire
  tlm::tlm_extension_base* clone() const override { return new PostedFlowControl(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const PostedFlowControl&>(e); }
};

// A hint between an initiator and a memory, for host speed only: what a transaction's data holds is the
// same whether a target honours it or not (a surface nobody drew is zeros, and copying or scanning it
// need not move zeros around). `buffer_zero` (in): the transaction's data range at the initiator holds
// only zero bytes: a write's data, or what a read's destination holds before the read. `data_zero`
// (out, reads): the bytes read were all zero and the destination now holds them (a memory that finds
// no backing store for the range and a zero destination leaves the destination as it is).
struct ZeroHint : tlm::tlm_extension<ZeroHint> {
  bool buffer_zero = false;
  bool data_zero = false;
  // The requester owns it (a local of the thread whose read may still be waiting inside the target when
  // the simulation stops): a pooled payload destroyed then must not delete it.
  void free() override {}
  tlm::tlm_extension_base* clone() const override { return new ZeroHint(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const ZeroHint&>(e); }
};

// What an initiator knows of its own transfer buffer, for ZeroHint: the first `zero_bytes` are zero.
struct ZeroTracker {
  uint64_t zero_bytes = 0;
  // Before a read or write of `len` bytes from the buffer's start.
  ZeroHint hint(unsigned len) const {
    ZeroHint h;
    h.buffer_zero = zero_bytes >= len;
    return h;
  }
  // After a read of `len` bytes into the buffer's start.
  void after_read(const ZeroHint& h, unsigned len) {
    zero_bytes = h.data_zero ? std::max<uint64_t>(zero_bytes, len) : 0;
  }
  void clobbered() { zero_bytes = 0; }
};

template <typename Module>
class BusMaster {
 public:
  explicit BusMaster(tlm_utils::simple_initiator_socket<Module>& s) : socket_(s) {}

  // Blocking read: returns when the data has arrived at the initiator. `offset`: the request leaves
  // that much after now (local time of a loosely-timed initiator), saving a separate wait.
  // `zh`: a ZeroHint the target may answer (see ZeroHint).
  void read(uint64_t addr, void* dst, unsigned len, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME,
            ZeroHint* zh = nullptr) {
    Lease l(*this);
    tlm::tlm_generic_payload& t = *l.t;
    setup(t, tlm::TLM_READ_COMMAND, addr, static_cast<unsigned char*>(dst), len);
    if (zh) {
      zh->data_zero = false;
      t.set_extension(zh);
    }
    sc_core::sc_time d = offset;
    checked_b_transport(socket_, t, d, socket_.name());
    if (zh) t.clear_extension(zh);  // the requester owns it, not the pooled payload
    check(t, addr);
    if (d != sc_core::SC_ZERO_TIME) sc_core::wait(d);
  }
  uint64_t read64(uint64_t addr, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
    uint64_t v = 0;
    read(addr, &v, 8, offset);
    return v;
  }
  uint32_t read32(uint64_t addr) {
    uint32_t v = 0;
    read(addr, &v, 4);
    return v;
  }

  // Posted write: returns the absolute time at which the data becomes visible at the target.
  sc_core::sc_time post(uint64_t addr, const void* src, unsigned len,
                        const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
    sc_core::sc_time vis;
    write(addr, src, len, offset, nullptr, vis);
    return vis;
  }
  // Posted write under flow control: false (nothing sent) when the path refused it for now; the caller
  // keeps the write and tries again when `fc.grant` is notified. From a thread, as every b_transport call
  // (IEEE 1666-2011, 11.1.1.4 b: a target may wait), but it never waits itself.
  bool try_post(uint64_t addr, const void* src, unsigned len, PostedFlowControl& fc, sc_core::sc_time& visible) {
    return write(addr, src, len, sc_core::SC_ZERO_TIME, &fc, visible);
  }
  // The same from a thread: waits for its turn. Returns the visibility time.
  sc_core::sc_time post_held(uint64_t addr, const void* src, unsigned len, PostedFlowControl& fc,
                             ZeroHint* zh = nullptr) {
    sc_core::sc_time vis;
    while (!write(addr, src, len, sc_core::SC_ZERO_TIME, &fc, vis, zh)) sc_core::wait(*fc.grant);
    return vis;
  }
  sc_core::sc_time post64(uint64_t addr, uint64_t v) { return post(addr, &v, 8); }
  sc_core::sc_time post32(uint64_t addr, uint32_t v) { return post(addr, &v, 4); }

 private:
  // One posted write; with `fc`, the path may refuse it (returns false, nothing sent).
  bool write(uint64_t addr, const void* src, unsigned len, const sc_core::sc_time& offset, PostedFlowControl* fc,
             sc_core::sc_time& visible, ZeroHint* zh = nullptr) {
    Lease l(*this);
    tlm::tlm_generic_payload& t = *l.t;
    setup(t, tlm::TLM_WRITE_COMMAND, addr, const_cast<unsigned char*>(static_cast<const unsigned char*>(src)), len);
    if (fc) {
      fc->refused = false;
      t.set_extension(fc);
    }
    if (zh) t.set_extension(zh);
    sc_core::sc_time d = offset;
    checked_b_transport(socket_, t, d, socket_.name());
    if (zh) t.clear_extension(zh);
    if (fc) {
      t.clear_extension(fc);  // the requester owns it, not the pooled payload
      if (fc->refused) return false;
    }
    check(t, addr);
    visible = sc_core::sc_time_stamp() + d;
    return true;
  }
  static void setup(tlm::tlm_generic_payload& t, tlm::tlm_command cmd, uint64_t addr, unsigned char* p, unsigned len) {
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(p);
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_byte_enable_ptr(nullptr);
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  void check(const tlm::tlm_generic_payload& t, uint64_t addr) {
    if (t.is_response_error()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s: %s at address 0x%llx", socket_.name(), t.get_response_string().c_str(),
                    static_cast<unsigned long long>(addr));
      SC_REPORT_ERROR("gpumodel/bus", buf);
    }
  }
  // Payloads are reused (constructing one per transaction shows in the fence hot path); a pool, not
  // one member, because several processes of a module (fetcher, executor, DMA tags) share the socket.
  struct Lease {
    BusMaster& m;
    tlm::tlm_generic_payload* t;
    explicit Lease(BusMaster& mm) : m(mm) {
      if (m.pool_.empty()) {
        m.owned_.emplace_back(new tlm::tlm_generic_payload);
        t = m.owned_.back().get();
      } else {
        t = m.pool_.back();
        m.pool_.pop_back();
      }
    }
    ~Lease() { m.pool_.push_back(t); }
  };
  tlm_utils::simple_initiator_socket<Module>& socket_;
  std::vector<tlm::tlm_generic_payload*> pool_;
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> owned_;
};

// Time helpers.
inline sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }
inline double to_ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }
// Cycles at a clock given in MHz, rounded to the time resolution.
inline sc_core::sc_time cycles(double n, double clock_mhz) { return ns(n * 1000.0 / clock_mhz); }
inline sc_core::sc_time max_time(const sc_core::sc_time& a, const sc_core::sc_time& b) { return a > b ? a : b; }

}  // namespace gpumodel
