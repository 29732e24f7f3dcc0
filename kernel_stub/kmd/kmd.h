// The kernel-mode driver of the modelled adapter. Every DxgkDdi* function here touches the hardware
// only through the CPU: MMIO to BAR0 and stores/loads to memory. Must be called from a CPU context
// (an app thread, the ISR or a DPC), since hardware access takes simulated time.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw_model/core/params.h"
#include "hw_model/gpu/packets.h"
#include "hw_model/gpu/regs.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/vidmm.h"
#include "kernel_stub/dxgkrnl/vidsch.h"

namespace gpumodel {

struct DxgkAdapterInfo {  // what DxgkDdiStartDevice learns from the hardware (capabilities)
  uint32_t id = 0;
  uint32_t nodes = 0;
  uint32_t hw_queues = 0;
  bool mv_from_memory = false;  // the engines read the OS's MonitoredValue; no shadow in the CMP
};

// DXGK_NODEMETADATA (DxgkDdiGetNodeMetadata), the fields used.
struct DxgkNodeMetadata {
  uint32_t engine_type = 0;   // DXGK_ENGINE_TYPE
  std::string friendly_name;  // "3D", "Compute", "Copy", "VideoDecode"
};

// DXGK_NATIVE_FENCE_CAPS (DxgkDdiQueryAdapterInfo, DXGKQAITYPE_NATIVE_FENCE_CAPS), the fields used.
struct DxgkNativeFenceCaps {
  uint32_t stride_bytes = 0;              // packing stride of non-shareable fence values (F6)
  bool map_to_gpu_system_process = true;  // F10: the OS maps CV and MV into the system process's GPU VA
  Segment local_segment = Segment::Local;
};

struct KmdHwQueue {  // the driver's view of one HW queue
  int id = 0;
  int node = 0;
  uint64_t ring_base = 0;
  uint32_t ring_size = 0;
  uint64_t rptr_addr = 0;    // where the hardware writes back its read pointer
  uint64_t wptr = 0;         // bytes written, monotonic
  uint64_t rptr_cached = 0;  // last read pointer the driver read back
  FenceVa progress;          // F14: the native progress fence, as the queue's process names it, if any
  bool has_progress_fence = false;
  // Native fence logs (F16): which of the queue's logs the OS set, and the UMD's next entry in each
  // (waits, signals): the UMD "determines the next free entry to write to".
  bool log_set[2] = {false, false};
  uint64_t log_seq[2] = {0, 0};
  uint64_t submissions = 0;  // the progress fence's value after the last submission
  int process = 0;           // the GPU VA space it runs in
  // A kernel-mode queue (the native fence document's cross-adapter tables): its native fence waits and signals
  // are Dxgkrnl's on the CPU (held work, CV written from the CPU), not WAIT/SIGNAL packets.
  bool kernel_mode = false;
};

// DXGKARG_SETNATIVEFENCELOGBUFFER (F16): one of the queue's two logs, with its three mappings.
struct DxgkSetNativeFenceLogBufferArgs {
  KmdHwQueue* hw_queue = nullptr;  // hHwQueue
  uint32_t log_type = 0;           // DXGK_NATIVE_FENCE_LOG_TYPE: fence_log::kWaits or kSignals
  uint64_t log_buffer_cpu_va = 0, log_buffer_gpu_va = 0, log_buffer_system_process_gpu_va = 0;
  uint32_t number_of_entries = 0;
};

// DxgkDdiCreateAllocation, reduced: what the UMD's private driver data says of the allocation.
struct DxgkCreateAllocationArgs {
  uint64_t bytes = 0;
  bool compressed = false;     // the engines keep it compressed (the driver decompresses it before eviction)
  bool driver_cached = false;  // the driver caches it on the GPU (it flushes before an IOMMU unmap)
};

// DXGKARG_CREATENATIVEFENCE, the fields used.
struct DxgkCreateNativeFenceArgs {
  uint64_t current_value_system_process_gpu_va = 0;  // F10: 0 unless the caps ask MapToGpuSystemProcess
  uint64_t monitored_value_system_process_gpu_va = 0;
  uint64_t current_value_cpu_va = 0, monitored_value_cpu_va = 0;  // the kernel's CPU addresses of the values
  uint32_t cross_adapter_id = 0;  // F20: the cross-adapter fence this instance belongs to (0: none)
};

// DXGKARG_OPENNATIVEFENCE: a process's instance of a fence, with the process's own GPU VAs of its values.
struct DxgkOpenNativeFenceArgs {
  uint32_t h_global_native_fence = 0;
  uint32_t h_local_native_fence = 0;  // in: Dxgkrnl's handle (the process's D3DKMT handle); out: the KMD's
  int h_device = 0;                   // the parent device (the model: one device per process, its process)
  uint64_t current_value_gpu_va = 0, monitored_value_gpu_va = 0;
};

struct DxgkMonitoredValueUpdate {  // one element of DXGKARG_UPDATEMONITOREDVALUES
  uint32_t h_global_native_fence;
  uint64_t monitored_value;
};
struct DxgkCurrentValueUpdate {  // one element of DXGKARG_UPDATECURRENTVALUESFROMCPU
  uint32_t h_global_native_fence;
  uint64_t current_value;
};

// Where this KMD instance finds its adapter: the BAR0 the OS assigned and the MSI data range it
// programs (one per adapter, so the CPU runs the right ISR); `key` names the adapter's parameters
// (<key>.kmd_*: what this driver reports and answers).
struct KmdConfig {
  uint64_t bar0_base = 0xF000'0000ull;  // regs::kBar0Base
  uint32_t msi_data_base = 0x40;        // vectors below 0x40 are reserved by the platform
  std::string key = "gpu";
};

// DXGK_DRIVERCAPS (DxgkDdiQueryAdapterInfo, DXGKQAITYPE_DRIVERCAPS), the fields CASO support uses:
// MemoryManagementCaps (DXGK_VIDMMCAPS) cross-adapter tiers and the hybrid role (C1).
struct DxgkDriverCaps {
  bool cross_adapter_resource = false;          // tier 1: copies through a cross-adapter resource
  bool cross_adapter_resource_texture = false;  // tier 2: sampled as a texture
  bool cross_adapter_resource_scanout = false;  // tier 3: scanned out directly (CASO)
  bool hybrid_discrete = false, hybrid_integrated = false;
  // DXGK_FLIPCAPS, the fields used: flips on vsync and immediate flips through MMIO (CASO support's tier 3
  // requires the flip capabilities the driver declares to work on a cross-adapter primary).
  bool flip_on_vsync_mmio = true, flip_immediate_mmio = false;
};

// DXGK_VIDSCHCAPS (DxgkDdiQueryAdapterInfo, DXGKQAITYPE_DRIVERCAPS SchedulingCaps), the fields used.
struct DxgkVidSchCaps {
  bool native_gpu_fence = false;  // F9: NativeGpuFence: the driver supports native GPU fences
  // F19: OptimizedNativeFenceSignaledInterrupt: the interrupt names the HW queue whose log holds the
  // signal instead of the fences (set at adapter start where the hardware can, kmd.optimized_*).
  bool optimized_native_fence_signaled_interrupt = false;
};

// How a driver build decides DXGK_VIDSCHCAPS::NativeGpuFence (F9), <key>.kmd_native_gpu_fence.
enum class NativeGpuFenceAnswer {
  IfEnabled,  // it queries DXGK_FEATURE_NATIVE_FENCE and advertises the cap only if the OS enabled it
  Always,     // it advertises the cap without asking (adapter start fails when the OS did not enable it)
  Never       // no native fence support: the OS uses monitored fences on this adapter
};

// What a driver build reports and answers (CASO support), from <key>.kmd_* parameters.
struct DriverAnswers {
  DxgkDriverCaps caps;
  NativeGpuFenceAnswer native_gpu_fence = NativeGpuFenceAnswer::IfEnabled;
  enum class NoScanout { Derived, Never, BeyondMinimum, Always } no_scanout = NoScanout::Derived;
  enum class StaticCheck { Derived, Pass, Fail } static_check = StaticCheck::Derived;  // Pass/Fail: forced
  bool mpo_mutates = false;             // defect: the StaticCheck changes the cached state
  uint64_t present_check_fails_at = 0;  // the present-time check fails from this one on (0: never)
  bool umd_row_major_texture = true;    // the D3D12 UMD's CrossAdapterRowMajorTextureSupported
};

// The display driver's scan-out budget for one surface (CASO support C5: the StaticCheck decides "given
// known bandwidth characteristics" whether scan-out can be done). Derivation (docs/display.md):
//   need   = bytes per pixel x pixel clock: what the beam drains during active lines;
//   path   = what the surface's path delivers: the link's completion payload rate (raw rate after
//            encoding, less ACK/UpdateFC DLLPs and SKP sets, x C / (C + 20) for C-byte completions), or
//            the memory's bandwidth for local memory and an integrated adapter's fabric;
//   share  = path x D / (D + O): completions return in request order, so each requester gets the path
//            in proportion to the bytes it keeps outstanding. D = the display's own (min(outstanding,
//            FIFO / request) requests), O = the adapter's copy engines at their full DMA depth
//            (the worst load the driver's own hardware can put on the path; 0 off the link);
//   latency = a request's worst wait: 2 link hops + 2 root-complex crossings + the memory's read
//            latency + the read request behind a full posted buffer (up) + D + O of completions (down);
//   fifo_needed = max(latency x need + request, latency x need / watermark): the buffer left when a
//            request is issued must last its latency (the figure scanout_underflow measures).
//   ok = share >= need and FIFO >= fifo_needed (and no rotation, no other output: the document's
//        bandwidth-limited configurations, which fail the check).
struct ScanoutBudget {
  std::string path;  // "link", "fabric", "local"
  double need_bytes_per_ns = 0, path_bytes_per_ns = 0, share_bytes_per_ns = 0, latency_ns = 0;
  uint64_t own_bytes = 0, other_bytes = 0, fifo_bytes = 0, fifo_needed_bytes = 0;
  bool ok = false;
  std::string why;  // the first condition that failed, or what held
};

// The answers <key>.kmd_* describe; caps from a "resource+texture+scanout"-style list and a role name.
DriverAnswers driver_answers_from(const ParamSet& ps, const std::string& key);
DxgkDriverCaps driver_caps_from(const std::string& tiers, const std::string& role);

// Packet scheduling (TDR in Windows 8 and later). DXGKARG_SUBMITCOMMAND, the fields used: the node (the adapter's node
// index: EngineOrdinal * nodes per engine + NodeOrdinal) and the packet's SubmissionFenceId.
struct DxgkSubmitCommandArgs {
  uint32_t node = 0;
  uint64_t submission_fence_id = 0;
  const PacketWriter* commands = nullptr;
  int process = 1;  // the context's process: its GPU VA space (the packet starts with SET_PAGE_TABLE)
};
// DXGKARG_RESETENGINE: packet_sched.h.
struct DxgkEngineStatus {  // DXGK_ENGINESTATUS
  bool responsive = true;  // false: the node cannot be reset (the OS resets the adapter instead)
};
// A primary's shape and format (DXGI_DDI_PRIMARY_DESC, the fields used).
struct PrimaryDesc {
  uint32_t width = 0, height = 0;
  std::string format;
};

// DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3, reduced: the planes of one check.
struct MpoCheck {
  bool static_check = false;      // DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT3 StaticCheck (swap-chain creation)
  unsigned planes_flagged = 0;    // planes the check marks as the candidate (C5: exactly one)
  bool post_composition = false;  // a post-composition plane (C5: none)
  uint64_t surface = 0;           // the plane's surface
};

class Kmd {
 public:
  static constexpr uint32_t kMsiDataBase = 0x40;  // the first adapter's MSI data base (KmdConfig default)
  static constexpr uint32_t kMsiVectors = 0x40;   // MSI vectors per adapter
  // The display engine's vectors within the adapter's range (its MSI data base = ours + kDisplayVblankVector).
  static constexpr uint32_t kDisplayVblankVector = 0x30, kDisplayFlipVector = 0x31;
  // Packet scheduling: node n's DMA-completed and DMA-preempted vectors (n < 16).
  static constexpr uint32_t kDmaCompletedVector = 0x10, kDmaPreemptedVector = 0x20;
  // Every node's page faults (DXGK_INTERRUPT_DMA_FAULTED): the ISR finds the node by its fault count.
  static constexpr uint32_t kDmaFaultedVector = 0x32;

  static void declare_params(ParamSet& ps);
  // The per-adapter driver answers: <key>.kmd_* for key = gpu and igpu.
  static void declare_adapter_params(ParamSet& ps, const std::string& key);
  Kmd(const ParamSet& ps, Cpu& cpu, VidMm& mm, VidSch& sch, const KmdConfig& cfg = {});
  uint64_t bar0() const { return bar0_; }
  uint32_t msi_data_base() const { return msi_data_base_; }

  // Returns false (adapter start fails) when BAR0 does not identify the adapter.
  bool DxgkDdiStartDevice(DxgkAdapterInfo* info);
  DxgkNativeFenceCaps DxgkDdiQueryAdapterInfoNativeFenceCaps() const { return caps_; }
  // F16: programs where the queue's engine writes its signal log (the process GPU VA) and where the CMP
  // writes its wait log (the system-process GPU VA); called again when Dxgkrnl recreates a log.
  void DxgkDdiSetNativeFenceLogBuffer(const DxgkSetNativeFenceLogBufferArgs& a);
  // F17: a memory barrier per queue (BAR0 kQLogFlush, a read-to-flush), so every log entry written
  // before the queue's FirstFreeEntryIndex moved is visible before Dxgkrnl reads the entries.
  void DxgkDdiUpdateNativeFenceLogs(const std::vector<KmdHwQueue*>& queues);
  // Allocation notifications. A1: the DXGK_ALLOCATIONINFOFLAGS2 the driver sets (kmd.notify_*). A4:
  // DXGKQAITYPE_PAGINGPROCESSGPUVASIZE: false = the call failed; *size_mb 0 = the OS decides. The answer is
  // kmd.paging_va_answer's: the driver's rule (paging_va_rule_mb), an override, or a failed call.
  DxgkAllocationInfoFlags2 DxgkDdiCreateAllocation(const DxgkCreateAllocationArgs& a);
  bool DxgkDdiQueryAdapterInfoPagingProcessGpuVaSize(uint32_t physical_adapter_index, uint32_t* size_mb);
  // A4, the driver's rule: 0 (the OS decides) when the OS's default maps `largest_allocation` whole, else
  // that size in whole MB.
  static uint32_t paging_va_rule_mb(uint64_t os_default_bytes, uint64_t largest_allocation);
  // The largest allocation the driver creates: kmd.largest_allocation_mb, or (0) Direct3D 12's resource-size
  // limit for the local segment.
  static uint64_t largest_allocation_bytes(uint64_t local_segment_bytes, uint64_t largest_allocation_mb);
  // `process`: the GPU VA space the queue runs in (VidMm::space; 0 = the system process).
  // DxgkDdiGetNodeMetadata: the node's engine type, read from its ENGINE_TYPE register.
  DxgkNodeMetadata DxgkDdiGetNodeMetadata(uint32_t node);
  KmdHwQueue* DxgkDdiCreateHwQueue(int node, uint32_t priority = 0, uint32_t native_progress_fence = 0,
                                   int process = 1);
  // Writes the packets into the queue's ring in memory, then rings the doorbell (MMIO). With a native
  // progress fence the KMD appends SIGNAL(progress fence, ++submissions) (F14).
  void DxgkDdiSubmitCommandToHwQueue(KmdHwQueue* q, const PacketWriter& packets);
  // Around a submission to a HW queue from user mode (D3DKMTSubmitCommandToHwQueue reaches the KMD through
  // Dxgkrnl, which holds runtime D3cold's use meanwhile; dxgkrnl/runtime_pm.h) and Dxgkrnl's adapter start.
  std::function<void(bool)> power_ref;  // true before, false after

 private:
  void write_ring(KmdHwQueue* q, const PacketWriter& packets);  // the submission itself

 public:
  bool DxgkDdiInterruptRoutine(uint32_t msi_data);  // ISR
  void DxgkDdiDpcRoutine();

  // Native fences (F11): returns the global handle, 0 when the table (or the handle space) is full.
  // Handles are never reused, so a stale event entry cannot name a later fence in the same slot.
  uint32_t DxgkDdiCreateNativeFence(const DxgkCreateNativeFenceArgs& args);
  // Fills a.h_local_native_fence with the KMD's handle; false: the global handle is not the KMD's.
  bool DxgkDdiOpenNativeFence(DxgkOpenNativeFenceArgs& a);
  void DxgkDdiCloseNativeFence(uint32_t h_local);
  void DxgkDdiDestroyNativeFence(uint32_t h_global);
  // At device IRQL (the caller raises it). Returns after the CMP has applied every update (F8).
  void DxgkDdiUpdateMonitoredValues(const std::vector<DxgkMonitoredValueUpdate>& updates);
  void DxgkDdiUpdateCurrentValuesFromCpu(const std::vector<DxgkCurrentValueUpdate>& updates, bool notification_only);

  // CASO support (C1, C5): what this driver reports and answers, from <key>.kmd_* parameters.
  DxgkDriverCaps DxgkDdiQueryAdapterInfoDriverCaps() const { return answers_.caps; }
  // F9: DXGK_VIDSCHCAPS. NativeGpuFence as this build decides it: IfEnabled advertises it only if the OS
  // enabled DXGK_FEATURE_NATIVE_FENCE, as the driver learned once at initialisation (native_fence_feature_version()).
  DxgkVidSchCaps DxgkDdiQueryAdapterInfoVidSchCaps() const;
  // F20 (the document's future design; no DDI is named): the OS tells the driver where the peer adapter's
  // cross-adapter doorbell is (a physical address); the KMD programs it into the CMP through BAR0.
  void DxgkDdiSetCrossAdapterDoorbell(uint64_t peer_doorbell);
  // A cross-adapter fence opened as a monitored fence here (no NativeGpuFence): a GPU signal is an
  // INTERRUPT packet with this vector after the work; its DPC writes CV from the CPU (Native GPU fence object, 2b).
  static constexpr uint32_t kSoftwareSignalVector = 0x33;
  VidSch& os() { return sch_; }  // the Dxgkrnl instance this driver reports to

  // Another driver build on the same hardware (caso_caps walks every combination in one run): its
  // answers from the next DxgkDdiStartDevice / check on.
  void install_driver(const DriverAnswers& a) { answers_ = a, present_checks_ = 0, mpo_state_ = 0; }
  const DriverAnswers& driver_answers() const { return answers_; }
  // pfnCreateResource for a cross-adapter primary: false = the driver answered
  // DXGI_DDI_PRIMARY_DRIVER_FLAG_NO_SCANOUT (the primary cannot be scanned out directly).
  bool CreatePrimaryScanout(const PrimaryDesc& d) const;
  // DxgkDdiCheckMultiPlaneOverlaySupport3: true if supported. A static check must not change the
  // driver's cached state (C5); `mpo_state()` is that state, for the monitor that checks it.
  bool DxgkDdiCheckMultiPlaneOverlaySupport3(const MpoCheck& c);
  // The budget the StaticCheck derives its answer from (reads LINK_STATUS once, from a CPU thread).
  ScanoutBudget scanout_budget(uint64_t surface);
  // The last StaticCheck's budget (what the scenarios report beside the path they got).
  const ScanoutBudget& last_static_budget() const { return last_budget_; }
  // A present-time check (not static) fails from the <key>.kmd_present_check_fails_at-th on (0: never).
  uint64_t mpo_state() const { return mpo_state_; }
  // Observer (monitors only): every overlay check with the cached state before and after it.
  std::function<void(const MpoCheck&, uint64_t before, uint64_t after)> on_mpo_check;

  // Display (the adapter's display engine, BAR0 + regs::kDisplayOffset). DxgkDdiCommitVidPn: the source's
  // pitch and first surface, MSI and flip-complete interrupts, scan-out on (the mode is the engine's
  // display.* straps). DxgkDdiSetVidPnSourceAddress: a flip, latched by the engine at the next vblank;
  // its completion arrives as kDisplayFlipVector. DxgkDdiControlInterrupt: vblank interrupts on or off.
  // `pixel_clock_hz`: the VidPN mode's pixel clock where it differs from the panel's native mode (a
  // fractional refresh, 59.94 or 119.84 Hz, on the same raster); 0 leaves the mode's.
  void DxgkDdiCommitVidPn(uint32_t pitch, uint64_t surface, uint32_t pixel_clock_hz = 0);
  // DXGKARG_SETVIDPNSOURCEADDRESS: Flags.FlipImmediate asks for an immediate flip (taken only where the
  // driver declared DXGK_FLIPCAPS FlipImmediateMmio; otherwise the flip waits for the vsync). Returns whether
  // the flip was immediate.
  bool DxgkDdiSetVidPnSourceAddress(uint64_t surface, bool flip_immediate = false);
  void DxgkDdiSetVidPnSourceVisibility(bool visible);
  void DxgkDdiControlInterrupt(bool vblank);

  // Packet scheduling and TDR (TDR in Windows 8 and later, T1). The KMD keeps one ring per node (a HW queue it creates
  // at the node's first packet); each packet ends with a FENCE that writes its SubmissionFenceId to a
  // per-node fence word in memory and interrupts (DMA completed). The ISR reports the ID it reads there.
  bool support_per_engine_tdr() const { return per_engine_tdr_; }       // DXGK_DRIVERCAPS::SupportPerEngineTDR
  uint32_t engines() const { return engines_; }                         // physical adapters of a linked adapter
  uint32_t nodes_per_engine() const { return info_.nodes / engines_; }  // NbAsymetricProcessingNodes
  void DxgkDdiSubmitCommand(const DxgkSubmitCommandArgs& a);
  void DxgkDdiPreemptCommand(uint32_t node, uint64_t preemption_fence_id);
  uint32_t DxgkDdiQueryDependentEngineGroup(uint32_t node_ordinal, uint32_t engine_ordinal);  // node mask
  DxgkEngineStatus DxgkDdiQueryEngineStatus(uint32_t node_ordinal, uint32_t engine_ordinal);
  bool DxgkDdiResetEngine(DxgkResetEngineArgs& a);  // false: the reset failed (STATUS_UNSUCCESSFUL)
  uint32_t DxgkDdiCollectDbgInfo(uint32_t reason);  // level 0: reads every node's status; returns their OR
  bool DxgkDdiResetFromTimeout();
  void DxgkDdiRestartFromTimeout();
  // Runtime D3cold (dxgkrnl/runtime_pm.h). D3: the video memory kept in self refresh or left to lose power
  // (BAR0 kVramSelfRefresh); D0: the GPU re-initialised (kmd.d0_init_ms) and its interrupts routed again.
  void DxgkDdiSetPowerState(bool d0, bool vram_self_refresh);
  // The adapter has work queued or running (BAR0 kAdapterStatus): it must stay powered.
  bool adapter_busy();
  void DxgkDdiBuildPagingBuffer(const DxgkPagingOp& op, PacketWriter& out);
  // The bytes one DMA packet of `op`'s kind takes in a ring (DxgkDdiSubmitCommand's SET_PAGE_TABLE and
  // FENCE around what DxgkDdiBuildPagingBuffer writes), for a zero fill of `bytes`: one COPY from the zero
  // page per kZeroPageBytes. A submission must fit in kmd.ring_bytes.
  static uint64_t fill_packet_bytes(uint64_t bytes);
  // The most a fill's paging packet carries (VidMm::Fill splits a chunk's fill at it): whole kZeroPageBytes
  // pages within half of kmd.ring_bytes.
  uint64_t fill_bytes_per_packet() const;
  uint64_t driver_last_completed(uint32_t node) const { return rings_.at(node).last_completed; }  // T5, driver side

  const DxgkAdapterInfo& info() const { return info_; }
  // F9: what the driver negotiated at initialisation (its cache; the feature's version, 0 if not enabled).
  uint32_t native_fence_feature_version() const { return feature_state_.native_fence_version; }
  const DxgkNativeFenceOsCaps1& native_fence_os_caps() const { return feature_state_.native_fence_os_caps; }
  uint64_t scratch() const { return scratch_; }  // a driver-owned page of system memory
  uint32_t slot_of(uint32_t h_global) const;     // the CMP table slot of a live fence (SIGNAL/WAIT operand)
  uint64_t unclaimed_interrupts() const { return unclaimed_; }
  uint64_t native_fences_created() const {
    return native_fences_created_;
  }  // DxgkDdiCreateNativeFence calls that got a handle
  KmdHwQueue* queue(int id) const {
    return id >= 0 && size_t(id) < queues_.size() ? queues_[size_t(id)].get() : nullptr;
  }
  size_t queue_count() const { return queues_.size(); }
  uint64_t dma_faults() const { return dma_faults_; }  // page faults the ISR reported (DMA_FAULTED)
  // The MMIO path of a TLB invalidation (BAR0 kMmuInvalidate, then a read that orders it): root 0 = all.
  void invalidate_tlbs(uint64_t root);

 private:
  // The ISR's handlers, one per interrupt type (DxgkDdiInterruptRoutine dispatches on the vector).
  bool notify(const DxgkInterruptData& d);  // DxgkCbNotifyInterrupt, then DxgkCbQueueDpc
  bool isr_fence_events();                  // the CMP's event ring: native and monitored fence events
  bool isr_dma_faulted();
  bool isr_dma_completed(uint32_t node);
  bool isr_dma_preempted(uint32_t node);
  DriverAnswers answers_;
  // What the driver knows of its display hardware and the platform (the scan-out budget's inputs).
  struct ScanoutHw {
    double need_bytes_per_ns = 0, hop_ns = 0, rc_ns = 0, sysmem_read_ns = 0, local_read_ns = 0;
    double sysmem_bytes_per_ns = 0, local_bytes_per_ns = 0;
    uint64_t fifo = 0, request = 0, watermark_pct = 0, outstanding = 0, engine_bytes = 0;
    unsigned completion_bytes = 0, max_payload = 0, posted_buffer = 0, rotation = 0, other_outputs = 0;
    uint32_t max_plane_width = 0, max_plane_height = 0;  // the display engine's plane (the driver knows its hardware)
    bool integrated = false;
  } scanout_hw_;
  void init_scanout(const ParamSet& ps, const std::string& key);
  int64_t link_status_ = -1;  // regs::kLinkStatus as read (-1: not yet)
  ScanoutBudget last_budget_;
  uint64_t present_checks_ = 0;
  uint64_t mpo_state_ = 0;
  uint32_t display_control_ = 0;  // what the KMD last wrote to the display's control register  // the driver's cached
                                  // overlay configuration (what the last real check committed)
  const uint64_t bar0_;
  const uint32_t msi_data_base_;
  Cpu& cpu_;
  VidMm& mm_;
  VidSch& sch_;
  uint32_t ring_bytes_, event_entries_;
  bool validate_handles_;
  enum class MvUpdateWait { Always, Lowered, Never } mv_update_wait_;  // kmd.mv_update_wait
  static MvUpdateWait mv_update_wait(const std::string& v);
  DxgkAdapterInfo info_;
  DxgkNativeFenceCaps caps_;
  bool optimized_cap_ = false;  // F19, decided at adapter start
  // F9: the driver's cache of the feature it negotiated at initialisation (the document's FEATURE_STATE):
  // enabled, the version, the OS's caps from that version's interface table. Queried once.
  struct FeatureState {
    bool queried = false, native_fence_enabled = false;
    uint32_t native_fence_version = 0;
    DxgkNativeFenceOsCaps1 native_fence_os_caps;
  } feature_state_;
  void query_features();                   // at DxgkDdiStartDevice
  bool log_barrier_ = true;                // kmd.native_fence_log_barrier
  bool combined_fence_interrupt_ = false;  // kmd.native_fence_interrupt = combined
  bool want_optimized_interrupt_ = false;  // kmd.optimized_native_fence_signaled_interrupt
  std::vector<std::unique_ptr<KmdHwQueue>> queues_;
  uint64_t scratch_ = 0;
  // Native fence bookkeeping.
  std::vector<uint32_t> free_slots_;
  uint32_t next_slot_ = 0;
  uint64_t native_fences_created_ = 0;
  uint32_t next_handle_ = 1;  // F11: monotonic; 0 once 2^32 - 1 handles were issued
  struct Opened {             // per KMD local handle: DXGKARG_OPENNATIVEFENCE as the driver keeps it
    uint32_t d3dkmt = 0;
    int process = 0;
    FenceVa va;
  };
  std::map<uint32_t, Opened> opened_;
  std::map<std::pair<uint32_t, int>, uint32_t> local_of_;  // (slot, process) -> KMD local handle
  uint32_t next_local_ = 0x1000;
  // The UMD's part of a user-mode submission (kmd_fence_log.cpp): every plain SIGNAL and WAIT of `in` in its
  // logged form, with the queue's next entry and the fence's D3DKMT handle in the queue's process (F16).
  void log_fence_ops(KmdHwQueue* q, const PacketWriter& in, PacketWriter& out);
  uint64_t ack_addr_ = 0, acks_expected_ = 0;
  struct Fence {  // per live global handle (created, not destroyed)
    uint32_t slot = 0;
    uint64_t cv_addr = 0;
    uint64_t mv = 0;
    bool mv_set = false;  // the CMP has been given an MV for it
  };
  std::map<uint32_t, Fence> fences_;
  // Event ring (interrupt payloads).
  uint64_t ring_base_ = 0, ring_wptr_addr_ = 0;
  uint32_t ring_rptr_ = 0, ring_dropped_ = 0;  // the drop counts as last read (kEventRingWptrAddr [63:32])
  uint64_t unclaimed_ = 0;
  uint64_t dma_faults_ = 0;
  bool notify_eviction_ = true, notify_iommu_unmap_ = true, notify_copy_ = true;
  std::string paging_va_answer_;
  int64_t paging_va_mb_ = 0;
  uint64_t largest_allocation_mb_ = 0;
  uint64_t notify_cycles_per_kb_ = 0, notify_unmap_cycles_ = 0;
  std::vector<uint32_t> node_faults_;  // each node's page-fault count the ISR last saw
  KLock fence_regs_;                   // FENCE_SELECT then program: one sequence at a time
  // Packet scheduling.
  bool per_engine_tdr_;
  uint32_t engines_ = 1;
  enum class ReportAborted { Correct, BelowCompleted, AboveSubmitted, Stale } report_aborted_;
  sc_core::sc_time reset_poll_, adapter_reset_poll_, d0_init_;
  struct Ring {
    KmdHwQueue* q = nullptr;
    uint64_t fence_addr = 0;       // where the node writes each completed packet's fence ID
    std::deque<uint64_t> in_ring;  // fence IDs submitted, not known completed (ring order)
    uint64_t last_completed = 0, last_submitted = 0, preemption_fence = 0;
    uint64_t reported_aborted = 0;  // the LastAbortedFenceId its last engine reset returned
  };
  std::map<uint32_t, Ring> rings_;
  std::vector<uint32_t> pipes_;  // each node's pipe (BAR0 kNPipe, read at the first group query)
  PacketWriter staging_;         // DxgkDdiSubmitCommand's packet with its FENCE (one caller: VidSch's scheduler)
  Ring& ring(uint32_t node);
  uint64_t zero_page_ = 0;
  std::map<uint32_t, uint64_t> pattern_pages_;  // FILL: a page of each nonzero pattern used
  static constexpr uint64_t kZeroPageBytes = 65536;
  // A node's or a HW queue's register in this adapter's BAR0 (regs::node_reg, regs::queue_reg).
  uint64_t node_reg(uint32_t node, uint64_t r) const { return bar0_ + regs::node_reg(int(node), r); }
  uint64_t queue_reg(int q, uint64_t r) const { return bar0_ + regs::queue_reg(q, r); }
};

}  // namespace gpumodel
