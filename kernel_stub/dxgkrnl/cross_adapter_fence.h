// Dxgkrnl's cross-adapter native fences (F15, Native GPU fence object "Cross-adapter native fences"), one object per
// machine (owned by the platform) linking each adapter's instance of a fence:
//  * created with D3DDDI_NATIVEFENCE_TYPE_DEFAULT only; any other type fails creation with a reason;
//  * one CurrentValue page in system memory that every adapter maps into its own GPU VA spaces;
//  * per adapter an instance (VidSch's NativeFence): native where the adapter has native fences (its own
//    MonitoredValue, held at 0 for the fence's lifetime, so every GPU signal interrupts), else a
//    monitored fence the OS tracks on the CPU (the native fence document's scenarios 2a/2b);
//  * a value an adapter's VidSch observes (its interrupt's DPC, a CPU signal, a signal VidSch wrote) is
//    forwarded once to every other adapter: DxgkDdiUpdateCurrentValuesFromCpu(NotificationOnly = TRUE)
//    where native (its KMD makes the CMP rescan the queues waiting on it), a scan of the monitored
//    fence's waiting lists where not.
//  * F20 (exploration, the document's future design): with the GPU doorbell enabled between adapters that
//    all have native fences, each CMP rings the peer's doorbell register with the fence's cross-adapter
//    id after an engine signal; the MV then follows the usual rule (only CPU waiters interrupt).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel_stub/dxgkrnl/vidsch.h"

namespace gpumodel {

class CrossAdapterFences;

struct CrossAdapterFence {
  uint32_t xid = 0;      // the cross-adapter id (F20's doorbell payload; 1, 2, ... never reused)
  uint64_t cv_addr = 0;  // the one CurrentValue, system memory
  // "Each GPU gets its own copy of MonitoredValue. Hence, MonitoredValue storage can be allocated in system
  // memory or local memory": where each native instance's MV goes.
  Segment mv_segment = Segment::System;
  std::vector<NativeFence*> instances;  // per adapter (index as in CrossAdapterFences), null until opened
  uint64_t forwarded = 0;               // the highest value Dxgkrnl has forwarded
  uint64_t forwards = 0;                // forwards made (one per adapter and new value)
  CrossAdapterFences* os = nullptr;
  // MV held at 0: always, unless F20's doorbell carries the GPU signals and every instance is native.
  bool mv_held_at_zero() const;
  // From an adapter's VidSch scan: a value it read; forwarded to the others if it is new.
  void observed(VidSch& from, uint64_t cv);
};

class CrossAdapterFences {
 public:
  struct Adapter {
    std::string name;
    VidSch* sch;
    VidMm* mm;
    Kmd* kmd;
    uint64_t doorbell;  // F20: the physical address of its BAR0 kXDoorbell register
  };
  void add_adapter(const std::string& name, VidSch& sch, VidMm& mm, Kmd& kmd, uint64_t doorbell);
  size_t adapters() const { return adapters_.size(); }
  const Adapter& adapter(size_t i) const { return adapters_.at(i); }

  // D3DKMTCreateNativeFence with the cross-adapter flag, on adapter `creator`, from an app thread of
  // `process`. Null with *error set when it fails (a type other than DEFAULT).
  CrossAdapterFence* Create(int process, size_t creator, NativeFenceType type, std::string* error,
                            Segment mv_segment = Segment::System);
  // D3DKMTOpenNativeFence... on another adapter: its instance (native or monitored, see above).
  NativeFence* Open(CrossAdapterFence& x, size_t adapter, int process);

  // F20: programs each adapter's CMP with the other's doorbell (two adapters). Refused (false, *why)
  // unless every adapter has native fences; from a CPU thread, before fences are created.
  bool EnableGpuDoorbell(std::string* why);
  bool gpu_doorbell() const { return gpu_doorbell_; }

 private:
  friend struct CrossAdapterFence;
  void forward(CrossAdapterFence& x, VidSch& from, uint64_t cv);
  std::vector<Adapter> adapters_;
  std::vector<std::unique_ptr<CrossAdapterFence>> fences_;
  bool gpu_doorbell_ = false;
};

}  // namespace gpumodel
