// VidMm's side of an adapter reset (TDR in Windows 8 and later, T7): the process devices that own allocations, the
// local memory BACO loses, the restore of what was resident from VidMm's system-memory copies, and the paging
// operations the reset aborted, submitted again after it (never counted done).
#include <algorithm>
#include <vector>

#include "hw_model/gpu/mmu.h"
#include "hw_model/memory/memory.h"
#include "kernel_stub/cpu/cpu.h"
#include "kernel_stub/dxgkrnl/packet_sched.h"
#include "kernel_stub/dxgkrnl/vidmm.h"

namespace gpumodel {

SchedDevice* VidMm::process_device(int process) {
  SchedDevice*& d = process_devices_[process];
  if (!d) d = sched_->CreateDevice(false, process);
  return d;
}

void VidMm::copy_via_window(uint64_t src, bool src_system, uint64_t dst, bool dst_system, uint64_t bytes,
                            const VidMmAllocation& a, bool first) {
  const uint64_t half = std::max<uint64_t>(paging_va_bytes_ / 2, pt::kBigPage);
  for (uint64_t off = 0; off < bytes;) {
    const uint64_t n = std::min(half, bytes - off);
    DxgkPagingOp t;
    t.kind = DxgkPagingOp::Transfer;
    t.src = kPagingVaBase;
    t.dst = kPagingVaBase + half;
    t.bytes = n;
    bytes_moved_ += n;
    DxgkPagingOp m, u;
    m.kind = u.kind = DxgkPagingOp::UpdatePageTable;
    m.root = u.root = system_root();
    space(0).map(kPagingVaBase, src + off, n, src_system, m.entries);
    space(0).map(kPagingVaBase + half, dst + off, n, dst_system, m.entries);
    space(0).unmap(kPagingVaBase, n, u.entries);
    space(0).unmap(kPagingVaBase + half, n, u.entries);
    run_paging({m, t, u}, &a, nullptr, first);
    off += n;
  }
}

void VidMm::Upload(VidMmAllocation* a) {
  if (a->segment != Segment::Local || !a->shadow || !paging_va_bytes_) return;
  copy_via_window(a->shadow, true, a->addr, false, a->bytes, *a, false);
  wait_paging();
}

void VidMm::lose_vram() {
  // BACO: the adapter lost power, and its local memory's contents with it. The model's stand-in writes a poison
  // pattern over every resident local allocation (A: the page tables and the driver's own structures in local
  // memory are kept; the real driver and VidMm rebuild them at the restart, which the model does not time).
  if (!table_mem_) return;
  std::vector<uint8_t> poison;
  for (auto& p : allocs_)
    if (p->resident && p->segment == Segment::Local) {
      poison.assign(p->bytes, kPoison);
      table_mem_->poke(p->addr, poison.data(), unsigned(p->bytes));
    }
  if (observer.vram_lost) observer.vram_lost();
}

bool VidMm::restore_after_reset() {
  // Every resident local allocation from its system-memory copy, then the paging operations the reset aborted
  // (in their order), ahead of every other packet; the apps' packets wait until they completed.
  in_restore_ = true;
  bool any = false;
  if (paging_va_bytes_)
    for (auto& p : allocs_)
      if (p->resident && p->segment == Segment::Local && p->shadow) {
        copy_via_window(p->shadow, true, p->addr, false, p->bytes, *p, true);
        restored_bytes_ += p->bytes;
        any = true;
      }
  std::vector<std::shared_ptr<PagingJob>> redo;
  redo.swap(redo_);
  for (auto& job : redo) {
    ++paging_redone_;
    ++paging_packets_;
    submit(job, true);
    any = true;
  }
  in_restore_ = false;
  if (!any) return false;
  ++restores_;
  while (restore_pending_) cpu_->wait_for(*restore_done_);
  if (observer.vram_restored) observer.vram_restored();
  return true;
}

uint64_t VidMm::local_resident_bytes() const {
  uint64_t n = 0;
  for (auto& p : allocs_)
    if (p->resident && p->segment == Segment::Local) n += p->bytes;
  return n;
}

uint64_t VidMm::save_local_for_power_off() {
  // Runtime D3cold with the video memory off: every resident local allocation to its system-memory copy,
  // by paging copies on the GPU (the first paging packet after a power-on restores them).
  uint64_t n = 0;
  if (!paging_va_bytes_) return 0;
  for (auto& p : allocs_)
    if (p->resident && p->segment == Segment::Local && p->shadow) {
      copy_via_window(p->addr, false, p->shadow, true, p->bytes, *p, false);
      n += p->bytes;
    }
  wait_paging();
  return n;
}

void VidMm::restore_local_after_power_on() {
  if (!paging_va_bytes_) return;
  for (auto& p : allocs_)
    if (p->resident && p->segment == Segment::Local && p->shadow)
      copy_via_window(p->shadow, true, p->addr, false, p->bytes, *p, false);
  wait_paging();
}

}  // namespace gpumodel
