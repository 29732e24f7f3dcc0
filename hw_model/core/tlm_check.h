// TLM-2.0 base-protocol checks for the one interface this model uses: blocking transport with the
// generic payload (IEEE 1666-2011 clauses 14 and 15.2.7). There is no nb_transport, DMI or debug
// transport here, so their rules are not checked; a target that sets the DMI hint is flagged, since
// none implements get_direct_mem_ptr.
//
// Every hop checks its call: an initiator socket call goes through `checked_b_transport`, a target's
// b_transport through `checked_target`. The check functions are always compiled (tests drive bad
// transactions through them in every build); the wiring is on when GPUMODEL_TLM_CHECKS is 1 (Debug
// builds, or -DGPUMODEL_TLM_CHECKS=ON) and compiles to a plain call otherwise.
//
// Rules (the name in brackets is the one a report and the tests use):
//  On entry, at every hop and at the target:
//   [process]            not called from a method process: b_transport may call wait, so it is called
//                        from a thread (IEEE 1666-2011, 11.1.1.4 b). Checked from the kernel's current
//                        process; a call outside any process (elaboration, sc_main) is not judged.
//   [command]            READ or WRITE. IGNORE is legal TLM (14.10) but no initiator here issues it, so
//                        a hop refuses it; a target accepts it on entry and must not execute it.
//   [data_ptr]           non-null (14.11)           [data_length]   > 0 (14.12)
//   [streaming_width]    > 0 (14.15); a hop also requires it equal to the data length: the model never
//                        streams. A target may be sent a streaming transaction and must refuse it.
//   [byte_enable_length] > 0 when byte enables are given (14.14)
//   [byte_enable_value]  each byte enable is 0x00 or 0xff (14.14: other values are undefined)
//   [dmi_allowed]        false (14.16)              [gp_option]     TLM_MIN_PAYLOAD (14.8)
//   [response_status]    TLM_INCOMPLETE_RESPONSE (14.17)
//  On return:
//   [response_status]    set by the target: not INCOMPLETE (14.17), except a posted write the link
//                        refused for flow control (bus.h: a WRITE carrying PostedFlowControl with
//                        `refused` set), which by 14.17 was not delivered to a target
//   [refused_write]      a write marked refused comes back INCOMPLETE (it was not executed)
//   [unchanged]          command, address, data pointer and length, streaming width, byte-enable
//                        pointer and length, and a write's data are as sent (14.7). The LRM lets an
//                        interconnect rewrite the address; this model's routers decode without rewriting,
//                        so the address comes back as sent at every hop.
//   [dmi_allowed]        not set: no target here offers DMI
//   [time]               sc_time_stamp() + delay is not earlier than at the call (15.2.7 c). Not "the
//                        delay grows": a target that samples a read waits and returns a smaller delay.
//  At a target's return, also:
//   [byte_enables_unsupported] a target without byte-enable support answers a transaction that has
//                        them with an error (TLM_BYTE_ENABLE_ERROR_RESPONSE), never OK (14.14)
//   [streaming_unsupported]    likewise for streaming width < data length (TLM_BURST_ERROR_RESPONSE, 14.15)
//
// A violation is counted per rule and reported once per check with SC_REPORT_ERROR("gpumodel/tlm"),
// naming the hop, the rules and the transaction.
#pragma once
#include <cstdint>
#include <string>

#include <systemc>
#include <tlm>

#ifndef GPUMODEL_TLM_CHECKS
#define GPUMODEL_TLM_CHECKS 0
#endif

namespace gpumodel {

inline constexpr bool kTlmChecks = GPUMODEL_TLM_CHECKS != 0;

namespace tlm_check {

// What a hop or target saw when the call began, to compare with what comes back.
struct Snapshot {
  const char* who;  // the calling socket or the target module
  int port;         // a multi-socket's port, or -1
  bool target;      // the target's own view (its exit rules differ)
  tlm::tlm_command command;
  uint64_t address;
  unsigned char* data;
  unsigned length, streaming_width;
  unsigned char* byte_enables;
  unsigned byte_enable_length;
  uint64_t write_data_hash;     // of a write's data, to see it unchanged
  sc_core::sc_time local_time;  // sc_time_stamp() + delay at the call
};

// What a target implements of the attributes it may be sent; what it lacks it must refuse.
struct TargetCaps {
  bool byte_enables = false;
  bool streaming = false;
};

// Initiator side of a hop: checks the entry rules (the hop's stricter form) and remembers the call.
Snapshot before_call(const tlm::tlm_generic_payload& t, const sc_core::sc_time& delay, const char* who, int port = -1);
// The same hop after the callee returned.
void after_call(const Snapshot& s, const tlm::tlm_generic_payload& t, const sc_core::sc_time& delay);
// Target side: the entry rules as a target sees them, and its return with its capabilities.
Snapshot target_entry(const tlm::tlm_generic_payload& t, const sc_core::sc_time& delay, const char* who);
void target_exit(const Snapshot& s, const tlm::tlm_generic_payload& t, const sc_core::sc_time& delay, TargetCaps caps);

// Process-wide: rules violated so far, and the last report's message (tests).
uint64_t violations();
const std::string& last_report();

// Whether byte `i` of a transaction's data is enabled (14.14: the byte-enable array repeats).
inline bool byte_enabled(const tlm::tlm_generic_payload& t, unsigned i) {
  const unsigned char* be = t.get_byte_enable_ptr();
  return !be || be[i % t.get_byte_enable_length()] == TLM_BYTE_ENABLED;
}

}  // namespace tlm_check

// One hop's call through an initiator socket (or a multi-socket's port interface).
template <typename Socket>
inline void checked_b_transport(Socket&& socket, tlm::tlm_generic_payload& t, sc_core::sc_time& delay, const char* who,
                                int port = -1) {
  if constexpr (kTlmChecks) {
    const tlm_check::Snapshot s = tlm_check::before_call(t, delay, who, port);
    socket->b_transport(t, delay);
    tlm_check::after_call(s, t, delay);
  } else {
    (void)who, (void)port;
    socket->b_transport(t, delay);
  }
}

// A target's b_transport: `serve(t, delay)` is its body.
template <typename Serve>
inline void checked_target(tlm::tlm_generic_payload& t, sc_core::sc_time& delay, const char* who,
                           tlm_check::TargetCaps caps, Serve&& serve) {
  if constexpr (kTlmChecks) {
    const tlm_check::Snapshot s = tlm_check::target_entry(t, delay, who);
    serve(t, delay);
    tlm_check::target_exit(s, t, delay, caps);
  } else {
    (void)who, (void)caps;
    serve(t, delay);
  }
}

}  // namespace gpumodel
