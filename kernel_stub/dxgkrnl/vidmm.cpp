#include "kernel_stub/dxgkrnl/vidmm.h"

#include <systemc>

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

VidMm::VidMm(PhysHeap& system, uint64_t local_base, uint64_t local_size, std::string local_what)
    : sys_(system), local_(local_base, local_size, std::move(local_what)) {}

uint64_t VidMm::allocate(Segment seg, uint64_t bytes, uint64_t align) {
  return (seg == Segment::System ? sys_ : local_).allocate(bytes, align);
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
  return s;
}

}  // namespace gpumodel
