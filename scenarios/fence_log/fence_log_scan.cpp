// fence_log_scan: what the OS's native fence interrupt costs as the fences and HW queues of a device grow
// (F12, F16-F19). workload.fences fences, each with an asynchronous CPU waiter far ahead (so each has a
// waiter the OS must consider, and none of them interrupts), spread over workload.hw_queues HW queues.
// Each round one queue (round robin) signals workload.signals_per_interrupt fences: the first ones
// without crossing their MonitoredValue, the last one the queue's trigger fence, which a CPU thread waits
// on, so each round raises exactly one interrupt. What the OS does in that interrupt's ISR and DPC
// depends on the stack:
//  * vidsch.native_fence_logs = false: no logs. With the fence set (cmp.report_fence_set) it reads the
//    named fence; with NULL it reads every fence that has a waiter: proportional to the fences (F12).
//  * logs: it reads the header of both logs of every HW queue, the KMD barriers the queues whose index
//    moved, and it reads the new entries (F17): proportional to the queues, flat in the fences.
//  * logs + kmd.optimized_native_fence_signaled_interrupt: the interrupt names the queue; the OS reads
//    that queue's logs only (F19): flat in both.
//  * more signals per interrupt than a log holds (84): the log overruns, the OS detects it and reads
//    every fence of the device (F18).
//  * vidsch.fence_log_tracing: "when tracing is enabled, the OS first increases the size of the log
//    buffer" (to vidsch.traced_log_bytes: 1,364 entries by default), so the same rounds read their
//    entries instead of every fence; an overrun that still happens is flagged in the trace as lost events.
// Metrics: os_interrupt_ns (ISR + DPC time per interrupt), pcie_reads_per_interrupt (the ISR's and
// DPC's loads that cross to the device), log_overruns, fallback_scans, gpu_ns_per_signal (the engine's
// time per signal, logged or not), and the OS's counts.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "scenarios/common/fence_common.h"

namespace gpumodel {
namespace {

class FenceLogScan : public ScenarioDriver {
 public:
  explicit FenceLogScan(const ParamSet& ps)
      : fences_(uint64_t(ps.get_int("workload.fences"))),
        queues_(int(ps.get_int("workload.hw_queues"))),
        per_irq_(uint64_t(ps.get_int("workload.signals_per_interrupt"))),
        rounds_(uint64_t(ps.get_int("workload.rounds"))),
        gap_(sc_core::sc_time(ps.get_real("workload.round_gap_us"), sc_core::SC_US)),
        lead_us_(ps.get_real("workload.lead_us")) {}

  void build(Platform& p, Results& r) override {
    p.cpu.spawn_thread("app", [this, &p, &r] { run(p, r); });
  }

  void finish(Platform& p, Results& r) override {
    (void)p;
    r.check(done_, "the rounds did not complete");
    if (!done_) return;
    const double irqs = double(irqs_);
    r.metric("rounds", rounds_);
    r.metric("interrupts", irqs_);
    if (irqs) {
      r.metric("os_interrupt_ns", isr_dpc_ns_ / irqs);
      r.metric("pcie_reads_per_interrupt", double(reads_) / irqs);
    } else {
      r.metric_absent("os_interrupt_ns", "no fence interrupt was taken");
      r.metric_absent("pcie_reads_per_interrupt", "no fence interrupt was taken");
    }
    r.metric("log_overruns", overruns_);
    r.metric("fallback_scans", fallbacks_);
    r.metric("fallback_fences_read", fallback_fences_);  // F18: every fence of the overrun queue's device
    r.metric("log_headers_read", headers_);
    r.metric("log_entries_read", entries_);
    r.metric("log_barriers", barriers_);
    r.metric("log_entries_per_log", p.vidsch.log_entries_per_log());
    r.metric("trace_lost_event_flags", lost_flags_);
    r.metric("gpu_ns_per_signal", gpu_ns_ / double(rounds_ * per_irq_));
    // Each round raises exactly one interrupt: the trigger fence's signal crosses its MV, no other does.
    r.check(irqs_ == rounds_, "not one interrupt per round");
    r.check(timeouts_ == 0, "a round's waiter was not woken within 10 ms");
    check_gpu_cost(p, r);
    const bool logs = p.vidsch.native_fence_logs();
    if (!logs) {
      r.check(headers_ == 0 && entries_ == 0, "no logs, yet the OS read log entries");
      return;
    }
    const bool overrun = per_irq_ > p.vidsch.log_entries_per_log();
    // F18: a round's k signals move its queue's signal log by k; past its N entries (84, or more while
    // tracing) the GPU overwrote unread entries.
    r.check(overruns_ == (overrun ? rounds_ : 0),
            overrun ? "an overrun went undetected" : "an overrun reported without one");
    // Tracing: every overrun flagged in the trace as lost events, and none without tracing.
    r.check(lost_flags_ == (p.vidsch.fence_log_tracing() ? overruns_ : 0),
            "the trace's lost-events flags do not match the overruns while tracing");
    r.check(fallbacks_ == overruns_, "a fallback scan without an overrun, or an overrun without one");
    if (!overrun) r.check(entries_ == rounds_ * per_irq_, "the OS did not read every signal entry exactly once");
    // F17: both logs of every queue; F19: of the named queue, or (NULL) of every queue of its node.
    r.check(headers_ == expected_headers_,
            optimized_ ? "F19: the OS read other logs than the named queue's"
                       : "F17: the OS did not read both logs of every HW queue once per interrupt");
    r.check(barriers_ == rounds_, "F17: not one KMD barrier (for the one queue that moved) per interrupt");
  }

 private:
  void run(Platform& p, Results& r) {
    DxgkAdapterInfo info;
    if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start failed")) return;
    optimized_ = p.kmd.DxgkDdiQueryAdapterInfoVidSchCaps().optimized_native_fence_signaled_interrupt;
    const bool logs = p.vidsch.native_fence_logs();
    struct Q {
      KmdHwQueue* q;
      NativeFence* trigger;
      std::vector<NativeFence*> mine;
      uint32_t seq = 0;  // the UMD's log progression for the queue's signal log
      uint64_t next = 0;
    };
    std::vector<Q> qs;
    for (int i = 0; i < queues_; ++i) {
      KmdHwQueue* q = p.vidsch.CreateHwQueue(i % int(info.nodes), 0, 0, 1);
      if (!r.check(q != nullptr, "no free HW queue")) return;
      qs.push_back({q, p.vidsch.CreateNativeFence(1, Segment::Local, false), {}});
    }
    std::vector<std::pair<NativeFence*, uint64_t>> far;
    constexpr uint64_t kFar = uint64_t(1) << 62;  // a value no round reaches: a waiter, never woken
    for (uint64_t i = 0; i < fences_; ++i) {
      NativeFence* f = p.vidsch.CreateNativeFence(1, Segment::Local, false);
      qs[i % uint64_t(queues_)].mine.push_back(f);
      far.push_back({f, kFar});
    }
    p.vidsch.WaitFromCpuAsync(far);
    std::map<NativeFence*, uint64_t> value;
    const uint64_t ts = p.kmd.scratch();
    auto sig = [&](Q& q, PacketWriter& w, NativeFence* f) {
      const FenceVa slot = VidSch::va(*f, 1);
      if (logs)
        w.signal_logged(slot, ++value[f], q.seq++, f->local_handles.at(1));
      else
        w.signal(slot, ++value[f]);
    };
    // The measured window: counters now, and again after the last round.
    const auto res0 = p.cpu.residency();
    const uint64_t irq0 = p.cpu.interrupts(), reads0 = p.cpu.interrupt_device_reads();
    const uint64_t ff0 = p.vidsch.fallback_fences_read();
    const uint64_t lost0 = p.vidsch.trace_lost_event_flags();
    const uint64_t ov0 = p.vidsch.log_overruns(), fb0 = p.vidsch.fallback_scans(), h0 = p.vidsch.log_headers_read(),
                   e0 = p.vidsch.log_entries_read(), b0 = p.vidsch.log_barriers();
    const bool null_queue = p.params.get_enum("cmp.fence_irq_queue") == "null";
    auto walk_reads = [&p] {
      uint64_t n = 0;
      for (auto& node : p.gpu.nodes) n += node->mmu().walk_reads();
      return n;
    };
    const uint64_t walks0 = walk_reads();
    for (uint64_t round = 0; round < rounds_; ++round) {
      Q& q = qs[round % uint64_t(queues_)];
      uint64_t on_node = 0;
      for (const Q& o : qs) on_node += o.q->node == q.q->node;
      expected_headers_ += 2 * (!optimized_ ? uint64_t(queues_) : null_queue ? on_node : 1);
      PacketWriter w;
      // The lead: the trigger's waiter and its MV are in place before the first signal.
      w.compute(engine_cycles(p.params, lead_us_ * 1000)).timestamp(ts);
      for (uint64_t k = 0; k + 1 < per_irq_; ++k) sig(q, w, q.mine[q.next++ % q.mine.size()]);
      sig(q, w, q.trigger);
      w.timestamp(ts + 8);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q.q, w);
      if (!p.vidsch.WaitFromCpu(q.trigger, value[q.trigger], sc_core::sc_time(10, sc_core::SC_MS))) ++timeouts_;
      // The engine's time for the round's signals: between the two TIMESTAMPs (a probe of memory).
      const double tick_ns = double(p.params.get_int("gpu.timestamp_tick_ps")) / 1000.0;
      // A round whose waiter timed out may not have reached its second TIMESTAMP: it adds nothing here
      // (the verdict fails it), rather than a wrapped-around difference.
      const uint64_t t0 = p.sysmem.peek64(ts), t1 = p.sysmem.peek64(ts + 8);
      if (t1 > t0)
        gpu_ns_ += double(t1 - t0) * tick_ns -
                   to_ns(p.gpu.nodes[0]->engine_period()) * double(p.params.get_int("node.decode_cycles"));
      // The waveform's view: the second round (the first pays the cold translations) from its signals to the
      // OS's interrupt, whose ISR and DPC are os_interrupt_ns, the scenario's measure.
      if (round == std::min<uint64_t>(1, rounds_ - 1) && t1 > t0) {
        const uint64_t tick_ps = uint64_t(p.params.get_int("gpu.timestamp_tick_ps"));
        const Cpu::Stamps& irq = p.cpu.last_interrupt();
        r.event("signals", t0 * tick_ps);  // the round's first TIMESTAMP, before its first signal
        r.event("signals end", t1 * tick_ps);
        if (irq.isr_start >= irq.msi_arrival && irq.isr_start.value() >= t1 * tick_ps) {
          r.event("ISR", irq.isr_start.value());
          r.event("DPC done", irq.dpc_end.value());
        }
      }
      p.cpu.sleep(gap_);
    }
    auto in = [&](const char* c) {
      const auto& now = p.cpu.residency();
      const auto a = now.find(c), b = res0.find(c);
      return (a == now.end() ? 0.0 : to_ns(a->second)) - (b == res0.end() ? 0.0 : to_ns(b->second));
    };
    isr_dpc_ns_ = in("ISR") + in("DPC");
    irqs_ = p.cpu.interrupts() - irq0;
    reads_ = p.cpu.interrupt_device_reads() - reads0;
    overruns_ = p.vidsch.log_overruns() - ov0;
    lost_flags_ = p.vidsch.trace_lost_event_flags() - lost0;
    fallbacks_ = p.vidsch.fallback_scans() - fb0;
    fallback_fences_ = p.vidsch.fallback_fences_read() - ff0;
    headers_ = p.vidsch.log_headers_read() - h0;
    entries_ = p.vidsch.log_entries_read() - e0;
    barriers_ = p.vidsch.log_barriers() - b0;
    walk_reads_ = walk_reads() - walks0;
    done_ = true;
  }

  // The headline figure against its derivation from the parameters (F17's GPU order, Node::signal).
  // A round's figure is the engine's time from the first signal's start t (the round's first
  // TIMESTAMP, decoded) to the last signal's end. One signal in steady state (its TLB warm, nothing
  // bound for system memory outstanding) costs, with d the decode (node.decode_cycles engine cycles),
  // wb = node.write_buffer_ns, F = gpu.fabric_latency_ns (each way), xv(n) an n-byte transfer on the
  // VRAM port (vram.bandwidth_gbps), Wv / Rv = vram.write_latency_ns / vram.read_latency_ns,
  // bd / bs = node.barrier_ns / node.barrier_system_ns, up(n) = an n-byte posted write to system
  // memory (F, the link's TLP of n + 24 bytes, link.hop_ns, rc.latency_ns, the DRAM port's transfer,
  // sysmem.write_latency_ns), and check = F + xv(8) + Rv + F (the read of the CMP's shadow MV in VRAM):
  //  * no logs (a plain SIGNAL): the MV read is issued with the decode: S = d + check;
  //  * logs in local memory (vidsch.log_segment = local), node.log_barriers = 1: the CV write and the
  //    FirstFreeEntryIndex write leave the write buffer together at d + wb and share the VRAM port, so
  //    the index is visible at i = d + wb + F + 2 xv(8) + Wv; the barrier (device scope: nothing for
  //    system memory) ends at i + bd; then the check: S = i + bd + check (704.024 ns with defaults);
  //  * logs in system memory, 1 barrier: the index crosses the link, i = d + wb + up(8), the CV is
  //    visible at c = d + wb + F + xv(8) + Wv, the barrier is system scope: S = max(c, i) + bs + check;
  //  * node.log_barriers = 2: the first barrier pushes the 48-B entry out of the write-combining buffer at
  //    d and waits for it (e = d + F + xv(48) + Wv, or up(48) in system memory) and for the CV (c, after
  //    the entry on a shared port), device scope: B1 = max(c, e) + bd; then the index B1 + wb + (F +
  //    xv(8) + Wv or up(8)) and its barrier (bd or bs): S = that + check.
  // The round's first signal also finds the probe's own TIMESTAMP write (system memory, visible at
  // wb + up(8) after t) outstanding when its first barrier starts (at n1 = d + wb, or max(e, d + wb)
  // with two barriers): that barrier then waits for it too and has system scope, which adds
  // max(0, wb + up(8) - L1) + (bs - bd if it was device scope), L1 being what it waited for otherwise.
  // A TLB miss holds the engine for its walk (each read F + xv(16) + Rv + F at most); those of the
  // nodes during the rounds are counted (the fetcher's too, so an upper bound). Timestamps are read in
  // ticks: each round's difference is within one tick of the truth. So
  //   S - tick / k  <=  gpu_ns_per_signal  <=  S + (probe + walks) / k' + tick / k + slack
  // with k signals per round, k' the signals of all rounds, and a slack per signal of xv(48) (an entry
  // leaving the write-combining buffer ahead of a write on a shared port) and per round of one link
  // TLP (the index behind the probe's on the link). The upper bound assumes vram.write_latency_ns <=
  // vram.read_latency_ns (the default: equal): a read (the check, a walk) then never waits for an earlier
  // write to become visible (the memory's in-order rule); otherwise only the lower bound is checked.
  // Without the barrier after the index (F17) the figure drops to 316.5 ns with defaults, far under S.
  // cmp.mv_source = memory (the engine reads the OS's MV) is not derived here.
  void check_gpu_cost(Platform& p, Results& r) const {
    using sc_core::sc_time;
    const ParamSet& ps = p.params;
    if (ps.get_enum("cmp.mv_source") != "shadow" || gpu_ns_ <= 0) return;
    const bool logs = p.vidsch.native_fence_logs();
    const bool sys = ps.get_enum("vidsch.log_segment") == "system";
    const bool two = ps.get_int("node.log_barriers") == 2;
    const sc_time zero = sc_core::SC_ZERO_TIME;
    const sc_time d = p.gpu.nodes[0]->engine_period() * double(ps.get_int("node.decode_cycles"));
    const sc_time wb = ps.get_ns("node.write_buffer_ns"), F = ps.get_ns("gpu.fabric_latency_ns");
    const sc_time Wv = ps.get_ns("vram.write_latency_ns"), Rv = ps.get_ns("vram.read_latency_ns");
    const sc_time bd = ps.get_ns("node.barrier_ns"), bs = ps.get_ns("node.barrier_system_ns");
    const double vram_bpp = ps.get_real("vram.bandwidth_gbps") / 1000.0,
                 dram_bpp = ps.get_real("sysmem.bandwidth_gbps") / 1000.0;
    auto xv = [&](unsigned n) { return sc_time(double(n) / vram_bpp, sc_core::SC_PS); };
    auto tlp = [&](unsigned n) {
      return sc_time(double(n + PcieLink::kMwrOverhead) / p.link.bytes_per_ns() * 1000.0, sc_core::SC_PS);
    };
    auto up = [&](unsigned n) {
      return F + tlp(n) + ps.get_ns("link.hop_ns") + ps.get_ns("rc.latency_ns") +
             sc_time(double(n) / dram_bpp, sc_core::SC_PS) + ps.get_ns("sysmem.write_latency_ns");
    };
    const sc_time check = F + xv(8) + Rv + F;
    const sc_time ts = wb + up(8);  // the probe's TIMESTAMP write visible, after t
    sc_time S, n1, l1 = zero;
    bool device1 = true;  // the first barrier's scope in steady state
    if (!logs) {
      S = d + check;
    } else if (!two) {
      n1 = d + wb;
      const sc_time c = d + wb + F + xv(8) + Wv, i = sys ? d + wb + up(8) : c + xv(8);
      l1 = sys ? std::max(c, i) : i;
      device1 = !sys;
      S = l1 + (sys ? bs : bd) + check;
    } else {
      const sc_time e = sys ? d + up(48) : d + F + xv(48) + Wv;
      const sc_time c = sys ? d + wb + F + xv(8) + Wv : d + F + std::max(wb, xv(48)) + xv(8) + Wv;
      n1 = std::max(e, d + wb);
      l1 = std::max(c, e);
      const sc_time b1 = std::max(n1, l1) + bd;
      S = b1 + wb + (sys ? up(8) : F + xv(8) + Wv) + (sys ? bs : bd) + check;
    }
    sc_time probe = zero;
    if (logs && ts > n1) probe = (ts > l1 ? ts - l1 : zero) + (device1 ? bs - bd : zero);
    const double k = double(per_irq_), all = double(rounds_ * per_irq_);
    const double tick = double(ps.get_int("gpu.timestamp_tick_ps")) / 1000.0;
    const double walk = to_ns(F + xv(16) + Rv + F);
    const double lo = to_ns(S) - tick / k;
    const double hi = to_ns(S) + (double(rounds_) * (to_ns(probe) + to_ns(tlp(8))) + double(walk_reads_) * walk) / all +
                      tick / k + to_ns(xv(48)) + 0.001;
    const double got = gpu_ns_ / all;
    const bool upper = Wv <= Rv;
    auto num = [](double v) {
      std::ostringstream os;
      os << std::setprecision(10) << v;
      return os.str();
    };
    r.check(got >= lo && (!upper || got <= hi),
            "gpu_ns_per_signal = " + num(got) + " ns is outside its derivation from the parameters: " + num(lo) +
                " to " +
                (upper ? num(hi) : std::string("(no upper bound: vram.write_latency_ns > vram.read_latency_ns)")) +
                " ns (a steady signal " + num(to_ns(S)) + " ns; the round's probe write " + num(to_ns(probe)) +
                " ns; " + std::to_string(walk_reads_) + " walk reads)");
  }

  uint64_t fences_;
  int queues_;
  uint64_t per_irq_, rounds_;
  sc_core::sc_time gap_;
  double lead_us_;
  bool optimized_ = false, done_ = false;
  uint64_t expected_headers_ = 0;
  uint64_t irqs_ = 0, reads_ = 0, overruns_ = 0, lost_flags_ = 0, fallbacks_ = 0, headers_ = 0, entries_ = 0,
           barriers_ = 0, timeouts_ = 0, walk_reads_ = 0, fallback_fences_ = 0;
  double isr_dpc_ns_ = 0, gpu_ns_ = 0;
};

}  // namespace

ScenarioInfo fence_log_scan_scenario() {
  return {
      "fence_log_scan",
      "the OS's native fence interrupt cost against fences and HW queues: no logs, logs, the optimized "
      "interrupt, an overrun",
      [](ParamSet& ps, const std::string& o) {
        ps.declare_int("workload.fences", 1024, "fences", 1, 60000,
                       "A: swept from 64 to 16,384 in the fence logs study's table, docs/studies/fence-logs.md (60,000 "
                       "the most a device is asked to hold)",
                       o);
        ps.declare_int("workload.hw_queues", 4, "queues", 1, 1024,
                       "A: four HW queues of one process; at most gpu.hw_queues", o);
        ps.declare_int("workload.signals_per_interrupt", 4, "signals", 1, 1000,
                       "A: 'a few fences signaled per interrupt'; above 84 (a log's entries) "
                       "each round overruns its queue's log (F18)",
                       o);
        ps.declare_int("workload.rounds", 32, "rounds", 1, 100000,
                       "A: 32 interrupts, enough that one round's cost is the mean", o);
        ps.declare_real("workload.round_gap_us", 20, "us", 0, 1e6,
                        "A: idle time between rounds, so each interrupt finds the CPU idle", o);
        ps.declare_real("workload.lead_us", 20, "us", 0, 1e6,
                        "A: the engine computes this long before a round's signals, so the trigger's "
                        "CPU waiter and its MonitoredValue are in place first",
                        o);
      },
      [](const ParamSet& ps) { return std::make_unique<FenceLogScan>(ps); },
      [](const ParamSet& ps) {
        const int64_t q = ps.get_int("workload.hw_queues");
        require_platform(ps, "fence_log_scan", 1, q, "workload.hw_queues = " + std::to_string(q) + " queues");
        // Each queue's two logs go to the log segment; in local memory they must fit beside the page-table
        // memory (a necessary bound: the rest of what the OS places there is not counted).
        if (ps.get_bool("vidsch.native_fence_logs") && ps.get_enum("vidsch.log_segment") == "local") {
          const bool traced = ps.get_bool("vidsch.fence_log_tracing");
          const uint64_t log = traced ? uint64_t(ps.get_int("vidsch.traced_log_bytes")) : fence_log::kBufferBytes;
          const uint64_t local = uint64_t(ps.get_int("vram.size_bytes"));
          const uint64_t tables = std::min<uint64_t>(uint64_t(ps.get_int("vidmm.page_table_mb")) << 20, local / 4);
          const uint64_t need = 2 * uint64_t(q) * log;
          if (need > local - tables)
            throw ConfigError("workload.hw_queues = " + std::to_string(q) + " with " + std::to_string(log) +
                              "-byte logs" + (traced ? " (vidsch.traced_log_bytes, tracing)" : "") + " need " +
                              std::to_string(need) + " bytes of local memory, more than the " +
                              std::to_string(local - tables) +
                              " bytes vram.size_bytes leaves beside its page tables; allowed: fewer queues, "
                              "smaller traced logs, a larger vram.size_bytes, or vidsch.log_segment = system");
        }
        if (ps.get_int("workload.fences") < q)
          throw ConfigError("workload.fences = " + std::to_string(ps.get_int("workload.fences")) +
                            " is too few for workload.hw_queues = " + std::to_string(q) +
                            ": every queue signals fences of its own; allowed: workload.fences >= workload.hw_queues");
      }};
}

namespace {
const ScenarioRegistration kFenceLogScanScenario{fence_log_scan_scenario, 20};
}  // namespace

}  // namespace gpumodel
