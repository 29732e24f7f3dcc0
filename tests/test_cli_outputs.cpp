// Where a run's outputs go: a FILE where given; given bare (--vcd alone), ./build/NAME.* under the
// working directory, made if missing; never into the source tree. And implied keys: set unless the
// user set them, listed in the results, refused as before when the user contradicts them.
#include <filesystem>
#include <fstream>

#include "app/cli.h"
#include "scenarios/common/implied.h"

#include "tb.h"

using namespace tb;
namespace fs = std::filesystem;

namespace {
std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> f;
  for (auto& e : fs::recursive_directory_iterator(dir)) f.insert(fs::relative(e.path(), dir).string());
  return f;
}
std::set<std::string> source_files(const std::string& sub) { return files_in(fs::path(GPUMODEL_SOURCE_DIR) / sub); }
}  // namespace

TEST_CASE("Outputs given without a file go to ./build/ under the working directory and nowhere else", "[H4]") {
  const fs::path d = scratch("cli_outputs", "bare");
  const std::set<std::string> before = source_files("scenarios");
  const Run r = run_in(d, "mmio_roundtrip --vcd --timeline --results");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(files_in(d) == std::set<std::string>{"build", "build/mmio_roundtrip.vcd", "build/mmio_roundtrip.gtkw",
                                             "build/mmio_roundtrip.timeline.json",
                                             "build/mmio_roundtrip.results.json"});
  CHECK(source_files("scenarios") == before);  // nothing beside the scenario file
  // One line each, after the verdict.
  const size_t verdict = r.out.find("verdict: pass");
  REQUIRE(verdict != std::string::npos);
  CHECK(r.out.find("wrote build/mmio_roundtrip.vcd (VCD waveform)\nwrote build/mmio_roundtrip.gtkw (GTKWave save "
                   "file)\n",
                   verdict) != std::string::npos);
  CHECK(r.out.find("wrote build/mmio_roundtrip.timeline.json (Trace Event timeline)\n", verdict) != std::string::npos);
  CHECK(r.out.find("wrote build/mmio_roundtrip.results.json (results JSON)\n", verdict) != std::string::npos);
  CHECK(nlohmann::json::parse(slurp((d / "build/mmio_roundtrip.results.json").string()))["scenario"] ==
        "mmio_roundtrip");
  // Bare before another option; a FILE after the option as before, relative to the working directory.
  const Run q = run_in(d, "mmio_roundtrip --vcd --quiet --results r.json");
  CHECK(q.code == 0);
  CHECK(fs::exists(d / "r.json"));
  CHECK(q.out.find("wrote") == std::string::npos);  // --quiet: no output lines
  // A scenario given as a file: named after the file (a variant's outputs are its own).
  fs::copy_file(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/mmio_roundtrip.ini", d / "mine.ini");
  CHECK(run_in(d, "mine.ini --results --quiet").code == 0);
  CHECK(fs::exists(d / "build/mine.results.json"));
  // --presentmon too, for a scenario that presents.
  CHECK(run_in(d, "frame_loop --workload.frames=3 --presentmon --quiet").code == 0);
  CHECK(slurp((d / "build/frame_loop.presentmon.csv").string()).rfind("Application,", 0) == 0);
  fs::remove_all(d);
}

TEST_CASE("An output is refused in the source tree and a refused run creates no build directory", "[H4]") {
  const std::string src = GPUMODEL_SOURCE_DIR;
  // Run from inside the source tree: the default would land in scenarios/build/.
  const Run in = run_in(src + "/scenarios", "mmio_roundtrip --vcd");
  CHECK(in.code == 2);
  CHECK(in.err.find("--vcd: the default 'build/mmio_roundtrip.vcd' would be in the source tree (scenarios/build)") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(src + "/scenarios/build"));
  // A FILE in a directory of tracked files, or over a file of the project at the top.
  const fs::path d = scratch("cli_outputs", "refused");
  for (const std::string& target : {src + "/scenarios/r.json", src + "/README.md", src + "/docs/x.vcd"}) {
    const Run r = run_in(d, "mmio_roundtrip --results " + target);
    INFO(target << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("is in the source tree") != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK_FALSE(fs::exists(src + "/scenarios/r.json"));
  CHECK_FALSE(fs::exists(src + "/docs/x.vcd"));
  // Refused for another reason: ./build/ is not made either.
  const Run bad = run_in(d, "mmio_roundtrip --vcd --link.gen=9");
  CHECK(bad.code == 2);
  CHECK(files_in(d).empty());
  // A file named build: the default needs a directory.
  std::ofstream(d / "build") << "";
  CHECK(run_in(d, "mmio_roundtrip --results").err.find("'build' is a file") != std::string::npos);
  // Given bare twice, or bare and with a FILE.
  fs::remove(d / "build");
  CHECK(run_in(d, "mmio_roundtrip --vcd --vcd").err.find("--vcd given twice") != std::string::npos);
  CHECK(run_in(d, "mmio_roundtrip --vcd=x.vcd --vcd").err.find("--vcd given twice") != std::string::npos);
  CHECK(files_in(d).empty());
  fs::remove_all(d);
}

TEST_CASE("Implied keys: set unless the user set them and listed in the results", "[H4][F15]") {
  const fs::path d = scratch("cli_outputs", "implied");
  const std::string run = scenario("cross_adapter_fence") + " --workload.signals=2 --results r.json ";
  // xfence.scenario = 2a: an iGPU without native fences, which the user need not say.
  const Run a = run_in(d, run + "--xfence.scenario=2a");
  INFO(a.err);
  REQUIRE(a.code == 0);
  CHECK(a.err ==
        "gpumodel: igpu.kmd_native_gpu_fence = never, implied by xfence.scenario = 2a, xfence.igpu_queue = user (set "
        "igpu.kmd_native_gpu_fence to choose otherwise)\n");
  nlohmann::json j = nlohmann::json::parse(slurp((d / "r.json").string()));
  CHECK(j["parameters"]["igpu.kmd_native_gpu_fence"] == "never");
  CHECK(j["implied"]["igpu.kmd_native_gpu_fence"]["value"] == "never");
  CHECK(j["implied"]["igpu.kmd_native_gpu_fence"]["because"] == "xfence.scenario = 2a, xfence.igpu_queue = user");
  // --quiet: not said, still recorded.
  const Run q = run_in(d, run + "--xfence.scenario=2b --quiet");
  CHECK(q.code == 0);
  CHECK(q.err.empty());
  CHECK(nlohmann::json::parse(slurp((d / "r.json").string()))["implied"]["igpu.kmd_native_gpu_fence"]["because"] ==
        "xfence.scenario = 2b, xfence.igpu_queue = user");
  // Set by the user to the same value: nothing implied.
  const Run s = run_in(d, run + "--xfence.scenario=2a --igpu.kmd_native_gpu_fence=never");
  CHECK(s.code == 0);
  CHECK(s.err.empty());
  CHECK_FALSE(nlohmann::json::parse(slurp((d / "r.json").string())).contains("implied"));
  // Scenario 1 implies nothing.
  CHECK(run_in(d, run + "--quiet").code == 0);
  CHECK_FALSE(nlohmann::json::parse(slurp((d / "r.json").string())).contains("implied"));
  // Set by the user to a contradicting value: refused as before.
  const Run c = run_in(d, run + "--xfence.scenario=2a --igpu.kmd_native_gpu_fence=always");
  CHECK(c.code == 2);
  CHECK(c.err.find("igpu.kmd_native_gpu_fence = always: xfence.scenario = 2a has an iGPU without native fences") !=
        std::string::npos);
  // The kernel-queue variant keeps both GPUs native: nothing implied.
  const Run k = run_in(d, run + "--xfence.scenario=2a --xfence.igpu_queue=kernel --quiet");
  CHECK(k.code == 0);
  CHECK_FALSE(nlohmann::json::parse(slurp((d / "r.json").string())).contains("implied"));
  fs::remove_all(d);
}

TEST_CASE("Implied keys: the platform's pairs", "[H4]") {
  // kmd.paging_va_mb is the driver's answer only under override: giving it implies override.
  ParamSet va = params();
  va.apply_scenario_defaults("mmio_roundtrip");
  va.set("kmd.paging_va_mb", "512", "test");
  const std::vector<Implied> i = apply_implications(va, "mmio_roundtrip");
  REQUIRE(i.size() == 1);
  CHECK(i[0].key == "kmd.paging_va_answer");
  CHECK(i[0].because == "kmd.paging_va_mb = 512");
  CHECK(va.get_enum("kmd.paging_va_answer") == "override");
  CHECK_NOTHROW(validate_scenario(va, "mmio_roundtrip"));
  // The user chose rule: kept, and refused as before.
  ParamSet rule = params({{"kmd.paging_va_mb", "512"}, {"kmd.paging_va_answer", "rule"}});
  rule.apply_scenario_defaults("mmio_roundtrip");
  CHECK(apply_implications(rule, "mmio_roundtrip").empty());
  CHECK_THROWS_WITH(validate_scenario(rule, "mmio_roundtrip"), Catch::Contains("kmd.paging_va_mb"));
  // display.adapter = igpu exists only on the hybrid platform.
  ParamSet disp = params({{"display.adapter", "igpu"}});
  disp.apply_scenario_defaults("mmio_roundtrip");
  REQUIRE(apply_implications(disp, "mmio_roundtrip").size() == 1);
  CHECK(disp.get_enum("platform.topology") == "hybrid");
  // A rule whose key already has the value by default says nothing: no scenario's default is hybrid
  // today, so a set of two keys declared for the test stands for one whose default is.
  ParamSet own;
  own.declare_enum("display.adapter", "auto", {"auto", "gpu", "igpu"}, "test");
  own.declare_enum("platform.topology", "hybrid", {"dgpu", "hybrid"}, "test: hybrid by default");
  own.set("display.adapter", "igpu", "test");
  CHECK(apply_implications(own, "mmio_roundtrip").empty());
  CHECK_FALSE(own.was_set("platform.topology"));
  // A rule whose keys the scenario lacks is skipped: xfence.* belong to cross_adapter_fence.
  ParamSet other = params();
  other.apply_scenario_defaults("fence_signal");
  CHECK(apply_implications(other, "fence_signal").empty());
  // Every rule names keys that exist, a value they take, and the check it spares.
  ParamSet all = params();
  for (const Implication& rule : implications()) {
    INFO(rule.key);
    CHECK(all.known(rule.key));
    CHECK_NOTHROW(all.set(rule.key, rule.value, "test"));
    for (auto& [k, v] : rule.when) CHECK(all.known(k));
    CHECK(!rule.check.empty());
  }
}
