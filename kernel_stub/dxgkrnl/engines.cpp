#include "kernel_stub/dxgkrnl/engines.h"

namespace gpumodel {

void EngineDirectory::query() {
  if (queried_) return;
  queried_ = true;
  for (uint32_t n = 0; n < kmd_.info().nodes; ++n)
    kinds_.push_back(kind_of_engine_type(kmd_.DxgkDdiGetNodeMetadata(n).engine_type));
}

int EngineDirectory::node(EngineKind k, int nth) {
  query();
  for (size_t n = 0; n < kinds_.size(); ++n)
    if (kinds_[n] == k && nth-- == 0) return int(n);
  return -1;
}

int EngineDirectory::count(EngineKind k) {
  query();
  int c = 0;
  for (EngineKind x : kinds_) c += x == k;
  return c;
}

EngineKind EngineDirectory::kind(int node) {
  query();
  return kinds_.at(size_t(node));
}

}  // namespace gpumodel
