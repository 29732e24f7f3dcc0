// Monitors of the allocation notifications document's promises (A2, A3), independent of VidMm's own bookkeeping: they
// observe the engines' translations, the IOMMU's DMA and VidMm's notifications; they never drive the model.
//  * use_after_unmap: an engine touches an allocation after it was unmapped: a translation in the
//    allocation's process space inside its VA range after VidMm's unmap of that range returned (the
//    eviction unmapped it), or a DMA the IOMMU translates at the allocation's address after its IOMMU
//    unmap returned (A3: "the allocation's VA is not touched afterwards"). A touch that faults counts too.
//  * eviction_without_notify: an allocation with NotifyEviction evicted from an aperture or the implicit
//    system-memory segment while the paging process has a VA space, whose NOTIFY_ALLOC(NotifyEviction)
//    operations did not cover every byte before its unmap (A2); or one with NotifyIoMmuUnmap, under an
//    IOMMU addressing model, unmapped from the IOMMU before its NOTIFY_ALLOC(NotifyIoMmuUnmap) completed (A3).
//  * paging_va_too_small: an allocation larger than the paging process's VA while that VA is the OS's default
//    (the driver answered DXGKQAITYPE_PAGINGPROCESSGPUVASIZE with 0 or failed it): Allocation notifications says
//    the driver must then give the size (A4). A size the driver gave is its choice, chunked (A2).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "monitors/monitor.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class AllocationRulesMonitor : public Monitor {
 public:
  explicit AllocationRulesMonitor(Platform& p);
  void finish(Results& r) override;
  uint64_t use_after_unmap() const { return use_after_; }
  uint64_t eviction_without_notify() const { return without_notify_; }
  uint64_t paging_va_too_small() const { return too_small_; }

 private:
  struct Book {
    const VidMmAllocation* a = nullptr;
    uint64_t root = 0;
    std::vector<std::pair<uint64_t, uint64_t>> notified;  // [offset, end) ranges, this eviction
    bool iommu_notified = false;
    bool va_unmapped = false, iommu_unmapped = false;
    sc_core::sc_time va_unmapped_at, iommu_unmapped_at;
  };
  void violation(uint64_t& counter, const std::string& what);
  void watch();
  bool watching_ = false;
  Platform& p_;
  std::map<uint32_t, Book> books_;  // by allocation handle
  uint64_t use_after_ = 0, without_notify_ = 0, too_small_ = 0;
  std::vector<std::string> messages_;
};

}  // namespace gpumodel
