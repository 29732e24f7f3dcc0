// Dxgkrnl's adapter start (CASO support, C1): DxgkDdiStartDevice, then the driver caps, then the checks the
// OS makes before it lets an adapter run. A failed start is a value with its reason, never a crash.
//  * The cross-adapter tiers must form a superset chain: Texture (tier 2) needs CrossAdapterResource
//    (tier 1), Scanout (tier 3) needs Texture.
// The document states no other refusal. What the HLK checks instead (a HybridIntegrated driver must declare
// tier 3: Device.Graphics.WDDM30.Render.CoreRequirement) is a conformance finding the adapter starts
// with (AdapterStart::conformance), which the scenarios report in their results and verdict.
//  * F9: a driver that advertises DXGK_VIDSCHCAPS::NativeGpuFence while the OS did not enable
//    DXGK_FEATURE_NATIVE_FENCE fails adapter start. One that does not advertise it gets monitored fences.
#pragma once
#include <string>
#include <vector>

#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

struct AdapterStart {
  bool started = false;
  std::string reason;  // why not
  DxgkAdapterInfo info;
  DxgkDriverCaps caps;
  DxgkVidSchCaps vidsch_caps;
  unsigned tier = 0;                     // the cross-adapter tier (0: none)
  std::vector<std::string> conformance;  // HLK requirements the driver fails (the adapter still starts)
};

// The highest tier whose chain is complete (0..3); a broken chain counts up to the break.
unsigned cross_adapter_tier(const DxgkDriverCaps& c);
// C1's rule on reported caps (the superset chain): empty when it holds, else the reason adapter start fails.
std::string check_driver_caps(const DxgkDriverCaps& c);
// The HLK's checks of the reported caps (CASO support, "HLK tests"): one line per requirement failed.
std::vector<std::string> hlk_conformance(const DxgkDriverCaps& c);
// From an app thread or the OS's start-up thread on the CPU (the DDIs touch hardware). `name` names
// the adapter in the reason.
AdapterStart DxgkrnlStartAdapter(Kmd& kmd, const std::string& name);

}  // namespace gpumodel
