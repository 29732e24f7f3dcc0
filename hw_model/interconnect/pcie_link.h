// PCIe-like link: two independent directions (down = host to device, up = device to host), each a
// serialising resource. A transfer's TLPs (payload split at max payload, read requests at max read
// request size) occupy the direction back to back at the effective line rate, then take a fixed hop
// latency. Posted writes keep their order (a direction is FIFO); a read request queues behind earlier
// posted writes in its direction, and the memory behind samples it no earlier than their visibility.
// Posted flow control: a direction's transmitter holds at most link.posted_buffer_bytes of posted
// TLPs not yet sent; a write that carries PostedFlowControl (an engine's write buffer or DMA tag) and
// does not fit is refused and waits in its source, in arrival order, until there is room. Until then it
// is not on the link, so a read issued later by another agent (the CMP) is not ordered behind it.
//
// Effective rate (pcie-bench pcie-model, PCIe Base Spec 5.0 tables 3-7..3-9 and 2-46..2-48):
//   raw   = GT/s x lanes x 128/130 / 8                        bytes per ns
//   rate  = raw x (1 - 8/AckLimit - 8/FcUpdateInterval - 4/1538)   (ACK + UpdateFC DLLPs, SKP sets)
//   t_tlp = (payload + overhead) / rate, overhead 24 B for MWr/MRd (4-DW header + DLLP framing),
//           20 B for CplD; posted-write efficiency = MPS / (MPS + 24).
//
// Active-state power management (link.aspm, PCIe Base Spec 5.0 section 5.4.1): when both directions
// have been idle for the entry time the link enters L0s (link.l0s_entry_us) and then L1
// (link.l1_entry_us); a TLP that finds it there waits for the exit latency before its first symbol
// (link.l0s_exit_ns, link.l1_exit_us), which shows in every latency behind it. Simplifications: L0s
// is taken by the link as a whole, not per direction; a transfer whose annotated arrival lies past the
// entry time of an idle link that has not yet entered (its entry event still ahead) finds it awake.
//
// L1 PM Substates (link.l1_substates, PCI Express Base Specification section 5.5; Linux aspm.c): with
// them enabled the link's L1 is L1.1 (CLKREQ# deasserted, the reference clock off, common mode kept) or
// L1.2 (common-mode voltage off too). L1.2 only when the device's latency tolerance (its LTR message,
// link.ltr_us) is at least LTR_L1.2_THRESHOLD (link.ltr_l1_2_threshold_us), else L1.1. A TLP that finds
// the link there pays L1's exit plus the substate's (link.l1_1_exit_us; link.l1_2_exit_us, T_POWER_ON +
// T_COMMON_MODE). Substates of L1: without L1 ASPM they are never entered. Simplification: the link
// enters the substate at the L1 entry time (CLKREQ#'s handshake and T_POWER_OFF, at most 2 us, taken as
// instantaneous).
// Trace: <name>.power (L0 / L0s / L1 / L1.1 / L1.2 / L3).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/bus.h"
#include "hw_model/core/params.h"
#include "hw_model/core/power.h"
#include "hw_model/core/vcd.h"

namespace gpumodel {

class PcieLink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<PcieLink> down_in;      // from the root complex
  tlm_utils::simple_initiator_socket<PcieLink> down_out;  // to the device
  tlm_utils::simple_target_socket<PcieLink> up_in;        // from the device
  tlm_utils::simple_initiator_socket<PcieLink> up_out;    // to the root complex
  tlm_utils::simple_target_socket<PcieLink> port;         // the root port's configuration registers

  // The root port's configuration space (ECAM, bus 0 device 1 function 0) and, in its PCI Express
  // capability (at 0x40), the two registers runtime D3cold uses (PCI Express Base Specification): Link
  // Status' Data Link Layer Link Active, and Slot Control's Power Controller Control (1 = power off). Dword
  // accesses; the rest of the space reads as zero.
  static constexpr uint64_t kRootPortBase = 0xC000'8000ull, kRootPortSize = 0x1000;
  static constexpr uint64_t kPcieCap = 0x40;
  static constexpr uint64_t kLinkControl = kPcieCap + 0x10;  // Link Control [15:0], Link Status [31:16]
  static constexpr uint32_t kLinkStaDllla = 1u << (16 + 13);
  static constexpr uint64_t kSlotControl = kPcieCap + 0x18;  // Slot Control [15:0], Slot Status [31:16]
  static constexpr uint32_t kSlotCtlPowerOff = 1u << 10;

  static constexpr unsigned kMwrOverhead = 24;  // Intel AN 456; pcie-model TLP_MWr_64 + DLLP framing
  static constexpr unsigned kMrdOverhead = 24;
  static constexpr unsigned kCplOverhead = 20;

  static void declare_params(ParamSet& ps);
  static void declare_aspm_params(ParamSet& ps);
  static void declare_slot_params(ParamSet& ps);
  static void declare_l1ss_params(ParamSet& ps);
  PcieLink(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd);

  // The model's own figures, for results and tests.
  double bytes_per_ns() const { return bytes_per_ns_; }  // after encoding and DLLP overhead
  unsigned max_payload() const { return mps_; }

  struct Direction {
    std::string name;
    sc_core::sc_time free = sc_core::SC_ZERO_TIME;  // busy until
    sc_core::sc_time busy_total = sc_core::SC_ZERO_TIME;
    uint64_t payload_bytes = 0, tlps = 0;
    Vcd::Id busy_id = Vcd::kNone;
    std::deque<PostedFlowControl*> held;  // requesters refused for room, in arrival order
    uint64_t refusals = 0;
    Vcd::Id held_id = Vcd::kNone;
  };
  const Direction& up() const { return up_; }
  const Direction& down() const { return down_; }

  // Power states (ASPM): time in each, for the energy model; exits are the wake-ups that cost latency.
  // L3: the slot's power is off (runtime D3cold; the link is down and draws nothing).
  // L1_1, L1_2: L1 PM substates (in L1 for everything that asks whether the link is in L1).
  enum Power : size_t { kL0, kL0s, kL1, kL1_1, kL1_2, kL3, kPowerStates };
  static const char* power_name(size_t s) {
    static const char* const names[] = {"L0", "L0s", "L1", "L1.1", "L1.2", "L3"};
    return names[s];
  }
  static bool in_l1(size_t s) { return s == kL1 || s == kL1_1 || s == kL1_2; }
  // The state the link's L1 is (kL1, or the substate link.l1_substates and the LTR rule choose).
  size_t l1_state() const { return l1_state_; }
  // Refuses a user's link.l1_substates without L1 ASPM (one message naming both keys).
  static void validate(const ParamSet& ps);
  const StateClock& power() const { return power_; }
  uint64_t exits() const { return exits_; }
  sc_core::sc_time exit_time() const { return exit_total_; }  // latency paid by TLPs that woke the link
  int lanes() const { return lanes_; }
  double gts() const { return gts_; }
  // Told when the link enters or leaves L1 (any substate) or L3 (the host package's latency tolerance, cpu/package.h).
  std::function<void(bool in_l1)> on_l1;
  // The slot's power (Slot Control): on, or off since. `on_slot_power` is told at each change (the
  // platform's power accounting); the link is up (Data Link Layer Link Active) link.power_on_ms +
  // link.training_ms after power returns. Requests that find the link down complete as Unsupported
  // Request (a read returns all ones, a write is dropped) and are counted: aborts(), first_abort_addr().
  bool slot_on() const { return slot_on_; }
  bool link_active() const { return link_active_; }
  const StateClock& slot() const { return slot_; }  // 0 on, 1 off
  std::function<void(bool on)> on_slot_power;
  uint64_t aborts() const { return aborts_; }
  uint64_t first_abort_addr() const { return first_abort_addr_ & ~1ull; }

  // Lane-rate effective efficiency for (gen, lanes, mps): exposed for tests and the table in docs/link.md.
  static double dll_overhead(int gen, int lanes, unsigned mps);

 private:
  void b_down(tlm::tlm_generic_payload& t, sc_core::sc_time& d) { carry(t, d, down_, up_, down_out); }
  void b_up(tlm::tlm_generic_payload& t, sc_core::sc_time& d) { carry(t, d, up_, down_, up_out); }
  void carry(tlm::tlm_generic_payload& t, sc_core::sc_time& delay, Direction& req, Direction& cpl,
             tlm_utils::simple_initiator_socket<PcieLink>& out);
  // Occupies `dir` from `arrival` for `n` TLPs carrying `payload` bytes in total; returns the end.
  // Posted flow control: admits `fc`'s write of `bytes` (with TLP overheads) arriving at `arrival`, or
  // refuses it and arranges its grant.
  bool admit(Direction& dir, PostedFlowControl& fc, const sc_core::sc_time& arrival, double bytes);
  void grant_front(Direction& dir, const sc_core::sc_time& arrival);
  sc_core::sc_time turn(const Direction& dir, double bytes) const;  // when `bytes` more fit the buffer
  // ASPM: the time the link can carry a TLP arriving at `arrival` (after the exit latency if asleep).
  sc_core::sc_time wake(const sc_core::sc_time& arrival);
  void arm_entry();   // after a transfer: the entry event at the idle start + the first entry time
  void aspm_entry();  // SC_METHOD: the link has been idle long enough to enter the next state
  void enter(size_t s);
  void b_port(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void slot_power(bool on);
  void slot_apply();  // SC_METHOD: a Slot Control write arrived
  void link_up();     // SC_METHOD: training done after a power-on
  sc_core::sc_time serialise(Direction& dir, const sc_core::sc_time& arrival, uint64_t payload, uint64_t n,
                             unsigned overhead);

  Vcd& vcd_;
  Direction up_, down_;
  unsigned mps_, mrrs_, cpl_bytes_;
  double raw_bytes_per_ns_, dll_overhead_, bytes_per_ns_;
  sc_core::sc_time hop_;
  double posted_buffer_bytes_;
  sc_core::sc_time posted_room_;  // the buffer's size in link time
  int lanes_;
  double gts_;
  bool l0s_on_, l1_on_;
  sc_core::sc_time l0s_entry_, l1_entry_, l0s_exit_, l1_exit_, l1_1_exit_, l1_2_exit_;
  size_t l1_state_ = kL1;
  StateClock power_{kPowerStates};
  sc_core::sc_event entry_ev_;
  uint64_t exits_ = 0;
  sc_core::sc_time exit_total_ = sc_core::SC_ZERO_TIME;
  Vcd::Id power_id_ = Vcd::kNone;
  sc_core::sc_time power_on_, training_;
  bool slot_on_ = true, link_active_ = true, slot_request_ = true;
  StateClock slot_{2};
  sc_core::sc_event slot_ev_, link_up_ev_;
  uint64_t aborts_ = 0, first_abort_addr_ = 0;
  Vcd::Id slot_id_ = Vcd::kNone;
};

}  // namespace gpumodel
