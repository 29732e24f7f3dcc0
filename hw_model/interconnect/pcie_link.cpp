#include "hw_model/interconnect/pcie_link.h"

#include <algorithm>
#include <cstring>

#include "hw_model/core/bus.h"
#include "hw_model/core/tlm_check.h"

namespace gpumodel {

using namespace sc_core;

namespace {
// Recommended ACK latency limit and UpdateFC interval in symbol times for 8.0/16.0/32.0 GT/s links
// (PCIe Base Spec 5.0 tables 3-7..3-9 and 2-46..2-48, as tabulated by pcie-bench's pcie-model; the two
// tables carry the same values at these rates). Rows: x1 x2 x4 x8 x16; columns: MPS 128..4096.
constexpr int kLanes[] = {1, 2, 4, 8, 16};
constexpr unsigned kMps[] = {128, 256, 512, 1024, 2048, 4096};
constexpr int kAckFcLimit[5][6] = {
    {333, 512, 655, 1167, 2191, 4239}, {224, 313, 385, 641, 1153, 2177}, {169, 214, 250, 378, 634, 1146},
    {163, 203, 182, 246, 374, 630},    {144, 168, 182, 246, 374, 630},
};
constexpr double kDllpBytes = 8;   // ACK or UpdateFC DLLP: 2 B framing + 4 B DLLP + 2 B CRC
constexpr double kSkipLength = 4;  // SKP ordered set, every 1538 symbols
constexpr double kSkipInterval = 1538;
}  // namespace

double PcieLink::dll_overhead(int gen, int lanes, unsigned mps) {
  (void)gen;  // same tables for 8, 16 and 32 GT/s
  int li = 0, mi = 0;
  while (kLanes[li] != lanes) ++li;
  while (kMps[mi] != mps) ++mi;
  double limit = kAckFcLimit[li][mi];
  return kDllpBytes / limit + kDllpBytes / limit + kSkipLength / kSkipInterval;
}

void PcieLink::declare_params(ParamSet& ps) {
  declare_aspm_params(ps);
  declare_slot_params(ps);
  ps.declare_int_choices("link.gen", 4, "", {3, 4, 5},
                         "docs/calibration.md PCIe-like link: desktop dGPU on Gen4 (8/16/32 GT/s per lane, "
                         "128b/130b; PCI-SIG rates as in pcie-bench pcie-model, Intel AN 829)");
  ps.declare_int_choices("link.lanes", 16, "lanes", {1, 2, 4, 8, 16},
                         "docs/calibration.md PCIe-like link: desktop dGPU x16");
  ps.declare_int_choices("link.max_payload_bytes", 256, "bytes", {128, 256, 512, 1024, 2048, 4096},
                         "Q: 256 B common on root ports (PCIe spec range 128-4096; PLX PEX 8532)");
  ps.declare_int_choices("link.max_read_request_bytes", 512, "bytes", {128, 256, 512, 1024, 2048, 4096},
                         "Q: PCIe default Max_Read_Request_Size 512 B (PCIe Base Spec, Device Control)");
  ps.declare_int_choices("link.completion_bytes", 256, "bytes", {64, 128, 256, 512, 1024, 2048, 4096},
                         "A: completions coalesced up to the 256 B max payload (pcie-model rcb_chunks=False)");
  ps.declare_real("link.hop_ns", 200, "ns", 0, 1e6,
                  "D: one-way PHY + data-link + port latency; 550 ns small-read round trip "
                  "(pcie-bench lat_dma_sizes, Gen3 x8) = 2 x 200 hop + 2 x 30 root complex + 90 DRAM");
  ps.declare_int("link.posted_buffer_bytes", 8192, "bytes", 256, int64_t(1) << 30,
                 "D: posted-write egress buffer per direction (PCIe posted credits): enough to keep "
                 "the link busy while credits return, Gen4 x16 26 GB/s x ~250 ns (hop + root "
                 "complex) = 6.5 KB, rounded up to 8 KiB (two 4 KiB DMA chunks)");
}

void PcieLink::declare_slot_params(ParamSet& ps) {
  ps.declare_real("link.power_on_ms", 100, "ms", 0, 10000,
                  "Q: PCI Express Card Electromechanical Specification, T_PVPERL: power stable to PERST# "
                  "inactive, at least 100 ms (the slot's power-on before the device may train its link)");
  ps.declare_real("link.training_ms", 10, "ms", 0, 1000,
                  "A: from PERST# released to Data Link Layer Link Active; the PCI Express Base Specification "
                  "bounds the LTSSM's entry into Detect at 20 ms after the reset, training to 16 GT/s "
                  "(equalisation) takes milliseconds more; uncertainty x0.3-x3");
}

void PcieLink::declare_aspm_params(ParamSet& ps) {
  ps.declare_enum("link.aspm", "off", {"off", "l0s", "l1", "l0s_l1"},
                  "Q: Active State Power Management (PCIe Base Spec 5.0 section 5.4.1; Linux pcie_aspm "
                  "policy): off (the default of the mechanism scenarios: every latency without wake-ups), "
                  "L0s, L1, or L0s then L1");
  ps.declare_real("link.l0s_entry_us", 7, "us", 0.1, 1e6,
                  "Q: PCIe Base Spec 5.0 section 5.4.1.1.1: a transmitter idle for 7 us at most must "
                  "enter L0s (the spec's upper bound taken)");
  ps.declare_real("link.l0s_exit_ns", 1000, "ns", 0, 1e7,
                  "Q: Link Capabilities 'L0s Exit Latency' as lspci prints it for discrete GPUs "
                  "(\"Exit Latency L0s <1us\"): the bound taken");
  ps.declare_real("link.l1_entry_us", 32, "us", 0.1, 1e6,
                  "A: the idle time before ASPM L1 entry is implementation specific (PCIe Base Spec 5.0 "
                  "section 5.4.1.2.1 leaves the policy to the component); 32 us, a few L0s entry times");
  ps.declare_real("link.l1_exit_us", 4, "us", 0, 1e4,
                  "Q: Link Capabilities 'L1 Exit Latency' as lspci prints it for discrete GPUs "
                  "(\"L1 <4us\"): the bound taken");
  declare_l1ss_params(ps);
}

void PcieLink::declare_l1ss_params(ParamSet& ps) {
  ps.declare_enum("link.l1_substates", "off", {"off", "l1_1", "l1_2"},
                  "Q: L1 PM Substates (PCI Express Base Specification section 5.5; Linux aspm.c, policy "
                  "powersupersave): off, L1.1 (CLKREQ# deasserted, common mode kept), or L1.2 with L1.1 (L1.2 while "
                  "link.ltr_us >= link.ltr_l1_2_threshold_us, L1.1 otherwise). Substates of L1 (aspm.c: 'L1 PM "
                  "substates require L1'): set by the user they imply link.aspm = l1 unless it is set");
  ps.declare_real("link.l1_1_exit_us", 0.4, "us", 0, 1e4,
                  "A: L1.1's exit beyond L1's: the reference clock's restart after CLKREQ# is asserted, bounded by "
                  "the PCI Express Card Electromechanical Specification's T_CRLON (CLKREQ# low to a valid REFCLK, "
                  "400 ns), the bound taken; uncertainty x0.5-x10 (a PHY may relock its PLL after it)");
  ps.declare_real("link.l1_2_exit_us", 299, "us", 0, 1e5,
                  "D: L1.2's exit beyond L1's, T_POWER_ON + T_COMMON_MODE as Linux aspm.c programs them (the "
                  "greater of the two ports' each): T_POWER_ON 44 us (an Intel client root port's PortTPowerOnTime "
                  "as lspci prints it, over a GeForce RTX 3090's 10 us) + T_COMMON_MODE 255 us (the RTX 3090's "
                  "PortCommonModeRestoreTime, over the root port's 40 us)");
  ps.declare_real("link.ltr_l1_2_threshold_us", 305, "us", 0, 1e6,
                  "D: LTR_L1.2_THRESHOLD as Linux aspm.c computes it, the time from L0 to L1.2 and back: "
                  "T_POWER_OFF 2 us + T_L1.2 4 us + T_COMMON_MODE 255 us + T_POWER_ON 44 us (link.l1_2_exit_us)");
  ps.declare_real("link.ltr_us", 1000, "us", 0, 1e7,
                  "A: the latency tolerance the idle dGPU reports in its LTR message (snoop and no-snoop alike): "
                  "a GPU that buffers its work in local memory tolerates a millisecond while idle; uncertainty "
                  "x0.1-x10 (below link.ltr_l1_2_threshold_us the link stays in L1.1)");
}

void PcieLink::validate(const ParamSet& ps) {
  const std::string& ss = ps.get_enum("link.l1_substates");
  const std::string& aspm = ps.get_enum("link.aspm");
  if (ps.was_set("link.l1_substates") && ss != "off" && aspm != "l1" && aspm != "l0s_l1")
    throw ConfigError("link.l1_substates = " + ss + " needs ASPM L1, and link.aspm = " + aspm +
                      " has none (L1 PM Substates are substates of L1, PCI Express Base Specification section "
                      "5.5); allowed: link.aspm = l1 or l0s_l1, or link.l1_substates = off");
}

PcieLink::PcieLink(sc_module_name name, const ParamSet& ps, Vcd& vcd)
    : sc_module(name),
      down_in("down_in"),
      down_out("down_out"),
      up_in("up_in"),
      up_out("up_out"),
      port("port"),
      vcd_(vcd),
      mps_(unsigned(ps.get_int("link.max_payload_bytes"))),
      mrrs_(unsigned(ps.get_int("link.max_read_request_bytes"))),
      cpl_bytes_(unsigned(ps.get_int("link.completion_bytes"))),
      hop_(ps.get_ns("link.hop_ns")),
      posted_buffer_bytes_(double(ps.get_int("link.posted_buffer_bytes"))) {
  const int gen = int(ps.get_int("link.gen"));
  const int lanes = int(ps.get_int("link.lanes"));
  const double gts = gen == 3 ? 8.0 : gen == 4 ? 16.0 : 32.0;
  raw_bytes_per_ns_ = gts * lanes * (128.0 / 130.0) / 8.0;
  dll_overhead_ = dll_overhead(gen, lanes, mps_);
  bytes_per_ns_ = raw_bytes_per_ns_ * (1.0 - dll_overhead_);
  posted_room_ = sc_time(posted_buffer_bytes_ / bytes_per_ns_ * 1000.0, SC_PS);
  up_.name = "up";
  down_.name = "down";
  up_.busy_id = vcd_.add(std::string(basename()) + ".up_busy", 1);
  down_.busy_id = vcd_.add(std::string(basename()) + ".down_busy", 1);
  up_.held_id = vcd_.add(std::string(basename()) + ".up_held", 8);
  down_.held_id = vcd_.add(std::string(basename()) + ".down_held", 8);
  lanes_ = lanes;
  gts_ = gts;
  const std::string& aspm = ps.get_enum("link.aspm");
  l0s_on_ = aspm == "l0s" || aspm == "l0s_l1";
  l1_on_ = aspm == "l1" || aspm == "l0s_l1";
  l0s_entry_ = ps.get_ns("link.l0s_entry_us") * 1000.0;
  l1_entry_ = ps.get_ns("link.l1_entry_us") * 1000.0;
  l0s_exit_ = ps.get_ns("link.l0s_exit_ns");
  l1_exit_ = ps.get_ns("link.l1_exit_us") * 1000.0;
  // L1's substate: L1.2 only if the device tolerates the round trip to it (LTR >= LTR_L1.2_THRESHOLD).
  const std::string& ss = ps.get_enum("link.l1_substates");
  const bool l1_2 = ss == "l1_2" && ps.get_real("link.ltr_us") >= ps.get_real("link.ltr_l1_2_threshold_us");
  l1_state_ = ss == "off" ? kL1 : l1_2 ? kL1_2 : kL1_1;
  l1_1_exit_ = l1_exit_ + ps.get_ns("link.l1_1_exit_us") * 1000.0;
  l1_2_exit_ = l1_exit_ + ps.get_ns("link.l1_2_exit_us") * 1000.0;
  power_id_ = vcd_.add_ascii(std::string(basename()) + ".power", "L0");
  SC_HAS_PROCESS(PcieLink);
  SC_METHOD(aspm_entry);
  sensitive << entry_ev_;
  dont_initialize();
  if (l0s_on_ || l1_on_) entry_ev_.notify(l0s_on_ ? l0s_entry_ : l1_entry_);  // idle from the start
  down_in.register_b_transport(this, &PcieLink::b_down);
  up_in.register_b_transport(this, &PcieLink::b_up);
  port.register_b_transport(this, &PcieLink::b_port);
  power_on_ = ps.get_ns("link.power_on_ms") * 1e6;
  training_ = ps.get_ns("link.training_ms") * 1e6;
  SC_METHOD(link_up);
  sensitive << link_up_ev_;
  dont_initialize();
  SC_METHOD(slot_apply);
  sensitive << slot_ev_;
  dont_initialize();
  slot_id_ = vcd_.add(std::string(basename()) + ".slot_power", 1);
  vcd_.set(slot_id_, 1);
}

void PcieLink::slot_apply() { slot_power(slot_request_); }

void PcieLink::b_port(tlm::tlm_generic_payload& t, sc_time& delay) {
  // The root port's configuration space: Link Status (Data Link Layer Link Active) and Slot Control (Power
  // Controller Control); every other register reads as zero and ignores writes. Dword accesses.
  const uint64_t off = t.get_address() - kRootPortBase;
  uint32_t v = 0;
  if (t.is_read()) {
    if (off == kLinkControl) v = link_active_ ? kLinkStaDllla : 0;
    if (off == kSlotControl) v = slot_on_ ? 0 : kSlotCtlPowerOff;
    std::memcpy(t.get_data_ptr(), &v, std::min<unsigned>(t.get_data_length(), 4));
  } else if (off == kSlotControl) {
    std::memcpy(&v, t.get_data_ptr(), std::min<unsigned>(t.get_data_length(), 4));
    slot_request_ = !(v & kSlotCtlPowerOff);
    slot_ev_.notify(delay);  // takes effect when the write arrives
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

void PcieLink::slot_power(bool on) {
  if (on == slot_on_) return;
  slot_on_ = on;
  if (!on) {
    // The device and its link lose power: L3 (no power), the link down until the slot is powered again.
    link_active_ = false;
    link_up_ev_.cancel();
    entry_ev_.cancel();
    enter(kL3);
  } else {
    link_up_ev_.notify(power_on_ + training_);  // PERST# released after the ramp, then training
  }
  slot_.set(on ? 0 : 1, sc_time_stamp());
  vcd_.set(slot_id_, on ? 1 : 0);
  if (on_slot_power) on_slot_power(on);
}

void PcieLink::link_up() {
  link_active_ = true;
  up_.free = max_time(up_.free, sc_time_stamp());
  down_.free = max_time(down_.free, sc_time_stamp());
  enter(kL0);
  arm_entry();
}

void PcieLink::enter(size_t s) {
  // The host package's hold is released in L1 (any substate) and with the link powered off (L3).
  const bool was_low = in_l1(power_.state()) || power_.state() == kL3, low = in_l1(s) || s == kL3;
  power_.set(s, sc_time_stamp());
  vcd_.set_ascii(power_id_, power_name(s));
  if (on_l1 && was_low != low) on_l1(low);
}

sc_time PcieLink::wake(const sc_time& arrival) {
  if (power_.state() == kL0) return arrival;
  const size_t from = power_.state();
  const sc_time exit = from == kL1_2 ? l1_2_exit_ : from == kL1_1 ? l1_1_exit_ : from == kL1 ? l1_exit_ : l0s_exit_;
  enter(kL0);
  ++exits_;
  exit_total_ += exit;
  return arrival + exit;
}

void PcieLink::arm_entry() {
  if (!l0s_on_ && !l1_on_) return;
  const sc_time idle_from = max_time(up_.free, down_.free), now = sc_time_stamp();
  const sc_time at = idle_from + (l0s_on_ ? l0s_entry_ : l1_entry_);
  entry_ev_.cancel();
  entry_ev_.notify(at > now ? at - now : SC_ZERO_TIME);
}

void PcieLink::aspm_entry() {
  if (!link_active_) return;
  const sc_time idle_from = max_time(up_.free, down_.free), now = sc_time_stamp();
  if (now < idle_from) return;  // busy again (a transfer re-armed the event)
  const sc_time idle = now - idle_from;
  if (l1_on_ && idle >= l1_entry_) {
    enter(l1_state_);
  } else if (l0s_on_ && idle >= l0s_entry_ && power_.state() == kL0) {
    enter(kL0s);
    if (l1_on_) entry_ev_.notify(idle_from + l1_entry_ - now);
  } else if (power_.state() == kL0s && l1_on_) {
    entry_ev_.notify(idle_from + l1_entry_ - now);
  }
}

sc_time PcieLink::serialise(Direction& dir, const sc_time& arrival, uint64_t payload, uint64_t n, unsigned overhead) {
  const sc_time start = max_time(wake(arrival), dir.free);
  const sc_time dur(double(payload + n * overhead) / bytes_per_ns_ * 1000.0, SC_PS);
  dir.free = start + dur;
  dir.busy_total += dur;
  dir.payload_bytes += payload;
  dir.tlps += n;
  vcd_.set(dir.busy_id, 1, start);
  vcd_.set(dir.busy_id, 0, dir.free);
  arm_entry();
  return dir.free;
}

sc_time PcieLink::turn(const Direction& dir, double bytes) const {
  // The backlog has drained enough to leave room for `bytes` (a write larger than the buffer waits for
  // an idle direction).
  const sc_time own(bytes / bytes_per_ns_ * 1000.0, SC_PS);
  if (own > posted_room_) return dir.free;
  const sc_time end = dir.free + own;
  return end > posted_room_ ? end - posted_room_ : SC_ZERO_TIME;
}

bool PcieLink::admit(Direction& dir, PostedFlowControl& fc, const sc_time& arrival, double bytes) {
  const bool first = dir.held.empty() || dir.held.front() == &fc;
  if (first && turn(dir, bytes) <= arrival) {
    if (!dir.held.empty()) {
      dir.held.pop_front();
      vcd_.set(dir.held_id, dir.held.size());
    }
    return true;
  }
  fc.refused = true;
  fc.bytes = bytes;
  ++dir.refusals;
  if (std::find(dir.held.begin(), dir.held.end(), &fc) == dir.held.end()) {
    dir.held.push_back(&fc);
    vcd_.set(dir.held_id, dir.held.size());
  }
  if (dir.held.front() == &fc) grant_front(dir, arrival);
  return false;
}

void PcieLink::grant_front(Direction& dir, const sc_time& arrival) {
  PostedFlowControl* next = dir.held.empty() ? nullptr : dir.held.front();
  if (!next || !next->grant) return;
  // Its retry arrives here when there is room for its write (the path to here takes the same time).
  const sc_time ready = max_time(turn(dir, next->bytes), arrival);
  next->grant->notify(ready - arrival);
}

void PcieLink::carry(tlm::tlm_generic_payload& t, sc_time& delay, Direction& req, Direction& cpl,
                     tlm_utils::simple_initiator_socket<PcieLink>& out) {
  const uint64_t len = t.get_data_length();
  const sc_time now = sc_time_stamp();
  if (!link_active_) {
    // The link is down (the slot powered off, or still training): the root port completes a request with
    // Unsupported Request, a read returns all ones, a write is dropped. A driver bug: counted, never silent.
    ++aborts_;
    if (!first_abort_addr_) first_abort_addr_ = t.get_address() | 1;
    if (t.is_read()) std::memset(t.get_data_ptr(), 0xff, len);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (t.is_write()) {
    // Posted: split at the max payload; the data is delivered when the last TLP has crossed.
    const uint64_t n = (len + mps_ - 1) / mps_;
    if (auto* fc = t.get_extension<PostedFlowControl>()) {
      if (!admit(req, *fc, now + delay, double(len + n * kMwrOverhead))) {
        t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        return;
      }
    }
    const sc_time end = serialise(req, now + delay, len, n, kMwrOverhead);
    if (!req.held.empty()) grant_front(req, now + delay);
    delay = end + hop_ - now;
    checked_b_transport(out, t, delay, out.name());
    return;
  }
  // Non-posted read: request TLPs one way, completions with data the other way.
  const uint64_t nreq = (len + mrrs_ - 1) / mrrs_;
  const sc_time req_end = serialise(req, now + delay, 0, nreq, kMrdOverhead);
  delay = req_end + hop_ - now;
  checked_b_transport(out, t, delay, out.name());  // the target synchronises to its sampling time
  if (t.is_response_error()) return;
  const sc_time back = sc_time_stamp();
  const uint64_t ncpl = (len + cpl_bytes_ - 1) / cpl_bytes_;
  const sc_time cpl_end = serialise(cpl, back + delay, len, ncpl, kCplOverhead);
  delay = cpl_end + hop_ - back;
}

}  // namespace gpumodel
