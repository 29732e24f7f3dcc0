#include "kernel_stub/dxgkrnl/vidsch.h"

#include "kernel_stub/dxgkrnl/runtime_pm.h"

#include "hw_model/gpu/regs.h"
#include "kernel_stub/dxgkrnl/cross_adapter_fence.h"
#include "kernel_stub/kmd/kmd.h"

#include <algorithm>

namespace gpumodel {

using namespace sc_core;

namespace {
constexpr uint32_t kBugCheckDxgkrnlFatal = 0x113;  // VIDEO_DXGKRNL_FATAL_ERROR
constexpr uint64_t kInvalidSignaledHandle = 0x3A;  // P1: the model's subcode for F11's violation
}  // namespace

void VidSch::declare_params(ParamSet& ps) {
  ps.declare_bool("vidsch.resample_cv", true,
                  "Q: F8, Native GPU fence object: 'upon return from DxgkDdiUpdateMonitoredValue, the OS resamples "
                  "CurrentValue and satisfies any waiters'; false is a test setting that leaves F7 "
                  "step 3's interrupt as the only report of a signal racing the update");
  ps.declare_bool(
      "vidsch.native_fence_logs", true,
      "Q: F16, Native GPU fence object 'Log buffer mechanism': Dxgkrnl allocates two 4-KB logs (waits, signals) "
      "per HW queue, the UMD logs every native fence signal and wait, and Dxgkrnl reads the logs in the native "
      "fence interrupt's DPC; A: true, the document: 'Support for native fence logging for ..._WAITS and "
      "..._SIGNALS is mandatory'; false: a stack without logs, to compare what they cost");
  ps.declare_enum(
      "vidsch.log_segment", "local", {"local", "system"},
      "Q: Native GPU fence object 'Future hardware requirements': \"reading only the log buffer ensures a single "
      "read over PCI\": the logs in local memory (each header and entry read crosses the link); "
      "system: in the OS's pool");
  ps.declare_bool(
      "vidsch.fence_log_tracing", false,
      "A: false, no ETW session traces the GPU's fence events (GPUView's, WPR's or PresentMon's turn it on); Q: "
      "Native GPU fence object 'Log buffer overrun is permitted': 'when tracing is enabled, the OS first increases "
      "the size of the log buffer to prevent overruns in the first place' (to vidsch.traced_log_bytes), and on an "
      "overrun 'the OS can emit a flag in the trace to notify a user that events were lost'");
  ps.declare_int_choices("vidsch.traced_log_bytes", 65536, "bytes", {4096, 8192, 16384, 32768, 65536, 131072, 262144},
                         "A: each log's size while tracing (the document says the OS increases it, not to what): "
                         "64 KiB, 1,364 entries (16 times the 4-KB log's 84); uncertainty x0.25-x4");
  ps.declare_enum("os.native_fence_feature", "enabled", {"enabled", "disabled"},
                  "Q: F9, Native GPU fence object 'Querying native fence feature enablement in OS': whether the OS "
                  "enabled DXGK_FEATURE_NATIVE_FENCE, which the KMD "
                  "queries (DxgkCbIsFeatureEnabled); A: enabled, a WDDM 3.2 OS with the feature on; disabled = a "
                  "driver that advertises NativeGpuFence anyway fails adapter start");
  PacketScheduler::declare_params(ps);
}

VidSch::VidSch(const ParamSet& ps, Cpu& cpu, VidMm& mm, Vcd& vcd, const std::string& adapter)
    : cpu_(cpu),
      mm_(mm),
      vcd_(vcd),
      adapter_(adapter),
      resample_cv_(ps.get_bool("vidsch.resample_cv")),
      native_fence_feature_(ps.get_enum("os.native_fence_feature") == "enabled") {
  logs_ = ps.get_bool("vidsch.native_fence_logs");
  log_segment_ = ps.get_enum("vidsch.log_segment") == "system" ? Segment::System : Segment::Local;
  tracing_ = ps.get_bool("vidsch.fence_log_tracing");
  log_bytes_ = tracing_ ? uint64_t(ps.get_int("vidsch.traced_log_bytes")) : fence_log::kBufferBytes;
  packets_ = std::make_unique<PacketScheduler>(
      ps, cpu, vcd, adapter, [this](uint32_t code, std::vector<uint64_t> p) { bug_check(code, std::move(p)); });
}

void VidSch::connect(Kmd& kmd) {
  kmd_ = &kmd;
  packets_->connect(kmd);
}

KEvent& VidSch::interrupt_event(uint32_t vector) {
  auto& e = events_[vector];
  if (!e) e = std::make_unique<KEvent>();
  return *e;
}

void VidSch::DxgkCbNotifyInterrupt(const DxgkInterruptData& d) {
  if (pm_) pm_->activity();
  if (d.node >= 0) {                   // packet scheduling: at device IRQL, the scheduler's view moves at once
    if (packets_->ignoring(d.node)) {  // T3 step 3: the timed-out node's interrupts are ignored
      ++packets_->ignored_;
      return;
    }
    if (d.type == DxgkInterruptData::DmaCompleted) packets_->isr_completed(d.node, d.fence_id);
    if (d.type == DxgkInterruptData::DmaPreempted) packets_->isr_completed(d.node, d.last_completed_fence_id);
  }
  if (observer.interrupt_notified) observer.interrupt_notified(d);
  pending_.push_back(d);
}

void VidSch::DxgkCbQueueDpc(std::function<void()> kmd_dpc) {
  kmd_dpc_ = std::move(kmd_dpc);
  if (dpc_queued_) return;  // a DPC object is queued at most once
  dpc_queued_ = true;
  cpu_.queue_dpc([this] { dpc(); });
}

void VidSch::dpc() {
  dpc_queued_ = false;
  if (kmd_dpc_) kmd_dpc_();  // DxgkDdiDpcRoutine
  while (!pending_.empty() && !bugchecked()) {
    const DxgkInterruptData d = pending_.front();
    const size_t woken_before = woken_;
    pending_.pop_front();
    std::vector<NativeFence*> list;
    std::vector<Logged> logged;  // F19: fences the logs alone told of, at their logged values
    switch (d.type) {
      case DxgkInterruptData::DmaPreempted: packets_->on_preempted(d.node, d.last_completed_fence_id); continue;
      case DxgkInterruptData::DmaCompleted:
        if (d.node >= 0) {
          packets_->on_completed(d.node, d.fence_id);
          continue;
        }
        if (d.vector == Kmd::kSoftwareSignalVector) {  // Native GPU fence object 2b: a signal reached the head
          software_signal();
          continue;
        }
        [[fallthrough]];
      case DxgkInterruptData::CrtcVsync:  // a vblank or a flip completed: wake who waits for it
        cpu_.signal(interrupt_event(d.vector));
        continue;
      case DxgkInterruptData::DmaFaulted:  // the faulting context's packet never completes: the TDR recovers it
        dma_faulted_.push_back({d.fault_node, d.fault_va, sc_core::sc_time_stamp()});
        continue;
      case DxgkInterruptData::NativeFenceSignaled: {
        if (logs_) {
          std::vector<Logged> touched;
          std::set<int> lost;
          read_logs(log_scope(d), touched, lost);
          if (!lost.empty()) {
            // F18: an overrun lost entries: read the live value of every fence of the overrun queue's
            // device ("the nonoptimized path that reads the live value of every fence owned by the same
            // device").
            ++fallback_scans_;
            for (auto& f : fences_)
              if (!f->destroyed && !f->legacy && lost.count(f->device)) list.push_back(f.get());
            fallback_fences_read_ += list.size();
          }
          if (!d.signaled_array_null && d.signaled.empty()) {
            // F19: the interrupt named HW queues, no fence: their logs are all the OS learns of the signals,
            // so each fence they name gets the per-fence work a fence read gets below (its waiters, its
            // held work, the other adapters), at its logged value: "reading only the log buffer ensures a
            // single read over PCI".
            logged = std::move(touched);
            break;
          }
          std::vector<NativeFence*> fences;
          for (const Logged& l : touched) fences.push_back(l.f);
          update_monitored_values(fences);
        }
        // Each fence is read once (each read is a CPU load, simulated time): one the fallback listed, or one
        // the array names twice, is not read again.
        std::set<const NativeFence*> listed(list.begin(), list.end());
        if (d.signaled_array_null) {  // F12: scan every native fence waiter (and legacy ones if asked)
          ++null_scans_;
          for (auto& f : fences_)
            if (!f->destroyed && (!f->waiters.empty() || held_.count(f.get()) || f->cross) &&  // F15: forward
                (!f->legacy || d.evaluate_legacy_monitored_fences) && !listed.count(f.get()))
              list.push_back(f.get());
        } else {
          for (uint32_t h : d.signaled) {
            auto it = by_handle_.find(h);
            if (it == by_handle_.end()) {  // F11: a destroyed (or never created) fence named
              bug_check(kBugCheckDxgkrnlFatal, {kInvalidSignaledHandle, h, 0, 0});
              return;
            }
            if (listed.insert(it->second).second) list.push_back(it->second);
          }
        }
        break;
      }
      case DxgkInterruptData::MonitoredFenceSignaled:
        for (auto& f : fences_)
          if (f->legacy && !f->destroyed && (!f->waiters.empty() || held_.count(f.get()))) list.push_back(f.get());
        break;
    }
    ++fence_interrupts_;
    scan(list, logged);
    if (woken_ == woken_before) ++spurious_;  // allowed (F8): an interrupt that satisfied no CPU waiter
  }
}

void VidSch::scan(const std::vector<NativeFence*>& list, const std::vector<Logged>& logged) {
  std::vector<NativeFence*> native;
  for (const Logged& l : logged) {  // native fences: a log names no monitored fence
    signaled(*l.f, l.value);
    native.push_back(l.f);
  }
  for (NativeFence* f : list) {
    signaled(*f, cpu_.mem_read64(f->cv_addr));
    if (!f->legacy) native.push_back(f);
  }
  update_monitored_values(native);  // F4: MV moves to the least outstanding value - 1
}

void VidSch::signaled(NativeFence& f, uint64_t value) {
  wake_satisfied(f, value);
  release_held(f, value);                        // work held behind it: a monitored fence's, or a kernel-mode queue's
  if (f.cross) f.cross->observed(*this, value);  // F15: Dxgkrnl forwards a new value to the other adapters
}

size_t VidSch::wake_satisfied(NativeFence& f, uint64_t cv) {
  size_t n = 0;
  while (!f.waiters.empty() && f.waiters.begin()->first <= cv) {
    CpuWaiter* w = f.waiters.begin()->second;
    f.waiters.erase(f.waiters.begin());
    --waiter_count_;
    ++woken_;
    ++n;
    if (observer.waiter_woken) observer.waiter_woken(*w);
    // The key and track strings only when a timeline is written (a hot path). A monitored fence has no
    // slot and no SIGNAL packet to begin a flow.
    if (vcd_.timeline() && f.handle)
      vcd_.flow_end(fence_flow_key(adapter_, f.slot), w->value, "cpu.context", sc_core::sc_time_stamp());
    cpu_.signal(w->ev);
  }
  return n;
}

void VidSch::update_monitored_values(const std::vector<NativeFence*>& fences) {
  std::vector<NativeFence*> todo = fences;
  while (!todo.empty() && !bugchecked()) {
    std::vector<DxgkMonitoredValueUpdate> ups;
    std::vector<NativeFence*> updated;
    for (NativeFence* f : todo) {
      if (f->legacy || f->destroyed) continue;
      const uint64_t mv = mv_rule(*f);
      if (mv == f->mv) continue;
      updated.push_back(f);
      f->mv = mv;
      cpu_.mem_write(f->mv_addr, &mv, 8);  // the OS's own copy, kernel-writable (F2)
      ups.push_back({f->handle, mv});
    }
    if (ups.empty()) return;
    mv_updates_ += ups.size();
    cpu_.raise_device_irql();  // F8: serialised with the ISR
    kmd_->DxgkDdiUpdateMonitoredValues(ups);
    if (observer.monitored_values_updated) observer.monitored_values_updated();
    cpu_.lower_device_irql();
    // F8: after every return, re-sample CV of every updated fence and satisfy what it already covers;
    // a wake moves MV again.
    todo.clear();
    if (!resample_cv_) return;
    for (NativeFence* f : updated) {
      const uint64_t cv = cpu_.mem_read64(f->cv_addr);
      resampling_ = true;
      const size_t woken = wake_satisfied(*f, cv);
      resampling_ = false;
      if (woken) todo.push_back(f);
    }
  }
}

uint64_t VidSch::mv_rule(const NativeFence& f) const {
  // F15: a cross-adapter fence's MV is 0 for its lifetime, so every GPU signal interrupts and the OS can
  // forward it (unless F20's doorbell carries GPU signals between the adapters).
  if (f.cross && f.cross->mv_held_at_zero()) return 0;
  // F2: least waited value - 1, or UINT64_MAX with no CPU waiter.
  return f.waiters.empty() ? UINT64_MAX : f.waiters.begin()->first - 1;
}

bool VidSch::DxgkCbQueryFeatureInterface(DxgkFeature f, uint32_t version, DxgkCbIntFeatureNativeFence1* table) {
  ++feature_queries_;
  if (f != DxgkFeature::NativeFence || version != 1 || !table || !native_fence_feature_) return false;
  // Version 1's table. This OS: DEFAULT fences only (INTRA_GPU "not currently supported"); fence storage in
  // VRAM, as the document's feature list has it ("Fence value storage in the GPU local memory").
  table->get_os_caps = [](DxgkNativeFenceOsCaps1* c) {
    c->support_optimized_default_fence_type = true;
    c->support_intra_gpu_fence_type = false;
    return true;
  };
  return true;
}

bool VidSch::native_fences() const {
  return kmd_->DxgkDdiQueryAdapterInfoVidSchCaps().native_gpu_fence && native_fence_feature_;
}

uint64_t VidSch::alloc_value(int process, Segment storage, bool shareable, Value kind) {
  const uint64_t stride = kmd_->DxgkDdiQueryAdapterInfoNativeFenceCaps().stride_bytes;
  // A native fence's values are mapped per process that opens it (OpenNativeFence), with its rights, not
  // globally; a monitored fence's CV is a global (mapped at its address in every space, writable).
  const bool global = kind == Value::MonitoredCv;
  if (shareable) return mm_.allocate(storage, 4096, 4096, global);  // F6: a page of its own
  Pool& p = pools_[{process, int(storage), int(kind)}];             // F6: packed at the caps' stride
  if (p.next + stride > 4096) {
    p.page = mm_.allocate(storage, 4096, 4096, global);
    p.next = 0;
  }
  const uint64_t a = p.page + p.next;
  p.next += stride;
  return a;
}

NativeFence* VidSch::CreateNativeFence(int process, Segment storage, bool shareable, bool legacy) {
  const RuntimePm::Hold held(pm_);
  if (legacy || !native_fences()) return CreateMonitoredFence(process, storage, shareable);  // F9
  return D3DKMTCreateNativeFence(process, NativeFenceType::Default, storage, shareable);
}

NativeFence* VidSch::D3DKMTCreateNativeFence(int process, NativeFenceType type, Segment storage, bool shared) {
  if (type != NativeFenceType::Default || !native_fences()) {  // STATUS_INVALID_PARAMETER: not supported
    ++refused_creates_;
    return nullptr;
  }
  auto f = std::make_unique<NativeFence>();
  f->type = type;
  f->device = process;
  f->shareable = shared;
  f->storage = storage;
  f->cv_addr = alloc_value(process, storage, shared, Value::Cv);
  f->mv_addr = alloc_value(process, storage, shared, Value::Mv);
  return register_fence(std::move(f), process, 0);
}

uint64_t VidSch::ShareObject(NativeFence* f) {
  if (!f || !f->shareable || f->destroyed) return 0;
  if (!f->nt_handle) {
    f->nt_handle = next_nt_handle_;
    next_nt_handle_ += 4;  // NT handles are multiples of 4
    nt_handles_[f->nt_handle] = f;
  }
  return f->nt_handle;
}

NativeFence* VidSch::D3DKMTOpenNativeFenceFromNTHandle(int process, uint64_t nt_handle) {
  auto it = nt_handles_.find(nt_handle);
  if (it == nt_handles_.end() || it->second->destroyed) return nullptr;
  OpenNativeFence(process, it->second);
  return it->second;
}

NativeFence* VidSch::CreateMonitoredFence(int process, Segment storage, bool shareable) {
  const RuntimePm::Hold held(pm_);
  auto f = std::make_unique<NativeFence>();
  f->legacy = true;
  f->shareable = shareable;
  f->storage = storage;
  f->device = process;
  f->cv_addr = alloc_value(process, storage, shareable, Value::MonitoredCv);  // mapped at its address in every space
  f->local_handles[process] = 0;
  NativeFence* raw = f.get();
  fences_.push_back(std::move(f));
  if (observer.fence_created) observer.fence_created(*raw);
  return raw;
}

void VidSch::gpu_signal(PacketWriter& w, const NativeFence& f, uint64_t value, int process) {
  if (f.handle)
    w.signal(va(f, process), value);
  else
    w.write64(f.cv_addr, value).barrier().interrupt(regs::kMonitoredFenceSignalVector);
}

NativeFence* VidSch::register_fence(std::unique_ptr<NativeFence> f, int process, uint32_t cross_adapter_id) {
  const uint64_t max = UINT64_MAX;
  cpu_.mem_write(f->mv_addr, &max, 8);
  DxgkCreateNativeFenceArgs a;
  a.current_value_cpu_va = f->cv_addr;
  a.monitored_value_cpu_va = f->mv_addr;
  if (kmd_->DxgkDdiQueryAdapterInfoNativeFenceCaps().map_to_gpu_system_process) {
    // F10: the OS maps CV and MV into the system process's GPU VA for the CMP and passes those VAs (F15:
    // this adapter's own alias of a cross-adapter fence's shared CV page).
    a.current_value_system_process_gpu_va = mm_.map_system_alias(f->cv_addr);
    a.monitored_value_system_process_gpu_va = mm_.map_system_alias(f->mv_addr);  // the CMP's: read/write
  }
  a.cross_adapter_id = cross_adapter_id;
  f->handle = kmd_->DxgkDdiCreateNativeFence(a);
  if (!f->handle) {
    SC_REPORT_ERROR("gpumodel/vidsch", "native fence table full");
    return nullptr;
  }
  f->slot = kmd_->slot_of(f->handle);
  NativeFence* raw = f.get();
  by_handle_[raw->handle] = raw;
  fences_.push_back(std::move(f));
  OpenNativeFence(process, raw);
  if (observer.fence_created) observer.fence_created(*raw);
  return raw;
}

NativeFence* VidSch::OpenCrossAdapterInstance(int process, CrossAdapterFence& x, uint64_t cv_addr) {
  auto f = std::make_unique<NativeFence>();
  f->cross = &x;
  f->shareable = true;
  f->storage = Segment::System;  // F15: the one CV, in system memory
  f->cv_addr = cv_addr;
  NativeFence* raw = f.get();
  if (!native_fences()) {
    // Native GPU fence object (cross-adapter): opened as a regular monitored fence: the OS tracks its waiters and
    // writes its signals.
    f->legacy = true;
    f->local_handles[process] = 0;
    fences_.push_back(std::move(f));
    return raw;
  }
  f->device = process;
  f->mv_addr = alloc_value(process, x.mv_segment, true, Value::Mv);  // one MV per GPU, its own page
  if (!register_fence(std::move(f), process, x.xid)) return nullptr;
  update_monitored_values({raw});  // F15: MV to 0 for the fence's lifetime (mv_rule)
  return raw;
}

void VidSch::SubmitSignal(KmdHwQueue* q, NativeFence* f, uint64_t value, const PacketWriter& work) {
  const RuntimePm::Hold held(pm_);
  PacketWriter w;
  w.append(work);
  if ((f->cross && !f->handle) || q->kernel_mode) {  // 2b (or a kernel-mode queue): the signal at the head of
                                                     // the software context, written by VidSch
    w.interrupt(Kmd::kSoftwareSignalVector);
    software_signals_pending_.push_back({f, value});
  } else {
    gpu_signal(w, *f, value, q->process);
  }
  kmd_->DxgkDdiSubmitCommandToHwQueue(q, w);
}

void VidSch::software_signal() {
  if (software_signals_pending_.empty()) return;
  const SoftwareSignal s = software_signals_pending_.front();
  software_signals_pending_.pop_front();
  ++software_signals_;
  // Native GPU fence object, scenario 2b: "VidSch updates fence value directly from CPU" (one aligned 64-bit store,
  // F1), then wakes this adapter's waiters and propagates the value (scan).
  if (s.f->handle)  // a native fence (a kernel-mode queue's): through the KMD, so its CMP rescans its waiters
    kmd_->DxgkDdiUpdateCurrentValuesFromCpu({{s.f->handle, s.value}}, false);
  else
    cpu_.mem_write(s.f->cv_addr, &s.value, 8);
  scan({s.f});
}

uint32_t VidSch::OpenNativeFence(int process, NativeFence* f) {
  auto have = f->local_handles.find(process);
  if (have != f->local_handles.end()) return have->second;
  // The process's own mappings: CV read/write, MV read-only to the GPU (Native GPU fence object: MV is
  // "readable using GPU VA, no write access").
  DxgkOpenNativeFenceArgs a;
  a.h_global_native_fence = f->handle;
  a.h_local_native_fence = next_d3dkmt_handle_;
  next_d3dkmt_handle_ += 4;
  a.h_device = process;
  a.current_value_gpu_va = mm_.map_process_alias(process, f->cv_addr, false);
  a.monitored_value_gpu_va = mm_.map_process_alias(process, f->mv_addr, true);
  const uint32_t d3dkmt = a.h_local_native_fence;
  if (!kmd_->DxgkDdiOpenNativeFence(a)) {
    SC_REPORT_ERROR("gpumodel/vidsch", "DxgkDdiOpenNativeFence refused a fence Dxgkrnl holds");
    return 0;
  }
  f->local_handles[process] = d3dkmt;
  f->kmd_handles[process] = a.h_local_native_fence;
  f->va[process] = {f->slot, a.current_value_gpu_va, a.monitored_value_gpu_va};
  by_local_[{process, d3dkmt}] = f;  // what a log entry's hNativeFence names
  return d3dkmt;
}

KmdHwQueue* VidSch::CreateHwQueue(int node, uint32_t priority, uint32_t native_progress_fence, int process) {
  const RuntimePm::Hold held(pm_);
  KmdHwQueue* q = kmd_->DxgkDdiCreateHwQueue(node, priority, native_progress_fence, process);
  if (!q || !logs_) return q;
  for (uint32_t type : {uint32_t(fence_log::kWaits), uint32_t(fence_log::kSignals)}) RecreateNativeFenceLog(q, type);
  return q;
}

void VidSch::DestroySynchronizationObject(int process, NativeFence* f) {
  auto it = f->local_handles.find(process);
  if (it == f->local_handles.end()) return;
  if (f->handle) kmd_->DxgkDdiCloseNativeFence(f->kmd_handles[process]);  // a monitored fence: the OS's alone
  f->local_handles.erase(it);
  f->kmd_handles.erase(process);
  if (!f->local_handles.empty()) return;  // another process still holds it: the global handle stays
  // The last close: the CPU waiters fail, the driver destroys its global object (F11).
  while (!f->waiters.empty()) {
    CpuWaiter* w = f->waiters.begin()->second;
    f->waiters.erase(f->waiters.begin());
    --waiter_count_;
    if (observer.waiter_cancelled) observer.waiter_cancelled(*w);
    cpu_.signal(w->ev);
  }
  if (f->handle) {
    kmd_->DxgkDdiDestroyNativeFence(f->handle);
    by_handle_.erase(f->handle);
  }
  f->destroyed = true;
  if (held_.erase(f))  // its held work is dropped
    for (auto& [id, b] : backlog_)
      b.erase(std::remove_if(b.begin(), b.end(), [f](const Held& h) { return h.f == f; }), b.end());
}

std::multimap<uint64_t, CpuWaiter*>::iterator VidSch::add_waiter(CpuWaiter& w, NativeFence* f, uint64_t value) {
  w.id = next_waiter_++;
  w.fence = f;
  w.value = value;
  const auto pos = f->waiters.emplace(value, &w);
  ++waiter_count_;
  if (observer.waiter_added) observer.waiter_added(w);
  return pos;
}

bool VidSch::WaitFromCpu(NativeFence* f, uint64_t value, const sc_time& timeout) {
  const RuntimePm::Hold held(pm_);
  if (f->destroyed) return false;
  if (cpu_.mem_read64(f->cv_addr) >= value) return true;
  // The waiter lives here, not on the waiting thread's stack: a thread still waiting when the
  // simulation stops (a bug check) never returns to destroy its locals.
  const auto mine = cpu_waiters_.emplace(cpu_waiters_.end());
  CpuWaiter& w = *mine;
  const auto pos = add_waiter(w, f, value);
  if (!f->legacy) update_monitored_values({f});  // F2, then F8's re-read
  // A legacy fence has no MV (and a cross-adapter fence's stays 0: no update, no F8 re-read): a signal
  // whose DPC scanned between the CV read above and the registration found no waiter, so read CV again
  // now that the waiter is registered.
  if (f->legacy || (f->cross && f->cross->mv_held_at_zero())) wake_satisfied(*f, cpu_.mem_read64(f->cv_addr));
  last_wait_armed_ = sc_time_stamp();
  const bool ok = timeout == sc_max_time() ? (cpu_.wait_for(w.ev), true) : cpu_.wait_for(w.ev, timeout);
  if (!ok) {  // timed out: still registered, since a wake would have signalled the event
    f->waiters.erase(pos);
    --waiter_count_;
    if (observer.waiter_cancelled) observer.waiter_cancelled(w);
    if (!f->legacy) update_monitored_values({f});
  }
  cpu_waiters_.erase(mine);
  return ok && !f->destroyed;
}

void VidSch::WaitFromCpuAsync(const std::vector<std::pair<NativeFence*, uint64_t>>& waits) {
  const RuntimePm::Hold held(pm_);
  std::vector<NativeFence*> native;
  for (const auto& [f, value] : waits) {
    if (f->destroyed) continue;
    add_waiter(*cpu_waiters_.emplace(cpu_waiters_.end()), f, value);
    if (!f->legacy) native.push_back(f);
  }
  update_monitored_values(native);  // F2, then F8's re-read
  for (const auto& [f, value] : waits)
    if (f->legacy) wake_satisfied(*f, cpu_.mem_read64(f->cv_addr));
  last_wait_armed_ = sc_time_stamp();
}

void VidSch::SignalFromCpu(NativeFence* f, uint64_t value) {
  const RuntimePm::Hold held(pm_);
  if (f->handle)
    kmd_->DxgkDdiUpdateCurrentValuesFromCpu({{f->handle, value}}, false);
  else
    cpu_.mem_write(f->cv_addr, &value, 8);  // a monitored fence the OS alone tracks: it writes CV
  scan({f});
}

void VidSch::NotifyCurrentValueChanged(NativeFence* f, uint64_t value) {
  const RuntimePm::Hold held(pm_);
  if (!f->handle) {  // Native GPU fence object 2a: a monitored fence: VidSch observes the new value and scans its lists
    scan({f});
    return;
  }
  // F13: NotificationOnly = TRUE: the KMD leaves CV alone (its writer may have moved it on since) and
  // only makes the CMP rescan the queues waiting on f.
  kmd_->DxgkDdiUpdateCurrentValuesFromCpu({{f->handle, value}}, true);
  scan({f});
}

void VidSch::SubmitAfterWait(KmdHwQueue* q, NativeFence* f, uint64_t value, const PacketWriter& work) {
  const RuntimePm::Hold held(pm_);
  if (!f->legacy && !q->kernel_mode) {  // native: the queue waits on the GPU
    PacketWriter w;
    w.wait(va(*f, q->process), value).append(work);
    SubmitInOrder(q, w);
    return;
  }
  // Legacy: hold the work on the CPU until CV >= value, behind whatever the queue already holds;
  // registered under device IRQL so the signal interrupt's DPC cannot run between the check and the
  // registration.
  cpu_.raise_device_irql();
  std::deque<Held>& b = backlog_[q->id];
  const bool ready = b.empty() && cpu_.mem_read64(f->cv_addr) >= value;
  if (!ready) {
    b.push_back({q, f, value, work});
    ++held_[f];
  }
  cpu_.lower_device_irql();
  if (ready) kmd_->DxgkDdiSubmitCommandToHwQueue(q, work);
}

void VidSch::SubmitInOrder(KmdHwQueue* q, const PacketWriter& work) {
  const RuntimePm::Hold held(pm_);
  auto it = backlog_.find(q->id);
  if (it != backlog_.end() && !it->second.empty()) {
    it->second.push_back({q, nullptr, 0, work});  // behind the queue's held work
    return;
  }
  kmd_->DxgkDdiSubmitCommandToHwQueue(q, work);
}

void VidSch::release_held(NativeFence& f, uint64_t cv) {
  if (!held_.count(&f)) return;
  // Each queue's held work goes in submission order: from the front, while its wait is satisfied (this
  // fence at cv, another legacy fence re-read), or it had none of its own.
  std::vector<Held> go;
  for (auto& [id, b] : backlog_) {
    while (!b.empty()) {
      Held& h = b.front();
      if (h.f && !(h.f == &f ? h.value <= cv : cpu_.mem_read64(h.f->cv_addr) >= h.value)) break;
      if (h.f && --held_[h.f] == 0) held_.erase(h.f);
      go.push_back(std::move(h));
      b.pop_front();
    }
  }
  for (auto& h : go) {
    if (h.f) ++woken_, ++held_released_;  // released GPU work counts as a satisfied waiter of the interrupt
    kmd_->DxgkDdiSubmitCommandToHwQueue(h.q, h.work);
  }
}

void VidSch::bug_check(uint32_t code, std::vector<uint64_t> params) {
  if (bugchecked()) return;
  bugcheck_code_ = code;
  bugcheck_params_ = std::move(params);
  sc_stop();  // the machine stops
}

}  // namespace gpumodel
