// Dxgkrnl's directory of an adapter's engines by kind: what an app's "a queue on the copy engine"
// resolves to. It asks the KMD for each node's metadata (DxgkDdiGetNodeMetadata) the first time an engine
// is looked up by kind, not at adapter start, so runs that never ask keep their start-up timing.
#pragma once
#include <vector>

#include "hw_model/gpu/engine_kind.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

class EngineDirectory {
 public:
  explicit EngineDirectory(Kmd& kmd) : kmd_(kmd) {}
  // The node of the `nth` engine (0-based) of kind `k`, or -1 if the adapter has fewer.
  int node(EngineKind k, int nth = 0);
  // How many engines of kind `k` the adapter has.
  int count(EngineKind k);
  EngineKind kind(int node);

 private:
  void query();
  Kmd& kmd_;
  std::vector<EngineKind> kinds_;
  bool queried_ = false;
};

}  // namespace gpumodel
