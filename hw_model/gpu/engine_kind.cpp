#include "hw_model/gpu/engine_kind.h"

namespace gpumodel {

const char* to_string(EngineKind k) {
  switch (k) {
    case EngineKind::Graphics: return "graphics";
    case EngineKind::Compute: return "compute";
    case EngineKind::Copy: return "copy";
    case EngineKind::Video: return "video";
  }
  return "graphics";
}

uint32_t dxgk_engine_type(EngineKind k) {
  switch (k) {
    case EngineKind::Graphics: return 1;  // DXGK_ENGINE_TYPE_3D
    case EngineKind::Video: return 2;     // DXGK_ENGINE_TYPE_VIDEO_DECODE
    case EngineKind::Copy: return 6;      // DXGK_ENGINE_TYPE_COPY
    case EngineKind::Compute: return 0;   // DXGK_ENGINE_TYPE_OTHER ("Compute")
  }
  return 0;
}

EngineKind kind_of_engine_type(uint32_t t) {
  switch (t) {
    case 1: return EngineKind::Graphics;
    case 2: return EngineKind::Video;
    case 6: return EngineKind::Copy;
    default: return EngineKind::Compute;
  }
}

bool engine_runs(EngineKind k, Op op) {
  if (op == Op::Compute) return k != EngineKind::Copy;
  if (op == Op::Copy) return k != EngineKind::Video;
  return true;
}

EngineKind engine_kind(const ParamSet& ps, const std::string& adapter, int ordinal, int nodes) {
  const std::string& v = ps.get_enum(adapter + ".node" + std::to_string(ordinal), "node.kind");
  if (v == "graphics") return EngineKind::Graphics;
  if (v == "compute") return EngineKind::Compute;
  if (v == "copy") return EngineKind::Copy;
  if (v == "video") return EngineKind::Video;
  (void)nodes;
  return ordinal == 0 ? EngineKind::Graphics : EngineKind::Compute;
}

std::string engine_label(int ordinal, EngineKind k) {
  return "node " + std::to_string(ordinal) + " (" + to_string(k) + ")";
}

}  // namespace gpumodel
