// VidSch, the OS GPU scheduler: native fence objects and their CPU waiters (F2, F4), the
// MonitoredValue rules, interrupt notifications at device IRQL and the DPC that wakes satisfied
// waiters (F8, F12), CPU signals (F13), and the legacy monitored fence whose dependent GPU work it holds
// on the CPU until the signal interrupt (F5).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "hw_model/core/params.h"
#include "hw_model/gpu/fence_log.h"
#include "hw_model/gpu/packets.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/packet_sched.h"
#include "kernel_stub/dxgkrnl/vidmm.h"

namespace gpumodel {

class Kmd;
class RuntimePm;
struct KmdHwQueue;

// DXGKARGCB_NOTIFY_INTERRUPT_DATA, reduced to what the model reports.
struct DxgkInterruptData {
  enum Type {
    DmaCompleted,
    DmaPreempted,
    NativeFenceSignaled,
    MonitoredFenceSignaled,
    CrtcVsync,
    DmaFaulted
  } type = DmaCompleted;
  uint32_t vector = 0;    // DmaCompleted: the INTERRUPT packet's operand; CrtcVsync: vblank or flip
  int node = -1;          // packet scheduling: the node (DmaCompleted, DmaPreempted); -1 otherwise
  uint64_t fence_id = 0;  // DmaCompleted: SubmissionFenceId
  uint64_t preemption_fence_id = 0, last_completed_fence_id = 0;  // DmaPreempted
  std::vector<uint32_t> signaled;                                 // NativeFenceSignaled: pSignaledNativeFenceArray
  bool signaled_array_null = false;                               // ... or NULL: scan every native fence waiter
  bool evaluate_legacy_monitored_fences = false;
  // F19 (OptimizedNativeFenceSignaledInterrupt): the HW queues named (their kernel handles: KMD queue
  // ids), and the nodes whose every queue's log is to be rescanned (a NULL hHWQueue; -1: every node).
  std::vector<int> hw_queues;
  std::vector<int> null_queue_nodes;
  // DXGKARGCB_NOTIFY_INTERRUPT_DATA's NodeOrdinal and EngineOrdinal of a native fence signal with
  // OptimizedNativeFenceSignaledInterrupt (-1: not carried, or the engine is unknown).
  int node_ordinal = -1, engine_ordinal = -1;
  int fault_node = -1;  // DmaFaulted: the node whose access faulted, and the GPU VA
  uint64_t fault_va = 0;
};

struct NativeFence;
struct CrossAdapterFence;

// DXGK_FEATURE_ID, the features the model asks about (DxgkCbIsFeatureEnabled2).
enum class DxgkFeature { NativeFence };  // DXGK_FEATURE_NATIVE_FENCE (F9)
// DXGKARGCB_ISFEATUREENABLED2's answer: enabled, and the version the OS implements.
struct DxgkFeatureResult {
  bool enabled = false;
  uint32_t version = 0;
};
// DXGKARGCB_FEATURE_NATIVEFENCE_CAPS_1: the OS's native fence capabilities (version 1 of the feature).
struct DxgkNativeFenceOsCaps1 {
  bool support_optimized_default_fence_type = false;  // the OS allocates DEFAULT fences' storage in VRAM
  bool support_intra_gpu_fence_type = false;          // D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU
};
// DXGKCBINT_FEATURE_NATIVEFENCE_1: the interface table QueryFeatureInterface fills for version 1.
struct DxgkCbIntFeatureNativeFence1 {
  std::function<bool(DxgkNativeFenceOsCaps1*)> get_os_caps;  // DXGKCB_FEATURE_NATIVEFENCE_CAPS_1
};
// D3DKMT_WDDM_3_1_CAPS (KMTQAITYPE_WDDM_3_1_CAPS): what user mode learns.
struct D3dkmtWddm31Caps {
  bool native_gpu_fence_supported = false;
};

struct CpuWaiter {
  uint64_t id = 0;
  NativeFence* fence = nullptr;
  uint64_t value = 0;
  KEvent ev;
};

// D3DDDI_NATIVEFENCE_TYPE. The reference: DEFAULT "indicates full CPU and GPU interoperability"; INTRA_GPU, an
// engine-to-engine fence with no CPU access, is "not currently supported": the OS refuses it.
enum class NativeFenceType : uint32_t { Default = 0, IntraGpu = 1 };

struct NativeFence {
  uint32_t handle = 0;  // hGlobalNativeFence; 0: a monitored fence, which the driver never hears of
  uint32_t slot = 0;    // CMP table slot the KMD gave it (SIGNAL/WAIT operand); reused after destroy (F11)
  bool legacy = false, shareable = false, destroyed = false;
  NativeFenceType type = NativeFenceType::Default;
  int device = 0;  // the parent device: the process that created it (the model: one device per process)
  Segment storage = Segment::System;
  uint64_t cv_addr = 0, mv_addr = 0;  // physical; the kernel's CPU VA of each (the CPU model is physical)
  uint64_t mv = UINT64_MAX;           // the MonitoredValue the OS set last
  // Per process that opened it: its D3DKMT handle (what a log entry's hNativeFence names), the KMD's local
  // handle (DxgkDdiOpenNativeFence's output, for DxgkDdiCloseNativeFence) and the process's own GPU VAs of
  // CV (read/write) and MV (read-only: "readable using GPU VA, no write access"). MV has no user-mode
  // mapping; CV's user-mode CPU mapping is read-only (the CPU model has no per-process CPU mappings).
  std::map<int, uint32_t> local_handles;        // process -> D3DKMT handle
  std::map<int, uint32_t> kmd_handles;          // process -> the KMD's hLocalNativeFence
  std::map<int, FenceVa> va;                    // process -> its GPU VAs (SIGNAL/WAIT operands)
  uint64_t nt_handle = 0;                       // ShareObject's NT handle (0: not shared yet)
  std::multimap<uint64_t, CpuWaiter*> waiters;  // by waited value
  // F15: this adapter's instance of a cross-adapter fence (CV shared, MV its own), else null. On an
  // adapter without native fences the instance is a monitored fence (legacy) the OS alone tracks:
  // handle 0, no CMP slot; its GPU waits are held by VidSch and its GPU signals written by VidSch.
  CrossAdapterFence* cross = nullptr;
};

// What independent monitors see of the OS (read-only notifications).
struct VidSchObserver {
  std::function<void(const CpuWaiter&)> waiter_added, waiter_woken, waiter_cancelled;
  std::function<void(const NativeFence&)> fence_created;
  std::function<void()> monitored_values_updated;                    // DxgkDdiUpdateMonitoredValues returned
  std::function<void(const DxgkInterruptData&)> interrupt_notified;  // the KMD's DxgkCbNotifyInterrupt
  // F16-F18: an entry Dxgkrnl read from a HW queue's log (queue id, log type, the entry's position since
  // the log was set, the entry as read), and an overrun it detected.
  std::function<void(int queue, uint32_t type, uint64_t position, const fence_log::Entry&)> log_entry_read;
  std::function<void(int queue, uint32_t type)> log_overrun;
  // FENCE_SIGNAL_QUEUED / FENCE_WAIT_QUEUED: a fence operation queued to a HW queue (log type, the fence's
  // D3DKMT handle, value), at its CPU time (now).
  std::function<void(int queue, uint32_t type, uint32_t handle, uint64_t value)> fence_queued;
};

class VidSch {
 public:
  static void declare_params(ParamSet& ps);
  // `vcd` and `adapter` name the packet scheduler's traces (<adapter>.vidsch.*).
  VidSch(const ParamSet& ps, Cpu& cpu, VidMm& mm, Vcd& vcd, const std::string& adapter = "gpu");
  void connect(Kmd& kmd);
  // Runtime D3cold (runtime_pm.h): every entry that reaches the adapter takes a use first.
  void set_runtime_pm(RuntimePm* pm) { pm_ = pm; }
  // The packet-scheduling path (TDR in Windows 8 and later): DMA packets with fence IDs, the watchdog and TDR.
  PacketScheduler& packets() { return *packets_; }
  const PacketScheduler& packets() const { return *packets_; }
  VidSchObserver observer;

  // Interrupt path (from the KMD's ISR, at device IRQL).
  KEvent& interrupt_event(uint32_t vector);
  void DxgkCbNotifyInterrupt(const DxgkInterruptData& d);
  void DxgkCbQueueDpc(std::function<void()> kmd_dpc);

  // A HW queue (D3DKMTCreateHwQueue): the KMD's DxgkDdiCreateHwQueue, then, with vidsch.native_fence_logs,
  // the queue's two 4-KB logs (F16): allocated, their header written, mapped for the CPU, the process
  // (globals are mapped at their address in every space) and the system process (an alias), and given to
  // the KMD with DxgkDdiSetNativeFenceLogBuffer. Null when the KMD has no free queue.
  KmdHwQueue* CreateHwQueue(int node, uint32_t priority, uint32_t native_progress_fence, int process);
  // Dxgkrnl destroys and recreates one of the queue's logs (the document: "Each time it does, it calls
  // DxgkDdiSetNativeFenceLogBuffer"); until it next reads the new log it cannot know which entries are new.
  void RecreateNativeFenceLog(KmdHwQueue* q, uint32_t type);
  struct LogState {  // one log of one queue, as Dxgkrnl knows it
    uint64_t cpu_va = 0, sys_va = 0;
    uint64_t cached = 0;   // position (WraparoundCount * N + FirstFreeEntryIndex) read last
    bool resync = false;   // recreated: the next read takes the header as it finds it (a fallback scan)
    uint32_t entries = 0;  // NumberOfEntries
  };
  const LogState* log_state(int queue, uint32_t type) const;
  // FENCE_SIGNAL_QUEUED / FENCE_WAIT_QUEUED (Native GPU fence object 'CPU timestamps of fence queued operations'):
  // "the runtime or UMD can emit a native fence-queued ETW event with the CPU timestamp", from the UMD's
  // part of a submission. Counted and handed to the observer (a tool's timeline joins it to the log entry).
  void FenceQueued(int queue, uint32_t type, uint32_t handle, uint64_t value) {
    ++fence_ops_queued_;
    if (observer.fence_queued) observer.fence_queued(queue, type, handle, value);
  }
  uint64_t fence_ops_queued() const { return fence_ops_queued_; }
  bool native_fence_logs() const { return logs_; }
  // F9: the OS's feature switches (os.native_fence_feature), as Dxgkrnl itself knows them.
  bool DxgkCbIsFeatureEnabled(DxgkFeature f) const { return f == DxgkFeature::NativeFence && native_fence_feature_; }
  // The feature interface the KMD queries at driver initialisation (Native GPU fence object 'Querying native fence
  // feature enablement in OS'): DxgkCbIsFeatureEnabled2 (enabled, version 1), then QueryFeatureInterface
  // for that version's table, whose GetOSCaps returns DXGKARGCB_FEATURE_NATIVEFENCE_CAPS_1. False: no table
  // for that feature and version. Each call is counted: a driver asks once and caches the answer.
  DxgkFeatureResult DxgkCbIsFeatureEnabled2(DxgkFeature f) {
    ++feature_queries_;
    return {DxgkCbIsFeatureEnabled(f), DxgkCbIsFeatureEnabled(f) ? 1u : 0u};
  }
  bool DxgkCbQueryFeatureInterface(DxgkFeature f, uint32_t version, DxgkCbIntFeatureNativeFence1* table);
  uint64_t feature_queries() const { return feature_queries_; }
  // D3DKMTQueryAdapterInfo(KMTQAITYPE_WDDM_3_1_CAPS): NativeGpuFenceSupported for user mode.
  D3dkmtWddm31Caps D3DKMTQueryAdapterInfoWddm31Caps() const { return {native_fences()}; }
  // D3DKMTQueryAdapterInfo(KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT): D3DKMT_CROSSADAPTERRESOURCE_SUPPORT's
  // SupportTier (0 none, 1 copy, 2 texture, 3 scan-out), from the DXGK_VIDMMCAPS the driver reported at
  // adapter start (0 before it started).
  struct CrossAdapterResourceSupport {
    uint32_t support_tier = 0;
  };
  CrossAdapterResourceSupport D3DKMTQueryAdapterInfoCrossAdapterResourceSupport() const { return {xa_tier_}; }
  void set_cross_adapter_tier(unsigned tier) { xa_tier_ = tier; }  // Dxgkrnl's adapter start
  // Native fences on this adapter: the driver advertises DXGK_VIDSCHCAPS::NativeGpuFence (and the OS
  // enabled the feature, or adapter start failed). Without them every fence is a monitored fence.
  bool native_fences() const;

  // Fence objects (D3DKMTCreateNativeFence and friends), from an app thread of `process`. `legacy`, or
  // an adapter without native fences (F9): a monitored fence (CreateMonitoredFence).
  NativeFence* CreateNativeFence(int process, Segment storage, bool shareable, bool legacy = false);
  // A WDDM 2.x monitored fence (D3DKMTCreateSynchronizationObject2, D3DDDI_MONITORED_FENCE): Dxgkrnl
  // alone allocates and maps its CurrentValue; no driver DDI, no CMP slot, no MonitoredValue, so it
  // stands whether or not the OS enabled DXGK_FEATURE_NATIVE_FENCE ("Dxgkrnl calls [the native fence
  // DDIs] only if the OS enabled the DXGK_FEATURE_NATIVE_FENCE feature"). Its GPU signals are gpu_signal's.
  NativeFence* CreateMonitoredFence(int process, Segment storage, bool shareable);
  // The UMD's command for a GPU signal of (f, value): a native fence's SIGNAL; a monitored fence's write
  // of the value to its GPU VA, a BARRIER (the write is visible before the interrupt tells the CPU),
  // then the monitored fence signaled interrupt (an INTERRUPT of regs::kMonitoredFenceSignalVector).
  // A cross-adapter fence opened as a monitored fence is signalled by VidSch instead (SubmitSignal).
  // `process`: the process whose queue runs the packet (the VAs it names are that process's).
  static void gpu_signal(PacketWriter& w, const NativeFence& f, uint64_t value, int process);
  // Opens f in `process` (DxgkDdiOpenNativeFence with the process's own mappings of CV and MV); returns the
  // process's D3DKMT handle. Opening it again in the same process returns the same handle.
  uint32_t OpenNativeFence(int process, NativeFence* f);
  // D3DKMTCreateNativeFence with its type: INTRA_GPU is refused (null, counted) as the OS does today.
  NativeFence* D3DKMTCreateNativeFence(int process, NativeFenceType type, Segment storage, bool shared);
  uint64_t refused_creates() const { return refused_creates_; }
  // Sharing (D3DKMTShareObjects / D3DKMTOpenNativeFenceFromNTHandle): an NT handle for a shared fence (0 for
  // one created without the shared flag), and the fence opened from it in another process (null: no
  // such handle).
  uint64_t ShareObject(NativeFence* f);
  NativeFence* D3DKMTOpenNativeFenceFromNTHandle(int process, uint64_t nt_handle);
  void DestroySynchronizationObject(int process, NativeFence* f);
  // The CMP slot a native fence's SIGNAL and WAIT name. A monitored fence has none (VidSch::gpu_signal).
  uint32_t slot(const NativeFence& f) const {
    if (!f.handle)
      SC_REPORT_ERROR("gpumodel/vidsch", "a monitored fence has no CMP slot: signal it with VidSch::gpu_signal");
    return f.slot;
  }
  // The fence as `process`'s packets name it: its slot and that process's GPU VAs (it must be open there).
  static FenceVa va(const NativeFence& f, int process) {
    auto it = f.va.find(process);
    if (!f.handle || it == f.va.end()) {
      SC_REPORT_ERROR("gpumodel/vidsch", "a SIGNAL or WAIT names a native fence its process has not opened");
      return {};
    }
    return it->second;
  }

  // CPU wait (D3DKMTWaitForSynchronizationObjectFromCpu). Returns false on timeout.
  bool WaitFromCpu(NativeFence* f, uint64_t value, const sc_core::sc_time& timeout = sc_core::sc_max_time());
  // Asynchronous CPU waits (D3DKMTWaitForSynchronizationObjectFromCpu with hAsyncEvent): each waiter is
  // registered and its MV programmed (one DxgkDdiUpdateMonitoredValues for the batch); the call returns
  // at once and a satisfied waiter's event is set by the DPC, with no thread blocked on it.
  void WaitFromCpuAsync(const std::vector<std::pair<NativeFence*, uint64_t>>& waits);
  // CPU signal (D3DKMTSignalSynchronizationObjectFromCpu, F13).
  void SignalFromCpu(NativeFence* f, uint64_t value);
  // F13: f's CV was changed to `value` by another agent (the document: a cross-adapter fence's shared CV that
  // another GPU signalled). Forwarded with NotificationOnly, then CPU waiters are woken as for a signal.
  void NotifyCurrentValueChanged(NativeFence* f, uint64_t value);
  // F15: this adapter's instance of the cross-adapter fence `x`, its CV at the shared `cv_addr` (system
  // memory, mapped into this adapter's GPU VA spaces). Native here if the adapter has native fences
  // (its MV of its own, held at 0 while x says so), else a monitored fence the OS tracks.
  NativeFence* OpenCrossAdapterInstance(int process, CrossAdapterFence& x, uint64_t cv_addr);
  // GPU work then a signal of (f, value): a SIGNAL packet where f is native; else (a cross-adapter fence
  // opened as a monitored fence, the native fence document's scenario 2b) an INTERRUPT after the work, whose DPC — the
  // signal at the head of the software context — writes CV from the CPU and propagates it.
  void RefreshMonitoredValue(NativeFence* f) { update_monitored_values({f}); }  // its MV rule changed
  void SubmitSignal(KmdHwQueue* q, NativeFence* f, uint64_t value, const PacketWriter& work);
  // GPU work that waits on a fence: a native fence waits on the GPU (a WAIT packet); a legacy
  // monitored fence's work is held here until the signal interrupt shows CV >= value (F5).
  // Later work on a queue that holds legacy-waiting work is held behind it (the queue runs in order).
  void SubmitAfterWait(KmdHwQueue* q, NativeFence* f, uint64_t value, const PacketWriter& work);
  // A submission that keeps the queue's order: behind its held work if it has any, else at once.
  void SubmitInOrder(KmdHwQueue* q, const PacketWriter& work);

  // Results.
  uint64_t fence_interrupts() const { return fence_interrupts_; }
  uint64_t software_signals() const { return software_signals_; }  // Native GPU fence object 2b: CV written by VidSch
  struct DmaFault {                                                // DXGK_INTERRUPT_DMA_FAULTED as the DPC saw it
    int node;
    uint64_t va;
    sc_core::sc_time at;
  };
  const std::vector<DmaFault>& dma_faults() const { return dma_faulted_; }
  uint64_t spurious_interrupts() const { return spurious_; }
  // GPU work a legacy wait held on the CPU and a signal interrupt's DPC released: the CPU round trips.
  uint64_t held_released() const { return held_released_; }
  uint64_t null_array_interrupts() const { return null_scans_; }  // F12: scanned every waiter
  uint64_t waiters_woken() const { return woken_; }
  // F16-F19 counters: log headers read, entries read, overruns detected, fallback scans (every fence of
  // the device read), KMD log barriers asked for.
  uint64_t log_headers_read() const { return log_headers_read_; }
  uint64_t log_entries_read() const { return log_entries_read_; }
  uint64_t log_overruns() const { return log_overruns_; }
  // vidsch.fence_log_tracing: the entries each log holds (84, or more while tracing), and the overruns
  // flagged in the trace as lost events (each overrun while tracing).
  bool fence_log_tracing() const { return tracing_; }
  uint32_t log_entries_per_log() const { return fence_log::entries_in(log_bytes_); }
  uint64_t trace_lost_event_flags() const { return trace_lost_flags_; }
  uint64_t fallback_scans() const { return fallback_scans_; }
  // F18: fences whose live value a fallback read (every fence of the overrun queue's device), and the
  // queues' logs a DPC read (per interrupt: the queues the interrupt's scope names).
  uint64_t fallback_fences_read() const { return fallback_fences_read_; }
  uint64_t log_queues_scanned() const { return log_queues_scanned_; }
  uint64_t log_barriers() const { return log_barriers_; }
  uint64_t mv_updates() const { return mv_updates_; }
  size_t waiter_count() const { return waiter_count_; }
  // When the most recent CPU wait was armed: its waiter registered and MV programmed for it (native),
  // or CV re-read after registering (legacy). A signal before this may have been missed by MV.
  sc_core::sc_time last_wait_armed() const { return last_wait_armed_; }
  bool bugchecked() const { return bugcheck_code_ != 0; }
  // Whether a waiter being woken now is woken by F8's re-read of CV after DxgkDdiUpdateMonitoredValues
  // (not by an interrupt's DPC): for monitors.
  bool resampling() const { return resampling_; }
  void bug_check(uint32_t code, std::vector<uint64_t> params);  // KeBugCheckEx: the machine stops
  uint32_t bugcheck_code() const { return bugcheck_code_; }
  const std::vector<uint64_t>& bugcheck_params() const { return bugcheck_params_; }

 private:
  void dpc();
  // A value the OS learnt a fence reached without reading its CV: the highest its log entries show (F19).
  struct Logged {
    NativeFence* f;
    uint64_t value;
  };
  // The per-fence part of an interrupt's DPC, a CPU signal or a forwarded one: for each logged fence at its
  // logged value, then each listed fence at its CV (read now), `signaled`; then MV moves (F4, F8).
  void scan(const std::vector<NativeFence*>& fences, const std::vector<Logged>& logged = {});
  // What the OS does for a fence it learnt reached `value`, whichever way it learnt it: wake the CPU
  // waiters it satisfies, release work held behind it (a monitored fence's, or a kernel-mode queue's),
  // forward it to the other adapters (F15).
  void signaled(NativeFence& f, uint64_t value);
  size_t wake_satisfied(NativeFence& f, uint64_t cv);
  void update_monitored_values(const std::vector<NativeFence*>& fences);
  void release_held(NativeFence& f, uint64_t cv);
  // F17/F18: read the logs of `queues` whose index moved (after the KMD's barrier) and wake the CPU waiters
  // their signal entries satisfy. `touched`: each fence a signal entry named, once, at the highest value
  // logged for it, in the order the entries first named them. `lost`: the devices (processes) whose queue's
  // log overran or was recreated: the caller reads their fences.
  void read_logs(const std::vector<int>& queues, std::vector<Logged>& touched, std::set<int>& lost);
  std::vector<int> log_scope(const DxgkInterruptData& d) const;  // the queues whose logs an interrupt's DPC reads
  void read_entries(int queue, uint32_t type, LogState& st, uint64_t pos, std::vector<Logged>& touched);
  bool logs_;
  bool tracing_ = false;
  uint64_t log_bytes_ = fence_log::kBufferBytes;  // each log's size: 4 KB, or vidsch.traced_log_bytes
  uint64_t trace_lost_flags_ = 0;
  Segment log_segment_;
  std::map<int, std::array<LogState, 2>> logs_of_;             // queue id -> [waits, signals]
  std::map<std::pair<int, uint32_t>, NativeFence*> by_local_;  // (process, D3DKMT handle)
  RuntimePm* pm_ = nullptr;  // runtime D3cold: each entry holds a use for its length (RuntimePm::Hold)
  uint32_t next_d3dkmt_handle_ = 0x4000'0000;    // D3DKMT handles Dxgkrnl gives out
  std::map<uint64_t, NativeFence*> nt_handles_;  // shared fences' NT handles
  uint64_t next_nt_handle_ = 0x800;
  uint64_t refused_creates_ = 0;
  uint64_t fence_ops_queued_ = 0;
  uint64_t feature_queries_ = 0;
  std::vector<fence_log::Entry> entry_buf_;
  uint64_t fallback_fences_read_ = 0, log_queues_scanned_ = 0;
  uint64_t log_headers_read_ = 0, log_entries_read_ = 0, log_overruns_ = 0, fallback_scans_ = 0, log_barriers_ = 0;
  void software_signal();  // the DPC of a kSoftwareSignalVector interrupt
  uint64_t mv_rule(const NativeFence& f) const;
  struct SoftwareSignal {
    NativeFence* f;
    uint64_t value;
  };
  std::deque<SoftwareSignal> software_signals_pending_;  // in submission order (one INTERRUPT each)
  uint64_t software_signals_ = 0;
  std::unique_ptr<PacketScheduler> packets_;
  enum class Value { Cv, Mv, MonitoredCv };  // a native fence's CV or MV, a monitored fence's CV
  uint64_t alloc_value(int process, Segment storage, bool shareable, Value kind);
  // Both ways a fence comes to this adapter: its MV at UINT64_MAX, DxgkDdiCreateNativeFence with the
  // values' mappings, then Dxgkrnl's book and the process's open. Null (reported) when the table is full.
  // A CPU waiter registered on f at value (its id, the fence's book, the observers); the caller moves MV.
  std::multimap<uint64_t, CpuWaiter*>::iterator add_waiter(CpuWaiter& w, NativeFence* f, uint64_t value);
  NativeFence* register_fence(std::unique_ptr<NativeFence> f, int process, uint32_t cross_adapter_id);

  Cpu& cpu_;
  VidMm& mm_;
  Vcd& vcd_;             // the timeline's fence flows (a CPU waiter woken)
  std::string adapter_;  // "gpu", "igpu"
  Kmd* kmd_ = nullptr;
  bool resample_cv_, native_fence_feature_;
  bool resampling_ = false;  // vidsch.resample_cv: F8's re-read of CV after every DxgkDdiUpdateMonitoredValues
  std::map<uint32_t, std::unique_ptr<KEvent>> events_;
  std::deque<DxgkInterruptData> pending_;
  std::function<void()> kmd_dpc_;
  bool dpc_queued_ = false;
  std::vector<std::unique_ptr<NativeFence>> fences_;
  std::map<uint32_t, NativeFence*> by_handle_;
  std::set<uint32_t> destroyed_handles_;
  uint64_t next_waiter_ = 1;
  size_t waiter_count_ = 0;
  std::list<CpuWaiter> cpu_waiters_;  // the CPU waits in progress (WaitFromCpu)
  struct Held {  // work a queue holds on the CPU: behind a legacy wait (f), or behind earlier held work (f null)
    KmdHwQueue* q;
    NativeFence* f;
    uint64_t value;
    PacketWriter work;
  };
  std::map<int, std::deque<Held>> backlog_;  // per queue id, in submission order
  std::map<NativeFence*, int> held_;         // backlog entries waiting on each legacy fence
  uint64_t held_released_ = 0;
  struct Pool {  // F6: per process and segment, the page being filled and the next offset in it
    uint64_t page = 0, next = 4096;
  };
  std::map<std::tuple<int, int, int>, Pool> pools_;
  uint64_t null_scans_ = 0;
  uint64_t fence_interrupts_ = 0, spurious_ = 0, woken_ = 0, mv_updates_ = 0;
  std::vector<DmaFault> dma_faulted_;
  sc_core::sc_time last_wait_armed_ = sc_core::SC_ZERO_TIME;
  uint32_t bugcheck_code_ = 0;
  std::vector<uint64_t> bugcheck_params_;
  uint32_t xa_tier_ = 0;  // KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT
};

}  // namespace gpumodel
