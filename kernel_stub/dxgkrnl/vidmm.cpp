#include "kernel_stub/dxgkrnl/vidmm.h"

#include <systemc>

namespace gpumodel {

VidMm::VidMm(uint64_t sys_base, uint64_t sys_size, uint64_t local_base, uint64_t local_size)
    : sys_{sys_base, sys_size, sys_base}, local_{local_base, local_size, local_base} {}

uint64_t VidMm::allocate(Segment seg, uint64_t bytes, uint64_t align) {
  Heap& h = seg == Segment::System ? sys_ : local_;
  const uint64_t a = (h.next + align - 1) / align * align;
  if (a + bytes > h.base + h.size) {
    SC_REPORT_ERROR("gpumodel/vidmm", "out of memory in a segment: raise sysmem.size_bytes or vram.size_bytes");
    return h.base;
  }
  h.next = a + bytes;
  return a;
}

}  // namespace gpumodel
