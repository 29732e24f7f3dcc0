// Reference platforms as files (platforms/NAME.ini): desktop_gen4 is the built-in defaults written out,
// a key's value comes from the built-in default < the platform file < the scenario file < the command
// line, a run records the platform it ran on, and the platform file is an input like the scenario file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "app/cli.h"
#include "app/cli_internal.h"
#include "app/platform_file.h"
#include "app/sha256.h"

#include "tb.h"

using namespace tb;
namespace fs = std::filesystem;

namespace {

const std::string kPlatforms = std::string(GPUMODEL_SOURCE_DIR) + "/platforms/";

// parse_command_line on `args` (the program's name first), into `ps`.
CliRequest parse_args(const std::vector<std::string>& args, ParamSet& ps) {
  std::vector<const char*> argv{"gpumodel"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_command_line(int(argv.size()), argv.data(), ps);
}

// A results file as text, without what differs between two runs of one configuration on two platform
// files: the wall-clock figures and the platform's record.
std::string results_text_without_platform(const std::string& path) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(slurp(path));
  j.erase("host");
  j.erase("platform");
  return j.dump(2);
}

std::string vcd_without_date(std::string text) {
  const size_t a = text.find("$date"), b = text.find("$end", a);
  if (a != std::string::npos && b != std::string::npos) text.erase(a, b + 4 - a);
  return text;
}

}  // namespace

TEST_CASE("desktop_gen4 sets every key it names to the built-in default: selecting it changes no value", "[H4]") {
  ParamSet builtin = params(), desktop = params();
  const cli::PlatformFile f = cli::apply_platform_file("desktop_gen4", "test", desktop);
  REQUIRE(f.entries.size() >= 20);  // a whole description, not an empty file that passes by itself
  for (const cli::PlatformEntry& e : f.entries) {
    INFO(e.key << " = " << e.value << " (line " << e.line << ")");
    CHECK(desktop.effective("fence_signal")[e.key] == builtin.effective("fence_signal")[e.key]);
  }
  CHECK(desktop.effective("frame_loop") == builtin.effective("frame_loop"));
}

TEST_CASE("The reference platforms describe the same keys, each with a source", "[H4]") {
  ParamSet a = params(), b = params();
  const cli::PlatformFile desktop = cli::apply_platform_file("desktop_gen4", "test", a);
  const cli::PlatformFile laptop = cli::apply_platform_file("laptop_hybrid", "test", b);
  std::vector<std::string> dk, lk;
  for (auto& e : desktop.entries) dk.push_back(e.key);
  for (auto& e : laptop.entries) lk.push_back(e.key);
  CHECK(dk == lk);  // a key one sets, the other states too: the calibration page compares them row by row
  for (auto& e : laptop.entries) {
    INFO(e.key);
    CHECK((e.source.rfind("source: ", 0) == 0 || e.source.rfind("assumption: ", 0) == 0));
  }
  // The reader keeps the comment above a key as its source (the calibration page shows it).
  bool lanes = false;
  for (auto& e : laptop.entries)
    if (e.key == "link.lanes") {
      lanes = true;
      CHECK(e.value == "8");
      CHECK(e.source.find("PCIe 4.0 x8") != std::string::npos);
    }
  CHECK(lanes);
  CHECK(b.get_enum("platform.topology") == "hybrid");
  CHECK(b.get_int("link.lanes") == 8);
  CHECK(b.get_enum("display.mode") == "2560x1600@240");
}

TEST_CASE("Precedence: built-in default < platform file < scenario file < command line", "[H4]") {
  const fs::path d = scratch("platform_files", "precedence");
  // Each key set at one more level than the one before it.
  put(d / "p.ini",
      "# A test platform.\n\n# source: test\nlink.hop_ns = 111\n# source: test\nrc.latency_ns = 31\n"
      "# source: test\nsysmem.read_latency_ns = 91\n");
  put(d / "q.ini", "# Another.\n\n# source: test\nrc.latency_ns = 32\n# source: test\nlink.hop_ns = 112\n");
  put(d / "s.ini",
      "scenario = mmio_roundtrip\nplatform = p.ini\n[rc]\nlatency_ns = 41\n[sysmem]\nread_latency_ns = 92\n");
  ParamSet ps = params();
  const CliRequest req = parse_args({(d / "s.ini").string(), "--sysmem.read_latency_ns=93"}, ps);
  CHECK(ps.get_real("link.l1_exit_us") == 4);          // built-in, no level sets it
  CHECK(ps.get_real("link.hop_ns") == 111);            // the platform's over the built-in 200
  CHECK(ps.get_real("rc.latency_ns") == 41);           // the scenario file's over the platform's 31
  CHECK(ps.get_real("sysmem.read_latency_ns") == 93);  // the command line's over the file's 92
  CHECK(req.platform.name == "p");
  CHECK(req.platform.file == (d / "p.ini").string());  // a relative `platform =` from the file's folder
  // A platform's value is no value the user set: implied keys and the checks treat it as a default.
  CHECK_FALSE(ps.was_set("link.hop_ns"));
  CHECK(ps.was_set("rc.latency_ns"));
  // --platform replaces the file's platform, under the file's own keys still.
  ParamSet other = params();
  const CliRequest r2 = parse_args({(d / "s.ini").string(), "--platform=" + (d / "q.ini").string()}, other);
  CHECK(other.get_real("link.hop_ns") == 112);
  CHECK(other.get_real("rc.latency_ns") == 41);
  CHECK(other.get_real("sysmem.read_latency_ns") == 92);
  CHECK(r2.platform.name == "q");
  // No platform named: desktop_gen4, from the source tree.
  ParamSet dflt = params();
  const CliRequest r3 = parse_args({scenario("mmio_roundtrip")}, dflt);
  CHECK(r3.platform.name == "desktop_gen4");
  CHECK(r3.platform.file == kPlatforms + "desktop_gen4.ini");
  fs::remove_all(d);
}

TEST_CASE("A platform's keys for hardware a scenario leaves out are not refused as the user's would be", "[H4]") {
  // laptop_hybrid sets display.mode and igpu.*: on the dGPU platform, which a scenario file or the
  // command line may choose, they configure nothing, and only a key the user set is refused for that.
  ParamSet ps = params();
  CHECK_NOTHROW(parse_args({scenario("mmio_roundtrip"), "--platform=laptop_hybrid", "--platform.topology=dgpu"}, ps));
  CHECK(ps.get_enum("display.mode") == "2560x1600@240");
  ParamSet user = params();
  CHECK_THROWS_WITH(parse_args({scenario("mmio_roundtrip"), "--platform=laptop_hybrid", "--platform.topology=dgpu",
                                "--igpu.engine_clock_mhz=2250"},
                               user),
                    Catch::Contains("igpu.engine_clock_mhz configures the integrated adapter"));
}

TEST_CASE("desktop_gen4 runs give the results and waveform of the built-in defaults, byte for byte", "[H4]") {
  const fs::path d = scratch("platform_files", "identical");
  // A platform file that sets nothing: the built-in defaults.
  put(d / "none.ini", "# The built-in defaults, nothing set.\n");
  for (const std::string name : {"mmio_roundtrip", "hybrid_present"}) {
    INFO(name);
    const std::string a = (d / (name + "_a")).string(), b = (d / (name + "_b")).string();
    const Run ra = run_cli(scenario(name) + " --platform=" + (d / "none.ini").string() + " --results " + a +
                           ".json --vcd " + a + ".vcd --quiet");
    const Run rb =
        run_cli(scenario(name) + " --platform=desktop_gen4 --results " + b + ".json --vcd " + b + ".vcd --quiet");
    REQUIRE(ra.code == 0);
    REQUIRE(rb.code == 0);
    CHECK(results_text_without_platform(a + ".json") == results_text_without_platform(b + ".json"));
    CHECK(vcd_without_date(slurp(a + ".vcd")) == vcd_without_date(slurp(b + ".vcd")));
  }
  fs::remove_all(d);
}

TEST_CASE("A run records its platform: name, file and SHA-256, in the results and the header", "[H4]") {
  const fs::path d = scratch("platform_files", "record");
  const std::string out = (d / "r.json").string();
  Run r = run_cli(scenario("mmio_roundtrip") + " --platform=laptop_hybrid --quiet --results " + out);
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(slurp(out));
  const std::string file = kPlatforms + "laptop_hybrid.ini";
  CHECK(j["platform"]["name"] == "laptop_hybrid");
  CHECK(j["platform"]["path"] == file);
  CHECK(j["platform"]["sha256"] == sha256_hex(slurp(file)));
  CHECK(r.out.find("platform laptop_hybrid  file " + file + "  sha256 " + sha256_hex(slurp(file))) !=
        std::string::npos);
  CHECK(j["parameters"]["platform.topology"] == "hybrid");
  CHECK(j["parameters"]["sysmem.bandwidth_gbps"] == 119.472);
  // None named: desktop_gen4.
  r = run_cli(scenario("mmio_roundtrip") + " --quiet --results " + out);
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(slurp(out));
  CHECK(j["platform"]["name"] == "desktop_gen4");
  CHECK(j["platform"]["sha256"] == sha256_hex(slurp(kPlatforms + "desktop_gen4.ini")));
  fs::remove_all(d);
}

TEST_CASE("The platform file is an input: no output replaces it, and it is bounded", "[H4]") {
  const fs::path d = scratch("platform_files", "input");
  fs::copy_file(kPlatforms + "laptop_hybrid.ini", d / "p.ini");
  const std::string before = slurp((d / "p.ini").string());
  for (const std::string opt : {"--results", "--timeline", "--vcd"})
    expect_bad_input(
        scenario("mmio_roundtrip") + " --platform=" + (d / "p.ini").string() + " " + opt + " " + (d / "p.ini").string(),
        opt + " '" + (d / "p.ini").string() + "' is the platform file, which the run reads");
  CHECK(slurp((d / "p.ini").string()) == before);
  // An unknown key's suggestions are platform keys only: the one a near miss of a driver key would find
  // (kmd.ring_bytes) is not one a platform file may set, so nothing is suggested.
  put(d / "driver_key.ini", "# source: none\nkmd.ring_byte = 4\n");
  const Run near = run_cli(scenario("mmio_roundtrip") + " --platform=" + (d / "driver_key.ini").string());
  CHECK(near.code == 2);
  CHECK(near.err.find("unknown key 'kmd.ring_byte'") != std::string::npos);
  CHECK(near.err.find("did you mean") == std::string::npos);
  put(d / "big.ini", "# big\n" + std::string(cli::kMaxScenarioFileBytes, '#') + "\n");
  expect_bad_input(scenario("mmio_roundtrip") + " --platform=" + (d / "big.ini").string(),
                   "allowed: a platform file of at most 1048576 bytes (1 MiB)");
  fs::remove_all(d);
}

TEST_CASE("gpumodel --list-platforms: each platform with its description, the default marked", "[H4]") {
  const Run r = run_cli("--list-platforms");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("desktop_gen4               A desktop discrete GPU on PCIe Gen4 x16") != std::string::npos);
  CHECK(r.out.find("(the default)") != std::string::npos);
  CHECK(r.out.find("laptop_hybrid              A hybrid laptop of 2024: Core Ultra 7 155H and its iGPU") !=
        std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
}

TEST_CASE("laptop_hybrid runs every scenario file, or refuses one that presents through the dGPU's display", "[H4]") {
  // Each file with the shorter workload the golden runs give it (tests/golden/scenario_results.json).
  const nlohmann::json golden =
      nlohmann::json::parse(slurp(std::string(GPUMODEL_SOURCE_DIR) + "/tests/golden/scenario_results.json"));
  // Their scenario files make the dGPU drive the panel (display.adapter = gpu), which the hybrid laptop's
  // iGPU drives: the platform's topology under a file that does not set it is refused, naming both keys.
  const std::set<std::string> refused = {"frame_loop", "presentmon_replay", "video_playback"};
  const fs::path d = scratch("platform_files", "laptop");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".ini") continue;
    const std::string name = e.path().stem().string();
    ++files;
    INFO(name);
    REQUIRE(golden.contains(name));  // every scenario file has its golden run
    std::string args = e.path().string() + " --platform=laptop_hybrid --quiet --results " + (d / "r.json").string();
    for (auto& a : golden[name]["args"]) args += " " + a.get<std::string>();
    const Run r = run_cli(args);
    INFO(r.err);
    if (refused.count(name)) {
      CHECK(r.code == 2);
      CHECK(r.err.find("platform.topology = hybrid with display.adapter = gpu") != std::string::npos);
      // ... and says where the topology came from.
      CHECK(r.err.find("; platform.topology = hybrid is the platform laptop_hybrid's (" + kPlatforms +
                       "laptop_hybrid.ini): choose another with --platform, or set platform.topology in the "
                       "scenario file") != std::string::npos);
      continue;
    }
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(slurp((d / "r.json").string()));
    CHECK(j["verdict"] == "pass");
    CHECK(j["platform"]["name"] == "laptop_hybrid");
  }
  CHECK(files == golden.size());
  fs::remove_all(d);
}
