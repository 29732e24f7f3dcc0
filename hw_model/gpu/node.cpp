#include "hw_model/gpu/node.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "hw_model/gpu/fence_log.h"
#include "hw_model/gpu/regs.h"

namespace gpumodel {

using namespace sc_core;

Node::Node(sc_module_name name, const ParamSet& ps, Vcd& vcd, int ordinal, CmpPort& cmp, const std::string& adapter)
    : sc_module(name),
      isock("isock"),
      tm_(isock, ps,
          [this](uint64_t root, uint64_t va, const char* what, bool stop) { page_fault(root, va, what, stop); }),
      bus_(tm_.bus()),
      cmp_(cmp),
      vcd_(vcd),
      ordinal_(ordinal),
      kind_(gpumodel::engine_kind(ps, adapter, ordinal, int(ps.get_int(adapter + ".nodes")))),
      instance_(adapter + "." + basename()),
      period_(cycles(1, ps.get_real(instance_, adapter + ".engine_clock_mhz"))),
      decode_(period_ * double(ps.get_int(instance_, "node.decode_cycles"))),
      barrier_(ps.get_ns(instance_, "node.barrier_ns")),
      barrier_sys_(ps.get_ns(instance_, "node.barrier_system_ns")),
      tick_ps_(uint64_t(ps.get_int(adapter + ".timestamp_tick_ps"))),
      write_buffer_(ps.get_ns(instance_, "node.write_buffer_ns")),
      wb_(
          "wb", write_buffer_,
          [this](uint64_t a, const void* src, unsigned len, PostedFlowControl& fc, sc_time& vis) {
            return bus_.try_post(a, src, len, fc, vis);
          },
          [this](uint64_t a, const sc_time& vis) { wrote(a, vis); }),
      wc_(
          "wc", ps.get_ns(instance_, "node.log_entry_wc_ns"),
          [this](uint64_t a, const void* src, unsigned len) { return bus_.post(a, src, len); },
          [this](uint64_t a, const sc_time& vis) { wrote(a, vis); }),
      dma_("dma",
           DmaEngine::Config{unsigned(ps.get_int(instance_, "node.dma_chunk_bytes")),
                             unsigned(ps.get_int(instance_, "node.dma_outstanding")),
                             uint64_t(ps.get_int(instance_, "node.translate_ahead_bytes")),
                             ps.get_ns(instance_, "node.write_buffer_ns")},
           DmaEngine::Port{[this](uint64_t root, uint64_t va, GpuMmu::Result& r, const char* what) {
                             return tm_.translate(root, va, r, what);
                           },
                           [this](uint64_t root, uint64_t va) { return tm_.mmu().translate(root, va); },
                           [this](uint64_t pa, void* dst, unsigned len, ZeroHint* zh) {
                             bus_.read(pa, dst, len, SC_ZERO_TIME, zh);
                           },
                           [this](uint64_t pa, const void* src, unsigned len, PostedFlowControl& fc, ZeroHint* zh) {
                             return bus_.post_held(pa, src, len, fc, zh);  // waits while the link is full
                           },
                           [this](uint64_t pa, const sc_time& vis) { wrote(pa, vis); }}),
      fetcher_("fetch", unsigned(ps.get_int(instance_, "node.fetch_bytes")),
               unsigned(ps.get_int(instance_, "node.fifo_bytes")),
               RingFetcher::Port{[this](uint64_t root, uint64_t va, GpuMmu::Result& r) {
                                   return tm_.translate(root, va, r, "ring fetch");
                                 },
                                 [this](uint64_t pa, void* dst, unsigned len) { bus_.read(pa, dst, len); }}),
      preemption_(ps.get_enum(instance_, "node.preemption") == "mid_command" ? Preemption::MidCommand
                                                                             : Preemption::Packet),
      preempt_save_(ps.get_ns(instance_, "node.preempt_save_ns")),
      preempt_point_(period_ * double(ps.get_int(instance_, "node.preempt_point_cycles"))),
      reset_time_(ps.get_ns(instance_, "node.reset_ns")),
      reset_fails_on_(ps.get_int(instance_, "node.reset_fails_on")),
      invalidate_(ps.get_ns("mmu.invalidate_ns")) {
  log_barriers_ = int(ps.get_int(instance_, "node.log_barriers"));
  pipe_ = int(ps.get_int(instance_, "node.pipe"));
  wb_.on_empty = [this] { barrier_done(); };
  gating_ = ps.get_enum(instance_, "node.power_gating") == "on";
  release_blocked_ = ps.get_enum(instance_, "node.fence_wait") == "release";
  gate_delay_ = ps.get_ns(instance_, "node.gate_delay_us") * 1000.0;
  gate_wake_ = ps.get_ns(instance_, "node.gate_wake_us") * 1000.0;
  fault_vector_ = kNoVector;
  const std::string base = adapter + "." + std::string(basename());
  state_id_ = vcd_.add_ascii(base + ".state", "idle");
  vcd_.add_ascii(base + ".kind", to_string(kind_));  // constant: the engine's kind beside its state
  trace_base_ = base;
  queue_id_ = vcd_.add(base + ".queue", 8, 0xff);
  faults_id_ = vcd_.add(base + ".faults", 32, 0);
  state_ = State::Idle;
  SC_HAS_PROCESS(Node);
  SC_THREAD(executor);
  SC_THREAD(resetter);
}

void Node::set_state(State s) {
  if (s == state_) return;
  const bool busy = state_ == State::Fetch || state_ == State::Execute;
  if (busy) busy_acc_ += sc_time_stamp() - state_since_;
  state_since_ = sc_time_stamp();
  state_ = s;
  clock_.set(size_t(s), state_since_);
  vcd_.set_ascii(state_id_, kStateNames[size_t(s)]);
}

void Node::kick(const HwQueue& q) {
  fetcher_.kick(q);
  work_ev_.notify(SC_ZERO_TIME);
}

void Node::start_queue(const HwQueue* q) {
  if (resume_pending_) {
    resume_pending_ = false;
    resumed_at_ = sc_time_stamp();
  }
  q_ = q;
  root_ = q->ctx_root;
  q_since_ = sc_time_stamp();
  fetcher_.start(q);
  vcd_.set(queue_id_, uint64_t(q->id));
}

void Node::finish_queue() {
  // Report progress to the KMD: the read pointer goes back to memory as a posted write.
  if (q_->rptr_addr) post(q_->rptr_addr, &q_->rptr, 8, SC_ZERO_TIME, q_->pt_root, false);
  q_ = nullptr;
  fetcher_.stop();
  vcd_.set(queue_id_, 0xff);
}

namespace {
std::string describe(const DecodedPacket& d, uint32_t header) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "malformed packet (%s; header 0x%08x)", to_string(d.error), unsigned(header));
  return buf;
}

// A packet as the timeline labels it: its command and operands.
std::string packet_label(const DecodedPacket& d) {
  auto u = [](uint64_t v) { return std::to_string(v); };
  auto hex = [](uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return std::string(b);
  };
  const std::string logged = d.logged ? " (logged)" : "";
  switch (d.op) {
    case Op::Nop: return "NOP";
    case Op::Write64: return "WRITE64 " + hex(d.arg[0]) + " = " + u(d.arg[1]);
    case Op::Timestamp: return "TIMESTAMP to " + hex(d.arg[0]);
    case Op::Barrier: return "BARRIER";
    case Op::Compute: return "COMPUTE " + u(d.arg[0] & ~kComputeNoPreempt) + " cycles";
    case Op::Copy: return "COPY " + u(d.arg[2]) + " bytes";
    case Op::Interrupt: return "INTERRUPT vector " + u(d.arg[0]);
    case Op::Signal: return "SIGNAL fence " + u(d.arg[0]) + " value " + u(d.arg[1]) + logged;
    case Op::Wait: return "WAIT fence " + u(d.arg[0]) + " >= " + u(d.arg[1]) + logged;
    case Op::Fence: return "FENCE id " + u(d.arg[1]);
    case Op::SetPageTable: return "SET_PAGE_TABLE " + hex(d.arg[0]);
    case Op::FlushTlb: return "FLUSH_TLB " + hex(d.arg[0]);
  }
  return "packet";
}
}  // namespace

void Node::executor() {
  uint32_t pkt[kMaxPacketDwords];
  for (;;) {
    try {
      if (life_ != Life::Running) {
        park();
        continue;
      }
      if (preempt_req_ && !in_packet_) {  // at a DMA-packet boundary (or idle)
        take_preemption();
        continue;
      }
      if (!q_) {
        const HwQueue* q = cmp_.pick(ordinal_);
        if (!q) {
          set_state(State::Idle);
          if (!gating_) {
            wait(work_ev_ | abort_ev_ | preempt_ev_);
            continue;
          }
          // Power gating: idle for gate_delay, the engine gates; work then pays the wake latency.
          const sc_time t0 = sc_time_stamp();
          wait(gate_delay_, work_ev_ | abort_ev_ | preempt_ev_);
          if (sc_time_stamp() - t0 < gate_delay_) continue;
          set_state(State::Gated);
          wait(work_ev_ | abort_ev_ | preempt_ev_);
          if (life_ == Life::Running) {
            set_state(State::Wake);
            ++gate_wakes_;
            wait(gate_wake_);
          }
          continue;
        }
        start_queue(q);
      }
      if (!fetcher_.dwords() && q_->rptr >= q_->wptr) {
        finish_queue();
        continue;
      }
      // The header says how many dwords to wait for; a malformed one stops the queue here.
      const DecodedPacket h = fetcher_.dwords() ? decode_header(fetcher_.front()) : DecodedPacket{};
      if (fetcher_.dwords() && !h.ok()) {
        fault(describe(h, fetcher_.front()));
        wait(decode_);  // the fault costs the decode of the packet that raised it
        finish_queue();
        continue;
      }
      if (fetcher_.dwords() < std::max<uint32_t>(h.dwords, 1)) {
        if (fetcher_.dwords() && fetcher_.drained()) {  // everything up to the write pointer is here
          fault(describe({h.op, 0, PacketError::Truncated, h.opcode, {}}, fetcher_.front()));
          wait(decode_);
          finish_queue();
          continue;
        }
        if (take_page_fault()) {  // the fetch of the ring faulted
          wait(decode_);
          finish_queue();
          continue;
        }
        set_state(State::Fetch);
        wait(fetcher_.data_event() | abort_ev_ | preempt_ev_);
        continue;
      }
      const uint32_t len = h.dwords;
      fetcher_.take(pkt, len);
      set_state(State::Execute);
      in_packet_ = true;  // every command belongs to a DMA packet; its FENCE ends it
      const DecodedPacket d = decode_packet(pkt, len);
      if (!engine_runs(kind_, d.op)) {  // a command class this engine's front end does not have
        fault(packet_label(d) + " is not a command " + label() + " runs");
        wait(decode_);
        finish_queue();
        continue;
      }
      const sc_time began = sc_time_stamp();
      execute(d);
      if (vcd_.timeline()) {  // the packet on the engine's packet track; a SIGNAL starts fence flows
        vcd_.slice(trace_base_ + ".packets", packet_label(d), began, sc_time_stamp());
        if (d.op == Op::Signal)
          vcd_.flow_begin(fence_flow_key(trace_base_.substr(0, trace_base_.find('.')), uint32_t(d.arg[0])), d.arg[1],
                          trace_base_ + ".packets", began);
      }
      take_page_fault();
      if (q_->faulted) {  // a well-formed packet the engine cannot run (a fence slot it does not hold)
        finish_queue();
        continue;
      }
      cmp_.executed(*q_, uint64_t(len) * 4);
      ++packets_;
      if (q_->blocked) {
        hold_blocked_queue();
        continue;
      }
      if (preempt_req_ && !in_packet_) {
        take_preemption();
        continue;
      }
      if (cmp_.should_switch(ordinal_, *q_, q_since_)) finish_queue();  // preempted at a packet boundary
    } catch (const Aborted&) {
      park();
    } catch (const Preempted&) {
      // taken inside a COMPUTE or a blocked WAIT (mid_command); the queue is already given back
    }
  }
}

void Node::park() {
  // A reset stopped the executor: it drops what it was running (the reset empties the queue and writes
  // its read pointer back), and waits for the reset to complete.
  if (computing_) {
    compute_acc_ += sc_time_stamp() - compute_since_;
    computing_ = false;
  }
  q_ = nullptr;
  fetcher_.stop();
  dma_.drop_queued();  // chunks not started are dropped; those in flight finish (their writes were issued)
  in_packet_ = false;
  vcd_.set(queue_id_, 0xff);
  set_state(State::Reset);
  life_ = Life::Stopped;
  parked_ev_.notify(SC_ZERO_TIME);
  while (life_ != Life::Running) wait(resume_ev_);
}

void Node::request_preempt() {
  if (preempt_req_) return;
  preempt_req_ = true;
  preempt_ev_.notify(SC_ZERO_TIME);
}

void Node::request_reset(bool adapter, const sc_time& duration) {
  reset_req_ = ResetRequest{adapter, duration};
  reset_req_ev_.notify(SC_ZERO_TIME);
}

uint32_t Node::status() const {
  return (resetting_ ? regs::kNStResetting : 0) | (life_ == Life::Hung ? regs::kNStResetFailed : 0) |
         (reset_fails_on_ == 0 ? regs::kNStCannotReset : 0) | (preempt_req_ ? regs::kNStPreemptPending : 0) |
         (q_ ? regs::kNStBusy : 0);
}

sc_time Node::compute_time() const {
  return compute_acc_ + (computing_ ? sc_time_stamp() - compute_since_ : SC_ZERO_TIME);
}

void Node::trace_fence() {
  if (!vcd_.enabled()) return;
  if (fence_id_ == Vcd::kNone) fence_id_ = vcd_.add(trace_base_ + ".fence", 32, 0);  // only where packets run
  vcd_.set(fence_id_, last_fence_);
}

void Node::resetter() {
  for (;;) {
    while (!reset_req_) wait(reset_req_ev_);
    const ResetRequest req = *reset_req_;
    const bool adapter = req.adapter;
    reset_req_.reset();
    resetting_ = true;
    if (life_ == Life::Running)
      life_ = Life::Stopping, stopping_at_ = sc_time_stamp();  // a hung engine is stopped already
    abort_ev_.notify(SC_ZERO_TIME);
    wait(adapter ? req.duration : reset_time_);
    while (life_ == Life::Stopping) wait(parked_ev_);  // the executor was in a bounded step (a bus access)
    // Every HW queue of this node is emptied; the read pointer goes back to memory so the KMD sees the
    // ring free.
    for (const HwQueue* q : cmp_.queues_of(ordinal_)) {
      cmp_.reset_queue(*q);
      if (q->rptr_addr) post(q->rptr_addr, &q->rptr, 8, SC_ZERO_TIME, q->pt_root, false);
    }
    preempt_req_ = false;
    if (adapter) {  // BACO: the node's registers are lost with the adapter's power
      last_fence_ = 0;
      trace_fence();
    }
    resetting_ = false;
    const bool fails = !adapter && reset_fails_on_ >= 0 && engine_resets_tried_ >= uint64_t(reset_fails_on_);
    if (!adapter) ++engine_resets_tried_;
    if (fails) {  // the hardware cannot reset this node: it stays stopped
      life_ = Life::Hung;
      set_state(State::Hung);
      reset_done_ev_.notify(SC_ZERO_TIME);
      continue;
    }
    ++resets_;
    resume_pending_ = true;
    resumed_at_ = SC_ZERO_TIME;
    life_ = Life::Running;
    resume_ev_.notify(SC_ZERO_TIME);
    reset_done_ev_.notify(SC_ZERO_TIME);
  }
}

void Node::take_preemption() {
  // At a DMA-packet boundary, or (mid_command) a preemption point: save the state, drop the rest of
  // the ring (what did not complete is the KMD's to resubmit), signal the preemption.
  if (q_) {
    set_state(State::Preempt);
    wait(preempt_save_, abort_ev_);
    check_abort();
    cmp_.drop_rest(*q_);
    finish_queue();
  }
  ++preemptions_;
  preempt_req_ = false;
  in_packet_ = false;
  cmp_.raise_interrupt(preempt_vector_, ordinal_);
}

void Node::fault(const std::string& reason) {
  // A real engine raises a fault and stops the queue at the packet; so does the model (STYLE).
  ++faults_;
  vcd_.set(faults_id_, faults_);
  if (fault_messages_.size() < kFaultMessages) {
    char where[96];
    std::snprintf(where, sizeof where, ": queue %d faulted at ring offset 0x%llx: ", q_->id,
                  static_cast<unsigned long long>(q_->rptr & (q_->ring_size - 1)));
    fault_messages_.push_back(name() + std::string(where) + reason);
  }
  cmp_.fault_queue(*q_);
  set_state(State::Fault);
}

void Node::execute(const DecodedPacket& d) {
  if (d.op == Op::Signal) {
    // The hot path: the decode rides on the MV read's offset.
    signal(d, decode_);
    return;
  }
  wait(decode_);
  check_abort();
  OpProbe& probe = by_op_[size_t(d.op) & 15];
  ++probe.count;
  probe.start = sc_time_stamp();
  switch (d.op) {
    case Op::Nop:
    case Op::Signal: break;
    case Op::Write64: post(d.arg[0], &d.arg[1], 8); break;
    case Op::Timestamp: {
      const uint64_t ticks = sc_time_stamp().value() / tick_ps_;
      post(d.arg[0], &ticks, 8);
      break;
    }
    case Op::Barrier:
      set_state(State::Wait);
      drain_write_buffer();
      break;
    case Op::Compute: compute(d.arg[0]); break;
    case Op::Copy: copy(d.arg[0], d.arg[1], d.arg[2]); break;
    case Op::Interrupt: cmp_.raise_interrupt(uint32_t(d.arg[0]), ordinal_); break;
    case Op::Wait: wait_fence(d); break;
    case Op::Fence: fence(d.arg[0], d.arg[1], uint32_t(d.arg[2])); break;
    case Op::SetPageTable:
      root_ = d.arg[0];
      cmp_.set_context(*q_, root_);
      break;
    case Op::FlushTlb:
      // A release (the page-table writes before it are visible), then every TLB of the adapter.
      drain_write_buffer();
      cmp_.invalidate_tlbs(d.arg[0]);
      wait(invalidate_);
      break;
  }
}

void Node::compute(uint64_t operand) {
  const bool preemptible = preemption_ == Preemption::MidCommand && !(operand & kComputeNoPreempt);
  const uint64_t cycles = operand & ~kComputeNoPreempt;
  const sc_time start = sc_time_stamp();
  // A dispatch whose end lies past the kernel's time horizon never ends: it runs until a reset or a
  // preemption stops it (a hang).
  const bool endless = period_.to_double() * double(cycles) >= (sc_max_time() - start).to_double();
  const sc_time end = endless ? sc_max_time() : start + period_ * double(cycles);
  computing_ = true;
  compute_since_ = start;
  auto stop = [this] {
    compute_acc_ += sc_time_stamp() - compute_since_;
    computing_ = false;
  };
  for (;;) {
    if (life_ != Life::Running) {
      stop();
      throw Aborted{};
    }
    const sc_time now = sc_time_stamp();
    if (now >= end) break;
    if (preemptible && preempt_req_) {
      // The next preemption point: a whole number of node.preempt_point_cycles from the start.
      const uint64_t pp = preempt_point_.value(), since = (now - start).value();
      const sc_time point = pp == 0 ? now : start + sc_time::from_value((since + pp - 1) / pp * pp);
      if (point < end) {
        if (point > now) wait(point - now, abort_ev_);
        if (life_ != Life::Running) continue;
        stop();
        take_preemption();
        throw Preempted{};
      }
    }
    if (endless && preemptible)
      wait(abort_ev_ | preempt_ev_);
    else if (endless)
      wait(abort_ev_);
    else if (preemptible)
      wait(end - now, abort_ev_ | preempt_ev_);
    else
      wait(end - now, abort_ev_);
  }
  stop();
}

void Node::fence(uint64_t addr, uint64_t id, uint32_t vector) {
  // A release, as BARRIER: every earlier write of the packet is visible before its fence ID; the ID is
  // visible before the interrupt that reports it (the ISR reads it from memory).
  drain_write_buffer();
  if (!post(addr, &id, 8)) return;  // a page fault: the packet does not complete
  WriteFlush f;
  request_flush(f);
  while (!f.done) wait(wb_.flush_event());
  if (f.visible > sc_time_stamp()) wait(f.visible - sc_time_stamp());
  last_fence_ = id;
  trace_fence();
  in_packet_ = false;
  cmp_.raise_interrupt(vector, ordinal_);
}

void Node::page_fault(uint64_t root, uint64_t va, const char* what, bool stop) {
  // Recorded in the node's fault registers (tm_ counted it and kept its VA) and reported (DMA_FAULTED);
  // the executor stops the queue at its next check.
  char m[160];
  std::snprintf(m, sizeof m, "page fault: %s at GPU VA 0x%llx in the space of page table 0x%llx", what,
                static_cast<unsigned long long>(va), static_cast<unsigned long long>(root));
  if (stop && !pending_fault_) {
    pending_fault_ = m;
  } else if (!stop && fault_messages_.size() < kFaultMessages) {
    fault_messages_.push_back(name() + std::string(": ") + m);
  }
  if (fault_vector_ != kNoVector) cmp_.raise_interrupt(fault_vector_, ordinal_);
}

bool Node::take_page_fault() {
  if (!pending_fault_) return false;
  const std::string msg = std::move(*pending_fault_);
  pending_fault_.reset();
  if (q_) fault(msg);
  return q_ != nullptr;
}

bool Node::post(uint64_t addr, const void* src, unsigned len, const sc_time& offset, uint64_t root, bool stop) {
  // Translated (an aligned write of up to 8 bytes never crosses a page), then into the write buffer;
  // it leaves for the fabric write_buffer_ later, in order.
  GpuMmu::Result r;
  if (!tm_.translate(root == kCurrentRoot ? root_ : root, addr, r, "write", stop)) return false;
  wb_.push(r.addr, src, len, offset);
  return true;
}

void Node::signal(const DecodedPacket& d, const sc_time& decode) {
  const uint32_t slot = uint32_t(d.arg[0]);
  const uint64_t value = d.arg[1], cv_va = d.arg[2], mv_va = d.arg[3];
  const uint64_t* log = d.logged ? &d.log : nullptr;
  const FenceEntry* f = cmp_.fence(slot);
  if (!f || !f->valid()) {
    fault("SIGNAL names fence slot " + std::to_string(slot) + ", which the CMP does not hold");
    wait(decode);
    return;
  }
  ++signals_;
  last_signal_ = sc_time_stamp() + decode;
  // The engine runs the queue's process's packets in its space: CV through the process's own GPU VA (the
  // packet's). The MV it checks is the CMP's shadow (the CMP's memory, in the system process's space), or,
  // with no shadow, the OS's MV through the process's read-only mapping of it.
  const uint64_t sys = cmp_.system_root();
  const uint64_t mv_root = cmp_.mv_from_memory() ? root_ : sys;
  const uint64_t mv_addr = cmp_.mv_from_memory() ? mv_va : cmp_.check_mv_addr(slot);
  if (!post(cv_va, &value, 8, decode)) {  // F1: one aligned 64-bit write, once decoded
    wait(decode);
    return;
  }
  if (log && q_->signal_log && q_->log_entries) {
    // F17, the GPU's order: CV, the log entry (FenceEndGpuTimestamp: now, the CV write issued),
    // FirstFreeEntryIndex, a barrier (the index is visible), then the conditional interrupt check. A
    // queue without a signal log runs the logged form as a plain SIGNAL. The entry and the index enter
    // their buffers as the packet decodes (the decode is their offset, as for the CV write), without a
    // wake for the decode; a reset asked for by its end stops the engine before the conditional check,
    // as when it woke for the decode. The two-barrier order waits the decode out first (its flush
    // pushes the entry out at once).
    const bool at_once = log_barriers_ != 2;
    const sc_time decoded = sc_time_stamp() + decode;
    if (!at_once) wait(decode);
    write_log(true, uint32_t(*log), uint32_t(*log >> 32), value, 0, at_once ? decode : SC_ZERO_TIME);
    if (!at_once) check_abort();
    drain_write_buffer(false);
    if (life_ != Life::Running && stopping_at_ <= decoded) throw Aborted{};
    bool ok = false;
    const uint64_t mv = tm_.read64(mv_root, mv_addr, ok);
    if (ok) cmp_.fence_written(slot, value, value > mv, q_);
    return;
  }
  if (cmp_.mv_from_memory()) {
    // cmp.mv_source = memory: no CMP stands between the OS and the engine, so the engine orders its own
    // CV write before its read of the OS's MV (the write leaves the buffer first; the path keeps the
    // order): a signal that misses a new MV has its CV visible to the OS's F8 re-read.
    wait(decode);
    wb_.wait_flushed();
    bool ok = false;
    const uint64_t mv = tm_.read64(mv_root, mv_addr, ok);
    if (ok) cmp_.fence_written(slot, value, value > mv);  // F3
    return;
  }
  // F3: the engine's conditional check against the CMP's shadow MonitoredValue. The CV write above may
  // still be in the write buffer: that is the window the CMP's barrier closes (F7).
  bool ok = false;
  const uint64_t mv = tm_.read64(mv_root, mv_addr, ok, decode);
  if (ok) cmp_.fence_written(slot, value, value > mv);
}

void Node::write_log(bool signal_log, uint64_t seq, uint32_t handle, uint64_t value, uint64_t observed,
                     const sc_time& offset) {
  const uint32_t n = q_->log_entries;
  const uint64_t base = signal_log ? q_->signal_log : q_->wait_log;
  const uint64_t root = signal_log ? kCurrentRoot : cmp_.system_root();  // see HwQueue::signal_log
  fence_log::Entry e{};
  e.fence_value = value;
  e.h_native_fence = handle;
  e.operation_type = signal_log ? fence_log::kSignalExecuted : fence_log::kWaitUnblocked;
  e.fence_observed_gpu_timestamp = observed;
  e.fence_end_gpu_timestamp = (sc_time_stamp() + offset).value() / tick_ps_;
  const uint32_t idx = fence_log::entry_index(seq, n);
  if (!post_log_entry(root == kCurrentRoot ? root_ : root, base + fence_log::entry_offset(idx), &e, offset)) return;
  if (on_log_entry) on_log_entry(q_->id, signal_log ? fence_log::kSignals : fence_log::kWaits, seq, &e);
  if (log_barriers_ == 2) drain_write_buffer(true);    // the two-barrier order: the entry is visible first
  const uint64_t h = fence_log::header_after(seq, n);  // AtomicWraparoundAndEntryIndex: one 64-bit write
  post(base, &h, 8, offset, root);
}

bool Node::post_log_entry(uint64_t root, uint64_t va, const void* entry, const sc_time& offset) {
  GpuMmu::Result r;
  if (!tm_.translate(root, va, r, "write")) return false;  // 48 B at an 8-B aligned offset of a 4 KiB log: one page
  wc_.push(r.addr, entry, offset);
  return true;
}

void Node::flush_logs() { wc_.flush(); }

void Node::wait_fence(const DecodedPacket& d) {
  const uint32_t slot = uint32_t(d.arg[0]);
  const uint64_t value = d.arg[1], cv_va = d.arg[2], payload = d.log;
  const bool logged = d.logged;
  const FenceEntry* f = cmp_.fence(slot);
  if (!f || !f->valid()) {
    fault("WAIT names fence slot " + std::to_string(slot) + ", which the CMP does not hold");
    return;
  }
  last_wait_read_ = sc_time_stamp();
  const uint64_t observed = sc_time_stamp().value() / tick_ps_;
  bool ok = false;
  const uint64_t cv = tm_.read64(root_, cv_va, ok);  // the process's VA, in its space
  if (!ok) return;                                   // a page fault, which stops the queue
  if (cv >= value) {  // satisfied at once: the engine logs WAIT_UNBLOCKED itself; it never stalled: observed = end
    if (logged && q_->wait_log && q_->log_entries)
      write_log(false, uint32_t(payload), uint32_t(payload >> 32), value, sc_time_stamp().value() / tick_ps_,
                SC_ZERO_TIME);
    return;
  }
  // The CMP logs WAIT_UNBLOCKED when it unblocks the queue (the document: "after the GPU scheduler observes
  // HWQueueA is unblocked ... it logs the event"), then re-checks the fence and unblocks it on the GPU (F5).
  cmp_.block(*q_, BlockedWait{slot, value, logged && q_->wait_log && q_->log_entries, uint32_t(payload),
                              uint32_t(payload >> 32), observed});
}

void Node::hold_blocked_queue() {
  // node.fence_wait = poll: keep the blocked queue's fetched packets while nothing else can run on this
  // node, so the unblock resumes at once (the engine stays powered); give the node to another runnable
  // queue otherwise. release: give it up at once; the engine idles (and may gate) until the unblock.
  set_state(State::Wait);
  while (q_->blocked && !release_blocked_ && !cmp_.other_runnable(ordinal_, *q_)) {
    check_abort();  // a reset asked for while the WAIT read CV: its event has passed, nothing else wakes us
    if (preemption_ == Preemption::MidCommand && preempt_req_) {  // a blocked WAIT is a preemption point
      take_preemption();
      return;
    }
    wait(work_ev_ | abort_ev_ | preempt_ev_);
    check_abort();
  }
  if (q_->blocked) finish_queue();
}

void Node::barrier_done() {
  // The write buffer has just emptied while a device-side barrier (no logs) waits: its end is known now,
  // as drain_write_buffer would compute it on waking.
  if (!barrier_pending_) return;
  barrier_pending_ = false;
  const sc_time now = sc_time_stamp();
  const sc_time latest = max_time(wb_.visible(), dma_.visible());
  const sc_time done = max_time(now, latest) + (last_visible_system_ > now ? barrier_sys_ : barrier_);
  barrier_ev_.notify(done - now);
}

void Node::drain_write_buffer(bool logs) {
  // The barrier completes when every earlier write has left the write buffer and is visible, plus the
  // handshake of its scope: system scope while a system-memory write is outstanding, else device scope.
  if (logs) flush_logs();
  if (!logs && !wb_.empty()) {
    // The write buffer computes the barrier's end when it empties (barrier_done): one wake, at the end.
    barrier_pending_ = true;
    wait(barrier_ev_);
    return;
  }
  wb_.wait_empty();
  const sc_time now = sc_time_stamp();
  sc_time latest = max_time(wb_.visible(), dma_.visible());
  if (logs) latest = max_time(latest, wc_.visible());
  const sc_time done = max_time(now, latest) + (last_visible_system_ > now ? barrier_sys_ : barrier_);
  wait(done - now);
}

void Node::copy(uint64_t src, uint64_t dst, uint64_t bytes) {
  dma_.start(root_, src, dst, bytes);
  while (dma_.busy()) {
    wait(dma_.done_event() | abort_ev_);
    if (life_ != Life::Running) dma_.stop_lookahead();  // the walkers stop with the copy
    check_abort();
  }
  dma_.stop_lookahead();
}

}  // namespace gpumodel
