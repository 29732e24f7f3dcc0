// The host CPU as the stub's execution resource: its initiator socket is the only way the OS and KMD
// reach hardware (MMIO and memory). Contexts and their costs follow the order a real interrupt takes:
// idle-state exit -> interrupt entry -> ISR -> DPC -> waiting thread woken. ISR and DPC run on core 0's
// own process in priority order (ISR > DPC > thread dispatch); threads are SC_THREADs that block on
// KEvents. With one core (cpu.cores = 1) the threads run on core 0 too, so a running thread keeps the
// interrupts' core awake. With more, core 0 takes every interrupt and each thread runs on its ideal
// core among 1..N-1 (assigned round-robin at creation): each of those cores idles in its own C-state
// while it has no running thread, and a thread woken or whose timer expires there waits its core's exit
// first. Simplification: an ISR or DPC that arrives while an app thread is running does not stretch that
// thread's own time; threads sharing a core run side by side.
//
// Parameters: cpu.* (idle states from intel_idle skl_cstates, costs from docs/calibration.md).
// Trace: cpu.context (C1 / C1E / C3 / C6 / exit / ISR / DPC / wake / thread / idle0), cpu.threads,
// cpu.coreK.context (K >= 1: C1 ... C6 / exit / thread).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>

#include "hw_model/core/bus.h"
#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/interrupt_controller.h"
#include "kernel_stub/cpu/package.h"

namespace gpumodel {

// A kernel lock (a spin lock / fast mutex): serialises DDIs that program select-then-write registers.
struct KLock {
  bool held = false;
  sc_core::sc_event released;
  void acquire() {
    while (held) sc_core::wait(released);
    held = true;
  }
  void release() {
    held = false;
    released.notify(sc_core::SC_ZERO_TIME);
  }
};

// A kernel event object a thread can wait on (auto-reset, like a KEVENT SynchronizationEvent).
struct KEvent {
  bool signaled = false;
  int waiters = 0;
  int queued = 0;  // waiters already made ready, not yet dispatched
  uint64_t dispatches = 0;
  sc_core::sc_event ev;
};

class Cpu : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Cpu> isock;

  static void declare_params(ParamSet& ps);
  Cpu(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd, InterruptController& intc);

  // Hardware access from the calling CPU context (the calling process waits for the cost).
  uint32_t mmio_read32(uint64_t addr);
  uint64_t mmio_read64(uint64_t addr);
  void mmio_write32(uint64_t addr, uint32_t v);
  void mmio_write64(uint64_t addr, uint64_t v);
  void mem_write(uint64_t addr, const void* src, unsigned len);  // cached stores, then posted to DRAM
  void mem_read(uint64_t addr, void* dst, unsigned len);
  uint64_t mem_read64(uint64_t addr) {
    uint64_t v = 0;
    mem_read(addr, &v, 8);
    return v;
  }

  // Interrupts: a KMD's ISR (DxgkDdiInterruptRoutine), given the MSI data; returns true if claimed.
  // Each adapter's MSI data range [first, first + count) is its own vectors (the OS programmed them at
  // start), so an interrupt runs the ISR of the adapter that owns its vector.
  using Isr = std::function<bool(uint32_t msi_data)>;
  void connect_interrupt(uint32_t first, uint32_t count, Isr isr) { isrs_.push_back({first, count, std::move(isr)}); }
  void queue_dpc(std::function<void()> dpc);  // KeInsertQueueDpc, from the ISR
  void flush_dpcs();  // KeFlushQueuedDpcs, from a thread: returns once every DPC queued so far has run
  // Queued, or taken from the queue and not yet returned (its cpu.dpc_ns included): probe (monitors).
  bool dpcs_pending() const { return dpc_started_ || !dpcs_.empty(); }
  // An interrupt latched and not yet taken, an ISR running, or a DPC pending (a driver's synchronize_irq).
  bool interrupts_pending() const { return intc_.pending() || in_isr_ || dpcs_pending(); }

  // Threads.
  void spawn_thread(const std::string& name, std::function<void()> body);
  void wait_for(KEvent& e);  // KeWaitForSingleObject from an app thread
  // With a timeout: returns false when it expired first (the thread resumes at once; the timer DPC's
  // own cost is not modelled).
  bool wait_for(KEvent& e, const sc_core::sc_time& timeout);
  void signal(KEvent& e);  // KeSetEvent, from a DPC
  // The calling thread computes for `t`: it stays running, so the core takes no idle state meanwhile.
  void work(const sc_core::sc_time& t) { sc_core::wait(t); }
  void sleep(const sc_core::sc_time& t) {  // KeDelayExecutionThread: the thread blocks on a timer
    wait_for(never_, t);
  }

  // Device IRQL (KeSynchronizeExecution): while raised, the core takes no interrupt, so a DDI running
  // there is serialised with the ISR (F8). Nests.
  void raise_device_irql() { ++irql_; }
  void lower_device_irql() {
    if (--irql_ == 0) work_ev_.notify(sc_core::SC_ZERO_TIME);
  }

  // Accounting.
  const std::map<std::string, sc_core::sc_time>& residency() const { return residency_; }
  // Time in context `c` up to now (the current stretch included), and how often an idle state was entered.
  sc_core::sc_time time_in(const std::string& c) const {
    auto it = residency_.find(c);
    const sc_core::sc_time done = it == residency_.end() ? sc_core::SC_ZERO_TIME : it->second;
    return c == context_ ? done + (sc_core::sc_time_stamp() - context_since_) : done;
  }
  uint64_t entries(const std::string& idle_state) const {
    auto it = entries_.find(idle_state);
    return it == entries_.end() ? 0 : it->second;
  }
  // The cores (cpu.cores); core k >= 1's time in context `c` (an idle state, "exit" or "thread") up to
  // now, and every context it has been in.
  size_t cores() const { return 1 + workers_.size(); }
  sc_core::sc_time time_in(size_t core, const std::string& c) const;
  std::vector<std::string> contexts(size_t core) const;
  uint64_t worker_wakeups() const { return worker_wakeups_; }  // exits of cores 1..N-1
  // Every context the core has been in (for the energy model's balance: their times sum to the run).
  std::vector<std::string> contexts() const {
    std::vector<std::string> v;
    for (auto& [c, t] : residency_) v.push_back(c);
    if (!context_.empty() && !residency_.count(context_)) v.push_back(context_);
    return v;
  }
  Package& package() { return package_; }
  const Package& package() const { return package_; }
  uint64_t package_exits() const { return package_.exits(); }
  uint64_t interrupts() const { return interrupts_; }
  // Interrupts taken per MSI data value (an adapter's vector base + its vector).
  uint64_t interrupts_of(uint32_t msi_data) const {
    auto it = by_data_.find(msi_data);
    return it == by_data_.end() ? 0 : it->second;
  }
  uint64_t wakeups() const { return wakeups_; }  // idle exits
  // Loads that leave the host for a device (a BAR: registers below system memory, local memory at
  // BAR2 and above), each a non-posted read that waits for its completion.
  uint64_t device_reads() const { return device_reads_; }
  uint64_t interrupt_device_reads() const { return interrupt_device_reads_; }  // those of ISRs and DPCs
  // Time stamps of the last interrupt's stages, for latency breakdowns.
  struct Stamps {
    sc_core::sc_time msi_arrival, isr_start, isr_end, dpc_start, dpc_end;
    sc_core::sc_time idle_exit = sc_core::SC_ZERO_TIME;
  };
  const Stamps& last_interrupt() const { return stamps_; }
  // Observer (monitors only; it must not drive the model): called when the core has finished an ISR
  // or DPC and no interrupt is latched and no DPC queued, i.e. every interrupt so far is handled.
  std::function<void()> on_interrupts_drained;

 private:
  // Never signalled: what a sleeping thread waits on. A member, not the sleeper's local: a thread
  // still asleep when the simulation stops never destroys its locals (a leak at exit).
  KEvent never_;
  void core();
  void set_context(const std::string& c, bool idle = false);  // idle: `c` is an idle state
  struct CState {
    std::string name;
    sc_core::sc_time exit, residency;
  };
  const CState& choose_idle_state() const { return choose_idle_state(last_idle_); }
  const CState& choose_idle_state(const sc_core::sc_time& last_idle) const;

  // Cores 1..N-1 (cpu.cores > 1): the threads' cores.
  struct Worker {
    std::string context;  // an idle state, "exit" or "thread"
    sc_core::sc_time since = sc_core::SC_ZERO_TIME, idle_from = sc_core::SC_ZERO_TIME;
    sc_core::sc_time last_idle = sc_core::SC_ZERO_TIME, ready_at = sc_core::SC_ZERO_TIME;
    std::map<std::string, sc_core::sc_time> residency;
    int running = 0;
    Vcd::Id id = 0;
    std::unique_ptr<sc_core::sc_event> retick;  // the clock tick that re-evaluates a shallow idle state
  };
  sc_core::sc_time retick_;
  void retick(size_t k);  // the tick: an idle core still in a shallow state goes to the deepest allowed
  std::vector<Worker> workers_;
  std::map<const sc_core::sc_object*, size_t> core_of_;  // a thread's core (index into workers_)
  size_t spawned_ = 0;
  uint64_t worker_wakeups_ = 0;
  Worker* my_worker();  // the calling thread's core, or null with one core
  void worker_context(size_t k, const std::string& c);
  void worker_block(Worker& w);  // a thread on w stops running
  void worker_run(Worker& w);    // a thread on w runs again: its core's exit first if it idled

  BusMaster<Cpu> bus_;
  InterruptController& intc_;
  Vcd& vcd_;
  struct IsrRange {
    uint32_t first, count;
    Isr isr;
  };
  std::vector<IsrRange> isrs_;
  std::deque<std::function<void()>> dpcs_;
  bool in_dpc_ = false;       // running the DPC's code (its device reads count as interrupt-context reads)
  bool dpc_started_ = false;  // taken from the queue, its cost or its code under way
  sc_core::sc_event dpc_done_ev_;
  std::deque<KEvent*> ready_;
  int running_ = 0;
  int irql_ = 0;
  sc_core::sc_event work_ev_;

  std::vector<CState> cstates_;
  std::string governor_, fixed_state_;
  sc_core::sc_time last_idle_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time entry_, isr_cost_, dpc_cost_, wake_cost_, mmio_write_cost_;
  double memcpy_bytes_per_ns_;

  std::string context_ = "";
  sc_core::sc_time context_since_ = sc_core::SC_ZERO_TIME;
  std::map<std::string, sc_core::sc_time> residency_;
  std::map<std::string, uint64_t> entries_;
  Package package_;
  std::map<uint32_t, uint64_t> by_data_;
  uint64_t interrupts_ = 0, wakeups_ = 0, device_reads_ = 0, interrupt_device_reads_ = 0;
  bool in_isr_ = false;
  void count_read(uint64_t addr) {
    if (addr >= regs::kSysmemBase && addr < regs::kVramBase) return;
    ++device_reads_;
    if (in_isr_ || in_dpc_) ++interrupt_device_reads_;
  }
  Stamps stamps_;
  Vcd::Id context_id_, threads_id_;
};

}  // namespace gpumodel
