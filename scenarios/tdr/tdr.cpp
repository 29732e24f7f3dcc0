// The TDR scenarios (TDR in Windows 8 and later, SPEC T1-T10), one driver with six expectations. The dGPU runs packet
// scheduling: one app device with a render context on each of the first workload.render_nodes nodes
// (of engine 0, and of engine 1 on a linked adapter), each submitting COMPUTE packets of
// workload.packet_us back to back (three in flight); optionally a second app on the hang node
// (workload.corunner) and the system device's paging context there (VidMm's transfers and fills every
// workload.paging_every_us, built with DxgkDdiBuildPagingBuffer, each referencing a healthy app's
// allocation). After workload.hang_after packets, the hang context submits the fault workload.hang
// names; fault injection lives in these parameters and in the KMD/hardware parameters the scenario
// files set, never in special cases of the model:
//   compute           an endless COMPUTE (preemptible only with node.preemption = mid_command)
//   compute_nopreempt an endless COMPUTE with preemption disabled: it ignores the preemption request
//   wait              a WAIT on a fence nothing signals
//   finite            a COMPUTE of quantum + TdrDelay + workload.hang_overrun_us: it completes inside the
//                     sequence (tdr_race_window: between the snapshot and the reset, T8)
//   paging            the paging transfer of the hang device's allocation waits on a fence never signalled (T7)
//   vidmm             VidMm's eviction of the hang app's data waits for a writer that never ends (T7, hang_node 0)
// The apps keep the other nodes loaded until workload.after_ms after the sequence ends.
//
// Metrics: detect_ns (hang start -> timeout), reset_ns (DxgkDdiResetEngine call -> return), recover_ns
// (timeout -> the node executes again), packets_aborted and _resubmitted, devices_in_error, the IDs the
// engine reset returned (absent after an adapter reset alone), each node's throughput before, during and
// after the sequence (T10), the step times, preemptions, ignored interrupts, adapter resets, tdr_reason.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>

#include "hw_model/gpu/regs.h"
#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "scenarios/common/fence_common.h"
#include "scenarios/tdr/tdr_validate.h"

namespace gpumodel {
namespace {

enum class Expect { EngineReset, PagingHit, ResetFails, RaceWindow, BadFenceId, Limit };

struct App {
  SchedDevice* dev = nullptr;
  SchedContext* ctx = nullptr;
  uint32_t node = 0, engine = 0;
  bool hang = false, corunner = false;
  int outstanding = 0;
  bool hang_retired = false;  // its hang packet completed, was aborted or dropped
  KEvent ev;
  // The command buffers it builds: members, not the thread's locals (a run that ends in a bug check
  // stops the thread mid-wait, and a thread that never returns never destroys its locals).
  PacketWriter work, hang_work;
};

class TdrScenario : public ScenarioDriver {
 public:
  TdrScenario(const ParamSet& ps, Expect e)
      : expect_(e),
        packet_ns_(ps.get_real("workload.packet_us") * 1000),
        render_nodes_(uint32_t(ps.get_int("workload.render_nodes"))),
        hang_node_(uint32_t(ps.get_int("workload.hang_node"))),
        hang_engine_(uint32_t(ps.get_int("workload.hang_engine"))),
        hang_after_(uint64_t(ps.get_int("workload.hang_after"))),
        // A paging hang is VidMm's, once: the app has nothing to recreate (workload.hangs is the app's).
        hangs_(ps.get_enum("workload.hang") == "paging" || ps.get_enum("workload.hang") == "vidmm"
                   ? 1
                   : uint64_t(ps.get_int("workload.hangs"))),
        hang_(ps.get_enum("workload.hang")),
        overrun_us_(ps.get_real("workload.hang_overrun_us")),
        corunner_(ps.get_bool("workload.corunner")),
        paging_every_(sc_core::sc_time(ps.get_real("workload.paging_every_us"), sc_core::SC_US)),
        paging_bytes_(uint64_t(ps.get_int("workload.paging_bytes"))),
        after_(sc_core::sc_time(ps.get_real("workload.after_ms"), sc_core::SC_MS)),
        quantum_(sc_core::sc_time(ps.get_real("vidsch.quantum_ms"), sc_core::SC_MS)),
        tdr_delay_(sc_core::sc_time(ps.get_real("vidsch.tdr_delay_ms"), sc_core::SC_MS)),
        mid_command_(ps.get_enum("node.preemption") == "mid_command"),
        per_engine_tdr_(ps.get_bool("kmd.support_per_engine_tdr")),
        engines_(uint32_t(ps.get_int("gpu.linked_engines"))) {}

  void build(Platform& p, Results& r) override {
    if (expect_ == Expect::BadFenceId) {
      r.bugcheck_expected = PacketScheduler::kBugCheckSchedulerFault;
      r.monitors_expected["tdr_rules"] = true;  // the bad ID breaks T4: the monitor sees it too
    }
    if (expect_ == Expect::Limit) r.bugcheck_expected = PacketScheduler::kBugCheckTdrFailure;
    PacketSchedObserver& o = p.vidsch.packets().observer;
    chain(o.step, [this, &p](const TdrStepRecord& s) { on_step(p, s); });
    chain(o.reset_returned, [this](int, const DxgkResetEngineArgs& a, uint64_t sc, uint64_t ss) {
      snap_completed_ = sc, snap_submitted_ = ss, reset_out_ = a, engine_reset_returned_ = true;
    });
    chain(o.device_error, [this](const SchedDevice& d) { error_ids_.push_back(d.id); });
    chain(o.submitted, [this](const DmaPacket& pk, bool resubmission) {
      if (resubmission)
        resubmissions_.push_back({{"paging", pk.paging}, {"from", last_id_[pk.seq]}, {"to", pk.fence_id}});
      last_id_[pk.seq] = pk.fence_id;
    });
    p.cpu.spawn_thread("app.setup", [this, &p, &r] { setup(p, r); });
  }

  void finish(Platform& p, Results& r) override;

 private:
  // finish's steps: the metrics, then the verdict.
  bool report_times(Platform& p, Results& r) const;
  void report_scheduler(const PacketScheduler& ps, Results& r) const;
  void report_steps(Results& r) const;
  double report_throughput(Platform& p, Results& r) const;
  void check_sequence(Platform& p, Results& r, bool resumed, double worst_loss) const;
  bool preemptible_hang() const { return mid_command_ && (hang_ == "compute" || hang_ == "wait"); }
  uint32_t hw(uint32_t engine, uint32_t node) const { return engine * nodes_per_engine_ + node; }

  void on_step(Platform& p, const TdrStepRecord& s) {
    const sc_core::sc_time now = s.at;
    if (s.step == TdrStep::Timeout) {
      if (timeout_at_ != sc_core::SC_ZERO_TIME && first_resume_ == sc_core::SC_ZERO_TIME)
        first_resume_ = p.gpu.nodes[hang_hw_]->resumed_at();   // the first sequence's, before another reset
      if (!tdr_active_ && !before_.taken) sample(p, before_);  // the "before" window ends at the first timeout
      tdr_active_ = true;
      if (timeout_at_ == sc_core::SC_ZERO_TIME) timeout_at_ = now;
    }
    if (s.step == TdrStep::ResetEngine && reset_call_ == sc_core::SC_ZERO_TIME) reset_call_ = now;
    if (s.step == TdrStep::ResetReturned && reset_return_ == sc_core::SC_ZERO_TIME) reset_return_ = now;
    if (s.step == TdrStep::AdapterReset && adapter_reset_at_ == sc_core::SC_ZERO_TIME) adapter_reset_at_ = now;
    if (s.step == TdrStep::AdapterRecovered && adapter_done_at_ == sc_core::SC_ZERO_TIME) adapter_done_at_ = now;
    if (s.step == TdrStep::VramRestored && restored_at_ == sc_core::SC_ZERO_TIME) restored_at_ = now;
    if (s.node < 0 || in_group(size_t(s.node))) steps_.push_back(s);  // the hang's group and the adapter
    if (s.step == TdrStep::Recovered || s.step == TdrStep::AdapterRecovered || s.step == TdrStep::ExitEmpty) {
      tdr_active_ = false;
      if (done_at_ == sc_core::SC_ZERO_TIME) {
        sample(p, during_);
        // The "after" window: a probe process (it reads counters, it schedules nothing in the model).
        sc_core::sc_spawn([this, &p] {
          sc_core::wait(after_);
          sample(p, after_s_);
        });
      }
      done_at_ = now;
    }
  }

  struct Sample {
    sc_core::sc_time at = sc_core::SC_ZERO_TIME;
    std::vector<sc_core::sc_time> compute;
    bool taken = false;
  };
  void sample(Platform& p, Sample& s) {
    s.at = sc_core::sc_time_stamp();
    s.compute.clear();
    for (auto& n : p.gpu.nodes) s.compute.push_back(n->compute_time());
    s.taken = true;
  }

  // When the apps stop submitting: workload.after_ms after the last sequence ended; while one runs, or
  // the hang is still to come, not yet; if no timeout comes (a preemptible hang is preempted), a
  // quantum, TdrDelay and three quanta more after the hang was submitted.
  sc_core::sc_time stop_at() const {
    if (tdr_active_) return sc_core::sc_max_time();
    if (hang_ == "none") return start_ + sc_core::sc_time(packet_ns_ * double(hang_after_), sc_core::SC_NS) + after_;
    if (hangs_done_ < hangs_) return sc_core::sc_max_time();      // a hang is still to come
    if (done_at_ > last_hang_at_) return done_at_ + after_;       // the last hang's sequence has ended
    return last_hang_at_ + quantum_ * 4.0 + tdr_delay_ + after_;  // it never timed out (it was preempted)
  }
  bool stopped() const { return sc_core::sc_time_stamp() >= stop_at(); }

  void setup(Platform& p, Results& r);
  // Each app's resident data in local memory: a VidMm allocation of workload.paging_bytes its device owns, uploaded
  // from VidMm's system-memory copy (a pattern of the app's); VidMm restores it after an adapter reset (BACO).
  void upload_resident_data(Platform& p) {
    for (auto& a : apps_) {
      DxgkCreateAllocationArgs args;
      args.bytes = paging_bytes_;
      VidMmAllocation* v = p.vidmm.CreateAllocation(a->dev->process, Segment::Local, args, a->dev);
      if (a->engine == hang_engine_ && a->node == hang_node_ && !a->corunner) hang_resident_ = v;
      std::vector<uint8_t> data(v->bytes);
      for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + uint64_t(a->dev->id) * 31);
      p.sysmem.poke(v->shadow, data.data(), unsigned(data.size()));
      p.vidmm.Upload(v);
    }
  }
  void app(Platform& p, App& a);
  void paging(Platform& p);
  PacketWriter hang_packet(Platform& p);

  const Expect expect_;
  const double packet_ns_;
  const uint32_t render_nodes_, hang_node_, hang_engine_;
  const uint64_t hang_after_, hangs_;
  const std::string hang_;
  const double overrun_us_;
  const bool corunner_;
  const sc_core::sc_time paging_every_;
  const uint64_t paging_bytes_;
  const sc_core::sc_time after_, quantum_, tdr_delay_;
  const bool mid_command_, per_engine_tdr_;
  const uint32_t engines_;
  uint32_t nodes_per_engine_ = 1, hang_hw_ = 0;
  std::vector<uint32_t> group_;  // node.pipe: the nodes that share the hang node's pipe (it among them)
  bool in_group(size_t i) const { return std::find(group_.begin(), group_.end(), uint32_t(i)) != group_.end(); }
  std::vector<std::unique_ptr<App>> apps_;
  SchedDevice* system_ = nullptr;
  SchedContext* paging_ctx_ = nullptr;
  std::vector<const Allocation*> healthy_allocs_;
  const Allocation* hang_alloc_ = nullptr;
  const Allocation* system_alloc_ = nullptr;
  VidMmAllocation* hang_resident_ = nullptr;  // the hang app's resident data (hang = vidmm: VidMm evicts it)
  FenceVa never_app_,
      never_paging_;  // a fence nothing signals (the WAIT hangs), as the app's and the paging process's packets name it
  uint64_t ts_base_ = 0;  // the hang packets' start timestamps, one slot per hang
  uint64_t paging_dst_ = 0;
  uint64_t hangs_done_ = 0, hang_fence_id_ = 0, paging_packets_ = 0;
  int hang_device_id_ = -1;
  std::vector<int> hang_device_ids_;
  sc_core::sc_time start_ = sc_core::SC_ZERO_TIME, last_hang_at_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time timeout_at_ = sc_core::SC_ZERO_TIME, reset_call_ = sc_core::SC_ZERO_TIME,
                   reset_return_ = sc_core::SC_ZERO_TIME, done_at_ = sc_core::SC_ZERO_TIME,
                   adapter_reset_at_ = sc_core::SC_ZERO_TIME, adapter_done_at_ = sc_core::SC_ZERO_TIME,
                   restored_at_ = sc_core::SC_ZERO_TIME;  // VidMm's restore of the local memory ended
  bool tdr_active_ = false;
  sc_core::sc_time first_resume_ = sc_core::SC_ZERO_TIME;
  Sample before_, during_, after_s_;
  std::vector<TdrStepRecord> steps_;
  std::vector<int> error_ids_;
  nlohmann::ordered_json resubmissions_ = nlohmann::ordered_json::array();
  std::map<uint64_t, uint64_t> last_id_;
  uint64_t snap_completed_ = 0, snap_submitted_ = 0;
  bool engine_reset_returned_ = false;  // a DxgkDdiResetEngine call returned (its IDs and the OS's snapshot)
  DxgkResetEngineArgs reset_out_;
  bool setup_ok_ = false;
};

void TdrScenario::setup(Platform& p, Results& r) {
  const AdapterStart s = DxgkrnlStartAdapter(p.kmd, "dGPU");
  if (!r.check(s.started, s.reason)) return;
  PacketScheduler& ps = p.vidsch.packets();
  nodes_per_engine_ = p.kmd.nodes_per_engine();
  hang_hw_ = hw(hang_engine_, hang_node_);
  for (uint32_t o = 0; o < nodes_per_engine_; ++o)  // the dependent engine group: the nodes of the hang's pipe
    if (p.gpu.nodes[hw(hang_engine_, o)]->pipe() == p.gpu.nodes[hang_hw_]->pipe())
      group_.push_back(hw(hang_engine_, o));
  start_ = sc_core::sc_time_stamp();
  ts_base_ = p.vidmm.allocate(Segment::System, 8 * (hangs_ + 1), 64);
  paging_dst_ = p.vidmm.allocate(Segment::System, paging_bytes_);
  NativeFence* never = p.vidsch.CreateNativeFence(1, Segment::System, false);
  p.vidsch.OpenNativeFence(0, never);  // the paging process waits on it too
  never_app_ = VidSch::va(*never, 1), never_paging_ = VidSch::va(*never, 0);
  system_ = ps.CreateDevice(true);
  for (uint32_t e = 0; e < engines_; ++e)
    for (uint32_t n = 0; n < render_nodes_; ++n) {
      auto a = std::make_unique<App>();
      a->node = n, a->engine = e;
      a->hang = hang_ != "paging" && hang_ != "vidmm" && hang_ != "none" && e == hang_engine_ && n == hang_node_;
      apps_.push_back(std::move(a));
    }
  if (corunner_) {
    auto a = std::make_unique<App>();
    a->node = hang_node_, a->engine = hang_engine_, a->corunner = true;
    apps_.push_back(std::move(a));
  }
  for (auto& a : apps_) {
    a->dev = ps.CreateDevice();
    a->ctx = ps.CreateContext(a->dev, a->node, a->engine);
    // Each app owns an allocation in VRAM (the paging context moves it).
    const Allocation* al = ps.CreateAllocation(a->dev, p.vidmm.allocate(Segment::Local, paging_bytes_), paging_bytes_);
    const bool on_hang_node = a->engine == hang_engine_ && a->node == hang_node_ && !a->corunner;
    if (on_hang_node) {
      hang_alloc_ = al;
      hang_device_id_ = a->dev->id;
    } else {
      healthy_allocs_.push_back(al);
    }
  }
  upload_resident_data(p);
  paging_ctx_ = ps.CreateContext(system_, hang_node_, hang_engine_);
  // VidMm's own allocation (a page-table page the transfer updates): owned by the system device, which
  // T7 never puts in error state.
  system_alloc_ = ps.CreateAllocation(system_, p.vidmm.allocate(Segment::Local, 4096), 4096);
  setup_ok_ = true;
  for (auto& a : apps_) {
    App* ap = a.get();
    p.cpu.spawn_thread("app.node" + std::to_string(hw(a->engine, a->node)) + (a->corunner ? ".corunner" : ""),
                       [this, &p, ap] { app(p, *ap); });
  }
  if (paging_every_ != sc_core::SC_ZERO_TIME || hang_ == "paging" || hang_ == "vidmm")
    p.cpu.spawn_thread("vidmm.paging", [this, &p] { paging(p); });
}

PacketWriter TdrScenario::hang_packet(Platform& p) {
  PacketWriter w;
  w.timestamp(ts_base_ + 8 * hangs_done_);  // when the hang starts on the GPU (a timestamp query)
  if (hang_ == "wait") {
    w.wait(never_app_, 1);
  } else if (hang_ == "finite") {
    const double ns = to_ns(quantum_ + tdr_delay_) + overrun_us_ * 1000;
    w.compute(engine_cycles(p.params, std::max(0.0, ns)));
  } else {  // an endless dispatch: longer than the kernel's time horizon
    w.compute(uint64_t(1) << 62 | (hang_ == "compute_nopreempt" ? kComputeNoPreempt : 0));
  }
  return w;
}

void TdrScenario::app(Platform& p, App& a) {
  PacketScheduler& ps = p.vidsch.packets();
  const uint64_t cycles = engine_cycles(p.params, packet_ns_);
  uint64_t k = 0;
  auto done = [&p, &a](const DmaPacket&) {
    --a.outstanding;
    p.cpu.signal(a.ev);
  };
  while (!stopped()) {
    if (a.hang && k == hang_after_ && hangs_done_ < hangs_) {
      // The fault: the app waits for this packet (it reads its result back), so nothing of its own
      // queues behind it.
      while (a.outstanding > 0) p.cpu.wait_for(a.ev);
      a.hang_retired = false;
      hang_device_ids_.push_back(a.dev->id);
      last_hang_at_ = sc_core::sc_time_stamp();
      a.hang_work = hang_packet(p);
      ++hangs_done_;
      ++a.outstanding;
      App* ap = &a;
      ps.SubmitRender(a.ctx, a.hang_work, [this, &p, ap](const DmaPacket& pk) {
        ap->hang_retired = true;
        hang_fence_id_ = pk.fence_id;
        --ap->outstanding;
        p.cpu.signal(ap->ev);
      });
      while (!a.hang_retired) {
        const sc_core::sc_time until = stop_at();  // re-read: a timeout may have come meanwhile
        if (until == sc_core::sc_max_time()) {
          p.cpu.wait_for(a.ev);
        } else if (sc_core::sc_time_stamp() >= until) {
          ps.DestroyDevice(a.dev);  // the app gives up and closes its device (a preemptible hang never times out)
          return;
        } else {
          p.cpu.wait_for(a.ev, until - sc_core::sc_time_stamp());
        }
      }
      if (!a.dev->error) return;          // it completed or was dropped, not a fault: the app is done
      if (hangs_done_ >= hangs_) return;  // DXGI_ERROR_DEVICE_REMOVED: the app is done
      a.dev = ps.CreateDevice();          // it recreates its device and hangs again (tdr_limit)
      a.ctx = ps.CreateContext(a.dev, a.node, a.engine);
      k = 0;
      continue;
    }
    a.work.clear();
    a.work.compute(cycles);
    ++a.outstanding;
    if (!ps.SubmitRender(a.ctx, a.work, done)) return;  // the device was removed
    ++k;
    while (a.outstanding >= 3 && !stopped()) p.cpu.wait_for(a.ev);
  }
  ps.DestroyDevice(a.dev);
}

void TdrScenario::paging(Platform& p) {
  PacketScheduler& ps = p.vidsch.packets();
  for (uint64_t i = 0; !stopped(); ++i) {
    // The paging hang comes after workload.hang_after regular paging packets (at once without them).
    const bool hang_now = hangs_done_ < hangs_ && (i >= hang_after_ || paging_every_ == sc_core::SC_ZERO_TIME);
    if (hang_ == "vidmm" && hang_now) {
      // VidMm's own eviction of the hang app's resident data, after its last writer, which never finishes: its
      // transfer hangs on VidMm's paging engine (node 0). The hang's start: the eviction's call (its packet has no
      // timestamp of its own). It returns once VidMm redid the aborted transfer after the adapter reset.
      ++hangs_done_;
      last_hang_at_ = sc_core::sc_time_stamp();
      hang_device_ids_.push_back(hang_device_id_);
      const uint64_t ticks =
          uint64_t(sc_core::sc_time_stamp().to_seconds() * 1e12) / uint64_t(p.params.get_int("gpu.timestamp_tick_ps"));
      p.sysmem.poke(ts_base_, &ticks, 8);
      p.vidmm.Evict(hang_resident_, never_paging_, 1);
    } else if (hang_ == "paging" && hang_now) {
      // VidMm evicts the hang device's allocation, after its last writer, which never finishes.
      ++hangs_done_;
      last_hang_at_ = sc_core::sc_time_stamp();
      hang_device_ids_.push_back(hang_device_id_);
      DxgkPagingOp ts, op;
      ts.kind = DxgkPagingOp::Timestamp;
      ts.dst = ts_base_;
      op.kind = DxgkPagingOp::Transfer;
      op.src = hang_alloc_->address, op.dst = paging_dst_, op.bytes = paging_bytes_;
      op.wait_fence = never_paging_, op.wait_value = 1;
      ps.SubmitPaging(paging_ctx_, {ts, op}, {hang_alloc_, system_alloc_},
                      [this](const DmaPacket& pk) { hang_fence_id_ = pk.fence_id; });
    } else if (paging_every_ == sc_core::SC_ZERO_TIME) {
      return;  // no regular paging
    } else if (!healthy_allocs_.empty()) {
      const Allocation* al = healthy_allocs_[i % healthy_allocs_.size()];
      DxgkPagingOp op;
      if (i % 2 == 0) {  // evict: VRAM -> system memory
        op.kind = DxgkPagingOp::Transfer;
        op.src = al->address, op.dst = paging_dst_, op.bytes = paging_bytes_;
      } else {  // a fresh allocation's contents: zero fill
        op.kind = DxgkPagingOp::Fill;
        op.dst = al->address, op.bytes = paging_bytes_;
      }
      ps.SubmitPaging(paging_ctx_, {op}, {al});
      ++paging_packets_;
    }
    if (paging_every_ == sc_core::SC_ZERO_TIME) continue;
    p.cpu.sleep(paging_every_);
  }
}

void TdrScenario::finish(Platform& p, Results& r) {
  const bool resumed = report_times(p, r);
  report_scheduler(p.vidsch.packets(), r);
  r.metric("vram_restored_bytes", p.vidmm.restored_bytes());  // BACO: what VidMm copied back into local memory
  r.metric("paging_redone", p.vidmm.paging_redone());         // VidMm's paging packets a reset aborted, redone
  report_steps(r);
  const double worst_loss = report_throughput(p, r);
  if (!setup_ok_) return;
  check_sequence(p, r, resumed, worst_loss);
}

// detect_ns, reset_ns, recover_ns (absent when their event never happened); true if
// the hung node ran again after the timeout.
bool TdrScenario::report_times(Platform& p, Results& r) const {
  const double tick_ps = double(p.params.get_int("gpu.timestamp_tick_ps"));
  const sc_core::sc_time hang_start(double(p.sysmem.peek64(ts_base_)) * tick_ps, sc_core::SC_PS);
  const bool timed_out = timeout_at_ != sc_core::SC_ZERO_TIME;
  if (timed_out)
    r.metric("detect_ns", to_ns(timeout_at_ - hang_start));
  else
    r.metric_absent("detect_ns", "no timeout was detected");
  if (reset_return_ > reset_call_)
    r.metric("reset_ns", to_ns(reset_return_ - reset_call_));
  else
    r.metric_absent("reset_ns", "no DxgkDdiResetEngine call returned");
  const Node& hn = *p.gpu.nodes[hang_hw_];
  const sc_core::sc_time resumed_at = first_resume_ != sc_core::SC_ZERO_TIME ? first_resume_ : hn.resumed_at();
  const bool resumed = timed_out && resumed_at > timeout_at_;
  if (resumed)
    r.metric("recover_ns", to_ns(resumed_at - timeout_at_));
  else
    r.metric_absent("recover_ns", "the hung node never ran again after the timeout");
  // The sequence's events, for the waveform: its view is the timeout to the recovery (the hang is
  // TdrDelay before, a marker outside it).
  const uint64_t hang_ticks = p.sysmem.peek64(ts_base_);
  if (hang_ticks) r.event("hang", hang_ticks * uint64_t(p.params.get_int("gpu.timestamp_tick_ps")), false);
  if (timed_out) r.event("timeout", timeout_at_.value());
  if (reset_call_ != sc_core::SC_ZERO_TIME) r.event("reset", reset_call_.value());
  if (reset_return_ > reset_call_) r.event("reset done", reset_return_.value());
  if (adapter_reset_at_ != sc_core::SC_ZERO_TIME) r.event("adapter reset", adapter_reset_at_.value());
  if (adapter_done_at_ > adapter_reset_at_) r.event("adapter done", adapter_done_at_.value());
  if (resumed) r.event("recovery", resumed_at.value());
  return resumed;
}

// The packet scheduler's counts and the IDs of the sequence.
void TdrScenario::report_scheduler(const PacketScheduler& ps, Results& r) const {
  r.metric("packets_aborted", ps.packets_aborted());
  r.metric("packets_resubmitted", ps.packets_resubmitted());
  r.metric("devices_in_error", ps.devices_in_error());
  // The IDs DxgkDdiResetEngine returns and the OS's snapshot it checks them against (T4) exist only when
  // an engine reset returned; an adapter reset alone reports none: absent, not 0.
  const std::string why = "no DxgkDdiResetEngine call returned: ";
  auto id = [&](const char* key, uint64_t v, const char* what) {
    engine_reset_returned_ ? r.metric(key, v) : r.metric_absent(key, why + what);
  };
  id("last_aborted_fence_id", ps.last_aborted_fence_id(), "an adapter reset reports no fence IDs");
  id("last_completed_fence_id", ps.last_reset_completed_fence_id(), "an adapter reset reports no fence IDs");
  r.metric("hang_fence_id", hang_fence_id_);
  id("snapshot_last_completed", snap_completed_, "the snapshot is reported with the answer it checks");
  id("snapshot_last_submitted", snap_submitted_, "the snapshot is reported with the answer it checks");
  r.metric("timeouts", ps.timeouts());
  r.metric("engine_resets", ps.engine_resets());
  r.metric("adapter_resets", ps.adapter_resets());
  if (adapter_done_at_ > adapter_reset_at_)
    r.metric("adapter_reset_ns",  // DxgkDdiResetFromTimeout's call -> the restart and VidMm's restore done
             to_ns((restored_at_ > adapter_done_at_ ? restored_at_ : adapter_done_at_) - adapter_reset_at_));
  else
    r.metric_absent("adapter_reset_ns", "no adapter reset completed");
  // VidMm's restore of the local memory after the adapter reset (part of adapter_reset_ns and recover_ns).
  if (restored_at_ > adapter_done_at_ && adapter_done_at_ > adapter_reset_at_)
    r.metric("vram_restore_ns", to_ns(restored_at_ - adapter_done_at_));
  else
    r.metric_absent("vram_restore_ns", "no adapter reset restored local memory");
  r.metric("adapter_reset_cause", ps.adapter_reset_cause());
  r.metric("tdr_reason", ps.tdr_reason());
  r.metric("preemptions", ps.preemptions());
  r.metric("ignored_interrupts", ps.ignored_interrupts());
  r.metric("paging_packets", paging_packets_);
  r.metric("resubmissions", resubmissions_);  // in submission order: kind, old fence ID, new one
  r.metric("dependent_group", group_);
}

// Every step of the sequence, with its node and time.
void TdrScenario::report_steps(Results& r) const {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (auto& s : steps_) {
    nlohmann::ordered_json e = {
        {"node", s.node < 0 ? nlohmann::ordered_json("adapter") : nlohmann::ordered_json(s.node)}};
    e["step"] = to_string(s.step);
    e["t_ns"] = to_ns(s.at);
    steps.push_back(e);
  }
  r.metric("steps", steps);
}

// T10: each node's share of time computing, per window; returns the worst loss of a healthy node.
double TdrScenario::report_throughput(Platform& p, Results& r) const {
  double worst_loss = 0;
  nlohmann::ordered_json tp = nlohmann::ordered_json::object();
  auto share = [](const Sample& a, const Sample& b, size_t i) {
    const double span = to_ns(b.at - a.at);
    return span > 0 ? 100.0 * to_ns(b.compute[i] - a.compute[i]) / span : 0.0;
  };
  Sample zero;
  zero.compute.assign(p.gpu.nodes.size(), sc_core::SC_ZERO_TIME);
  zero.at = start_;
  for (size_t i = 0; i < p.gpu.nodes.size(); ++i) {
    nlohmann::ordered_json n = nlohmann::ordered_json::object();
    n["kind"] = to_string(p.gpu.nodes[i]->engine_kind());
    if (before_.taken) n["before_pct"] = share(zero, before_, i);
    if (before_.taken && during_.taken) n["during_pct"] = share(before_, during_, i);
    if (during_.taken && after_s_.taken) n["after_pct"] = share(during_, after_s_, i);
    n["resets"] = p.gpu.nodes[i]->resets();
    n["preemptions"] = p.gpu.nodes[i]->preemptions();
    const bool healthy = !in_group(i) && i % nodes_per_engine_ < render_nodes_;  // T10: outside the reset group
    if (healthy && n.contains("during_pct") && n["before_pct"].get<double>() > 0)
      worst_loss = std::max(worst_loss, 100.0 * (1.0 - n["during_pct"].get<double>() / n["before_pct"].get<double>()));
    tp["node" + std::to_string(i)] = n;
  }
  r.metric("throughput", tp);
  r.metric("healthy_throughput_loss_pct", worst_loss);
  return worst_loss;
}

// The verdict: the sequence ends as the document prescribes for this fault.
void TdrScenario::check_sequence(Platform& p, Results& r, bool resumed, double worst_loss) const {
  const PacketScheduler& ps = p.vidsch.packets();
  const Node& hn = *p.gpu.nodes[hang_hw_];
  auto in_error = [&](int id) { return std::find(error_ids_.begin(), error_ids_.end(), id) != error_ids_.end(); };
  const bool hung_in_error = !hang_device_ids_.empty() && in_error(hang_device_ids_.front());
  auto order_is = [&](std::vector<TdrStep> want) {
    std::vector<TdrStep> got;
    for (auto& s : steps_)
      if (s.node < 0 || s.node == int(hang_hw_)) got.push_back(s.step);  // the hang node's and the adapter's
    return got == want;
  };
  using S = TdrStep;
  if (preemptible_hang()) {  // mid_command: the hang is preempted each quantum; no timeout
    r.check(ps.timeouts() == 0, "a preemptible hang timed out although mid-command preemption preempted it");
    r.check(hn.preemptions() >= 1, "node.preemption = mid_command: the hang packet was never preempted");
    r.check(!hung_in_error, "a hang that was preempted put its device in error state");
    return;
  }
  switch (expect_) {
    case Expect::EngineReset:
      if (!per_engine_tdr_) {  // T1: without SupportPerEngineTDR the timeout resets the adapter
        r.check(ps.adapter_resets() == 1 && ps.engine_resets() == 0 && ps.adapter_reset_cause() == "no_per_engine_tdr",
                "kmd.support_per_engine_tdr = false: the timeout did not reset the whole adapter (and only it)");
        break;
      }
      r.check(ps.timeouts() == 1 && ps.engine_resets() == group_.size() && ps.adapter_resets() == 0,
              "not exactly one timeout and one engine reset per node of the dependent group, without an adapter "
              "reset");
      for (uint32_t g : group_)  // the OS resets the whole group, each node once, and nothing else
        r.check(p.gpu.nodes[g]->resets() == 1,
                "node " + std::to_string(g) + " of the dependent group was not reset once");
      r.check(order_is({S::Preempt, S::Timeout, S::Snapshot, S::FlushDpc, S::Prepare, S::ResetEngine, S::ResetReturned,
                        S::Validate, S::Recovered}),
              "the hung node's steps are not T3's sequence in order");
      r.check(hung_in_error, "the hung packet's device is not in error state");
      r.check(ps.devices_in_error() == 1, "a device other than the hung one is in error state");
      r.check(ps.last_aborted_fence_id() == hang_fence_id_, "LastAbortedFenceId is not the hung packet's fence ID");
      r.check(!corunner_ || resumed, "the reset node never ran again (its other app's packets were not resubmitted)");
      r.check(worst_loss < 1.0,
              "T10: a node outside the reset group lost 1 % or more of its throughput during the reset");
      break;
    case Expect::PagingHit: {
      r.check(ps.engine_resets() == 1 && ps.adapter_resets() == 1 && ps.adapter_reset_cause() == "paging_hit",
              "the engine reset that hit a paging packet was not followed by an adapter reset (T7)");
      r.check(ps.tdr_reason() == PacketScheduler::kTdrReasonPromoted, "TdrReason is not 9 after the promoted reset");
      r.check(hung_in_error && ps.devices_in_error() == 1,
              "not exactly the owner of the paging packet's allocation in error state (T7)");
      r.check(!system_->error, "the system device is in error state (T7)");
      r.check(restored_at_ > adapter_done_at_, "VidMm did not restore the local memory BACO lost");
      break;
    }
    case Expect::ResetFails:
      if (hn.status() & regs::kNStCannotReset) {  // DxgkDdiQueryEngineStatus says so: no engine reset is tried
        r.check(ps.adapter_resets() == 1 && ps.adapter_reset_cause() == "engine_unresponsive" &&
                    ps.engine_resets() == 0 && hn.resets() == 1,
                "the node the driver reported not responsive was not left to the adapter reset (T9)");
        r.check(order_is({S::Preempt, S::Timeout, S::Snapshot, S::FlushDpc, S::Unresponsive, S::AdapterReset,
                          S::AdapterRecovered, S::VramRestored}),
                "the steps are not: sequence, engine not responsive, adapter reset (no DxgkDdiResetEngine)");
      } else {
        r.check(ps.adapter_resets() == 1 && ps.adapter_reset_cause() == "reset_failed" && ps.engine_resets() == 0,
                "the failed engine reset was not followed by an adapter reset (T9)");
        r.check(order_is({S::Preempt, S::Timeout, S::Snapshot, S::FlushDpc, S::Prepare, S::ResetEngine, S::ResetFailed,
                          S::AdapterReset, S::AdapterRecovered, S::VramRestored}),
                "the steps are not: sequence, failed reset, adapter reset (T9)");
      }
      r.check(ps.tdr_reason() == PacketScheduler::kTdrReasonPromoted, "TdrReason is not 9 (T9)");
      r.check(!system_->error, "the system device is in error state");
      break;
    case Expect::RaceWindow:
      r.check(ps.engine_resets() == 1 && ps.adapter_resets() == 0, "not one engine reset without an adapter reset");
      r.check(snap_completed_ < hang_fence_id_ && hang_fence_id_ <= reset_out_.last_completed_fence_id,
              "the hang packet did not complete between the snapshot and the reset (T8's window): adjust "
              "workload.hang_overrun_us");
      r.check(reset_out_.last_aborted_fence_id == reset_out_.last_completed_fence_id,
              "T8: with the queue empty the driver did not report the last completed ID as LastAbortedFenceId");
      r.check(hung_in_error, "T8: the device was not put in error state although its packet completed in the window");
      break;
    case Expect::BadFenceId:
      r.check(!r.bugcheck.is_null() && r.bugcheck["params"][0] == PacketScheduler::kBadAbortedFenceId,
              "the bug check's first parameter is not 0xA (bad LastAbortedFenceId, T4)");
      break;
    case Expect::Limit:
      r.check(ps.timeouts() == uint64_t(p.params.get_int("vidsch.tdr_limit_count")) + 1,
              "the bug check 0x116 did not come at the timeout past vidsch.tdr_limit_count");
      break;
  }
}

struct Defaults {
  const char* hang;
  int64_t hangs;
  bool corunner;
  double paging_every_us;
};

ScenarioInfo make(const char* name, const char* summary, Expect e, Defaults d) {
  return {name, summary,
          [d](ParamSet& ps, const std::string& o) {
            ps.declare_real("workload.packet_us", 500, "us", 10, 1e6,
                            "A: half a millisecond of engine work per render DMA packet", o);
            ps.declare_int("workload.render_nodes", 3, "nodes", 1, 16,
                           "A: the TDR document's picture: three nodes (3D, video, copy) busy with render work", o);
            ps.declare_int("workload.hang_node", 1, "node", 0, 15, "A: NodeOrdinal 1 hangs", o);
            ps.declare_int("workload.hang_engine", 0, "engine", 0, 1, "A: EngineOrdinal 0 (T2)", o);
            ps.declare_int("workload.hang_after", 4, "packets", 0, 1000000,
                           "A: the hang comes after four good packets of its context", o);
            ps.declare_int("workload.hangs", d.hangs, "hangs", 1, 1000,
                           "A: how many times the app recreates its device and hangs again", o);
            ps.declare_enum("workload.hang", d.hang,
                            {"compute", "compute_nopreempt", "wait", "finite", "paging", "vidmm", "none"},
                            "A: the fault (see the scenario's description)", o);
            ps.declare_real("workload.hang_overrun_us", 25, "us", -1e6, 1e6,
                            "D: hang = finite runs quantum + TdrDelay + this (at least 0): 25 us lands after the "
                            "snapshot (the TDR worker's wake, ~2 us after the timeout) and before the reset (50 us "
                            "of vidsch.tdr_prepare_us later); a few us below 0 completes it before the snapshot "
                            "(step 4)",
                            o);
            ps.declare_bool("workload.corunner", d.corunner,
                            "A: a second app renders on the hang node, so the reset node has work to resume", o);
            ps.declare_real("workload.paging_every_us", d.paging_every_us, "us", 0, 1e6,
                            "A: VidMm moves or fills a healthy app's allocation on the hang node this often "
                            "(0 = no paging)",
                            o);
            ps.declare_int("workload.paging_bytes", 65536, "bytes", 4096, int64_t(256) << 20,
                           "A: 64 KiB per paging operation (one allocation); at most 256 MiB, as the model holds "
                           "it about five times in host memory (the local copy, VidMm's restore copy, the TDR "
                           "monitor's snapshot of VRAM: 1.3 GB resident at the maximum)",
                           o);
            ps.declare_real("workload.after_ms", 5, "ms", 0.001, 1e5,
                            "A: the load stays on this long after the sequence ends (the 'after' window)", o);
          },
          [e](const ParamSet& ps) { return std::make_unique<TdrScenario>(ps, e); },
          [name](const ParamSet& ps) { validate_tdr(ps, name); }};
}

}  // namespace

ScenarioInfo tdr_engine_reset_scenario() {
  return make("tdr_engine_reset", "three nodes render, one hangs: per-engine TDR resets it alone (T1-T6, T10)",
              Expect::EngineReset, {"compute", 1, true, 1000});
}
ScenarioInfo tdr_paging_hit_scenario() {
  return make("tdr_paging_hit", "a paging packet hangs: the engine reset hits it and the adapter resets (T7)",
              Expect::PagingHit, {"paging", 1, false, 1000});
}
ScenarioInfo tdr_reset_fails_scenario() {
  return make("tdr_reset_fails", "the hung node cannot be reset: the adapter resets, TdrReason 9 (T9)",
              Expect::ResetFails, {"compute", 1, true, 0});
}
ScenarioInfo tdr_race_window_scenario() {
  return make("tdr_race_window", "the hung packet completes between the snapshot and the reset (T8)",
              Expect::RaceWindow, {"finite", 1, false, 0});
}
ScenarioInfo tdr_bad_fence_id_scenario() {
  return make("tdr_bad_fence_id", "the KMD returns a bad LastAbortedFenceId: bug check 0x119 (T4)", Expect::BadFenceId,
              {"compute", 1, false, 0});
}
ScenarioInfo tdr_limit_scenario() {
  return make("tdr_limit", "an app hangs again after each recovery: TdrLimitCount passed, bug check 0x116",
              Expect::Limit, {"compute", 6, false, 0});
}

namespace {
const ScenarioRegistration kTdrEngineResetScenario{tdr_engine_reset_scenario, 11};
const ScenarioRegistration kTdrPagingHitScenario{tdr_paging_hit_scenario, 12};
const ScenarioRegistration kTdrResetFailsScenario{tdr_reset_fails_scenario, 13};
const ScenarioRegistration kTdrRaceWindowScenario{tdr_race_window_scenario, 14};
const ScenarioRegistration kTdrBadFenceIdScenario{tdr_bad_fence_id_scenario, 15};
const ScenarioRegistration kTdrLimitScenario{tdr_limit_scenario, 16};
}  // namespace

}  // namespace gpumodel
