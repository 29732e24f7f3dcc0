#include "kernel_stub/dxgkrnl/vidmm.h"

#include <algorithm>

#include <systemc>

#include "hw_model/memory/memory.h"

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
}

uint64_t VidMm::allocate(Segment seg, uint64_t bytes, uint64_t align) {
  const uint64_t a = (seg == Segment::System ? sys_ : local_).allocate(bytes, align);
  if (seg == Segment::System)
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
