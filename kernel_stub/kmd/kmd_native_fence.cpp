// The KMD's native fence DDIs (Native GPU fence object): creating, opening and destroying a fence's CMP
// slot, and the MonitoredValue and CPU CurrentValue updates the OS hands the driver.
#include <algorithm>

#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/regs.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

using namespace sc_core;

void Kmd::query_features() {
  // Native GPU fence object 'Querying native fence feature enablement in OS': once, at initialisation, before the
  // driver advertises NativeGpuFence: is the feature enabled (and its version), then that version's
  // interface table and the OS's caps through it; the driver keeps the answers.
  if (feature_state_.queried) return;
  feature_state_.queried = true;
  const DxgkFeatureResult r = sch_.DxgkCbIsFeatureEnabled2(DxgkFeature::NativeFence);
  feature_state_.native_fence_enabled = r.enabled;
  if (!r.enabled) return;
  DxgkCbIntFeatureNativeFence1 table;
  if (!sch_.DxgkCbQueryFeatureInterface(DxgkFeature::NativeFence, r.version, &table) || !table.get_os_caps) {
    feature_state_.native_fence_enabled = false;  // no table for the version: the driver cannot use it
    return;
  }
  feature_state_.native_fence_version = r.version;
  table.get_os_caps(&feature_state_.native_fence_os_caps);
}

uint32_t Kmd::DxgkDdiCreateNativeFence(const DxgkCreateNativeFenceArgs& a) {
  using namespace regs;
  if (next_handle_ == 0) return 0;
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else if (next_slot_ < Cmp::kFenceSlots) {
    slot = next_slot_++;
  } else {
    return 0;
  }
  const uint32_t h = next_handle_++;
  ++native_fences_created_;
  fence_regs_.acquire();
  cpu_.mmio_write32(bar0_ + kFenceSelect, slot);
  // F10: the system process's VAs the OS mapped (MapToGpuSystemProcess), else the driver's own mapping
  // of the values: the pages in the system process at their address, which the driver maps itself (the
  // values are mapped in no space until a process opens the fence).
  const uint64_t cv_va =
      caps_.map_to_gpu_system_process ? a.current_value_system_process_gpu_va : a.current_value_cpu_va;
  const uint64_t mv_va =
      caps_.map_to_gpu_system_process ? a.monitored_value_system_process_gpu_va : a.monitored_value_cpu_va;
  if (!caps_.map_to_gpu_system_process) {
    mm_.map_system_identity(cv_va);
    mm_.map_system_identity(mv_va);
  }
  cpu_.mmio_write64(bar0_ + kFenceCvAddr, cv_va);
  cpu_.mmio_write64(bar0_ + kFenceMvAddr, mv_va);
  cpu_.mmio_write32(bar0_ + kFenceHandle, h);  // F11: event entries name h, not the reused slot
  if (a.cross_adapter_id) cpu_.mmio_write32(bar0_ + kFenceXid, a.cross_adapter_id);  // F20
  cpu_.mmio_write32(bar0_ + kFenceFlags, kFenceValid);
  fence_regs_.release();
  Fence& f = fences_[h];
  f.slot = slot;
  f.cv_addr = a.current_value_cpu_va;  // the CPU's writes (DxgkDdiUpdateCurrentValuesFromCpu)
  // No CPU waiter yet: the shadow MV starts at UINT64_MAX (F2). A fence never given an MV counts as
  // lowered, so this waits for the CMP: no engine may check the fence before its shadow is set.
  cpu_.raise_device_irql();
  DxgkDdiUpdateMonitoredValues({{h, UINT64_MAX}});
  cpu_.lower_device_irql();
  return h;
}

bool Kmd::DxgkDdiOpenNativeFence(DxgkOpenNativeFenceArgs& a) {
  auto it = fences_.find(a.h_global_native_fence);
  if (it == fences_.end()) return false;
  const uint32_t local = next_local_++;
  Opened& o = opened_[local];
  o.d3dkmt = a.h_local_native_fence;
  o.process = a.h_device;
  // The process's packets name the fence by its slot and these VAs (the UMD learns them at open).
  o.va = {it->second.slot, a.current_value_gpu_va, a.monitored_value_gpu_va};
  local_of_[{it->second.slot, a.h_device}] = local;
  a.h_local_native_fence = local;
  return true;
}

void Kmd::DxgkDdiCloseNativeFence(uint32_t h_local) {
  auto it = opened_.find(h_local);
  if (it == opened_.end()) return;
  local_of_.erase({it->second.va.slot, it->second.process});
  opened_.erase(it);
}

void Kmd::DxgkDdiDestroyNativeFence(uint32_t h_global) {
  using namespace regs;
  const uint32_t slot = slot_of(h_global);
  fence_regs_.acquire();
  cpu_.mmio_write32(bar0_ + kFenceSelect, slot);
  cpu_.mmio_write32(bar0_ + kFenceFlags, 0);
  fence_regs_.release();
  fences_.erase(h_global);
  free_slots_.push_back(slot);  // the slot may be reused at once; the handle never is (F11)
}

uint32_t Kmd::slot_of(uint32_t h_global) const {
  auto it = fences_.find(h_global);
  if (it == fences_.end()) {
    SC_REPORT_ERROR("gpumodel/kmd", "a DDI named a native fence handle the KMD does not hold");
    return 0;
  }
  return it->second.slot;
}

void Kmd::DxgkDdiUpdateMonitoredValues(const std::vector<DxgkMonitoredValueUpdate>& updates) {
  using namespace regs;
  if (info_.mv_from_memory) {
    // No shadow: the engines read the MV the OS has just stored, after their own CV write (the engine
    // orders the two), so a signal that misses the new MV is visible to the OS's re-read (F8). Nothing
    // to program, nothing to wait for.
    return;
  }
  bool lowered = false;
  fence_regs_.acquire();
  for (const auto& u : updates) {
    auto it = fences_.find(u.h_global_native_fence);
    if (it == fences_.end()) {
      SC_REPORT_ERROR("gpumodel/kmd", "DxgkDdiUpdateMonitoredValues named a native fence the KMD does not hold");
      continue;
    }
    Fence& f = it->second;
    if (!f.mv_set || u.monitored_value < f.mv) lowered = true;
    f.mv = u.monitored_value;
    f.mv_set = true;
    cpu_.mmio_write32(bar0_ + kFenceSelect, f.slot);
    cpu_.mmio_write64(bar0_ + kFenceMvUpdate, u.monitored_value);
    ++acks_expected_;
  }
  const uint64_t expected = acks_expected_;
  fence_regs_.release();
  // F8: after return, any CV a CPU reads was written after the CMP saw the new MV: wait for the CMP's
  // acknowledgement (it writes it after F7 step 3). The cheaper variants are named settings.
  if (mv_update_wait_ == MvUpdateWait::Never || (mv_update_wait_ == MvUpdateWait::Lowered && !lowered)) return;
  while (cpu_.mem_read64(ack_addr_) < expected) {
  }
}

void Kmd::DxgkDdiUpdateCurrentValuesFromCpu(const std::vector<DxgkCurrentValueUpdate>& updates,
                                            bool notification_only) {
  for (const auto& u : updates) {
    // F1: one aligned 64-bit store; then the CMP rescans the queues waiting on this fence.
    if (!notification_only) cpu_.mem_write(fences_.at(u.h_global_native_fence).cv_addr, &u.current_value, 8);
    cpu_.mmio_write32(bar0_ + regs::kFenceNotify, slot_of(u.h_global_native_fence));
  }
}

bool Kmd::isr_fence_events() {
  // Fence events: read the CMP's write index (and its drop count), then the new entries.
  const uint64_t w = cpu_.mem_read64(ring_wptr_addr_);
  const uint32_t wptr = uint32_t(w), dropped = uint32_t(w >> 32);
  if (wptr == ring_rptr_ && dropped == ring_dropped_) {
    ++unclaimed_;  // an MSI whose entries an earlier ISR already took
    return false;
  }
  struct Entry {
    uint32_t type, handle;
    uint64_t value;
  };
  std::vector<Entry> entries(wptr - ring_rptr_);
  for (uint32_t i = 0; i < entries.size();) {  // at most two reads: the ring wraps
    const uint32_t idx = (ring_rptr_ + i) & (event_entries_ - 1);
    const uint32_t n = std::min<uint32_t>(uint32_t(entries.size()) - i, event_entries_ - idx);
    cpu_.mem_read(ring_base_ + 16ull * idx, &entries[i], 16 * n);
    i += n;
  }
  ring_rptr_ = wptr;
  cpu_.mmio_write32(bar0_ + regs::kEventRingRptr, ring_rptr_);

  DxgkInterruptData native, legacy;
  native.type = DxgkInterruptData::NativeFenceSignaled;
  legacy.type = DxgkInterruptData::MonitoredFenceSignaled;
  const bool overflow = dropped != ring_dropped_;
  // F12: the CMP counts the monitored fence events it dropped apart from the native ones: only a dropped
  // monitored fence event can hide a legacy signal, so only then must the NULL scan take legacy waiters.
  const bool legacy_dropped = (dropped >> 16) != (ring_dropped_ >> 16);
  bool any_native = false, any_legacy = false, null_array = overflow;
  ring_dropped_ = dropped;
  std::vector<DxgkInterruptData> per_queue;  // F19: one notification per HW queue the hardware named
  for (const Entry& e : entries) {
    if (e.type == regs::kEventMonitoredFence) {
      any_legacy = true;
    } else if (e.type == regs::kEventNativeFenceQueue) {
      // F19: DXGKARGCB_NOTIFY_INTERRUPT_DATA with the queue's kernel handle (or NULL), its NodeOrdinal and
      // EngineOrdinal, and no fence array.
      DxgkInterruptData q;
      q.type = DxgkInterruptData::NativeFenceSignaled;
      const int node = e.handle ? queue(int(e.handle) - 1)->node : e.value == regs::kEventAllNodes ? -1 : int(e.value);
      if (e.handle == 0)
        q.null_queue_nodes.push_back(node);
      else
        q.hw_queues.push_back(int(e.handle) - 1);
      if (node >= 0) {
        q.node_ordinal = node % int(nodes_per_engine());
        q.engine_ordinal = node / int(nodes_per_engine());
      }
      per_queue.push_back(std::move(q));
    } else if (e.type == regs::kEventNativeFence) {
      any_native = true;
      if (e.handle == 0)
        null_array = true;
      else if (!validate_handles_ || fences_.count(e.handle))
        native.signaled.push_back(e.handle);
    }
  }
  if (optimized_cap_ && overflow) {
    // F19: dropped events named queues the KMD never saw: a NULL queue, every node.
    DxgkInterruptData q;
    q.type = DxgkInterruptData::NativeFenceSignaled;
    q.null_queue_nodes.push_back(-1);
    q.evaluate_legacy_monitored_fences = legacy_dropped;
    per_queue.push_back(std::move(q));
    null_array = false;
  }
  if (null_array) {  // F12: NULL array -> the OS scans every native fence waiter
    native.signaled_array_null = true;
    native.signaled.clear();
    // F12: legacy entries that reached the ring go as MonitoredFenceSignaled; only dropped ones hide a
    // legacy signal.
    native.evaluate_legacy_monitored_fences = legacy_dropped;
    any_native = true;
  }
  if (combined_fence_interrupt_ && (any_native || any_legacy || !per_queue.empty())) {
    // Hardware that cannot tell a monitored fence's signal from a native one's: the KMD raises only the
    // native interrupt, with a NULL array and EvaluateLegacyMonitoredFences = 1 ("scan all waiters").
    DxgkInterruptData all;
    all.type = DxgkInterruptData::NativeFenceSignaled;
    all.signaled_array_null = true;
    all.evaluate_legacy_monitored_fences = true;
    sch_.DxgkCbNotifyInterrupt(all);
  } else {
    for (const DxgkInterruptData& q : per_queue) sch_.DxgkCbNotifyInterrupt(q);
    if (any_native) sch_.DxgkCbNotifyInterrupt(native);
    if (any_legacy) sch_.DxgkCbNotifyInterrupt(legacy);
  }
  sch_.DxgkCbQueueDpc([this] { DxgkDdiDpcRoutine(); });
  return true;
}

}  // namespace gpumodel
