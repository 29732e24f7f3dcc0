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
  o.h_global = a.h_global_native_fence;
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

}  // namespace gpumodel
