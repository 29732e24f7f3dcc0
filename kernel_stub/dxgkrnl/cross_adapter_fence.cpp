#include "kernel_stub/dxgkrnl/cross_adapter_fence.h"

#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

bool CrossAdapterFence::mv_held_at_zero() const {
  if (!os->gpu_doorbell()) return true;  // Native GPU fence object: "MonitoredValue ... to 0 for its lifetime"
  for (const NativeFence* f : instances)
    if (f && !f->handle) return true;  // a monitored-fence instance hears of GPU signals only through the CPU
  return false;
}

void CrossAdapterFence::observed(VidSch& from, uint64_t cv) {
  if (cv <= forwarded) return;  // every adapter has been told of this value already
  forwarded = cv;
  os->forward(*this, from, cv);
}

void CrossAdapterFences::add_adapter(const std::string& name, VidSch& sch, VidMm& mm, Kmd& kmd, uint64_t doorbell) {
  adapters_.push_back({name, &sch, &mm, &kmd, doorbell});
}

CrossAdapterFence* CrossAdapterFences::Create(int process, size_t creator, NativeFenceType type, std::string* error,
                                              Segment mv_segment) {
  if (type != NativeFenceType::Default) {
    if (error)
      *error =
          "D3DKMTCreateNativeFence failed: a cross-adapter native fence must be created with type "
          "D3DDDI_NATIVEFENCE_TYPE_DEFAULT (F15), not INTRA_GPU";
    return nullptr;
  }
  auto x = std::make_unique<CrossAdapterFence>();
  x->xid = uint32_t(fences_.size() + 1);
  x->os = this;
  x->mv_segment = mv_segment;
  // F15: "All GPUs share the same copy of CurrentValue storage, which is always allocated in system
  // memory": a page of its own (F6: shareable), zero at creation, mapped into every adapter's spaces.
  x->cv_addr = adapters_.at(creator).mm->allocate(Segment::System, 4096, 4096);
  x->instances.assign(adapters_.size(), nullptr);
  CrossAdapterFence* raw = x.get();
  fences_.push_back(std::move(x));
  Open(*raw, creator, process);
  return raw;
}

NativeFence* CrossAdapterFences::Open(CrossAdapterFence& x, size_t adapter, int process) {
  NativeFence*& f = x.instances.at(adapter);
  if (f) return f;
  f = adapters_.at(adapter).sch->OpenCrossAdapterInstance(process, x, x.cv_addr);
  // A monitored-fence instance can change the others' MV rule (mv_held_at_zero).
  for (size_t i = 0; i < adapters_.size(); ++i)
    if (i != adapter && x.instances[i] && x.instances[i]->handle)
      adapters_[i].sch->RefreshMonitoredValue(x.instances[i]);
  return f;
}

void CrossAdapterFences::forward(CrossAdapterFence& x, VidSch& from, uint64_t cv) {
  for (size_t i = 0; i < adapters_.size(); ++i) {
    NativeFence* f = x.instances[i];
    if (!f || adapters_[i].sch == &from) continue;
    ++x.forwards;
    // Native: DxgkDdiUpdateCurrentValuesFromCpu(NotificationOnly = TRUE), then its CPU waiters; a
    // monitored fence: its waiting lists (held GPU work, CPU waiters).
    adapters_[i].sch->NotifyCurrentValueChanged(f, cv);
  }
}

bool CrossAdapterFences::EnableGpuDoorbell(std::string* why) {
  if (adapters_.size() != 2) {
    if (why) *why = "the GPU doorbell links two adapters (platform.topology = hybrid)";
    return false;
  }
  for (const Adapter& a : adapters_)
    if (!a.sch->native_fences()) {
      if (why) *why = a.name + " has no native fences: its monitored fences hear of GPU signals only through the CPU";
      return false;
    }
  adapters_[0].kmd->DxgkDdiSetCrossAdapterDoorbell(adapters_[1].doorbell);
  adapters_[1].kmd->DxgkDdiSetCrossAdapterDoorbell(adapters_[0].doorbell);
  gpu_doorbell_ = true;
  return true;
}

}  // namespace gpumodel
