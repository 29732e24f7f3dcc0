// Monitors of the CASO document's promises (display side). They observe through read-only hooks and never drive
// the model; a violation fails the run unless the scenario expects it.
//  * scanout_underflow (C6): the beam needed a pixel the scan-out DMA had not delivered (the display
//    engine's underflow, with frame and line). Every display engine of the platform is watched.
//  * mpo_static_check_state (C5): a CheckMultiplaneOverlaySupport3 with StaticCheck changed the
//    driver's cached overlay state (a static check must not). Every adapter's KMD is watched.
#pragma once
#include <string>
#include <vector>

#include "monitors/monitor.h"
#include "monitors/results.h"
#include "platform/platform.h"

namespace gpumodel {

class ScanoutUnderflowMonitor : public Monitor {
 public:
  explicit ScanoutUnderflowMonitor(Platform& p);
  void finish(Results& r) override;
  uint64_t violations() const { return n_; }

 private:
  bool watching_ = false;
  uint64_t n_ = 0;
  std::vector<std::string> first_;  // the first few, with frame and line
};

class MpoStaticCheckMonitor : public Monitor {
 public:
  explicit MpoStaticCheckMonitor(Platform& p);
  void finish(Results& r) override;

 private:
  bool watching_ = false;
  uint64_t n_ = 0;
};

}  // namespace gpumodel
