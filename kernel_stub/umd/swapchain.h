// The thin user-mode role of CASO support (C2, C3, C5): a DXGI flip-model swap chain whose app renders on
// one adapter while another drives the display. At creation (and ResizeBuffers) it picks the present
// path from what the display adapter's driver says:
//   1. the display adapter's cross-adapter tier, read early: below tier 3 -> two copies;
//   2. pfnCreateResource of the cross-adapter primary: DXGI_DDI_PRIMARY_DRIVER_FLAG_NO_SCANOUT ->
//      two copies (allowed only beyond the tier-3 minimum of C4; inside it, a driver defect, reported);
//   3. CheckMultiplaneOverlaySupport3 with StaticCheck (exactly one plane flagged, no post-composition):
//      a failure -> two copies;
//   4. otherwise one copy (CASO): the display adapter scans the cross-adapter surface out.
// At each present a failing present-time check -> composition (DWM composes on the display adapter).
#pragma once
#include <string>

#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

enum class PresentPath { OneCopy, TwoCopy, Compose };
const char* to_string(PresentPath p);

struct PathChoice {
  PresentPath path = PresentPath::TwoCopy;
  std::string reason;  // why this path
  std::string defect;  // a driver defect seen on the way (empty: none); the run reports it
};

// `forced`: "auto" or a path name ("one_copy", "two_copy", "compose") that overrides the choice; a
// forced one copy on a display adapter below tier 3 is reported as a defect of the configuration.
// `xsurf`: the cross-adapter primary the static check names.
PathChoice choose_present_path(const AdapterStart& display, Kmd& display_kmd, const PrimaryDesc& desc, uint64_t xsurf,
                               const std::string& forced = "auto");

// The present-time overlay check of a present's surface: false -> compose this frame.
bool present_time_check(Kmd& display_kmd, uint64_t surface);

}  // namespace gpumodel
