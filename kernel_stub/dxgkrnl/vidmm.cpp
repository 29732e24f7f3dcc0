#include "kernel_stub/dxgkrnl/vidmm.h"

#include <algorithm>

#include <systemc>

#include "hw_model/gpu/mmu.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/iommu.h"
#include "hw_model/memory/memory.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/packet_sched.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

uint64_t PhysHeap::allocate(uint64_t bytes, uint64_t align) {
  const uint64_t a = (next_ + align - 1) / align * align;
  if (a + bytes > base_ + size_) {
    SC_REPORT_ERROR("gpumodel/vidmm", ("out of memory in a segment: raise " + what_).c_str());
    return base_;
  }
  next_ = a + bytes;
  return a;
}

VidMm::VidMm(PhysHeap& system, uint64_t local_base, uint64_t local_size, std::string local_what, Memory* table_memory,
             uint64_t page_table_bytes)
    : sys_(system),
      local_(local_base, local_size - page_table_bytes, local_what),
      tables_(local_base + local_size - page_table_bytes, page_table_bytes, "vidmm.page_table_mb"),
      table_mem_(table_memory) {
  sys_.users.push_back(this);
  // The system process maps the page-table memory at its physical address: the paging engine writes
  // entries there (UpdatePageTable). Mapped before any table is handed out, so it covers them all.
  std::vector<PteWrite> w;
  space(0).map(tables_.base(), tables_.base(), tables_.size(), false, w);
  write_entries(w);
}

VidMm::~VidMm() { sys_.users.erase(std::find(sys_.users.begin(), sys_.users.end(), this)); }

void VidMm::write_entries(const std::vector<PteWrite>& w) {
  for (const PteWrite& e : w)
    if (table_mem_) table_mem_->poke(e.addr, &e.value, 8);
}

GpuVaSpace& VidMm::space(int process) {
  auto it = spaces_.find(process);
  if (it != spaces_.end()) return *it->second;
  // Page-table memory is never recycled (bump), so a new table is zero: every entry invalid.
  auto s = std::make_unique<GpuVaSpace>([this](uint64_t bytes) { return tables_.allocate(bytes, bytes); });
  GpuVaSpace& r = *s;
  spaces_[process] = std::move(s);
  std::vector<PteWrite> w;
  for (const Global& g : globals_) r.map(g.addr, g.addr, g.bytes, g.system, w);
  write_entries(w);
  return r;
}

uint64_t VidMm::page_table_bytes() const {
  uint64_t n = 0;
  for (auto& [p, s] : spaces_) n += s->table_bytes();
  return n;
}

void VidMm::map_global(const Global& g) {
  globals_.push_back(g);
  if (spaces_.empty()) space(0);
  std::vector<PteWrite> w;
  for (auto& [p, s] : spaces_) s->map(g.addr, g.addr, g.bytes, g.system, w);
  write_entries(w);
  if (domain_ && g.system) {  // the DMA-remapping domain maps it too (a new mapping: written directly)
    std::vector<PteWrite> d;
    domain_->map(g.addr, g.addr, g.bytes, d);
    for (const PteWrite& e : d) sys_mem_->poke(e.addr, &e.value, 8);
  }
}

uint64_t VidMm::allocate(Segment seg, uint64_t bytes, uint64_t align, bool global) {
  // A large allocation starts on a 64 KiB boundary so its GPU mapping uses 64 KiB pages (16 times fewer
  // TLB entries than 4 KiB pages).
  if (bytes >= kBigPageThreshold) align = std::max<uint64_t>(align, pt::kBigPage);
  const uint64_t a = (seg == Segment::Local ? local_ : sys_).allocate(bytes, align);
  if (!global) {
    // In no GPU VA space, but the device's DMA-remapping domain (one per device, not per process) maps
    // system memory the GPU may reach through any process's mapping.
    if (seg != Segment::Local)
      for (VidMm* m : sys_.users)
        if (m->domain_) {
          std::vector<PteWrite> d;
          m->domain_->map(a, a, bytes, d);
          for (const PteWrite& e : d) m->sys_mem_->poke(e.addr, &e.value, 8);
        }
    return a;
  }
  if (seg != Segment::Local)
    for (VidMm* m : sys_.users) m->map_global({a, bytes, true});
  else
    map_global({a, bytes, false});
  return a;
}

CrossAdapterSurface VidMm::allocate_cross_adapter(uint32_t width, uint32_t height, uint32_t bytes_per_pixel) {
  CrossAdapterSurface s;
  s.width = width;
  s.height = height;
  s.bytes_per_pixel = bytes_per_pixel;
  const uint64_t row = uint64_t(width) * bytes_per_pixel;
  s.pitch = uint32_t((row + s.kPitchAlignment - 1) / s.kPitchAlignment * s.kPitchAlignment);
  s.rows = (height + s.kHeightAlignment - 1) / s.kHeightAlignment * s.kHeightAlignment;
  s.address = sys_.allocate(s.bytes(), 4096);
  for (VidMm* m : sys_.users) m->map_global({s.address, s.bytes(), true});
  return s;
}

}  // namespace gpumodel

namespace gpumodel {

// ---- IOMMU domain ----

uint64_t IommuDomain::leaf(uint64_t iova, std::vector<PteWrite>& out) {
  uint64_t table = root_;
  for (int level = 3; level >= 1; --level) {
    const uint64_t e = table + 8ull * ((iova >> (12 + 9 * level)) & 511);
    auto it = entries_.find(e);
    if (it != entries_.end() && (it->second & 1)) {
      table = it->second & pt::kAddrMask;
    } else {
      const uint64_t t = alloc_();
      entries_[e] = t | 1;
      out.push_back({e, t | 1});
      table = t;
    }
  }
  return table + 8ull * ((iova >> 12) & 511);
}

void IommuDomain::map(uint64_t iova, uint64_t addr, uint64_t bytes, std::vector<PteWrite>& out) {
  const uint64_t start = iova & ~0xfffull, end = (iova + bytes + 0xfff) & ~0xfffull;
  addr -= iova - start;
  for (uint64_t v = start, a = addr; v < end; v += 4096, a += 4096) {
    const uint64_t e = leaf(v, out);
    const uint64_t val = (a & pt::kAddrMask) | 1;
    if (entries_[e] == val) continue;
    entries_[e] = val;
    out.push_back({e, val});
  }
}

void IommuDomain::unmap(uint64_t iova, uint64_t bytes, std::vector<PteWrite>& out) {
  const uint64_t start = iova & ~0xfffull, end = (iova + bytes + 0xfff) & ~0xfffull;
  for (uint64_t v = start; v < end; v += 4096) {
    const uint64_t e = leaf(v, out);
    if (entries_[e] == 0) continue;
    entries_[e] = 0;
    out.push_back({e, 0});
  }
}

// ---- Residency and paging ----

void VidMm::declare_params(ParamSet& ps) {
  ps.declare_int("vidmm.system_budget_mb", 4096, "MiB", 1, 1 << 20,
                 "A: what VidMm keeps resident of an adapter's app allocations in the aperture and implicit "
                 "system-memory segments; a new allocation beyond it evicts the least recently used (a budget "
                 "as VidMm derives from the system's memory)");
  ps.declare_bool(
      "vidmm.fault_skip_eviction_notify", false,
      "A: fault injection (Allocation notifications A2, A3): VidMm evicts without the NOTIFY_ALLOC operations the "
      "flags ask for (NotifyEviction, NotifyIoMmuUnmap); the eviction_without_notify monitor must "
      "report it");
  ps.declare_bool(
      "vidmm.fault_iommu_unmap_without_wait", false,
      "A: fault injection (Allocation notifications A3): VidMm unmaps from the IOMMU without waiting for the paging "
      "operations; the use_after_unmap monitor must report the engine's late access");
}

void VidMm::trace(const char* step) {
  if (!vcd_ || !vcd_->enabled()) return;
  if (trace_ < 0) trace_ = int(vcd_->add_ascii(adapter_ + ".vidmm.evict", "idle"));
  vcd_->set_ascii(Vcd::Id(trace_), step);
}

void VidMm::connect(const ParamSet& ps, Cpu& cpu, Kmd& kmd, PacketScheduler& sched, Memory& sysmem, unsigned iommu_port,
                    Vcd& vcd, const std::string& adapter) {
  vcd_ = &vcd;
  adapter_ = adapter;
  cpu_ = &cpu;
  kmd_ = &kmd;
  sched_ = &sched;
  sys_mem_ = &sysmem;
  iommu_port_ = iommu_port;
  const std::string& m = ps.get_enum("iommu.model");
  iommu_model_ = m == "gpuva_iommu" ? 1 : m == "gpuva_iommu_global" ? 2 : 0;
  budget_ = uint64_t(ps.get_int("vidmm.system_budget_mb")) << 20;
  skip_notify_ = ps.get_bool("vidmm.fault_skip_eviction_notify");
  early_iommu_unmap_ = ps.get_bool("vidmm.fault_iommu_unmap_without_wait");
  paging_done_ = std::make_unique<KEvent>();
  restore_done_ = std::make_unique<KEvent>();
  sched.vram_lost = [this] { lose_vram(); };
  sched.restore = [this] { return restore_after_reset(); };
  notify_copy_ = ps.get_bool("kmd.notify_eviction_copy");
}

void VidMm::start(bool hardware_scheduling) {
  using namespace regs;
  // DMA remapping (A3's addressing models): the adapter's domain, or the one every adapter shares.
  if (iommu_model_ && !domain_) {
    auto alloc = [this] { return sys_.allocate(4096, 4096); };
    if (iommu_model_ == 2) {
      if (!sys_.global_domain) sys_.global_domain = std::make_shared<IommuDomain>(alloc);
      domain_ = sys_.global_domain;
    } else {
      domain_ = std::make_shared<IommuDomain>(alloc);
    }
    std::vector<PteWrite> d;
    for (const Global& g : globals_)
      if (g.system) domain_->map(g.addr, g.addr, g.bytes, d);
    for (const PteWrite& e : d) sys_mem_->poke(e.addr, &e.value, 8);
    cpu_->mmio_write64(Iommu::kBase + Iommu::kRoot + 8ull * iommu_port_, domain_->root());
    (void)cpu_->mmio_read64(Iommu::kBase + Iommu::kFaults);  // the root is set before any DMA
  }
  // A4: the paging process's GPU VA space and its size.
  const uint64_t largest_local = largest_local_segment();
  if (!paging_va_exists(largest_local, hardware_scheduling) || paging_va_bytes_) return;
  // "pInputData points to a UINT value that specifies the physical adapter index in an LDA configuration.
  // Dxgkrnl sets it to 0 for non-LDA configurations": one query per physical adapter of a linked adapter.
  // This model keeps one paging process VA space for the whole adapter: the largest answer, each failed
  // call or 0 taking the OS's default.
  const uint64_t log_bytes = hardware_scheduling ? log_buffer_bytes(kmd_->info().hw_queues) : 0;
  paging_va_from_driver_ = false;
  paging_va_bytes_ = 0;
  for (uint32_t index = 0; index < kmd_->engines(); ++index) {
    uint32_t mb = 0;
    const bool ok = kmd_->DxgkDdiQueryAdapterInfoPagingProcessGpuVaSize(index, &mb);
    paging_va_indexes_.push_back(index);
    paging_va_from_driver_ |= ok && mb != 0;
    paging_va_bytes_ =
        std::max(paging_va_bytes_, ok && mb != 0 ? uint64_t(mb) << 20 : paging_va_default(largest_local, log_bytes));
  }
  // Its page tables are always resident: reserve them for the whole window now.
  const uint64_t before = space(0).table_bytes();
  std::vector<PteWrite> w;
  space(0).reserve(kPagingVaBase, paging_va_bytes_, w);
  write_entries(w);
  paging_pt_bytes_ = space(0).table_bytes() - before;
}

void VidMm::map_system_identity(uint64_t addr) {
  const uint64_t page = addr & ~0xfffull;
  std::vector<PteWrite> w;
  space(0).map(page, page, 4096, page < regs::kVramBase, w);  // GpuVaSpace skips what is already so
  write_entries(w);
}

uint64_t VidMm::map_alias(int process, uint64_t addr, bool read_only, uint64_t bytes) {
  const uint64_t page = addr & ~0xfffull;
  const uint64_t span = ((addr & 0xfff) + bytes + 0xfff) & ~0xfffull;
  uint64_t& next = next_alias_[process];
  if (!next) next = process == 0 ? kAliasVaBase : kFenceVaBase;
  auto map = [&] {
    std::vector<PteWrite> w;
    space(process).map(next, page, span, page < regs::kVramBase, w, read_only);
    write_entries(w);  // a new mapping
    const uint64_t at = next;
    next += span;
    return at;
  };
  if (span > 4096) return map() + (addr & 0xfff);  // a log enlarged for tracing: its pages in a row
  auto it = aliases_.find({process, page, read_only});
  if (it == aliases_.end()) it = aliases_.emplace(std::make_tuple(process, page, read_only), map()).first;
  return it->second + (addr & 0xfff);
}

VidMmAllocation* VidMm::CreateAllocation(int process, Segment seg, const DxgkCreateAllocationArgs& args,
                                         SchedDevice* owner) {
  allocs_.push_back(std::make_unique<VidMmAllocation>());
  VidMmAllocation& a = *allocs_.back();
  a.handle = uint32_t(allocs_.size());
  a.process = process;
  a.segment = seg;
  a.bytes = (args.bytes + pt::kBigPage - 1) / pt::kBigPage * pt::kBigPage;
  a.flags = kmd_->DxgkDdiCreateAllocation(args);  // A1
  if (seg != Segment::Local) make_room(a.bytes, &a);
  a.addr = (seg == Segment::Local ? local_ : sys_).allocate(a.bytes, pt::kBigPage);
  uint64_t& next = next_va_[process];
  if (!next) next = kProcessVaBase;
  a.va = next;
  next += (a.bytes + pt::kPdeSpan - 1) / pt::kPdeSpan * pt::kPdeSpan;  // 2 MiB apart: its own tables
  std::vector<PteWrite> w;
  space(process).map(a.va, a.addr, a.bytes, seg != Segment::Local, w);
  write_entries(w);  // a new mapping
  if (domain_ && seg != Segment::Local) {
    std::vector<PteWrite> d;
    domain_->map(a.addr, a.addr, a.bytes, d);
    for (const PteWrite& e : d) sys_mem_->poke(e.addr, &e.value, 8);
  }
  a.resident = true;
  a.last_use = ++use_tick_;
  if (seg != Segment::Local) resident_sys_ += a.bytes;
  if (seg == Segment::Local) a.shadow = sys_.allocate(a.bytes, pt::kBigPage);  // restored from after BACO
  // T7: the process's device owns it (a hung paging packet that references it puts that device in error state).
  a.sched = sched_->CreateAllocation(owner ? owner : process_device(process), a.addr, a.bytes);
  if (observer.created) observer.created(a);
  return &a;
}

void VidMm::make_room(uint64_t bytes, const VidMmAllocation* keep) {
  while (resident_sys_ + bytes > budget_) {
    VidMmAllocation* lru = nullptr;
    for (auto& p : allocs_)
      if (p.get() != keep && p->resident && p->segment != Segment::Local && (!lru || p->last_use < lru->last_use))
        lru = p.get();
    if (!lru) return;  // nothing left to evict: over budget
    Evict(lru);
  }
}

void VidMm::run_paging(std::vector<DxgkPagingOp> ops, const VidMmAllocation* a, std::function<void()> completed,
                       bool first) {
  // One paging DMA packet in the system context; its completion (the paging fence) counts it done.
  ++paging_packets_;
  if (!system_device_) system_device_ = sched_->CreateDevice(true);
  if (!paging_ctx_) paging_ctx_ = sched_->CreateContext(system_device_, uint32_t(paging_node_));
  ++outstanding_;
  submit(std::make_shared<PagingJob>(PagingJob{std::move(ops), a, std::move(completed)}), first);
}

void VidMm::submit(std::shared_ptr<PagingJob> job, bool first) {
  std::vector<const Allocation*> refs;
  if (job->a && job->a->sched) refs.push_back(job->a->sched);
  if (in_restore_) ++restore_pending_;
  const bool restoring = in_restore_;
  sched_->SubmitPaging(
      paging_ctx_, job->ops, refs,
      [this, job, restoring](const DmaPacket& p) {
        if (restoring) --restore_pending_;
        if (p.state == DmaPacket::Aborted) {
          // Never counted done: an adapter reset follows every aborted paging packet (T7), after which VidMm
          // submits it again (restore_after_reset). Its wait is dropped: the writer it waited for was aborted
          // with its device.
          for (DxgkPagingOp& op : job->ops) op.wait_value = 0;
          redo_.push_back(job);
        } else {
          --outstanding_;
          if (p.state == DmaPacket::Completed) {
            if (observer.paging_done) observer.paging_done(p);
            if (job->completed) job->completed();
          }
        }
        cpu_->signal(*paging_done_);
        if (restoring) cpu_->signal(*restore_done_);
      },
      first);
}

void VidMm::window_ops(const std::vector<WindowMap>& maps, uint64_t bytes, DxgkPagingOp& m, DxgkPagingOp& u) {
  m.kind = u.kind = DxgkPagingOp::UpdatePageTable;
  m.root = u.root = system_root();
  for (const WindowMap& w : maps) {
    space(0).map(kPagingVaBase + w.offset, w.addr, bytes, w.system, m.entries);
    space(0).unmap(kPagingVaBase + w.offset, bytes, u.entries);
  }
}

void VidMm::through_window(const std::vector<WindowMap>& maps, uint64_t bytes, const DxgkPagingOp& op,
                           const VidMmAllocation& a, std::function<void()> completed) {
  // One paging packet: map each range into the paging process's window, the operation, unmap them.
  DxgkPagingOp m, u;
  window_ops(maps, bytes, m, u);
  run_paging({m, op, u}, &a, std::move(completed));
}

void VidMm::transfer(const VidMmAllocation& a, uint64_t src, bool src_system, uint64_t dst, bool dst_system,
                     FenceVa wait_fence, uint64_t wait_value) {
  // Half of the window for each side (A4: transfers are chunked by it), in order on the paging engine.
  const uint64_t half = std::max<uint64_t>(paging_va_bytes_ / 2, pt::kBigPage);
  for (uint64_t off = 0; off < a.bytes;) {
    const uint64_t n = std::min(half, a.bytes - off);
    DxgkPagingOp t;
    t.kind = DxgkPagingOp::Transfer;
    t.src = kPagingVaBase;
    t.dst = kPagingVaBase + half;
    t.bytes = n;
    t.wait_fence = wait_fence, t.wait_value = off == 0 ? wait_value : 0;  // the first chunk waits (0: none)
    bytes_moved_ += n;
    ++transfer_chunks_;
    through_window({{0, src + off, src_system}, {half, dst + off, dst_system}}, n, t, a, nullptr);
    off += n;
  }
}

void VidMm::Fill(VidMmAllocation* ap, uint32_t pattern) {
  VidMmAllocation& a = *ap;
  const uint64_t window = paging_va_bytes_;
  if (!a.resident || !window) return;  // no paging VA: nothing maps it for the paging engine
  const bool system = a.segment != Segment::Local;
  const uint64_t per_packet = kmd_->fill_bytes_per_packet();
  for (uint64_t off = 0; off < a.bytes;) {
    const uint64_t n = std::min(window, a.bytes - off);
    ++fill_chunks_;
    DxgkPagingOp m, u;
    window_ops({{0, a.addr + off, system}}, n, m, u);
    for (uint64_t done = 0; done < n;) {
      const uint64_t k = std::min(per_packet, n - done);
      DxgkPagingOp f;
      f.kind = DxgkPagingOp::Fill;
      f.dst = kPagingVaBase + done;
      f.bytes = k;
      f.fill_pattern = pattern;
      std::vector<DxgkPagingOp> ops;
      if (done == 0) ops.push_back(m);
      ops.push_back(f);
      if (done + k == n) ops.push_back(u);
      run_paging(std::move(ops), &a);
      done += k;
    }
    off += n;
  }
  wait_paging();
  a.last_use = ++use_tick_;
}

void VidMm::wait_paging() {
  // Every paging operation submitted so far has completed (the paging fence reached the last one).
  while (outstanding_) cpu_->wait_for(*paging_done_);
}

void VidMm::update_page_table(uint64_t root, std::vector<PteWrite> w, const VidMmAllocation* a) {
  DxgkPagingOp op;
  op.kind = DxgkPagingOp::UpdatePageTable;
  op.entries = std::move(w);
  op.root = root;
  run_paging({op}, a);
}

void VidMm::cpu_write_entries(std::vector<PteWrite> d) {
  // CPU stores, a run of consecutive entries at a time (one cached write stream each).
  std::sort(d.begin(), d.end(), [](const PteWrite& x, const PteWrite& y) { return x.addr < y.addr; });
  std::vector<uint64_t> run;
  for (size_t i = 0; i < d.size();) {
    size_t j = i;
    run.clear();
    while (j < d.size() && (j == i || d[j].addr == d[j - 1].addr + 8)) run.push_back(d[j++].value);
    cpu_->mem_write(d[i].addr, run.data(), unsigned(run.size() * 8));
    i = j;
  }
}

void VidMm::iommu_unmap(VidMmAllocation& a) {
  // The OS clears the entries (CPU stores into the domain's tables), invalidates the IOTLB and reads a
  // register back, so no DMA is translated with the old entries after it returns.
  std::vector<PteWrite> d;
  domain_->unmap(a.addr, a.bytes, d);
  cpu_write_entries(d);
  cpu_->mmio_write64(Iommu::kBase + Iommu::kInvalidate, domain_->root());
  (void)cpu_->mmio_read64(Iommu::kBase + Iommu::kFaults);
  if (observer.unmapped) observer.unmapped(a, true);
}

void VidMm::Evict(VidMmAllocation* ap, FenceVa wait_fence, uint64_t wait_value) {
  VidMmAllocation& a = *ap;
  if (!a.resident) return;
  if (observer.eviction_started) observer.eviction_started(a);
  trace("notify");
  const bool system = a.segment != Segment::Local;
  const uint64_t window = paging_va_bytes_;
  // A2: only from an aperture or the implicit system-memory segment; per chunk of the paging process's
  // VA: map the chunk into it, NOTIFY_ALLOC(NotifyEviction), unmap it. One paging packet a chunk, in
  // order on the paging engine (the next chunk reuses the window after the unmap before it).
  if (system && a.flags.notify_eviction && window && !skip_notify_) {
    for (uint64_t off = 0; off < a.bytes;) {
      const uint64_t n = std::min(window, a.bytes - off);
      DxgkPagingOp notify;
      notify.kind = DxgkPagingOp::NotifyAlloc;
      notify.notify = DxgkPagingOp::NotifyEviction;
      notify.dst = kPagingVaBase;
      notify.bytes = n;
      notify.wait_fence = wait_fence, notify.wait_value = off == 0 ? wait_value : 0;  // after the last writer
      ++notify_chunks_;
      if (notify_copy_) bytes_moved_ += 2 * n;  // the in-place pass reads and writes every byte
      through_window({{0, a.addr + off, true}}, n, notify, a, [this, &a, off, n] {
        if (observer.eviction_notified) observer.eviction_notified(a, off, n);
      });
      off += n;
    }
  }
  if (!system && window) {
    trace("transfer");
    // From the local segment: transfer to system memory through the paging window, after the
    // allocation's last writer.
    a.evicted_to = sys_.allocate(a.bytes, pt::kBigPage);
    transfer(a, a.addr, false, a.evicted_to, true, wait_fence, wait_value);
  }
  // Out of the process's GPU VA.
  trace("unmap_va");
  std::vector<PteWrite> w;
  space(a.process).unmap(a.va, a.bytes, w);
  update_page_table(space(a.process).root(), std::move(w), &a);
  // A3: under an IOMMU addressing model, NOTIFY_ALLOC(NotifyIoMmuUnmap), wait for every paging
  // operation, then unmap from the IOMMU.
  if (system && domain_) {
    if (a.flags.notify_iommu_unmap && !skip_notify_) {
      DxgkPagingOp n;
      n.kind = DxgkPagingOp::NotifyAlloc;
      n.notify = DxgkPagingOp::NotifyIoMmuUnmap;
      n.dst = a.va;
      n.bytes = a.bytes;
      run_paging({n}, &a, [this, &a] {
        if (observer.iommu_unmap_notified) observer.iommu_unmap_notified(a);
      });
    }
    trace("wait_paging");
    if (!early_iommu_unmap_) wait_paging();
    trace("iommu_unmap");
    iommu_unmap(a);
  }
  trace("wait_paging");
  wait_paging();
  trace("idle");
  if (observer.unmapped) observer.unmapped(a, false);
  a.resident = false;
  if (system) resident_sys_ -= a.bytes;
  ++evictions_;
  if (observer.evicted) observer.evicted(a);
}

void VidMm::MakeResident(VidMmAllocation* ap) {
  VidMmAllocation& a = *ap;
  if (a.resident) return;
  const bool system = a.segment != Segment::Local;
  if (system) make_room(a.bytes, &a);
  if (system && domain_) {  // back into the IOMMU: entries that were invalid, no invalidation needed
    std::vector<PteWrite> d;
    domain_->map(a.addr, a.addr, a.bytes, d);
    cpu_write_entries(d);
  }
  if (!system && a.evicted_to && paging_va_bytes_) {
    // A promotion: placed anew in the local segment, its contents transferred back through the window.
    const uint64_t to = local_.allocate(a.bytes, pt::kBigPage);
    transfer(a, a.evicted_to, true, to, false);
    a.addr = to;
    a.evicted_to = 0;
  }
  std::vector<PteWrite> w;
  space(a.process).map(a.va, a.addr, a.bytes, system, w);
  update_page_table(space(a.process).root(), std::move(w), &a);
  wait_paging();
  a.resident = true;
  a.last_use = ++use_tick_;
  if (system) resident_sys_ += a.bytes;
  if (observer.made_resident) observer.made_resident(a);
}

}  // namespace gpumodel
