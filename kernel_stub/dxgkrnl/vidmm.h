// VidMm, the OS memory manager (minimal): hands out physical ranges of system memory and of the
// adapter's local memory segment. Allocation is bump-pointer; nothing is evicted yet.
#pragma once
#include <cstdint>
#include <string>

#include "hw_model/core/params.h"

namespace gpumodel {

enum class Segment { System, Local };

class VidMm {
 public:
  VidMm(uint64_t sys_base, uint64_t sys_size, uint64_t local_base, uint64_t local_size);
  // Returns the physical address; a request that does not fit is a model fault (reported).
  uint64_t allocate(Segment seg, uint64_t bytes, uint64_t align = 4096);

 private:
  struct Heap {
    uint64_t base, size, next;
  };
  Heap sys_, local_;
};

}  // namespace gpumodel
