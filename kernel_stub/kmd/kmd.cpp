#include "kernel_stub/kmd/kmd.h"

#include <algorithm>

#include "hw_model/display/display_regs.h"
#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/fence_log.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/interrupt_controller.h"

namespace gpumodel {

using namespace sc_core;

void Kmd::declare_params(ParamSet& ps) {
  ps.declare_bool("kmd.optimized_native_fence_signaled_interrupt", false,
                  "Q: Native GPU fence object 'Optimized native fence signaled interrupt': DXGK_VIDSCHCAPS::"
                  "OptimizedNativeFenceSignaledInterrupt, optional; the driver reports it and sets the CMP "
                  "to name the HW queue (needs vidsch.native_fence_logs)");
  ps.declare_enum("kmd.native_fence_interrupt", "distinct", {"distinct", "combined"},
                  "Q: Native GPU fence object 'Native fence signaled interrupt': distinct = the hardware tells a "
                  "monitored fence's signal from a native fence's (two interrupt types); combined = hardware that "
                  "cannot: the KMD raises only DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED, with a NULL array and "
                  "EvaluateLegacyMonitoredFences = 1, as the document allows");
  ps.declare_bool("kmd.native_fence_log_barrier", true,
                  "Q: F17, Native GPU fence object 'Synchronously updating the native fence log': in "
                  "DxgkDdiUpdateNativeFenceLogs the KMD inserts a memory barrier per HW queue; false is a "
                  "test setting (the OS may read an entry the GPU has not yet made visible)");
  ps.declare_int_choices("kmd.ring_bytes", 65536, "bytes", {4096, 16384, 65536, 262144, 1048576},
                         "A: 64 KiB ring per HW queue");
  ps.declare_int_choices("kmd.event_ring_entries", 1024, "entries", {4, 16, 64, 256, 1024, 4096},
                         "A: 1024 interrupt event entries (16 KiB); when the KMD falls behind the CMP drops "
                         "entries and the KMD reports a NULL array (F12)");
  ps.declare_int_choices("kmd.fence_stride_bytes", 64, "bytes", {8, 16, 32, 64, 128, 256},
                         "A: DXGK_NATIVE_FENCE_CAPS stride, one 64-byte cache line per fence value (F6)");
  ps.declare_bool("kmd.validate_signaled_handles", true,
                  "Q: F11/F12 contract: the KMD names only live fences in pSignaledNativeFenceArray; "
                  "false models a KMD that forwards a destroyed fence's handle (the OS bug checks)");
  ps.declare_enum(
      "kmd.mv_update_wait", "always", {"always", "lowered", "never"},
      "Q: F8, Native GPU fence object 'Synchronization between the GPU and CPU': DxgkDdiUpdateMonitoredValues "
      "returns only after the CMP acknowledged every update (always). 'lowered' waits only "
      "when an MV went down: cheaper, and no interrupt is lost, but after a raise the OS's "
      "CV re-read may see a value the CMP has not checked against the new MV. 'never' "
      "returns at once: the OS re-reads CV before the CMP applied the MV, so only F7 step 3 "
      "reports a signal in between (a test setting that shows step 3 alone)");
  ps.declare_bool("kmd.native_fence_map_to_system_process", true,
                  "Q: F10, DXGK_NATIVE_FENCE_CAPS::MapToGpuSystemProcess: the OS maps each fence's CV and MV into "
                  "the system process's GPU VA and passes those VAs at creation; false = the KMD maps them itself");
  ps.declare_bool("kmd.notify_eviction", true,
                  "Q: A1, DXGK_ALLOCATIONINFOFLAGS2::NotifyEviction set on compressed allocations (the driver "
                  "decompresses them before they leave GPU access, the allocation notifications document's example)");
  ps.declare_bool("kmd.notify_iommu_unmap", true,
                  "Q: A1, DXGK_ALLOCATIONINFOFLAGS2::NotifyIoMmuUnmap set on allocations the driver caches "
                  "(it flushes its caches before the IOMMU unmap)");
  ps.declare_enum(
      "kmd.paging_va_answer", "rule", {"rule", "override", "fail"},
      "Q: A4, how the driver answers DXGKQAITYPE_PAGINGPROCESSGPUVASIZE (Allocation notifications, 'Paging process GPU "
      "VA space size'). rule: 0, the OS decides, when the OS's default (max(1/4 of the largest local segment, the "
      "hardware-scheduling log buffers)) maps kmd.largest_allocation_mb whole, as a large local segment does; else "
      "that allocation's size in MB, which the driver must then give. override: kmd.paging_va_mb as it is (a tuned "
      "or a defective driver). fail: the call fails (the OS decides)");
  ps.declare_int("kmd.paging_va_mb", 0, "MiB", 0, 1 << 20,
                 "A: the answer under kmd.paging_va_answer = override only (0 = let the OS decide even where its "
                 "default is too small; the paging_va_too_small monitor reports such a driver)");
  ps.declare_int("kmd.largest_allocation_mb", 0, "MiB", 0, 1 << 20,
                 "Q: A4, the largest allocation the driver creates, which the paging process's VA must map whole. 0 "
                 "= Direct3D 12's resource-size limit, min(max(128 MiB, 1/4 of the local segment), 2048 MiB) (d3d12.h "
                 "D3D12_REQ_RESOURCE_SIZE_IN_MEGABYTES_EXPRESSION_A_TERM 128, B_TERM 0.25, C_TERM 2048)");
  ps.declare_int("kmd.notify_eviction_cycles_per_kb", 256, "cycles", 0, 1 << 24,
                 "A: the NotifyEviction work is an in-place decompression pass: 256 engine cycles per KiB "
                 "(0.25 cycle/B, 8 GB/s at 2 GHz, the order of GPU lossless-decompression throughput) plus a copy");
  ps.declare_bool("kmd.notify_eviction_copy", true,
                  "A: the decompression writes the allocation back in place (a copy of every byte: read and write)");
  ps.declare_int("kmd.notify_iommu_unmap_cycles", 2000, "cycles", 0, 1 << 30,
                 "A: the NotifyIoMmuUnmap work flushes the engine's caches of the allocation: 2,000 cycles (1 us "
                 "at 2 GHz, an L2 flush) then a system-scope barrier");
  ps.declare_bool(
      "kmd.support_per_engine_tdr", true,
      "Q: TDR in Windows 8 and later T1, DXGK_DRIVERCAPS::SupportPerEngineTDR: the driver resets a timed-out node "
      "alone; false = every timeout resets the adapter (before Windows 8)");
  ps.declare_real("kmd.reset_poll_us", 10, "us", 0.01, 1e6,
                  "A: DxgkDdiResetEngine polls the node's status register every 10 us (a stall loop)");
  ps.declare_real("kmd.adapter_reset_poll_ms", 10, "ms", 0.01, 1e4,
                  "A: DxgkDdiResetFromTimeout polls the adapter's status every 10 ms while it resets");
  ps.declare_real("kmd.d0_init_ms", 50, "ms", 0, 10000,
                  "A: DxgkDdiSetPowerState(D0) after runtime D3cold: the GPU's firmware loaded and booted again "
                  "and its state restored; no vendor publishes the figure, uncertainty x0.2-x4");
  ps.declare_enum(
      "kmd.tdr_report_aborted", "correct", {"correct", "below_completed", "above_submitted", "stale"},
      "Q: TDR in Windows 8 and later T4, fault injection: a KMD that returns a LastAbortedFenceId below the last "
      "completed ID or above the last submitted one, or (stale) the one its previous reset of the node returned, "
      "which may lie in the range but in no queue (the OS bug checks 0x119); correct = the "
      "ID of the packet the reset aborted, or the last completed one when none was (T8)");
}

void Kmd::declare_adapter_params(ParamSet& ps, const std::string& key) {
  const bool ig = key == "igpu";
  const std::string only = ig ? "; topology = hybrid only" : "";
  ps.declare_enum(key + ".kmd_cross_adapter_caps", "resource+texture+scanout",
                  {"none", "resource", "texture", "scanout", "resource+texture", "resource+scanout", "texture+scanout",
                   "resource+texture+scanout"},
                  std::string("Q: CASO support C1, DXGK_VIDMMCAPS CrossAdapterResource (tier 1), ...Texture (2), "
                              "...Scanout (3), each tier implying those below; ") +
                      "a driver declares them from its own adapter's capability regardless of the device "
                      "configuration: tier 3, as this adapter's display engine scans row-major surfaces in system "
                      "memory" +
                      (ig ? " (and a HybridIntegrated WDDM 3.0 driver must: the HLK checks it)" : "") + only);
  ps.declare_enum(key + ".kmd_hybrid_role", ig ? "integrated" : "discrete", {"none", "discrete", "integrated"},
                  "Q: CASO support C1, DXGK_DRIVERCAPS HybridDiscrete / HybridIntegrated (Validating a hybrid "
                  "system configuration: the integrated adapter drives the laptop's panel)" +
                      only);
  ps.declare_bool(key + ".kmd_flip_immediate", true,
                  "Q: DXGK_FLIPCAPS FlipImmediateMmio: the display engine takes a new scan-out address mid-frame "
                  "(a tear), as a latency-optimised app's tearing present asks; A: declared, as current display "
                  "engines do; false = every flip waits for the vsync" +
                      only);
  ps.declare_bool(key + ".umd_cross_adapter_row_major_texture", true,
                  "Q: CASO support, tier 2: the D3D12 UMD's CrossAdapterRowMajorTextureSupported cap; "
                  "D3D12CreateDevice fails when it is set and the kernel driver lacks CrossAdapterResourceTexture "
                  "(A: a D3D12 driver that supports it)" +
                      only);
  ps.declare_enum(key + ".kmd_primary_no_scanout", "derived", {"derived", "never", "beyond_minimum", "always"},
                  "Q: CASO support C5, pfnCreateResource of a cross-adapter primary answers "
                  "DXGI_DDI_PRIMARY_DRIVER_FLAG_NO_SCANOUT when the driver cannot scan the resource out. A: derived, "
                  "from the resource's size against the display engine's plane (display.max_plane_width and "
                  "_height; the scan-out budget is the StaticCheck's, which follows); beyond_minimum, a driver "
                  "policy that scans out only the tier-3 minimum (C4: up to 1920x1080), so 1440p and 4K take two "
                  "copies; never; 'always' inside the minimum is a driver defect the model reports" +
                      only);
  ps.declare_enum(key + ".kmd_mpo_static_check", "derived", {"derived", "pass", "fail"},
                  "Q: CASO support C5, the swap-chain StaticCheck of CheckMultiplaneOverlaySupport3 is 'to verify "
                  "with high accuracy whether the driver can perform scan-out given the existing known bandwidth "
                  "characteristics' (a failure means two copies): derived = the driver's scan-out budget "
                  "(docs/display.md); pass or fail = a forced "
                  "answer, an override of the derivation" +
                      only);
  ps.declare_enum(
      key + ".kmd_scanout_budget_masters", "copy_engines", {"copy_engines", "all_engines"},
      "Q: CASO support C5, the StaticCheck's 'existing known bandwidth characteristics': the link traffic "
      "its budget counts beside scan-out's own reads. A: copy_engines, the copy engines with their full "
      "DMA depth outstanding (bulk transfers go to them, as the driver's own paging does): it passes where "
      "a 3D or compute engine's copies load the link too, and the scenario's verdict then reports the "
      "broken promise; all_engines: every engine that runs COPY, at its full depth, idle or not (it never passes what "
      "the engines' copies could underflow, and flips hybrid_present with the dGPU driving the panel and "
      "3840x2160@120 on Gen4 x8 to two copies). Neither sees the other adapter's or the CPU's traffic on this link" +
          only);
  ps.declare_bool(key + ".kmd_mpo_check_mutates_state", false,
                  "Q: CASO support C5, a StaticCheck must not change the driver's cached state; true models a "
                  "driver that does (the monitor mpo_static_check_state reports it)" +
                      only);
  ps.declare_enum(key + ".kmd_native_gpu_fence", "if_enabled", {"if_enabled", "always", "never"},
                  "Q: F9, Native GPU fence object 'Querying native fence feature enablement in OS': "
                  "DXGK_VIDSCHCAPS::NativeGpuFence. if_enabled = the driver queries "
                  "DXGK_FEATURE_NATIVE_FENCE and advertises the cap only when the OS enabled it (A: a WDDM 3.2 "
                  "driver); always = it advertises the cap regardless (adapter start fails when the OS did not "
                  "enable the feature); never = a driver without native fences (the OS uses monitored fences on "
                  "this adapter: the native fence document's scenarios 2a/2b's iGPU)" +
                      only);
  ps.declare_int(key + ".kmd_present_check_fails_at", 0, "frame", 0, 1000000000,
                 "A: 0 = never; N = the present-time overlay check fails from frame N on (CASO support C5: "
                 "the present falls back to composition)" +
                     only);
}

DxgkVidSchCaps Kmd::DxgkDdiQueryAdapterInfoVidSchCaps() const {
  DxgkVidSchCaps c;
  switch (answers_.native_gpu_fence) {
    case NativeGpuFenceAnswer::IfEnabled:  // the answer cached at initialisation, not asked again
      c.native_gpu_fence = feature_state_.native_fence_enabled;
      break;
    case NativeGpuFenceAnswer::Always: c.native_gpu_fence = true; break;
    case NativeGpuFenceAnswer::Never: c.native_gpu_fence = false; break;
  }
  c.optimized_native_fence_signaled_interrupt = optimized_cap_;
  return c;
}

void Kmd::DxgkDdiSetCrossAdapterDoorbell(uint64_t peer_doorbell) {
  cpu_.mmio_write64(bar0_ + regs::kXDoorbellTarget, peer_doorbell);
  (void)cpu_.mmio_read32(bar0_ + regs::kId);  // a read does not pass the posted write: programmed on return
}

Kmd::MvUpdateWait Kmd::mv_update_wait(const std::string& v) {
  return v == "always" ? MvUpdateWait::Always : v == "lowered" ? MvUpdateWait::Lowered : MvUpdateWait::Never;
}

Kmd::Kmd(const ParamSet& ps, Cpu& cpu, VidMm& mm, VidSch& sch, const KmdConfig& cfg)
    : answers_(driver_answers_from(ps, cfg.key)),
      bar0_(cfg.bar0_base),
      msi_data_base_(cfg.msi_data_base),
      cpu_(cpu),
      mm_(mm),
      sch_(sch),
      ring_bytes_(uint32_t(ps.get_int("kmd.ring_bytes"))),
      event_entries_(uint32_t(ps.get_int("kmd.event_ring_entries"))),
      validate_handles_(ps.get_bool("kmd.validate_signaled_handles")),

      mv_update_wait_(mv_update_wait(ps.get_enum("kmd.mv_update_wait"))),
      per_engine_tdr_(ps.get_bool("kmd.support_per_engine_tdr")),
      report_aborted_(ps.get_enum("kmd.tdr_report_aborted") == "below_completed"   ? ReportAborted::BelowCompleted
                      : ps.get_enum("kmd.tdr_report_aborted") == "above_submitted" ? ReportAborted::AboveSubmitted
                      : ps.get_enum("kmd.tdr_report_aborted") == "stale"           ? ReportAborted::Stale
                                                                                   : ReportAborted::Correct),
      reset_poll_(sc_time(ps.get_real("kmd.reset_poll_us"), SC_US)),
      adapter_reset_poll_(sc_time(ps.get_real("kmd.adapter_reset_poll_ms"), SC_MS)),
      d0_init_(sc_time(ps.get_real("kmd.d0_init_ms"), SC_MS)) {
  log_barrier_ = ps.get_bool("kmd.native_fence_log_barrier");
  combined_fence_interrupt_ = ps.get_enum("kmd.native_fence_interrupt") == "combined";
  want_optimized_interrupt_ = ps.get_bool("kmd.optimized_native_fence_signaled_interrupt");
  caps_.stride_bytes = uint32_t(ps.get_int("kmd.fence_stride_bytes"));
  caps_.map_to_gpu_system_process = ps.get_bool("kmd.native_fence_map_to_system_process");
  notify_eviction_ = ps.get_bool("kmd.notify_eviction");
  notify_iommu_unmap_ = ps.get_bool("kmd.notify_iommu_unmap");
  paging_va_answer_ = ps.get_enum("kmd.paging_va_answer");
  paging_va_mb_ = ps.get_int("kmd.paging_va_mb");
  largest_allocation_mb_ = uint64_t(ps.get_int("kmd.largest_allocation_mb"));
  notify_cycles_per_kb_ = uint64_t(ps.get_int("kmd.notify_eviction_cycles_per_kb"));
  notify_copy_ = ps.get_bool("kmd.notify_eviction_copy");
  notify_unmap_cycles_ = uint64_t(ps.get_int("kmd.notify_iommu_unmap_cycles"));
  init_scanout(ps, cfg.key);
  cpu_.connect_interrupt(msi_data_base_, kMsiVectors, [this](uint32_t data) { return DxgkDdiInterruptRoutine(data); });
}

bool Kmd::DxgkDdiStartDevice(DxgkAdapterInfo* info) {
  using namespace regs;
  info_.id = cpu_.mmio_read32(bar0_ + kId);
  if (info_.id != kIdValue) return false;
  const uint32_t caps = cpu_.mmio_read32(bar0_ + kCaps);
  info_.nodes = caps & 0xff;
  info_.hw_queues = (caps >> kCapsQueuesShift) + 1;
  info_.mv_from_memory = caps & kCapsMvFromMemory;
  // Hardware that raises one event kind for every fence signal: the combined interrupt, whatever the build.
  if (caps & kCapsFenceEventsCombined) combined_fence_interrupt_ = true;
  engines_ = ((caps >> kCapsEnginesShift) & 3) + 1;
  // MSI capability: target address in the APIC window, data carries the vector.
  cpu_.mmio_write64(bar0_ + kMsiAddr, InterruptController::kMsiBase);
  cpu_.mmio_write32(bar0_ + kMsiData, msi_data_base_);
  // GPU MMU: the system process's space for the CMP (F10); page faults raise DMA_FAULTED.
  cpu_.mmio_write64(bar0_ + kMmuSystemRoot, mm_.system_root());
  node_faults_.assign(info_.nodes, 0);
  for (uint32_t n = 0; n < info_.nodes; ++n) cpu_.mmio_write32(node_reg(n, kNFaultVector), kDmaFaultedVector);
  scratch_ = mm_.allocate(Segment::System, 4096);
  // Native fence support: shadow MV table in VRAM, event ring and acknowledgement word in system memory.
  ack_addr_ = mm_.allocate(Segment::System, 64, 64);
  ring_base_ = mm_.allocate(Segment::System, 16ull * event_entries_);
  ring_wptr_addr_ = mm_.allocate(Segment::System, 64, 64);
  cpu_.mmio_write64(bar0_ + kFenceAckAddr, ack_addr_);
  if (!info_.mv_from_memory)
    cpu_.mmio_write64(bar0_ + kShadowMvBase, mm_.allocate(Segment::Local, 8ull * Cmp::kFenceSlots));
  cpu_.mmio_write64(bar0_ + kEventRingBase, ring_base_);
  cpu_.mmio_write32(bar0_ + kEventRingSize, event_entries_);
  cpu_.mmio_write64(bar0_ + kEventRingWptrAddr, ring_wptr_addr_);
  query_features();
  // F19: the cap only where the hardware can name the queue.
  optimized_cap_ = want_optimized_interrupt_ && (caps & kCapsFenceIrqNamesQueue);
  if (optimized_cap_) cpu_.mmio_write32(bar0_ + kFenceIrqMode, kFenceIrqNamesQueue);
  // Dxgkrnl's part of adapter start (it runs around this call): the DMA-remapping domain and the paging
  // process's GPU VA (Allocation notifications, A3/A4). This driver schedules with HW queues (hardware scheduling).
  mm_.start(true);
  if (info) *info = info_;
  return true;
}

DxgkNodeMetadata Kmd::DxgkDdiGetNodeMetadata(uint32_t node) {
  static const char* const kNames[] = {"Compute", "3D", "VideoDecode", "", "", "", "Copy"};
  DxgkNodeMetadata m;
  m.engine_type = cpu_.mmio_read32(bar0_ + regs::node_reg(int(node), regs::kNEngineType));
  m.friendly_name = m.engine_type < 7 ? kNames[m.engine_type] : "Other";
  return m;
}

KmdHwQueue* Kmd::DxgkDdiCreateHwQueue(int node, uint32_t priority, uint32_t native_progress_fence, int process) {
  using namespace regs;
  if (queues_.size() >= info_.hw_queues || node < 0 || uint32_t(node) >= info_.nodes) return nullptr;
  // Reserve the queue id before the first MMIO write: another thread may create a queue meanwhile.
  queues_.push_back(std::make_unique<KmdHwQueue>());
  KmdHwQueue* q = queues_.back().get();
  q->id = int(queues_.size()) - 1;
  q->node = node;
  q->process = process;
  q->ring_size = ring_bytes_;
  q->ring_base = mm_.allocate(Segment::System, ring_bytes_);
  q->rptr_addr = mm_.allocate(Segment::System, 64, 64);
  if (native_progress_fence) {  // DXGKARG_CREATEHWQUEUE::Flags.NativeProgressFence (F14)
    // The fence as the queue's process opened it: the KMD signals it through that process's VAs.
    auto it = local_of_.find({slot_of(native_progress_fence), process});
    if (it == local_of_.end()) {
      SC_REPORT_ERROR("gpumodel/kmd", "a native progress fence the queue's process has not opened");
    } else {
      q->has_progress_fence = true;
      q->progress = opened_.at(it->second).va;
    }
  }
  cpu_.mmio_write64(queue_reg(q->id, kQRingBase), q->ring_base);
  cpu_.mmio_write32(queue_reg(q->id, kQRingSize), q->ring_size);
  cpu_.mmio_write32(queue_reg(q->id, kQNode), uint32_t(node));
  cpu_.mmio_write64(queue_reg(q->id, kQRptrAddr), q->rptr_addr);
  cpu_.mmio_write32(queue_reg(q->id, kQPriority), priority);
  cpu_.mmio_write64(queue_reg(q->id, kQPageTable), mm_.space(process).root());
  cpu_.mmio_write32(queue_reg(q->id, kQEnable), 1);
  return q;
}

void Kmd::DxgkDdiSubmitCommandToHwQueue(KmdHwQueue* q, const PacketWriter& packets) {
  if (power_ref) power_ref(true);
  write_ring(q, packets);
  if (power_ref) power_ref(false);
}

void Kmd::write_ring(KmdHwQueue* q, const PacketWriter& packets) {
  // The stream as the UMD writes it into the ring: its fence operations logged, then the progress fence's
  // SIGNAL (F14), logged too. Local: the ring-space wait below lets another thread submit meanwhile. A
  // queue with neither logs nor a progress fence writes the caller's packets as they are.
  PacketWriter staged;
  const PacketWriter* pw = &packets;
  if (q->has_progress_fence || q->log_set[0] || q->log_set[1]) {
    log_fence_ops(q, packets, staged);
    if (q->has_progress_fence) {
      PacketWriter progress;
      progress.signal(q->progress, ++q->submissions);
      log_fence_ops(q, progress, staged);
    }
    pw = &staged;
  }
  const auto& dw = pw->dwords();
  const uint64_t bytes = dw.size() * 4;
  if (bytes > q->ring_size) {
    SC_REPORT_ERROR("gpumodel/kmd", "submission larger than the ring: raise kmd.ring_bytes");
    return;
  }
  // Wait for ring space: re-read the hardware's written-back read pointer until it fits.
  while (q->wptr + bytes - q->rptr_cached > q->ring_size) {
    q->rptr_cached = cpu_.mem_read64(q->rptr_addr);
    if (q->wptr + bytes - q->rptr_cached > q->ring_size) wait(sc_time(1, SC_US));
  }
  uint64_t done = 0;
  while (done < bytes) {  // the ring wraps: write in at most two pieces
    const uint64_t off = (q->wptr + done) & (q->ring_size - 1);
    const uint64_t n = std::min<uint64_t>(bytes - done, q->ring_size - off);
    cpu_.mem_write(q->ring_base + off, reinterpret_cast<const unsigned char*>(dw.data()) + done, unsigned(n));
    done += n;
  }
  q->wptr += bytes;
  cpu_.mmio_write64(bar0_ + regs::doorbell_reg(q->id), q->wptr);
}

Kmd::Ring& Kmd::ring(uint32_t node) {
  Ring& r = rings_[node];
  if (!r.q) {  // the node's first packet: its ring and fence word, and its preemption vector
    r.q = DxgkDdiCreateHwQueue(int(node), 0, 0, 0);  // the ring is the KMD's: in the system process's space
    if (!r.q) SC_REPORT_ERROR("gpumodel/kmd", "packet scheduling: no free HW queue for a node's ring");
    r.fence_addr = mm_.allocate(Segment::System, 64, 64);
    cpu_.mmio_write32(node_reg(node, regs::kNPreemptVector), kDmaPreemptedVector + node);
  }
  return r;
}

void Kmd::DxgkDdiSubmitCommand(const DxgkSubmitCommandArgs& a) {
  Ring& r = ring(a.node);
  if (!r.q) return;
  PacketWriter& w = staging_;  // a member: the ring write waits, and a stopped run never unwinds a thread
  w.clear();
  // Packets of several processes share the ring: each runs in its own context's GPU VA space.
  w.set_page_table(mm_.space(a.process).root())
      .append(*a.commands)
      .fence(r.fence_addr, a.submission_fence_id, kDmaCompletedVector + a.node);
  r.in_ring.push_back(a.submission_fence_id);
  if (a.submission_fence_id > r.last_submitted) r.last_submitted = a.submission_fence_id;
  write_ring(r.q, w);
}

void Kmd::DxgkDdiPreemptCommand(uint32_t node, uint64_t preemption_fence_id) {
  Ring& r = ring(node);
  r.preemption_fence = preemption_fence_id;
  cpu_.mmio_write32(node_reg(node, regs::kNControl), regs::kNCtlPreempt);
}

uint32_t Kmd::DxgkDdiQueryDependentEngineGroup(uint32_t node_ordinal, uint32_t engine_ordinal) {
  // The nodes of this engine that share the node's pipe (node.pipe); a node alone in its pipe resets alone.
  if (pipes_.empty())  // the adapter's topology, read once at the first query (BAR0 kNPipe of every node)
    for (uint32_t n = 0; n < info_.nodes; ++n) pipes_.push_back(cpu_.mmio_read32(node_reg(n, regs::kNPipe)));
  const uint32_t per = nodes_per_engine(), base = engine_ordinal * per;
  uint32_t mask = 0;
  for (uint32_t o = 0; o < per; ++o)
    if (pipes_.at(base + o) == pipes_.at(base + node_ordinal)) mask |= 1u << o;
  return mask;
}

DxgkEngineStatus Kmd::DxgkDdiQueryEngineStatus(uint32_t node_ordinal, uint32_t engine_ordinal) {
  const uint32_t st = cpu_.mmio_read32(node_reg(engine_ordinal * nodes_per_engine() + node_ordinal, regs::kNStatus));
  // Not responsive: the node is hung past a failed reset, or the hardware cannot reset it.
  return {!(st & (regs::kNStResetFailed | regs::kNStCannotReset))};
}

uint32_t Kmd::DxgkDdiCollectDbgInfo(uint32_t reason) {
  (void)reason;
  uint32_t any = 0;  // level 0: only register reads, nothing that waits on the hardware
  for (uint32_t n = 0; n < info_.nodes; ++n) any |= cpu_.mmio_read32(node_reg(n, regs::kNStatus));
  return any;
}

bool Kmd::DxgkDdiResetEngine(DxgkResetEngineArgs& a) {
  const uint32_t node = a.engine_ordinal * nodes_per_engine() + a.node_ordinal;
  Ring& r = ring(node);
  cpu_.mmio_write32(node_reg(node, regs::kNControl), regs::kNCtlReset);
  uint32_t st = 0;
  do {  // a stall loop on the status register (the reset takes node.reset_ns)
    wait(reset_poll_);
    st = cpu_.mmio_read32(node_reg(node, regs::kNStatus));
  } while (st & regs::kNStResetting);
  if (st & regs::kNStResetFailed) return false;
  // T5: the completed ID is the driver's own (its ISR's bookkeeping), moved by what the node's register
  // shows completed since; an adapter reset cleared that register, which alone would go back.
  const uint64_t last = std::max(r.last_completed, cpu_.mmio_read64(node_reg(node, regs::kNLastFence)));
  a.last_completed_fence_id = last;
  // The packet the reset aborted: the first one in the ring past the last completed; none left (every
  // packet completed after the OS's snapshot): the last completed one (T8).
  while (!r.in_ring.empty() && r.in_ring.front() <= last) r.in_ring.pop_front();
  a.last_aborted_fence_id = r.in_ring.empty() ? last : r.in_ring.front();
  if (report_aborted_ == ReportAborted::BelowCompleted) a.last_aborted_fence_id = r.last_completed - 1;
  if (report_aborted_ == ReportAborted::AboveSubmitted) a.last_aborted_fence_id = r.last_submitted + 1;
  if (report_aborted_ == ReportAborted::Stale && r.reported_aborted) a.last_aborted_fence_id = r.reported_aborted;
  r.reported_aborted = a.last_aborted_fence_id;
  r.in_ring.clear();        // the node emptied its ring
  r.last_completed = last;  // T5: after a successful engine reset
  return true;
}

bool Kmd::DxgkDdiResetFromTimeout() {
  cpu_.mmio_write32(bar0_ + regs::kAdapterReset, 1);
  do wait(adapter_reset_poll_);
  while (cpu_.mmio_read32(bar0_ + regs::kAdapterStatus) & 1);
  return true;
}

void Kmd::DxgkDdiRestartFromTimeout() {
  // The adapter is back: re-program its interrupt routing; every ring is empty, and what was submitted
  // counts as done (T5: the last completed ID moves to the last submitted on every node).
  cpu_.mmio_write64(bar0_ + regs::kMsiAddr, InterruptController::kMsiBase);
  cpu_.mmio_write32(bar0_ + regs::kMsiData, msi_data_base_);
  for (auto& [node, r] : rings_) {
    r.in_ring.clear();
    r.last_completed = r.last_submitted;
    cpu_.mmio_write32(node_reg(node, regs::kNPreemptVector), kDmaPreemptedVector + node);
  }
}

void Kmd::DxgkDdiBuildPagingBuffer(const DxgkPagingOp& op, PacketWriter& out) {
  if (op.wait_value) out.wait(op.wait_fence, op.wait_value);
  if (op.kind == DxgkPagingOp::Timestamp) {
    out.timestamp(op.dst);
  } else if (op.kind == DxgkPagingOp::Transfer) {
    out.copy(op.src, op.dst, op.bytes);
  } else if (op.kind == DxgkPagingOp::UpdatePageTable) {
    // The new entries go into a staging buffer in system memory (CPU stores); each run of consecutive
    // entries is one COPY into the page table (which the system process maps at its physical address);
    // then FLUSH_TLB: a release, then every TLB of the adapter for that space.
    std::vector<PteWrite> e = op.entries;
    std::sort(e.begin(), e.end(), [](const PteWrite& a, const PteWrite& b) { return a.addr < b.addr; });
    if (!e.empty()) {
      const uint64_t staging = mm_.allocate(Segment::System, e.size() * 8, 64);
      std::vector<uint64_t> v;
      v.reserve(e.size());
      for (const PteWrite& w : e) v.push_back(w.value);
      cpu_.mem_write(staging, v.data(), unsigned(v.size() * 8));
      for (size_t i = 0; i < e.size();) {
        size_t j = i + 1;
        while (j < e.size() && e[j].addr == e[j - 1].addr + 8) ++j;
        out.copy(staging + 8 * i, e[i].addr, 8 * (j - i));
        i = j;
      }
    }
    out.flush_tlb(op.root);
  } else if (op.kind == DxgkPagingOp::NotifyAlloc) {
    if (op.notify == DxgkPagingOp::NotifyEviction) {
      // Decompress in place before the allocation leaves GPU access (the allocation notifications document's example).
      out.compute(notify_cycles_per_kb_ * ((op.bytes + 1023) / 1024));
      if (notify_copy_) out.copy(op.dst, op.dst, op.bytes);
    } else {
      // Flush what the engine caches of it; nothing may touch its VA after this returns (A3).
      out.compute(notify_unmap_cycles_).barrier();
    }
  } else {
    // FILL: COPYs from a page of the pattern; zero from a page of zero-initialised DRAM, another pattern
    // from a page the driver writes once (CPU stores) and keeps.
    uint64_t& page = op.fill_pattern ? pattern_pages_[op.fill_pattern] : zero_page_;
    if (!page) {
      page = mm_.allocate(Segment::System, kZeroPageBytes);
      if (op.fill_pattern) {
        const std::vector<uint32_t> v(kZeroPageBytes / 4, op.fill_pattern);
        cpu_.mem_write(page, v.data(), unsigned(kZeroPageBytes));
      }
    }
    for (uint64_t done = 0; done < op.bytes;) {
      const uint64_t n = std::min(kZeroPageBytes, op.bytes - done);
      out.copy(page, op.dst + done, n);
      done += n;
    }
  }
}

uint64_t Kmd::fill_bytes_per_packet() const {
  // Half the ring for the fill's COPYs (the other half for the window's map and unmap around it): whole
  // pattern pages.
  const uint64_t copy = PacketWriter().copy(0, 0, 0).bytes();
  return (ring_bytes_ / 2 - fill_packet_bytes(0)) / copy * kZeroPageBytes;
}

uint64_t Kmd::fill_packet_bytes(uint64_t bytes) {
  const uint64_t copies = (bytes + kZeroPageBytes - 1) / kZeroPageBytes;
  return PacketWriter().set_page_table(0).fence(0, 0, 0).bytes() + copies * PacketWriter().copy(0, 0, 0).bytes();
}

void Kmd::invalidate_tlbs(uint64_t root) {
  cpu_.mmio_write64(bar0_ + regs::kMmuInvalidate, root);
  (void)cpu_.mmio_read32(bar0_ + regs::kId);  // a read does not pass the posted write: done on return
}

DxgkAllocationInfoFlags2 Kmd::DxgkDdiCreateAllocation(const DxgkCreateAllocationArgs& a) {
  DxgkAllocationInfoFlags2 f;
  f.notify_eviction = notify_eviction_ && a.compressed;
  f.notify_iommu_unmap = notify_iommu_unmap_ && a.driver_cached;
  return f;
}

uint64_t Kmd::largest_allocation_bytes(uint64_t local_segment_bytes, uint64_t largest_allocation_mb) {
  if (largest_allocation_mb) return largest_allocation_mb << 20;
  // Direct3D 12's resource-size limit: min(max(A, B x the local segment), C) MiB, A = 128, B = 0.25, C = 2048.
  return std::min<uint64_t>(std::max<uint64_t>(128ull << 20, local_segment_bytes / 4), 2048ull << 20);
}

uint32_t Kmd::paging_va_rule_mb(uint64_t os_default_bytes, uint64_t largest_allocation) {
  // Allocation notifications: a large local segment -> 0, the OS decides (a larger VA only costs always-resident
  // page tables); an OS default too small to map an allocation whole -> the driver must give a size: its
  // largest allocation's, in whole MB.
  if (largest_allocation <= os_default_bytes) return 0;
  return uint32_t((largest_allocation + (1ull << 20) - 1) >> 20);
}

bool Kmd::DxgkDdiQueryAdapterInfoPagingProcessGpuVaSize(uint32_t physical_adapter_index, uint32_t* size_mb) {
  (void)physical_adapter_index;  // the linked adapter's physical adapters are alike: one answer for each
  if (paging_va_answer_ == "fail") return false;
  if (paging_va_answer_ == "override") {
    *size_mb = uint32_t(paging_va_mb_);
    return true;
  }
  // The driver's rule, from what it knows of its adapter: the local segment it reported and its HW queues'
  // log buffers (the OS's default, A4), and its own largest allocation.
  const uint64_t local = mm_.largest_local_segment();
  const uint64_t os_default = VidMm::paging_va_default(local, VidMm::log_buffer_bytes(info_.hw_queues));
  *size_mb = paging_va_rule_mb(os_default, largest_allocation_bytes(local, largest_allocation_mb_));
  return true;
}

void Kmd::DxgkDdiCommitVidPn(uint32_t pitch, uint64_t surface, uint32_t pixel_clock_hz) {
  using namespace display_regs;
  const uint64_t d = bar0_ + regs::kDisplayOffset;
  if (pixel_clock_hz) cpu_.mmio_write32(d + kPixelClock, pixel_clock_hz);
  cpu_.mmio_write64(d + kMsiAddr, InterruptController::kMsiBase);
  cpu_.mmio_write32(d + kMsiData, msi_data_base_ + kDisplayVblankVector);  // vblank +0, flip complete +1
  cpu_.mmio_write32(d + kPitch, pitch);
  cpu_.mmio_write64(d + kSurfaceAddr, surface);
  display_control_ = kCtrlEnable | kCtrlFlipIrq;
  cpu_.mmio_write32(d + kControl, display_control_);
  (void)cpu_.mmio_read32(d + kControl);  // a read does not pass the posted writes: the source is on on return
}

bool Kmd::DxgkDdiSetVidPnSourceAddress(uint64_t surface, bool flip_immediate) {
  const bool immediate = flip_immediate && answers_.caps.flip_immediate_mmio;
  cpu_.mmio_write64(
      bar0_ + regs::kDisplayOffset + (immediate ? display_regs::kSurfaceAddrImmediate : display_regs::kSurfaceAddr),
      surface);
  return immediate;
}

void Kmd::DxgkDdiSetVidPnSourceVisibility(bool visible) {
  display_control_ =
      visible ? display_control_ | display_regs::kCtrlEnable : display_control_ & ~display_regs::kCtrlEnable;
  cpu_.mmio_write32(bar0_ + regs::kDisplayOffset + display_regs::kControl, display_control_);
}

void Kmd::DxgkDdiControlInterrupt(bool vblank) {
  display_control_ =
      vblank ? display_control_ | display_regs::kCtrlVblankIrq : display_control_ & ~display_regs::kCtrlVblankIrq;
  cpu_.mmio_write32(bar0_ + regs::kDisplayOffset + display_regs::kControl, display_control_);
}

bool Kmd::DxgkDdiInterruptRoutine(uint32_t msi_data) {
  if (msi_data - msi_data_base_ >= kMsiVectors) return false;  // not ours
  const uint32_t vector = msi_data - msi_data_base_;
  if (vector == regs::kFenceEventVector) return isr_fence_events();
  if (vector == kDmaFaultedVector) return isr_dma_faulted();
  if (vector == kDisplayVblankVector || vector == kDisplayFlipVector) {  // DXGK_INTERRUPT_CRTC_VSYNC
    DxgkInterruptData d;
    d.type = DxgkInterruptData::CrtcVsync;
    d.vector = vector;
    return notify(d);
  }
  if (vector - kDmaCompletedVector < 16 && rings_.count(vector - kDmaCompletedVector))
    return isr_dma_completed(vector - kDmaCompletedVector);
  if (vector - kDmaPreemptedVector < 16 && rings_.count(vector - kDmaPreemptedVector))
    return isr_dma_preempted(vector - kDmaPreemptedVector);
  DxgkInterruptData d;  // an INTERRUPT packet's own vector
  d.type = DxgkInterruptData::DmaCompleted;
  d.vector = vector;
  return notify(d);
}

bool Kmd::notify(const DxgkInterruptData& d) {  // DxgkCbNotifyInterrupt, then the DPC
  sch_.DxgkCbNotifyInterrupt(d);
  sch_.DxgkCbQueueDpc([this] { DxgkDdiDpcRoutine(); });
  return true;
}

bool Kmd::isr_dma_faulted() {
  // DXGK_INTERRUPT_DMA_FAULTED: which node faulted, from its fault count; the VA from its register.
  bool any = false;
  for (uint32_t n = 0; n < info_.nodes; ++n) {
    const uint32_t c = cpu_.mmio_read32(node_reg(n, regs::kNPageFaults));
    if (c == node_faults_[n]) continue;
    DxgkInterruptData d;
    d.type = DxgkInterruptData::DmaFaulted;
    d.fault_node = int(n);
    d.fault_va = cpu_.mmio_read64(node_reg(n, regs::kNFaultVa));
    dma_faults_ += c - node_faults_[n];
    node_faults_[n] = c;
    any = notify(d);
  }
  return any;
}

bool Kmd::isr_dma_completed(uint32_t node) {
  // DXGK_INTERRUPT_DMA_COMPLETED: the fence ID the node wrote (it is visible before the MSI).
  Ring& r = rings_[node];
  const uint64_t id = cpu_.mem_read64(r.fence_addr);
  while (!r.in_ring.empty() && r.in_ring.front() <= id) r.in_ring.pop_front();
  if (id > r.last_completed) r.last_completed = id;  // T5: advanced by a completed packet
  DxgkInterruptData d;
  d.type = DxgkInterruptData::DmaCompleted;
  d.node = int(node);
  d.fence_id = id;
  return notify(d);
}

bool Kmd::isr_dma_preempted(uint32_t node) {
  // DXGK_INTERRUPT_DMA_PREEMPTED: the node dropped the rest of its ring; LastCompletedFenceId is its
  // last FENCE. A preempted packet is not completed (T5).
  Ring& r = rings_[node];
  const uint64_t reg = cpu_.mmio_read64(node_reg(node, regs::kNLastFence));
  if (reg > r.last_completed) r.last_completed = reg;
  const uint64_t last = r.last_completed;  // T5: the value the driver keeps, not the register (stale after BACO)
  r.in_ring.clear();
  DxgkInterruptData d;
  d.type = DxgkInterruptData::DmaPreempted;
  d.node = int(node);
  d.preemption_fence_id = r.preemption_fence;
  d.last_completed_fence_id = last;
  return notify(d);
}

void Kmd::DxgkDdiDpcRoutine() {
  // Nothing to acknowledge in hardware: MSI is edge-like, each message is one interrupt.
}

}  // namespace gpumodel
