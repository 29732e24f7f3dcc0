#include "kernel_stub/umd/swapchain.h"

namespace gpumodel {

const char* to_string(PresentPath p) {
  switch (p) {
    case PresentPath::OneCopy: return "one_copy";
    case PresentPath::TwoCopy: return "two_copy";
    case PresentPath::Compose: return "compose";
  }
  return "?";
}

PathChoice choose_present_path(const AdapterStart& display, Kmd& kmd, const PrimaryDesc& d, uint64_t xsurf,
                               const std::string& forced) {
  PathChoice c;
  const std::string size = std::to_string(d.width) + "x" + std::to_string(d.height);
  if (forced != "auto") {
    c.path = forced == "one_copy"  ? PresentPath::OneCopy
             : forced == "compose" ? PresentPath::Compose
                                   : PresentPath::TwoCopy;
    c.reason = "present.path = " + forced;
    if (c.path == PresentPath::OneCopy && display.tier < 3)  // C1: tier 3 wherever a cross-adapter surface is scanned
      c.defect = "present.path = one_copy on a display adapter of tier " + std::to_string(display.tier) +
                 ": it cannot scan a cross-adapter surface out (C1 tier 3)";
    return c;
  }
  // C5: the cap is read first, from user mode (KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT).
  const uint32_t tier = kmd.os().D3DKMTQueryAdapterInfoCrossAdapterResourceSupport().support_tier;
  if (tier < 3) {
    c.reason = "display adapter is tier " + std::to_string(tier) + " (no CrossAdapterResourceScanout)";
    return c;
  }
  if (!kmd.CreatePrimaryScanout(d)) {
    const bool within_minimum = d.width <= 1920 && d.height <= 1080;
    c.reason = "pfnCreateResource answered DXGI_DDI_PRIMARY_DRIVER_FLAG_NO_SCANOUT for " + size + " " + d.format;
    if (kmd.driver_answers().no_scanout == DriverAnswers::NoScanout::Derived)
      c.reason += " (beyond the display engine's plane: display.max_plane_width and _height)";
    else if (kmd.driver_answers().no_scanout == DriverAnswers::NoScanout::BeyondMinimum)
      c.reason += " (the driver's policy: the tier-3 minimum only)";
    if (within_minimum)
      c.defect = "driver defect: NO_SCANOUT for a " + size + " " + d.format +
                 " primary, inside the tier-3 minimum (C4: up to 1920x1080) the driver must scan out";
    return c;
  }
  MpoCheck chk;
  chk.static_check = true;
  chk.planes_flagged = 1;
  chk.post_composition = false;
  chk.surface = xsurf;
  const bool passed = kmd.DxgkDdiCheckMultiPlaneOverlaySupport3(chk);
  const ScanoutBudget& b = kmd.last_static_budget();
  const std::string overridden = kmd.driver_answers().static_check == DriverAnswers::StaticCheck::Derived
                                     ? ""
                                     : " (a forced answer; the budget says: " + b.why + ")";
  if (!passed) {
    c.reason = "CheckMultiplaneOverlaySupport3 StaticCheck failed: " + (overridden.empty() ? b.why : overridden);
    return c;
  }
  c.path = PresentPath::OneCopy;
  c.reason = "tier 3, cross-adapter primary scanned out (" + size + " " + d.format +
             "), StaticCheck passed: " + (overridden.empty() ? b.why : overridden);
  return c;
}

bool present_time_check(Kmd& kmd, uint64_t surface) {
  MpoCheck chk;
  chk.planes_flagged = 1;
  chk.surface = surface;
  return kmd.DxgkDdiCheckMultiPlaneOverlaySupport3(chk);
}

}  // namespace gpumodel
