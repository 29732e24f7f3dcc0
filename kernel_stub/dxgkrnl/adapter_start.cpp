#include "kernel_stub/dxgkrnl/adapter_start.h"

namespace gpumodel {

unsigned cross_adapter_tier(const DxgkDriverCaps& c) {
  if (!c.cross_adapter_resource) return 0;
  if (!c.cross_adapter_resource_texture) return 1;
  return c.cross_adapter_resource_scanout ? 3 : 2;
}

std::string check_driver_caps(const DxgkDriverCaps& c) {
  if (c.cross_adapter_resource_texture && !c.cross_adapter_resource)
    return "DXGK_VIDMMCAPS declares CrossAdapterResourceTexture (tier 2) without CrossAdapterResource "
           "(tier 1): each tier must imply those below (C1)";
  if (c.cross_adapter_resource_scanout && !c.cross_adapter_resource_texture)
    return "DXGK_VIDMMCAPS declares CrossAdapterResourceScanout (tier 3) without CrossAdapterResourceTexture "
           "(tier 2): each tier must imply those below (C1)";
  return "";
}

std::vector<std::string> hlk_conformance(const DxgkDriverCaps& c) {
  std::vector<std::string> f;
  if (c.hybrid_integrated && !c.cross_adapter_resource_scanout)
    f.push_back(
        "HLK Device.Graphics.WDDM30.Render.CoreRequirement fails: a HybridIntegrated driver must declare "
        "CrossAdapterResourceScanout (tier 3; C1, WDDM 3.0)");
  return f;
}

AdapterStart DxgkrnlStartAdapter(Kmd& kmd, const std::string& name) {
  // Runtime D3cold: a use held while the start's DDIs reach the adapter.
  struct Held {
    Kmd& k;
    explicit Held(Kmd& kmd) : k(kmd) {
      if (k.power_ref) k.power_ref(true);
    }
    ~Held() {
      if (k.power_ref) k.power_ref(false);
    }
  } held(kmd);
  AdapterStart s;
  if (!kmd.DxgkDdiStartDevice(&s.info)) {
    s.reason = name + ": DxgkDdiStartDevice failed: BAR0 did not identify the adapter";
    return s;
  }
  s.caps = kmd.DxgkDdiQueryAdapterInfoDriverCaps();
  s.vidsch_caps = kmd.DxgkDdiQueryAdapterInfoVidSchCaps();
  if (s.vidsch_caps.native_gpu_fence && !kmd.os().DxgkCbIsFeatureEnabled(DxgkFeature::NativeFence)) {
    s.reason = name +
               ": adapter start failed: the driver advertises DXGK_VIDSCHCAPS::NativeGpuFence but the OS "
               "did not enable DXGK_FEATURE_NATIVE_FENCE (os.native_fence_feature = disabled; F9)";
    return s;
  }
  s.tier = cross_adapter_tier(s.caps);
  const std::string why = check_driver_caps(s.caps);
  if (!why.empty()) {
    s.reason = name + ": adapter start failed: " + why;
    return s;
  }
  s.conformance = hlk_conformance(s.caps);
  kmd.os().set_cross_adapter_tier(s.tier);  // what KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT answers from now on
  s.started = true;
  return s;
}

}  // namespace gpumodel
