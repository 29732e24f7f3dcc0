// Dxgkrnl's adapter start (CASO support, C1): DxgkDdiStartDevice, then the driver caps, then the checks the
// OS makes before it lets an adapter run. A failed start is a value with its reason, never a crash.
//  * The cross-adapter tiers must form a superset chain: Texture (tier 2) needs CrossAdapterResource
//    (tier 1), Scanout (tier 3) needs Texture.
//  * A HybridIntegrated driver (WDDM 3.0+) must declare tier 3.
//  * A driver cannot be both HybridDiscrete and HybridIntegrated (one adapter has one role).
//  * F9: a driver that advertises DXGK_VIDSCHCAPS::NativeGpuFence while the OS did not enable
//    DXGK_FEATURE_NATIVE_FENCE fails adapter start. One that does not advertise it gets monitored fences.
#pragma once
#include <string>

#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

struct AdapterStart {
  bool started = false;
  std::string reason;  // why not
  DxgkAdapterInfo info;
  DxgkDriverCaps caps;
  DxgkVidSchCaps vidsch_caps;
  unsigned tier = 0;  // the cross-adapter tier (0: none)
};

// The highest tier whose chain is complete (0..3); a broken chain counts up to the break.
unsigned cross_adapter_tier(const DxgkDriverCaps& c);
// C1's rules on reported caps: empty when they hold, else the reason adapter start fails.
std::string check_driver_caps(const DxgkDriverCaps& c);
// From an app thread or the OS's start-up thread on the CPU (the DDIs touch hardware). `name` names
// the adapter in the reason.
AdapterStart DxgkrnlStartAdapter(Kmd& kmd, const std::string& name);

}  // namespace gpumodel
