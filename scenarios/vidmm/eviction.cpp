// Allocation notifications (Allocation notifications, A1-A4): VidMm evicts under its budget, the driver is told first.
//   eviction_notify: two allocations of workload.alloc_mb in an aperture (or the implicit system) segment,
//     one compressed (the driver sets NotifyEviction, A1), one not; the budget holds two, so two later
//     allocations evict them, least recently used first. The compressed one is mapped chunk by chunk into
//     the paging process's VA, the driver's NOTIFY_ALLOC work (an in-place decompression pass) runs as a
//     paging packet in the system context, and the chunk is unmapped (A2).
//     Metrics: evict_ns (with the notification), evict_ns_without_notify, notify_ns_per_mb (their
//     difference per MiB), chunks, paging_packets, bytes_moved, paging_va_mb.
//   iommu_unmap_notify: the same under an IOMMU addressing model with a cached allocation (NotifyIoMmuUnmap)
//     and a plain one, in the implicit system segment: NOTIFY_ALLOC(NotifyIoMmuUnmap), every paging
//     operation waited for, then the IOMMU unmap (A3). Metrics: unmap_ns (eviction start to the IOMMU unmap
//     done, with the notification), unmap_ns_without_notify, iommu_faults (the IOMMU's fault register).
//   paging_va_size: one compressed allocation filled (DXGK_OPERATION_FILL), then evicted, with the paging
//     process's VA size the driver answers (kmd.paging_va_answer: its rule, an override kmd.paging_va_mb, or
//     a failed call; 0 = the OS's default, A4): metrics paging_va_mb, chunks, fill_chunks, fill_packets,
//     fill_ns, paging_page_table_bytes (the window's tables, always resident), evict_ns.
// Each checks its invariants in its verdict: the chunk count is ceil(size / VA size) (the notification's, and
// paging_va_size's fill's, whose pattern covers the allocation), the data survive the in-place pass, the evicted
// allocations are no longer resident, and the notified one costs more.
#include <algorithm>
#include <cinttypes>
#include <map>

#include "kernel_stub/dxgkrnl/packet_sched.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {
namespace {

using namespace sc_core;

enum class Kind { Notify, IommuUnmap, VaSize };

uint64_t pattern(uint64_t i) { return (i + 1) * 0x9E3779B97F4A7C15ull; }
constexpr uint32_t kFillPattern = 0xA5C3'5A3Cu;  // paging_va_size's fill: nonzero, so a missed byte shows

class Eviction : public ScenarioDriver {
 public:
  Eviction(const ParamSet& ps, Kind k)
      : kind_(k),
        bytes_(uint64_t(ps.get_int("workload.alloc_mb")) << 20),
        seg_(ps.get_enum("workload.segment") == "system" ? Segment::System : Segment::Aperture),
        touch_after_(ps.get_bool("workload.touch_after_evict")) {
    if (k == Kind::IommuUnmap) seg_ = Segment::System;
  }

  void build(Platform& p, Results& r) override {
    VidMmObserver& o = p.vidmm.observer;
    chain(o.eviction_started, [this](const VidMmAllocation& a) { started_[a.handle] = sc_time_stamp(); });
    chain(o.evicted, [this](const VidMmAllocation& a) { done_[a.handle] = sc_time_stamp(); });
    chain(o.unmapped, [this](const VidMmAllocation& a, bool iommu) {
      if (iommu) iommu_done_[a.handle] = sc_time_stamp();
    });
    // For the waveform's key events: when the notifications' paging operations completed.
    chain(o.eviction_notified,
          [this](const VidMmAllocation& a, uint64_t, uint64_t) { notified_[a.handle] = sc_time_stamp(); });
    chain(o.iommu_unmap_notified, [this](const VidMmAllocation& a) { notified_[a.handle] = sc_time_stamp(); });
    p.cpu.spawn_thread("app", [this, &p, &r] { app(p, r); });
  }

 private:
  void app(Platform& p, Results& r) {
    DxgkAdapterInfo info;
    if (!r.check(p.kmd.DxgkDdiStartDevice(&info), "adapter start: BAR0 did not identify the adapter")) return;
    DxgkCreateAllocationArgs flagged_args, plain_args;
    flagged_args.bytes = plain_args.bytes = bytes_;
    flagged_args.compressed = kind_ != Kind::IommuUnmap;
    flagged_args.driver_cached = kind_ == Kind::IommuUnmap;
    flagged_ = p.vidmm.CreateAllocation(1, seg_, flagged_args);
    plain_ = kind_ == Kind::VaSize ? nullptr : p.vidmm.CreateAllocation(1, seg_, plain_args);
    if (kind_ == Kind::VaSize) {
      // DXGK_OPERATION_FILL, chunked by the paging process's VA like the notification (A4).
      const sc_time t0 = sc_time_stamp();
      p.vidmm.Fill(flagged_, kFillPattern);
      fill_ns_ = to_ns(sc_time_stamp() - t0);
      bool filled = true;
      for (uint64_t i = 0; i < 8; ++i)
        filled = filled && p.cpu.mem_read64(flagged_->addr + (bytes_ / 8) * i) == kFillPattern * 0x1'0000'0001ull;
      filled = filled && p.cpu.mem_read64(flagged_->addr + bytes_ - 8) == kFillPattern * 0x1'0000'0001ull;
      r.check(filled, "the fill did not write its pattern over the whole allocation");
    }

    // The app writes a pattern into the flagged allocation through its process's GPU VA (a HW queue of
    // process 1): the mapping works, and the in-place pass must leave the data as they were.
    KmdHwQueue* q = p.vidsch.CreateHwQueue(1, 0, 0, 1);
    if (!r.check(q != nullptr, "DxgkDdiCreateHwQueue failed: no free HW queue")) return;
    PacketWriter w;
    for (uint64_t i = 0; i < 8; ++i) w.write64(flagged_->va + (bytes_ / 8) * i, pattern(i));
    w.barrier().interrupt(1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
    p.cpu.wait_for(p.vidsch.interrupt_event(1));
    r.check(read_pattern(p), "the app's writes through the allocation's GPU VA did not reach its pages");

    if (kind_ == Kind::VaSize) {
      p.vidmm.Evict(flagged_);
    } else {
      // Two more allocations over the budget (two of this size): the least recently used go first.
      p.vidmm.CreateAllocation(1, seg_, plain_args);
      p.vidmm.CreateAllocation(1, seg_, plain_args);
    }
    r.check(read_pattern(p), "the data of the notified allocation changed across its eviction");
    if (touch_after_) {  // fault injection: the app uses the evicted allocation's VA
      PacketWriter t;
      t.write64(flagged_->va, 0).interrupt(1);
      p.kmd.DxgkDdiSubmitCommandToHwQueue(q, t);
      p.cpu.wait_for(p.vidsch.interrupt_event(1), sc_time(100, SC_US));
    }
    iommu_faults_ = p.cpu.mmio_read64(Iommu::kBase + Iommu::kFaults);  // the OS reads the IOMMU's fault log
    finished_ = true;
  }

  bool read_pattern(Platform& p) {
    bool ok = true;
    for (uint64_t i = 0; i < 8; ++i) ok = ok && p.cpu.mem_read64(flagged_->addr + (bytes_ / 8) * i) == pattern(i);
    return ok;
  }

  double span(const std::map<uint32_t, sc_time>& end, const VidMmAllocation* a) const {
    auto s = started_.find(a->handle), e = end.find(a->handle);
    return s == started_.end() || e == end.end() ? -1.0 : to_ns(e->second - s->second);
  }

  void finish(Platform& p, Results& r) override {
    if (!r.check(finished_, "the scenario did not finish")) return;
    events(r);
    VidMm& mm = p.vidmm;
    const double mib = double(bytes_) / double(1 << 20);
    const uint64_t window = mm.paging_va_bytes();
    r.metric("alloc_mb", bytes_ >> 20);
    r.metric("paging_va_mb", window >> 20);
    r.metric("paging_va_from_driver", mm.paging_va_from_driver());
    if (mm.paging_va_bytes()) {
      // A4: the OS asks for each physical adapter of a linked adapter by its index (0 alone otherwise).
      r.metric("paging_va_indexes_asked", mm.paging_va_indexes_asked());
      std::vector<uint32_t> each(size_t(p.params.get_int("gpu.linked_engines")));
      for (uint32_t i = 0; i < each.size(); ++i) each[i] = i;
      r.check(mm.paging_va_indexes_asked() == each,
              "A4: the paging process VA size was not asked once for each physical adapter index");
    }
    r.check(!flagged_->resident && (!plain_ || !plain_->resident), "an allocation over the budget is still resident");
    const double evict = span(done_, flagged_);
    r.check(evict > 0, "the flagged allocation was not evicted");
    r.metric("evict_ns", evict);
    const uint64_t want_chunks = kind_ == Kind::IommuUnmap ? 0 : (bytes_ + window - 1) / window;
    r.metric("chunks", mm.notify_chunks());
    r.check(mm.notify_chunks() == want_chunks,
            "NotifyEviction ran " + std::to_string(mm.notify_chunks()) +
                " chunks, not ceil(size / paging VA) = " + std::to_string(want_chunks));
    r.metric("paging_packets", mm.paging_packets());
    r.metric("bytes_moved", mm.bytes_moved());
    r.metric("evictions", mm.evictions());
    r.metric("iommu_faults", iommu_faults_);
    r.check(iommu_faults_ == 0, "the IOMMU recorded " + std::to_string(iommu_faults_) + " faults");
    if (kind_ == Kind::VaSize) {
      r.metric("paging_page_table_bytes", mm.paging_page_table_bytes());
      // Fills are chunked by the paging VA too; a chunk's fill beyond one paging packet goes on in the next.
      const uint64_t per_packet = p.kmd.fill_bytes_per_packet();
      uint64_t want_fill_packets = 0;
      for (uint64_t off = 0; off < bytes_; off += window)
        want_fill_packets += (std::min(window, bytes_ - off) + per_packet - 1) / per_packet;
      r.metric("fill_chunks", mm.fill_chunks());
      r.metric("fill_packets", want_fill_packets);
      r.metric("fill_ns", fill_ns_);
      r.check(mm.fill_chunks() == (bytes_ + window - 1) / window,
              "the fill ran " + std::to_string(mm.fill_chunks()) +
                  " chunks, not ceil(size / paging VA) = " + std::to_string((bytes_ + window - 1) / window));
      // Every paging packet: the fill's, one per notified chunk, and the process VA's unmap.
      r.check(mm.paging_packets() == want_fill_packets + want_chunks + 1,
              "VidMm submitted " + std::to_string(mm.paging_packets()) + " paging packets, not the fill's " +
                  std::to_string(want_fill_packets) + " + the notification's " + std::to_string(want_chunks) +
                  " + 1 unmap");
      return;
    }
    const double plain = span(done_, plain_);
    r.metric("evict_ns_without_notify", plain);
    if (kind_ == Kind::Notify) {
      r.metric("notify_ns_per_mb", (evict - plain) / mib);
      r.check(evict > plain, "the eviction with the notification did not cost more than the one without");
      return;
    }
    const double unmap = span(iommu_done_, flagged_), unmap_plain = span(iommu_done_, plain_);
    r.metric("unmap_ns", unmap);
    r.metric("unmap_ns_without_notify", unmap_plain);
    r.check(unmap > 0 && unmap_plain > 0, "an allocation was not unmapped from the IOMMU");
    r.check(unmap > unmap_plain, "the IOMMU unmap with the notification did not take longer than the one without");
  }

  // The waveform's key events. The flagged allocation's NotifyEviction in-place pass runs for milliseconds,
  // so the view is its eviction's end (the last chunk's notification done, then the unmaps) and, beside it,
  // the plain allocation's whole eviction (evict_ns_without_notify); the flagged eviction's start is marked
  // outside the view. Under an IOMMU model the whole eviction is short: its start, the NotifyIoMmuUnmap
  // operation done (with every paging operation before it) and the IOMMU unmap done after it (A3).
  void events(Results& r) const {
    auto at = [](const std::map<uint32_t, sc_time>& m, const VidMmAllocation* a) {
      const auto it = a ? m.find(a->handle) : m.end();
      return it == m.end() ? SC_ZERO_TIME : it->second;
    };
    const sc_time start = at(started_, flagged_), notified = at(notified_, flagged_);
    const bool iommu = kind_ == Kind::IommuUnmap, has_notify = notified != SC_ZERO_TIME;
    if (start != SC_ZERO_TIME) r.event("evict start", start.value(), iommu || !has_notify);
    if (has_notify) r.event("notify done", notified.value());
    if (iommu) {
      if (const sc_time t = at(iommu_done_, flagged_); t != SC_ZERO_TIME) r.event("IOMMU unmapped", t.value());
      return;
    }
    if (const sc_time t = at(done_, flagged_); t != SC_ZERO_TIME) r.event("evicted", t.value());
    if (const sc_time t = at(done_, plain_); t != SC_ZERO_TIME) r.event("plain done", t.value());
  }

  Kind kind_;
  uint64_t bytes_;
  Segment seg_;
  VidMmAllocation *flagged_ = nullptr, *plain_ = nullptr;
  std::map<uint32_t, sc_time> started_, done_, iommu_done_;
  std::map<uint32_t, sc_time> notified_;  // the last notification's paging operation completed
  uint64_t iommu_faults_ = 0;
  double fill_ns_ = 0;
  bool finished_ = false;
  bool touch_after_;
};

ScenarioInfo make(const char* name, const char* summary, Kind k, int64_t alloc_mb) {
  return {name, summary,
          [alloc_mb](ParamSet& ps, const std::string& o) {
            ps.declare_int("workload.alloc_mb", alloc_mb, "MiB", 1, 1 << 16,
                           "A: each allocation's size (a render target or texture of tens of MB)", o);
            ps.declare_bool("workload.touch_after_evict", false,
                            "A: fault injection: the app writes to the evicted allocation's VA afterwards (the engine "
                            "faults, DMA_FAULTED; the use_after_unmap monitor must report it)",
                            o);
            ps.declare_enum("workload.segment", "aperture", {"aperture", "system"},
                            "Q: A2: NotifyEviction is only sent for an aperture or the implicit system-memory segment",
                            o);
          },
          [k](const ParamSet& ps) { return std::make_unique<Eviction>(ps, k); },
          [name, k](const ParamSet& ps) {
            require_platform(ps, name, 2, 2, "the app's HW queue on node 1 and the paging ring on node 0");
            // Its allocations (two, or paging_va_size's one) live in system memory: they must fit there.
            const uint64_t allocs = k == Kind::VaSize ? 1 : 2, mb = uint64_t(ps.get_int("workload.alloc_mb"));
            const uint64_t sys = uint64_t(ps.get_int("sysmem.size_bytes"));
            if ((allocs * mb << 20) > sys)
              throw ConfigError(
                  "workload.alloc_mb = " + std::to_string(mb) + ": scenario '" + name + "' places " +
                  std::to_string(allocs) + " such allocation(s) in system memory, more than sysmem.size_bytes = " +
                  std::to_string(sys) + "; allowed: workload.alloc_mb <= " + std::to_string((sys >> 20) / allocs) +
                  ", or a larger sysmem.size_bytes");
            if (k == Kind::IommuUnmap && ps.get_enum("iommu.model") == "physical")
              throw ConfigError(std::string("iommu.model = physical: scenario '") + name +
                                "' measures NotifyIoMmuUnmap, which is only sent under an IOMMU addressing model "
                                "(A3); allowed: iommu.model = gpuva_iommu or gpuva_iommu_global");
            if (k != Kind::VaSize &&
                uint64_t(ps.get_int("vidmm.system_budget_mb")) != 2 * uint64_t(ps.get_int("workload.alloc_mb")))
              throw ConfigError("vidmm.system_budget_mb = " + std::to_string(ps.get_int("vidmm.system_budget_mb")) +
                                std::string(": scenario '") + name +
                                "' evicts by the budget, which must hold exactly two "
                                "allocations; allowed: vidmm.system_budget_mb = 2 x workload.alloc_mb = " +
                                std::to_string(2 * ps.get_int("workload.alloc_mb")));
          }};
}

}  // namespace

ScenarioInfo eviction_notify_scenario() {
  return make("eviction_notify", "VidMm evicts under its budget; NotifyEviction per paging-VA chunk first (A1, A2, A4)",
              Kind::Notify, 32);
}
ScenarioInfo iommu_unmap_notify_scenario() {
  return make("iommu_unmap_notify",
              "under an IOMMU model: NotifyIoMmuUnmap, wait for paging, then the IOMMU unmap (A3)", Kind::IommuUnmap,
              32);
}
ScenarioInfo paging_va_size_scenario() {
  return make("paging_va_size", "the paging process's VA size against NotifyEviction chunks and page-table memory (A4)",
              Kind::VaSize, 256);
}

namespace {
const ScenarioRegistration kEvictionNotifyScenario{eviction_notify_scenario, 17};
const ScenarioRegistration kIommuUnmapNotifyScenario{iommu_unmap_notify_scenario, 18};
const ScenarioRegistration kPagingVaSizeScenario{paging_va_size_scenario, 19};
}  // namespace

}  // namespace gpumodel
