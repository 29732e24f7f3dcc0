// CASO support, decided from the platform (C1, C4, C5, C6): the display driver's StaticCheck derives its
// answer from a scan-out budget (kmd.h ScanoutBudget), each driver declares its tier from its own
// adapter, the HLK's HybridIntegrated rule is a conformance finding, and the D3D12 runtime holds the UMD's
// row-major texture cap to the kernel's tier. Every figure is derived here from the parameters.
#include <cmath>

#include <nlohmann/json.hpp>

#include "tb.h"

using namespace tb;

namespace {
// Gen4 x8, MPS 256, 256 B completions: raw 16 x 8 x 128/130 / 8 B/ns less ACK/UpdateFC DLLPs (AckFc 203
// symbols for x8) and SKP sets, then x 256 / (256 + 20) for a completion's overhead.
const double kGen4x8 = dflt::pcie_rate(16, 8, 203);
const double kGen4x8Cpl = kGen4x8 * 256.0 / 276.0;
// 1920x1080@60 in R8G8B8A8_UNORM: 4 B x 148.5 MHz drained during active lines.
constexpr double kNeed = 4 * 0.1485;

// The budget's worst latency on the link with `own` bytes of the display's requests and `other` of the
// engines' in flight: 2 hops (200 ns) + 2 root-complex crossings (30 ns) + the DRAM read (90 ns), the
// read request behind a full 8 KiB posted buffer (8,192 + 24 B at the link rate) and every outstanding
// completion before its own.
double budget_latency(double own, double other) {
  return 2 * 200 + 2 * 30 + 90 + (8192 + 24) / kGen4x8 + (own + other) / kGen4x8Cpl;
}
// The buffer it calls for (50 % watermark, 8 KiB requests): max(L x need + request, L x need / 0.5).
double budget_fifo(double latency) { return std::max(latency * kNeed + 8192, latency * kNeed / 0.5); }

std::string path_of(const nlohmann::json& j) { return j["metrics"]["path"].get<std::string>(); }
}  // namespace

TEST_CASE("scanout_underflow: the StaticCheck's budget is the derivation and switches where underflows stop",
          "[C5][C6]") {
  // A FIFO of 11,264 B holds one 8 KiB request (min(8 outstanding, 11264 / 8192)); the bulk copies' copy
  // engine keeps 16 x 4 KiB in flight. L = 6,610.6 ns, FIFO needed = L x 0.594 + 8,192 = 12,119 B.
  const double lat = budget_latency(8192, 16 * 4096);
  const double need = std::ceil(budget_fifo(lat));
  const auto at = [](int fifo, const char* path, int code = 0) {
    return run_json(
        scenario("scanout_underflow") + " --display.fifo_bytes=" + std::to_string(fifo) + " --present.path=" + path,
        std::string("b") + std::to_string(fifo) + path, code);
  };
  const auto small = at(11264, "one_copy", 1);  // it underflows: the monitor fails the run
  const auto& m = small["metrics"];
  CHECK(m["static_check_latency_ns"].get<double>() == Approx(lat).epsilon(1e-9));
  CHECK(m["static_check_fifo_needed_bytes"].get<double>() == need);
  CHECK(m["static_check_share_mbps"].get<double>() == Approx(kGen4x8Cpl * 8192 / (8192 + 65536) * 1000).epsilon(1e-9));
  // Below the figure the check fails, and the forced one copy indeed underflows: the check was right.
  CHECK(m["static_check_passed"] == false);
  CHECK(m["underflows"].get<int>() > 0);
  // Its latency bound holds: no request waited longer than the budget allowed for.
  CHECK(m["max_request_latency_ns"].get<double>() <= lat);
  // On auto the failed check gives two copies: the surface is scanned out of VRAM and nothing underflows.
  const auto two = at(11264, "auto");
  CHECK(path_of(two).rfind("two_copy: CheckMultiplaneOverlaySupport3 StaticCheck failed: a ", 0) == 0);
  CHECK(two["metrics"]["underflows"] == 0);
  CHECK(two["verdict"] == "pass");
  // From the first 64 B step at or above the figure the check passes and the scan-out across the loaded
  // link keeps the refresh (the verdict holds a passed check to that).
  const int first = int(std::ceil(need / 64) * 64);
  const auto pass = at(first, "auto");
  CHECK(pass["metrics"]["static_check_passed"] == true);
  CHECK(path_of(pass).rfind("one_copy: tier 3", 0) == 0);
  CHECK(pass["metrics"]["underflows"] == 0);
  CHECK(pass["verdict"] == "pass");
  const auto below = at(first - 64, "auto");
  CHECK(below["metrics"]["static_check_passed"] == false);
  // At a 25 % watermark the buffer left when a request is issued is a quarter of it: L x need / 0.25 wins.
  const auto quarter = run_json(
      scenario("scanout_underflow") + " --display.fifo_bytes=11264 --display.watermark_pct=25 --present.path=auto",
      "b25");
  CHECK(quarter["metrics"]["static_check_fifo_needed_bytes"].get<double>() == std::ceil(lat * kNeed / 0.25));
}

TEST_CASE("scanout_underflow's verdict holds a passed StaticCheck to its word", "[C5][C6]") {
  // The budget counts the copy engines only (the default). Bulk copies on a compute engine (it runs COPY
  // too) load the link the budget does not see: with 11,264 B it derives L = 550 + (8,192 + 24) / rate +
  // 8,192 / completion rate = 1,728 ns and passes, the scan-out crosses the link and underflows. The verdict
  // names both broken promises.
  const auto j =
      run_json(scenario("scanout_underflow") + " --display.fifo_bytes=11264 --gpu.node1.kind=compute", "unseen", 1);
  const auto& m = j["metrics"];
  CHECK(m["static_check_passed"] == true);
  CHECK(m["static_check_latency_ns"].get<double>() == Approx(budget_latency(8192, 0)).epsilon(1e-9));
  CHECK(m["underflows"].get<int>() > 0);
  CHECK(m["static_check_kept"] == false);
  bool underflowed = false, waited = false;
  for (auto& w : j["why_failed"]) {
    const std::string s = w.get<std::string>();
    underflowed |=
        s.rfind("the StaticCheck passed (", 0) == 0 && s.find("but the scan-out underflowed") != std::string::npos;
    waited |= s.rfind("a scan-out request waited ", 0) == 0 && s.find("beyond the") != std::string::npos;
  }
  CHECK(underflowed);
  CHECK(waited);
}

TEST_CASE(
    "The StaticCheck's budget counts every engine that loads the link: with a 3D engine copying beside the "
    "copy engine, the copy-engines budget passes and underflows, the all-engines one refuses",
    "[C5][C6]") {
  // CASO support C5: "with high accuracy ... given the existing known bandwidth characteristics". Both of the
  // dGPU's engines copy (workload.copy_nodes = 2); a 13,312 B FIFO holds one 8 KiB request.
  const std::string base = scenario("scanout_underflow") + " --display.fifo_bytes=13312 --workload.copy_nodes=2";
  // The default budget, the copy engine's 64 KiB alone: L = 6,611 ns, 12,119 B needed: passed, yet the link,
  // loaded by both engines, delivers late and the one copy the check allowed underflows; the verdict fails it.
  const auto old = run_json(base, "copy_engines", 1);
  CHECK(old["metrics"]["static_check_passed"] == true);
  CHECK(old["metrics"]["static_check_latency_ns"].get<double>() == Approx(budget_latency(8192, 65536)).epsilon(1e-9));
  CHECK(old["metrics"]["underflows"].get<int>() > 0);
  CHECK(old["metrics"]["static_check_kept"] == false);
  // Both engines' 128 KiB: L = 11,493 ns, 15,019 B needed > 13,312: refused, two copies, the refresh kept.
  const auto all = run_json(base + " --gpu.kmd_scanout_budget_masters=all_engines", "all_engines");
  CHECK(all["verdict"] == "pass");
  CHECK(all["metrics"]["static_check_passed"] == false);
  CHECK(all["metrics"]["static_check_latency_ns"].get<double>() ==
        Approx(budget_latency(8192, 2 * 65536)).epsilon(1e-9));
  CHECK(all["metrics"]["static_check_fifo_needed_bytes"].get<double>() ==
        std::ceil(budget_fifo(budget_latency(8192, 2 * 65536))));
  CHECK(path_of(all).rfind("two_copy: CheckMultiplaneOverlaySupport3 StaticCheck failed: a ", 0) == 0);
  CHECK(all["metrics"]["underflows"] == 0);
}

TEST_CASE("hybrid_present with the dGPU driving the panel: one copy on the laptop's link and two where it cannot feed",
          "[C3][C5][C6]") {
  // Default laptop link (Gen4 x8), R8G8B8A8: the dGPU's copy engine keeps 16 x 64 KiB in flight
  // (hybrid_present.ini), so the display's 64 KiB get 64 / (64 + 1024) of the completion rate: 0.82 GB/s
  // against 0.594 needed. One copy: the dGPU scans the iGPU's cross-adapter surface across the link.
  const std::string base = scenario("hybrid_present") + " --workload.frames=12 --display.adapter=gpu";
  const auto one = run_json(base, "dgpu_one");
  CHECK(one["verdict"] == "pass");
  CHECK(path_of(one).rfind("one_copy: tier 3", 0) == 0);
  CHECK(one["metrics"]["underflows"] == 0);
  CHECK(one["metrics"]["frames_displayed"] == 12);
  // Each refresh's scan-out crosses the link: at least a surface a frame (the link carries no copy).
  CHECK(one["metrics"]["link_bytes_per_frame"].get<double>() >= 1920.0 * 1080 * 4);
  // Gen3 x1 and an HDR format (R16G16B16A16_FLOAT, 8 B x 148.5 MHz = 1.188 GB/s) against a link that
  // completes 8 x 1 x 128/130 / 8 x (1 - 16/512 - 4/1538) x 256/276 = 0.882 GB/s even unloaded.
  const std::string slow = base + " --link.gen=3 --link.lanes=1 --display.format=R16G16B16A16_FLOAT";
  const auto two = run_json(slow, "dgpu_two");
  CHECK(two["verdict"] == "pass");
  CHECK(path_of(two).rfind("two_copy: CheckMultiplaneOverlaySupport3 StaticCheck failed: the link delivers", 0) == 0);
  CHECK(two["metrics"]["underflows"] == 0);
  // The same link forced to one copy underflows: the check's answer was the one that keeps the refresh.
  const auto forced = run_json(slow + " --present.path=one_copy", "dgpu_forced", 1);
  CHECK(forced["verdict"] == "fail");
  CHECK(forced["metrics"]["underflows"].get<int>() > 0);
}

TEST_CASE("hybrid_present: a rotated source or another display fails the checks as CASO support says", "[C5]") {
  const std::string base = scenario("hybrid_present") + " --workload.frames=6";
  for (const char* k : {" --display.rotation=90", " --display.other_outputs=1"}) {
    INFO(k);
    const auto j = run_json(base + k, std::string("limited") + (k[11] == 'r' ? "r" : "o"));
    CHECK(j["verdict"] == "pass");
    CHECK(path_of(j).rfind("two_copy: CheckMultiplaneOverlaySupport3 StaticCheck failed: ", 0) == 0);
    CHECK(j["metrics"]["frames_composed"] == 0);
    // Forced to one copy, the present-time check fails every frame: each present is composed.
    const auto f = run_json(base + k + " --present.path=one_copy", std::string("limf") + (k[11] == 'r' ? "r" : "o"));
    CHECK(f["metrics"]["frames_composed"] == 6);
  }
}

TEST_CASE("the StaticCheck's forced answers override the budget and say so", "[C5]") {
  const auto f =
      run_json(scenario("hybrid_present") + " --workload.frames=4 --igpu.kmd_mpo_static_check=fail", "sfail");
  CHECK(path_of(f).find("StaticCheck failed:  (a forced answer; the budget says: the fabric delivers") !=
        std::string::npos);
  const auto p = run_json(scenario("hybrid_present") +
                              " --workload.frames=4 --display.adapter=gpu --link.gen=3 --link.lanes=1 "
                              "--display.format=R16G16B16A16_FLOAT --gpu.kmd_mpo_static_check=pass",
                          "spass", 1);
  CHECK(path_of(p).find("StaticCheck passed:  (a forced answer; the budget says: the link delivers") !=
        std::string::npos);
  CHECK(p["metrics"]["underflows"].get<int>() > 0);
}

TEST_CASE("caps: each driver declares its own adapter's tier and HybridIntegrated below tier 3 is an HLK finding",
          "[C1]") {
  // The dGPU's driver declares tier 3 by default (its display engine scans system memory), whatever it
  // is paired with: hybrid_present with the dGPU displaying takes one copy (above).
  const auto hlk = run_json(
      scenario("hybrid_present") + " --workload.frames=4 --igpu.kmd_cross_adapter_caps=resource+texture", "hlk", 1);
  // The adapter starts (tier 2: two copies, every frame shown) and the verdict names the HLK requirement.
  CHECK(hlk["metrics"]["frames_displayed"] == 4);
  CHECK(path_of(hlk).rfind("two_copy: display adapter is tier 2", 0) == 0);
  CHECK(hlk["monitors"]["hlk_conformance"]["violations"] == 1);
  REQUIRE(hlk["metrics"]["hlk_conformance"].size() == 1);
  CHECK(hlk["metrics"]["hlk_conformance"][0].get<std::string>().rfind(
            "iGPU: HLK Device.Graphics.WDDM30.Render.CoreRequirement fails", 0) == 0);
  // A broken chain still fails adapter start (the document's one refusal).
  const auto chain =
      run_json(scenario("hybrid_present") + " --igpu.kmd_cross_adapter_caps=resource+scanout", "chain", 1);
  bool refused = false;
  for (auto& w : chain["why_failed"])
    refused |= w.get<std::string>().find(
                   "iGPU: adapter start failed: DXGK_VIDMMCAPS declares "
                   "CrossAdapterResourceScanout (tier 3) without CrossAdapterResourceTexture") == 0;
  CHECK(refused);
}

TEST_CASE("D3D12CreateDevice fails when the UMD reports CrossAdapterRowMajorTextureSupported below kernel tier 2",
          "[C1]") {
  const std::string base = scenario("hybrid_present") + " --workload.frames=4 --gpu.kmd_cross_adapter_caps=resource";
  const auto fail = run_json(base, "d3d12", 1);
  bool named = false;
  for (auto& w : fail["why_failed"])
    named |= w.get<std::string>() ==
             "dGPU: D3D12CreateDevice failed: the UMD reports CrossAdapterRowMajorTextureSupported but the kernel "
             "driver's tier is 1 (no CrossAdapterResourceTexture; CASO support, tier 2)";
  CHECK(named);
  // On a tier-2 kernel driver the device is created (tier 2 is the cap's contract, not tier 3).
  const auto tier2 = run_json(
      scenario("hybrid_present") + " --workload.frames=4 --gpu.kmd_cross_adapter_caps=resource+texture", "d3d12t2");
  CHECK(tier2["verdict"] == "pass");
  // Without the UMD cap the device is created on the tier-1 adapter and the frames flow.
  const auto ok = run_json(base + " --gpu.umd_cross_adapter_row_major_texture=false", "d3d12ok");
  CHECK(ok["verdict"] == "pass");
  CHECK(ok["metrics"]["frames_displayed"] == 4);
}

TEST_CASE("hybrid_present with tearing presents: immediate flips where the driver declares them, vsync'd otherwise",
          "[C5][C6]") {
  const std::string base = scenario("hybrid_present") + " --workload.frames=30";
  const auto vsync = run_json(base, "vs");
  const auto tear = run_json(base + " --present.sync_interval=0", "tear");
  CHECK(tear["verdict"] == "pass");
  const auto& m = tear["metrics"];
  CHECK(m["frames_torn"] == 30);
  CHECK(m["frames_displayed"] == 30);
  CHECK(vsync["metrics"]["frames_torn"] == 0);
  // Each torn frame shows from its tear, after its flip was programmed and within what the fetch buffer
  // holds ahead of the beam: the write's MMIO (< 2 us) and the next request, issued at latest when the
  // buffer falls to the watermark, whose first byte is at most a buffer and a request of active pixels
  // ahead of the beam, (262,144 + 8,192) B / 0.594 B/ns = 455.1 us, plus one vertical blank (45 lines,
  // 666.7 us) when the frame's fetch was complete and the request is the next frame's first (a tear at
  // line 0: no visible tear).
  const double lead_ns = (262144.0 + 8192) / 0.594 + 666667 + 2000;
  CHECK(m["present_to_scanout_ns"]["max"].get<double>() <= m["present_to_flip_ns"]["max"].get<double>() + lead_ns);
  CHECK(m["present_to_scanout_ns"]["mean"].get<double>() >= m["present_to_flip_ns"]["mean"].get<double>());
  CHECK(m["tear_line"]["max"].get<double>() < 1080);
  // A vsync'd flip waits for the vblank (on average about half a refresh, 8.3 ms, with the phase sweep) and
  // then the blank (0.67 ms): tearing saves at least the blank on average.
  CHECK(vsync["metrics"]["present_to_scanout_ns"]["mean"].get<double>() -
            m["present_to_scanout_ns"]["mean"].get<double>() >=
        666666);
  // A driver without FlipImmediateMmio: the same presents flip on the vsync, identically to sync interval 1.
  const auto no_caps = run_json(base + " --present.sync_interval=0 --igpu.kmd_flip_immediate=false", "notear");
  CHECK(no_caps["metrics"]["frames_torn"] == 0);
  CHECK(no_caps["metrics"]["present_to_scanout_ns"] == vsync["metrics"]["present_to_scanout_ns"]);
}

TEST_CASE(
    "pfnCreateResource answers NO_SCANOUT from the resource against the display engine's plane, and the "
    "tier-3-minimum answer is a named driver policy",
    "[C4][C5]") {
  const std::string base = scenario("scanout_underflow") + " --display.mode=2560x1440@60 --workload.frames=2";
  // Derived (the default): 2560x1440 fits a 5120x4320 plane; the StaticCheck then passes and one copy follows.
  const auto fits = run_json(base, "plane_fits");
  CHECK(fits["verdict"] == "pass");
  CHECK(path_of(fits).rfind("one_copy: tier 3, cross-adapter primary scanned out (2560x1440", 0) == 0);
  // A plane one pixel narrower than the resource: NO_SCANOUT, two copies, and the reason names the plane.
  const auto narrow = run_json(base + " --display.max_plane_width=2559", "plane_narrow");
  CHECK(narrow["verdict"] == "pass");
  CHECK(path_of(narrow) ==
        "two_copy: pfnCreateResource answered DXGI_DDI_PRIMARY_DRIVER_FLAG_NO_SCANOUT for 2560x1440 R8G8B8A8_UNORM "
        "(beyond the display engine's plane: display.max_plane_width and _height)");
  const auto low = run_json(base + " --display.max_plane_height=1439", "plane_low");
  CHECK(path_of(low).rfind("two_copy: pfnCreateResource answered", 0) == 0);
  // The fixed-size policy: only the tier-3 minimum (1920x1080) is scanned out, whatever the plane.
  const auto policy = run_json(base + " --gpu.kmd_primary_no_scanout=beyond_minimum", "plane_policy");
  CHECK(path_of(policy) ==
        "two_copy: pfnCreateResource answered DXGI_DDI_PRIMARY_DRIVER_FLAG_NO_SCANOUT for 2560x1440 R8G8B8A8_UNORM "
        "(the driver's policy: the tier-3 minimum only)");
}

TEST_CASE("scanout_underflow refuses copy nodes that cannot copy, naming the node's key", "[C6]") {
  // workload.copy_nodes = 2 copies on nodes 1 and 0: a video engine on node 0 cannot run COPY.
  const Run r = run_cli(scenario("scanout_underflow") + " --workload.copy_nodes=2 --gpu.node0.kind=video");
  CHECK(r.code == 2);
  CHECK(r.err.find("gpu.node0.kind = video cannot run COPY") != std::string::npos);
  const Run many = run_cli(scenario("scanout_underflow") + " --workload.copy_nodes=3");
  CHECK(many.code == 2);
  CHECK(many.err.find("workload.copy_nodes = 3 is more than gpu.nodes = 2") != std::string::npos);
}
