// An engine's kind: what its front end runs. A GPU's engines are not alike: the 3D engine draws (and
// copies, through its own DMA), compute engines dispatch, a copy engine only moves bytes, a video
// engine decodes at a clock of its own. The kind decides which packets the engine accepts; a packet of
// a kind it does not run (a COMPUTE on a copy engine) is a fault, as a real engine's front end raises
// one for a command class it does not have.
//
// The KMD learns each node's kind from the node's ENGINE_TYPE register (regs::kNEngineType) and reports
// it to Dxgkrnl as DXGK_NODEMETADATA::EngineType (DxgkDdiGetNodeMetadata). DXGK_ENGINE_TYPE has no
// compute value: a compute engine is DXGK_ENGINE_TYPE_OTHER with the friendly name "Compute".
#pragma once
#include <cstdint>
#include <string>

#include "hw_model/core/params.h"
#include "hw_model/gpu/packets.h"

namespace gpumodel {

enum class EngineKind : uint8_t { Graphics, Compute, Copy, Video };

const char* to_string(EngineKind k);
// DXGK_ENGINE_TYPE: 3D = 1, VIDEO_DECODE = 2, COPY = 6, OTHER = 0 (compute).
uint32_t dxgk_engine_type(EngineKind k);
EngineKind kind_of_engine_type(uint32_t dxgk_type);

// Whether an engine of kind `k` runs packets of `op`: a copy engine runs no COMPUTE, a video engine no
// COPY (its decode writes its own output; it has no general-purpose DMA); every engine runs the
// control packets (signals, waits, barriers, timestamps, fences, page-table switches).
bool engine_runs(EngineKind k, Op op);

// The kind of node `ordinal` of the adapter `adapter` ("gpu", "igpu") with `nodes` nodes: its own
// <adapter>.nodeN.kind where set, else node.kind; "auto" gives node 0 the 3D engine and every other node
// a compute engine (each runs every packet), so a copy or video engine is always one the user named.
EngineKind engine_kind(const ParamSet& ps, const std::string& adapter, int ordinal, int nodes);

// "node 2 (copy)": how results and messages name an engine.
std::string engine_label(int ordinal, EngineKind k);

}  // namespace gpumodel
