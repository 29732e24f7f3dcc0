#include "kernel_stub/cpu/cpu.h"

namespace gpumodel {

using namespace sc_core;

void Cpu::declare_params(ParamSet& ps) {
  const char* cst = "Q: Linux drivers/idle/intel_idle.c skl_cstates (docs/calibration.md CPU idle states)";
  ps.declare_real("cpu.c1_exit_ns", 2000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c1_residency_ns", 2000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c1e_exit_ns", 10000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c1e_residency_ns", 20000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c3_exit_ns", 70000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c3_residency_ns", 100000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c6_exit_ns", 85000, "ns", 0, 1e7, cst);
  ps.declare_real("cpu.c6_residency_ns", 200000, "ns", 0, 1e7, cst);
  ps.declare_enum("cpu.idle_governor", "fixed", {"fixed", "menu"},
                  "A: 'fixed' enters cpu.idle_state on every idle; 'menu' picks the deepest state "
                  "(up to cpu.idle_state) whose target residency fits the last idle period, as "
                  "Linux's menu governor does with its recent-interval predictor");
  ps.declare_enum("cpu.idle_state", "C1", {"C1", "C1E", "C3", "C6"},
                  "A: a core whose thread just blocked on a short GPU wait sits in C1 (the menu "
                  "governor's choice for idle periods under C1E's 20 us target residency)");
  ps.declare_real("cpu.interrupt_entry_ns", 500, "ns", 0, 1e7,
                  "D: docs/calibration.md MSI arrival -> ISR entry 0.5 us (0.3-1 us; APIC delivery + "
                  "interrupt entry; Intel 'Reducing Interrupt Latency Through MSI')");
  ps.declare_real("cpu.isr_ns", 2000, "ns", 0, 1e8,
                  "Q/A: docs/calibration.md ISR duration, default 2 us (<= 25 us guideline, Microsoft "
                  "'Measuring DPC/ISR time'); interrupt -> DPC start then lands at 2.5 us, inside "
                  "LatencyMon's 1.2-2.7 us");
  ps.declare_real("cpu.dpc_ns", 1000, "ns", 0, 1e8,
                  "A: 1 us DPC (<= 100 us guideline, Microsoft 'Measuring DPC/ISR time')");
  ps.declare_real("cpu.thread_wake_ns", 2000, "ns", 0, 1e8,
                  "D: LatencyMon interrupt -> waiting user thread running 3.3-9.1 us; minus 0.5 entry, "
                  "2 ISR, 1 DPC leaves ~2 us for ready -> dispatch -> context switch");
  ps.declare_real("cpu.mmio_write_ns", 100, "ns", 0, 1e6,
                  "Q: docs/calibration.md CPU write to a BAR, issue cost ~0.1 us (NVIDIA gdrcopy README)");
  ps.declare_real("cpu.package_exit_ns", 115000, "ns", 0, 1e8,
                  "D: the deep package state's exit on top of the core's C6 exit: Linux "
                  "drivers/idle/intel_idle.c skl_cstates C8 exit 200 us (a package state on client "
                  "parts) less C6's 85 us");
  ps.declare_int("cpu.cores", 1, "cores", 1, 64,
                 "A: the cores the OS schedules on. 1: one core runs the threads, the ISRs and the DPCs, so a "
                 "running thread keeps the interrupts' core awake (the mechanism scenarios' setting). N > 1: "
                 "core 0 takes every interrupt (the adapter's MSI targets one core) and each thread runs on its "
                 "ideal core among 1..N-1, which Windows assigns round-robin at thread creation "
                 "(SetThreadIdealProcessor); each core idles in its own C-state (cpu.idle_governor), so an "
                 "interrupt can find its core idle while threads run elsewhere");
  ps.declare_real("cpu.idle_retick_ms", 0, "ms", 0, 1000,
                  "The clock tick that re-evaluates an idle core the menu governor put in a shallow state: "
                  "at it, a core nothing woke goes to the deepest allowed state (the tick's own wake-up is not "
                  "charged). 0: none, a core stays in its state until woken (the built-in default). Q: "
                  "Windows' default clock interrupt period is 15.625 ms (64 Hz, the timer resolution "
                  "timeBeginPeriod raises)");
  ps.declare_real("cpu.memcpy_gbps", 20, "GB/s", 0.001, 1e4,
                  "A: single-core store bandwidth into cached system memory");
}

Cpu::Cpu(sc_module_name name, const ParamSet& ps, Vcd& vcd, InterruptController& intc)
    : sc_module(name),
      isock("isock"),
      bus_(isock),
      intc_(intc),
      vcd_(vcd),
      governor_(ps.get_enum("cpu.idle_governor")),
      fixed_state_(ps.get_enum("cpu.idle_state")),
      entry_(ps.get_ns("cpu.interrupt_entry_ns")),
      isr_cost_(ps.get_ns("cpu.isr_ns")),
      dpc_cost_(ps.get_ns("cpu.dpc_ns")),
      wake_cost_(ps.get_ns("cpu.thread_wake_ns")),
      mmio_write_cost_(ps.get_ns("cpu.mmio_write_ns")),
      memcpy_bytes_per_ns_(ps.get_real("cpu.memcpy_gbps")),
      package_(vcd, ps.get_ns("cpu.package_exit_ns")) {
  cstates_ = {{"C1", ps.get_ns("cpu.c1_exit_ns"), ps.get_ns("cpu.c1_residency_ns")},
              {"C1E", ps.get_ns("cpu.c1e_exit_ns"), ps.get_ns("cpu.c1e_residency_ns")},
              {"C3", ps.get_ns("cpu.c3_exit_ns"), ps.get_ns("cpu.c3_residency_ns")},
              {"C6", ps.get_ns("cpu.c6_exit_ns"), ps.get_ns("cpu.c6_residency_ns")}};
  context_id_ = vcd_.add_ascii("cpu.context", "boot");
  threads_id_ = vcd_.add("cpu.threads", 8);
  const size_t cores = size_t(ps.get_int("cpu.cores"));
  package_.set_cores(cores);
  workers_.resize(cores - 1);
  retick_ = sc_time(ps.get_real("cpu.idle_retick_ms"), SC_MS);
  for (size_t k = 0; k < workers_.size(); ++k) {  // idle until a thread runs there
    Worker& w = workers_[k];
    w.retick = std::make_unique<sc_event>();
    sc_spawn_options o;
    o.spawn_method();
    o.dont_initialize();
    o.set_sensitivity(w.retick.get());
    sc_spawn([this, k] { retick(k); }, ("core" + std::to_string(k + 1) + "_tick").c_str(), &o);
    w.context = choose_idle_state(sc_max_time()).name;  // no history: the governor expects a long idle
    w.id = vcd_.add_ascii("cpu.core" + std::to_string(k + 1) + ".context", w.context.c_str());
    package_.set_core(k + 1, false, w.context == "C6");
  }
  SC_HAS_PROCESS(Cpu);
  SC_THREAD(core);
}

void Cpu::set_context(const std::string& c, bool idle) {
  if (c == context_) return;
  const sc_time now = sc_time_stamp();
  if (!context_.empty()) residency_[context_] += now - context_since_;
  context_ = c;
  context_since_ = now;
  if (idle) ++entries_[c];
  package_.set_core(!idle, idle && c == "C6");
  vcd_.set_ascii(context_id_, c.c_str());
}

const Cpu::CState& Cpu::choose_idle_state(const sc_time& last_idle) const {
  size_t deepest = 0;
  while (cstates_[deepest].name != fixed_state_) ++deepest;
  if (governor_ == "fixed") return cstates_[deepest];
  size_t pick = 0;
  for (size_t i = 0; i <= deepest; ++i)
    if (cstates_[i].residency <= last_idle) pick = i;
  return cstates_[pick];
}

Cpu::Worker* Cpu::my_worker() {
  if (workers_.empty()) return nullptr;
  auto it = core_of_.find(sc_get_current_process_handle().get_process_object());
  return it == core_of_.end() ? nullptr : &workers_[it->second];
}

void Cpu::worker_context(size_t k, const std::string& c) {
  Worker& w = workers_[k];
  if (c == w.context) return;
  const sc_time now = sc_time_stamp();
  w.residency[w.context] += now - w.since;
  w.context = c;
  w.since = now;
  const bool idle = c != "exit" && c != "thread";
  package_.set_core(k + 1, !idle, c == "C6");
  vcd_.set_ascii(w.id, c.c_str());
}

void Cpu::worker_block(Worker& w) {
  if (--w.running > 0) return;
  w.idle_from = sc_time_stamp();
  const std::string& s = choose_idle_state(w.last_idle).name;
  worker_context(size_t(&w - workers_.data()), s);
  if (retick_ > SC_ZERO_TIME && s != choose_idle_state(sc_max_time()).name) w.retick->notify(retick_);
}

void Cpu::retick(size_t k) {
  Worker& w = workers_[k];
  if (w.running == 0) worker_context(k, choose_idle_state(sc_max_time()).name);
}

void Cpu::worker_run(Worker& w) {
  const sc_time now = sc_time_stamp();
  if (w.running++ > 0) {  // the core runs, or another thread's wake is taking it out of its idle state
    if (w.ready_at > now) wait(w.ready_at - now);
    return;
  }
  w.retick->cancel();
  w.last_idle = now - w.idle_from;
  sc_time exit = SC_ZERO_TIME;
  for (const CState& s : cstates_)
    if (s.name == w.context) exit = s.exit;
  const size_t k = size_t(&w - workers_.data());
  ++worker_wakeups_;
  // Its idle state's exit, after the package's if it is (still) leaving PC8.
  worker_context(k, "exit");
  const sc_time pkg = package_.ready_at();
  const sc_time t = exit + (pkg > now ? pkg - now : SC_ZERO_TIME);
  w.ready_at = now + t;
  if (t > SC_ZERO_TIME) wait(t);
  worker_context(k, "thread");
}

sc_time Cpu::time_in(size_t core, const std::string& c) const {
  if (core == 0) return time_in(c);
  const Worker& w = workers_[core - 1];
  auto it = w.residency.find(c);
  const sc_time done = it == w.residency.end() ? SC_ZERO_TIME : it->second;
  return c == w.context ? done + (sc_time_stamp() - w.since) : done;
}

std::vector<std::string> Cpu::contexts(size_t core) const {
  if (core == 0) return contexts();
  const Worker& w = workers_[core - 1];
  std::vector<std::string> v;
  for (auto& [c, t] : w.residency) v.push_back(c);
  if (!w.residency.count(w.context)) v.push_back(w.context);
  return v;
}

void Cpu::core() {
  for (;;) {
    if (intc_.pending() && irql_ == 0) {
      uint32_t vector = 0;
      sc_time arrived;
      intc_.take(vector, arrived);
      stamps_ = Stamps{};
      stamps_.msi_arrival = arrived;
      for (const CState& s : cstates_) {
        if (s.name != context_) continue;
        ++wakeups_;
        // Leaving the idle state costs its exit latency, after the package's if it is (still) leaving PC8.
        set_context("exit");
        const sc_time now = sc_time_stamp(), pkg = package_.ready_at();
        stamps_.idle_exit = s.exit + (pkg > now ? pkg - now : SC_ZERO_TIME);
        wait(stamps_.idle_exit);
      }
      set_context("ISR");
      stamps_.isr_start = sc_time_stamp();
      wait(entry_);
      ++interrupts_;
      ++by_data_[vector];
      in_isr_ = true;
      for (auto& r : isrs_)
        if (vector - r.first < r.count) {
          r.isr(vector);
          break;
        }
      in_isr_ = false;
      wait(isr_cost_);
      stamps_.isr_end = sc_time_stamp();
      if (on_interrupts_drained && !intc_.pending() && dpcs_.empty()) on_interrupts_drained();
      continue;
    }
    if (!dpcs_.empty() && irql_ == 0) {
      set_context("DPC");
      auto dpc = std::move(dpcs_.front());
      dpcs_.pop_front();
      stamps_.dpc_start = sc_time_stamp();
      dpc_started_ = true;  // out of the queue, not yet run: KeFlushQueuedDpcs still waits for it
      wait(dpc_cost_);
      in_dpc_ = true;
      dpc();
      in_dpc_ = false;
      dpc_started_ = false;
      dpc_done_ev_.notify(SC_ZERO_TIME);
      stamps_.dpc_end = sc_time_stamp();
      if (on_interrupts_drained && !intc_.pending() && dpcs_.empty()) on_interrupts_drained();
      continue;
    }
    if (!ready_.empty()) {
      set_context("wake");  // ready -> dispatch -> context switch
      KEvent* e = ready_.front();
      ready_.pop_front();
      wait(wake_cost_);
      --e->queued;
      ++e->dispatches;
      ++running_;
      vcd_.set(threads_id_, uint64_t(running_));
      e->ev.notify(SC_ZERO_TIME);
      continue;
    }
    if ((workers_.empty() && running_ > 0) || irql_ > 0) {
      set_context("thread");
      wait(intc_.irq() | work_ev_);
      continue;
    }
    const CState& s = choose_idle_state();
    set_context(s.name, /*idle=*/true);
    const sc_time t0 = sc_time_stamp();
    if (retick_ > SC_ZERO_TIME && s.name != choose_idle_state(sc_max_time()).name)
      wait(retick_, intc_.irq() | work_ev_);  // the tick: the next round chooses again, from an idle this long
    else
      wait(intc_.irq() | work_ev_);
    last_idle_ = sc_time_stamp() - t0;
  }
}

void Cpu::queue_dpc(std::function<void()> dpc) { dpcs_.push_back(std::move(dpc)); }

void Cpu::flush_dpcs() {
  while (dpcs_pending()) wait(dpc_done_ev_);
}

void Cpu::spawn_thread(const std::string& name, std::function<void()> body) {
  ++running_;
  vcd_.set(threads_id_, uint64_t(running_));
  const sc_process_handle h = sc_spawn(
      [this, body = std::move(body)] {
        Worker* w = my_worker();
        if (w) worker_run(*w);  // created on its ideal core: out of its idle state first
        body();
        --running_;
        vcd_.set(threads_id_, uint64_t(running_));
        if (w)
          worker_block(*w);
        else
          work_ev_.notify(SC_ZERO_TIME);
      },
      name.c_str());
  if (!workers_.empty()) core_of_[h.get_process_object()] = spawned_++ % workers_.size();
}

void Cpu::wait_for(KEvent& e) {
  if (e.signaled) {
    e.signaled = false;
    return;
  }
  ++e.waiters;
  --running_;
  vcd_.set(threads_id_, uint64_t(running_));
  Worker* w = my_worker();
  if (w)
    worker_block(*w);
  else
    work_ev_.notify(SC_ZERO_TIME);  // core 0 runs the threads: it may idle now
  wait(e.ev);                       // core 0 dispatches us after the wake cost
  if (w) worker_run(*w);
  --e.waiters;
}

bool Cpu::wait_for(KEvent& e, const sc_time& timeout) {
  if (e.signaled) {
    e.signaled = false;
    return true;
  }
  ++e.waiters;
  --running_;
  vcd_.set(threads_id_, uint64_t(running_));
  Worker* w = my_worker();
  if (w)
    worker_block(*w);
  else
    work_ev_.notify(SC_ZERO_TIME);  // core 0 runs the threads: it may idle now
  const uint64_t before = e.dispatches;
  wait(timeout, e.ev);
  // The thread's core leaves its idle state first, whatever woke it (the dispatch or the timer). The
  // waiter stays registered meanwhile: a dispatch during the exit wakes it, and it is not a timeout.
  if (w) worker_run(*w);
  const bool woken = e.dispatches != before;
  if (!woken && e.queued == 0) {
    --e.waiters;
    ++running_;
    vcd_.set(threads_id_, uint64_t(running_));
    if (!w) work_ev_.notify(SC_ZERO_TIME);
    return false;
  }
  if (!woken) wait(e.ev);  // made ready just before the timeout: the dispatch is on its way
  --e.waiters;
  return true;
}

void Cpu::signal(KEvent& e) {
  if (e.waiters > e.queued) {
    ++e.queued;
    ready_.push_back(&e);
    work_ev_.notify(SC_ZERO_TIME);
  } else {
    e.signaled = true;
  }
}

uint32_t Cpu::mmio_read32(uint64_t addr) {
  count_read(addr);
  return bus_.read32(addr);
}
uint64_t Cpu::mmio_read64(uint64_t addr) {
  count_read(addr);
  return bus_.read64(addr);
}
void Cpu::mmio_write32(uint64_t addr, uint32_t v) {
  bus_.post32(addr, v);
  wait(mmio_write_cost_);
}
void Cpu::mmio_write64(uint64_t addr, uint64_t v) {
  bus_.post64(addr, v);
  wait(mmio_write_cost_);
}
void Cpu::mem_write(uint64_t addr, const void* src, unsigned len) {
  bus_.post(addr, src, len);
  wait(sc_time(double(len) / memcpy_bytes_per_ns_, SC_NS));
}
void Cpu::mem_read(uint64_t addr, void* dst, unsigned len) {
  count_read(addr);
  bus_.read(addr, dst, len);
}

}  // namespace gpumodel
