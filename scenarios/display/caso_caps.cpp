// caso_caps (CASO support: C1, C4, C5): which caps and checks pick the present path, and what happens when
// one fails. On the hybrid platform, in one run:
//  * C1: the iGPU's driver is replaced (Kmd::install_driver: another build on the same hardware) by
//    one declaring each of the 8 combinations of the three cross-adapter tiers, once as a
//    HybridIntegrated and once as a HybridDiscrete driver, and Dxgkrnl starts the adapter each time
//    (DxgkDdiStartDevice over MMIO, then the caps checks). 16 outcomes, each with the tier user mode
//    reads (KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT), the HLK's finding (a HybridIntegrated driver
//    below tier 3 starts, and fails Device.Graphics.WDDM30.Render.CoreRequirement) and whether a D3D12
//    device whose UMD reports CrossAdapterRowMajorTextureSupported can be created (tier 2 or more).
//  * C5: with both adapters started, the swap chain's path choice for every fallback: a display
//    adapter below tier 3, NO_SCANOUT beyond and inside the tier-3 minimum, a failing StaticCheck, a
//    StaticCheck that changes the driver's cached state (the monitor mpo_static_check_state must see
//    it: the scenario expects that violation), a failing present-time check, and the one-copy case.
// Every outcome goes into the results, and the verdict compares each with the outcome the documents
// require (the table below, written from C1 and C5, not from the code).
#include <algorithm>

#include "kernel_stub/umd/d3d12_device.h"
#include "scenarios/display/present.h"

namespace gpumodel {
namespace {

struct C1Case {
  const char* caps;
  const char* role;
  int expect_tier;  // -1: adapter start must fail
};
// C1: tiers form a superset chain (else start fails); a HybridIntegrated driver below tier 3 starts and
// fails the HLK's CoreRequirement (the expectation follows from the role and the tier).
const C1Case kC1[] = {
    {"none", "integrated", 0},
    {"resource", "integrated", 1},
    {"texture", "integrated", -1},
    {"scanout", "integrated", -1},
    {"resource+texture", "integrated", 2},
    {"resource+scanout", "integrated", -1},
    {"texture+scanout", "integrated", -1},
    {"resource+texture+scanout", "integrated", 3},
    {"none", "discrete", 0},
    {"resource", "discrete", 1},
    {"texture", "discrete", -1},
    {"scanout", "discrete", -1},
    {"resource+texture", "discrete", 2},
    {"resource+scanout", "discrete", -1},
    {"texture+scanout", "discrete", -1},
    {"resource+texture+scanout", "discrete", 3},
};

struct C5Case {
  const char* name;
  const char* display_caps;  // the display driver's tiers (role integrated unless tier < 3: discrete)
  uint32_t width, height;
  DriverAnswers::NoScanout no_scanout;
  bool static_fails, mutates, present_check_fails;
  const char* expect_path;  // after the present-time check
  bool expect_defect;
};
const C5Case kC5[] = {
    {"tier3_all_checks_pass", "resource+texture+scanout", 1920, 1080, DriverAnswers::NoScanout::BeyondMinimum, false,
     false, false, "one_copy", false},
    // A tier-2 display adapter whose driver would also answer NO_SCANOUT inside the minimum and change its
    // state in a StaticCheck: the tier is read first, so neither call is made (no defect, no monitor hit).
    {"display_tier2", "resource+texture", 1920, 1080, DriverAnswers::NoScanout::Always, false, true, false, "two_copy",
     false},
    {"no_scanout_beyond_minimum", "resource+texture+scanout", 2560, 1440, DriverAnswers::NoScanout::BeyondMinimum,
     false, false, false, "two_copy", false},
    {"no_scanout_inside_minimum", "resource+texture+scanout", 1920, 1080, DriverAnswers::NoScanout::Always, false,
     false, false, "two_copy", true},
    {"static_check_fails", "resource+texture+scanout", 1920, 1080, DriverAnswers::NoScanout::Never, true, false, false,
     "two_copy", false},
    {"static_check_changes_state", "resource+texture+scanout", 1920, 1080, DriverAnswers::NoScanout::Never, false, true,
     false, "one_copy", false},
    {"present_time_check_fails", "resource+texture+scanout", 1920, 1080, DriverAnswers::NoScanout::Never, false, false,
     true, "compose", false},
};

class CasoCaps : public ScenarioDriver {
 public:
  void build(Platform& p, Results& r) override {
    r.monitors_expected["mpo_static_check_state"] = true;  // the static_check_changes_state case
    p.cpu.spawn_thread("app", [&p, &r] { app(p, r); });
  }

 private:
  static void app(Platform& p, Results& r) {
    Kmd& ikmd = p.igpu_driver->kmd;
    const DriverAnswers original = ikmd.driver_answers();
    nlohmann::ordered_json c1 = nlohmann::ordered_json::object();
    for (const C1Case& c : kC1) {
      DriverAnswers a = original;
      a.caps = driver_caps_from(c.caps, c.role);
      ikmd.install_driver(a);
      const AdapterStart s = DxgkrnlStartAdapter(ikmd, "iGPU");
      const std::string key = std::string(c.role) + ":" + c.caps;
      // What user mode reads, and what it can create on this adapter.
      const uint32_t tier = ikmd.os().D3DKMTQueryAdapterInfoCrossAdapterResourceSupport().support_tier;
      const D3D12Device dev = D3D12CreateDevice(ikmd.os(), D3D12UmdCaps{true}, "iGPU");
      std::string out = s.reason;
      if (s.started) {
        out = "started, tier " + std::to_string(tier) +
              "; D3D12 device with CrossAdapterRowMajorTextureSupported: " + (dev.created ? "created" : "failed");
        for (const std::string& f : s.conformance) out += "; " + f;
      }
      c1[key] = out;
      const bool hlk_fail = std::string(c.role) == "integrated" && c.expect_tier >= 0 && c.expect_tier < 3;
      const bool ok = c.expect_tier < 0 ? !s.started
                                        : s.started && int(tier) == c.expect_tier &&
                                              dev.created == (c.expect_tier >= 2) && s.conformance.empty() != hlk_fail;
      r.check(ok, "C1 " + key + ": expected " +
                      (c.expect_tier < 0 ? std::string("adapter start to fail")
                                         : "tier " + std::to_string(c.expect_tier) +
                                               (c.expect_tier >= 2 ? ", the D3D12 device" : ", no D3D12 device") +
                                               (hlk_fail ? " and the HLK finding" : "")) +
                      ", got " + out);
    }
    r.metric("c1_adapter_start", c1);

    ikmd.install_driver(original);
    PresentSetup s;
    if (!start_hybrid(p, r, s)) return;
    const uint64_t xsurf = p.vidmm.allocate_cross_adapter(2560, 1440, 4).address;
    nlohmann::ordered_json c5 = nlohmann::ordered_json::object();
    for (const C5Case& c : kC5) {
      DriverAnswers a = original;
      const bool tier3 = std::string(c.display_caps) == "resource+texture+scanout";
      a.caps = driver_caps_from(c.display_caps, tier3 ? "integrated" : "discrete");
      a.no_scanout = c.no_scanout;
      a.static_check = c.static_fails ? DriverAnswers::StaticCheck::Fail : DriverAnswers::StaticCheck::Derived;
      a.mpo_mutates = c.mutates;
      a.present_check_fails_at = c.present_check_fails ? 1 : 0;
      ikmd.install_driver(a);
      const sc_core::sc_time started = sc_core::sc_time_stamp();
      const AdapterStart display = DxgkrnlStartAdapter(ikmd, "iGPU");
      if (!r.check(display.started, std::string("C5 ") + c.name + ": " + display.reason)) continue;
      const sc_core::sc_time choosing = sc_core::sc_time_stamp();
      PathChoice choice = choose_present_path(display, ikmd, PrimaryDesc{c.width, c.height, "R8G8B8A8_UNORM"}, xsurf);
      std::string path = to_string(choice.path);
      if (choice.path != PresentPath::Compose && !present_time_check(ikmd, xsurf)) path = "compose";
      // The waveform's view: the first C5 case, where every check runs and passes (the other cases stop at
      // the check that fails): the display adapter's start, the path choice's checks, the path decided.
      if (&c == &kC5[0]) {
        r.event("adapter start", started.value());
        r.event("path checks", choosing.value());
        std::string decided = path;
        std::replace(decided.begin(), decided.end(), '_', ' ');
        r.event(decided, sc_core::sc_time_stamp().value());
      }
      c5[c.name] = path + ": " + choice.reason + (choice.defect.empty() ? "" : " [" + choice.defect + "]");
      r.check(path == c.expect_path, std::string("C5 ") + c.name + ": expected " + c.expect_path + ", got " + path);
      r.check(choice.defect.empty() != c.expect_defect,
              std::string("C5 ") + c.name +
                  (c.expect_defect ? ": the driver defect was not reported" : ": unexpected defect " + choice.defect));
    }
    ikmd.install_driver(original);
    r.metric("c5_present_path", c5);
  }
};

}  // namespace

ScenarioInfo caso_caps_scenario() {
  return {"caso_caps",
          "every cross-adapter tier combination at adapter start (C1) and every present-path fallback (C5)",
          [](ParamSet&, const std::string&) {}, [](const ParamSet&) { return std::make_unique<CasoCaps>(); },
          [](const ParamSet& ps) {
            if (Platform::topology_of(ps) != Topology::Hybrid)
              throw ConfigError(
                  "platform.topology = dgpu: scenario 'caso_caps' starts the iGPU's driver; allowed: "
                  "platform.topology = hybrid");
          }};
}

namespace {
const ScenarioRegistration kCasoCapsScenario{caso_caps_scenario, 10};
}  // namespace

}  // namespace gpumodel
