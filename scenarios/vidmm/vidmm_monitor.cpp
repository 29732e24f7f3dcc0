#include "scenarios/vidmm/vidmm_monitor.h"

#include <algorithm>
#include <cstdio>

#include "kernel_stub/dxgkrnl/packet_sched.h"

namespace gpumodel {

using namespace sc_core;

AllocationRulesMonitor::AllocationRulesMonitor(Platform& p) : p_(p) {
  VidMmObserver& o = p.vidmm.observer;
  chain(o.created, [this](const VidMmAllocation& a) {
    const VidMm& mm = p_.vidmm;
    if (!mm.paging_va_bytes() || mm.paging_va_from_driver() || a.bytes <= mm.paging_va_bytes()) return;
    char m[300];
    std::snprintf(m, sizeof m,
                  "allocation %u (%llu bytes) does not fit the OS's default paging process VA (%llu bytes) whole, "
                  "and the driver gave no size through DXGKQAITYPE_PAGINGPROCESSGPUVASIZE (A4)",
                  a.handle, static_cast<unsigned long long>(a.bytes),
                  static_cast<unsigned long long>(mm.paging_va_bytes()));
    violation(too_small_, m);
  });
  chain(o.eviction_started, [this](const VidMmAllocation& a) {
    watch();  // the hardware hooks from the first eviction on: nothing to watch before it
    Book& b = books_[a.handle];
    b = Book{};
    b.a = &a;
    b.root = p_.vidmm.space(a.process).root();
  });
  chain(o.eviction_notified, [this](const VidMmAllocation& a, uint64_t off, uint64_t n) {
    books_[a.handle].notified.push_back({off, off + n});
  });
  chain(o.iommu_unmap_notified, [this](const VidMmAllocation& a) { books_[a.handle].iommu_notified = true; });
  chain(o.made_resident, [this](const VidMmAllocation& a) { books_.erase(a.handle); });
  chain(o.unmapped, [this](const VidMmAllocation& a, bool iommu) {
    Book& b = books_[a.handle];
    b.a = &a;
    const bool system = a.segment != Segment::Local;
    char m[200];
    if (iommu) {
      b.iommu_unmapped = true;
      b.iommu_unmapped_at = sc_time_stamp();
      if (a.flags.notify_iommu_unmap && !b.iommu_notified) {
        std::snprintf(m, sizeof m,
                      "allocation %u (NotifyIoMmuUnmap) unmapped from the IOMMU at %.3f ns before its "
                      "NOTIFY_ALLOC(NotifyIoMmuUnmap) completed (A3)",
                      a.handle, to_ns(sc_time_stamp()));
        violation(without_notify_, m);
      }
      return;
    }
    b.va_unmapped = true;
    b.va_unmapped_at = sc_time_stamp();
    if (!(system && a.flags.notify_eviction && p_.vidmm.paging_va_bytes())) return;
    // A2: the notifications covered [0, bytes) before this unmap.
    auto r = b.notified;
    std::sort(r.begin(), r.end());
    uint64_t covered = 0;
    for (auto& [s, e] : r)
      if (s <= covered) covered = std::max(covered, e);
    if (covered < a.bytes) {
      std::snprintf(m, sizeof m,
                    "allocation %u (NotifyEviction) evicted at %.3f ns with %llu of %llu bytes notified (A2)", a.handle,
                    to_ns(sc_time_stamp()), static_cast<unsigned long long>(covered),
                    static_cast<unsigned long long>(a.bytes));
      violation(without_notify_, m);
    }
  });
}

void AllocationRulesMonitor::watch() {
  // Installed once, at the first eviction, so the translation hot path of a run without one carries no
  // observer call. The engines' translations in each allocation's process space.
  if (watching_) return;
  watching_ = true;
  Platform& p = p_;
  for (auto& n : p.gpu.nodes) {
    Node* node = n.get();
    chain(node->on_translate(), [this, node](uint64_t root, uint64_t va, uint64_t, bool ok) {
      for (auto& [h, b] : books_) {
        if (!b.va_unmapped || b.root != root || va < b.a->va || va - b.a->va >= b.a->bytes) continue;
        char m[200];
        std::snprintf(m, sizeof m,
                      "%s touched allocation %u at GPU VA 0x%llx (%s) after its eviction unmapped it at %.3f ns",
                      node->name(), h, static_cast<unsigned long long>(va), ok ? "a stale translation" : "a page fault",
                      to_ns(b.va_unmapped_at));
        violation(use_after_, m);
      }
    });
  }
  chain(p.iommu.on_dma, [this](unsigned port, uint64_t addr, unsigned len, const sc_time& at, bool ok) {
    for (auto& [h, b] : books_) {
      if (!b.iommu_unmapped || addr + len <= b.a->addr || addr >= b.a->addr + b.a->bytes) continue;
      if (at < b.iommu_unmapped_at) continue;
      char m[200];
      std::snprintf(m, sizeof m,
                    "a DMA of port %u touched allocation %u at 0x%llx (%s) at %.3f ns, after its IOMMU unmap returned "
                    "at %.3f ns (A3)",
                    port, h, static_cast<unsigned long long>(addr), ok ? "still mapped" : "an IOMMU fault", to_ns(at),
                    to_ns(b.iommu_unmapped_at));
      violation(use_after_, m);
    }
  });
}

void AllocationRulesMonitor::violation(uint64_t& counter, const std::string& what) {
  ++counter;
  if (messages_.size() < 8) messages_.push_back(what);
}

void AllocationRulesMonitor::finish(Results& r) {
  if (!p_.vidmm.allocations()) return;  // nothing of VidMm's to watch in this scenario
  r.monitors["use_after_unmap"] = use_after_;
  r.monitors["eviction_without_notify"] = without_notify_;
  r.monitors["paging_va_too_small"] = too_small_;
  if (!messages_.empty()) r.metric("vidmm_rules_first_violations", messages_);
}

namespace {
const MonitorRegistration kRegistered{"allocation_rules", attach_monitor<AllocationRulesMonitor>};
}  // namespace

}  // namespace gpumodel
