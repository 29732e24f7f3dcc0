// The command line suggests: a misspelt key, option, scenario name or enum value is refused as before
// (one line, exit 2) and the line names the closest known names; `gpumodel NAME` runs the source
// tree's scenarios/NAME.ini; an output option given without a file writes under ./build/, never into
// the source tree; a key another key implies is set unless the user set it.
#include <filesystem>
#include <fstream>

#include "app/cli.h"
#include "app/suggest.h"
#include "scenarios/common/implied.h"

#include "tb.h"

using namespace tb;
namespace fs = std::filesystem;

namespace {
// The message of a refusal with no suggestion in it.
void expect_no_suggestion(const std::string& args) {
  const Run r = run_cli(args);
  INFO("gpumodel " << args << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean") == std::string::npos);
}
}  // namespace

TEST_CASE("Suggest: case and dashes first then edits and prefixes then shared words and nothing silly", "[H4]") {
  const std::vector<std::string> keys = {"link.lanes",
                                         "link.gen",
                                         "display.fifo_bytes",
                                         "node.fifo_bytes",
                                         "vram.size_bytes",
                                         "vidsch.tdr_delay_ms",
                                         "vidsch.tdr_limit_count",
                                         "cpu.c6_exit_ns",
                                         "node.gate_delay_us"};
  using V = std::vector<std::string>;
  CHECK(suggest("link.lane", keys) == V{"link.lanes"});
  CHECK(suggest("LINK.LANES", keys) == V{"link.lanes"});                 // case alone
  CHECK(suggest("vidsch.tdr_delay", keys) == V{"vidsch.tdr_delay_ms"});  // three edits
  CHECK(suggest("vidsch.tdr_del", keys) == V{"vidsch.tdr_delay_ms"});    // a prefix only (five edits)
  CHECK(suggest("display.fifo_size", keys) == V{"display.fifo_bytes", "node.fifo_bytes"});  // a shared word
  CHECK(suggest("tdr_delay", keys) == V{"vidsch.tdr_delay_ms"});  // both words, not gate_delay's one
  CHECK(suggest("c6", keys) == V{"cpu.c6_exit_ns"});
  CHECK(suggest("one-copy", V{"auto", "one_copy", "two_copy", "compose"}) == V{"one_copy"});
  // Another form of each word (three edits away): copies for copy, not one_copy's one shared word.
  CHECK(suggest("two_copies", V{"auto", "one_copy", "two_copy", "compose"}) == V{"two_copy"});
  CHECK(suggest("link.lane_count", keys) == V{"link.lanes"});
  CHECK(suggest("node.gate_us", V{"node.gating_delay_us", "node.static_us"}) == V{"node.gating_delay_us"});
  CHECK(suggest("kmd.ring_entry", V{"kmd.event_ring_entries", "kmd.ring_entrance"}) == V{"kmd.event_ring_entries"});
  // Sharing a start is no other form: state is not static, scan not scale, hang not handles.
  CHECK(suggest("cpu.state", V{"cpu.idle_state", "gpu.kmd_mpo_static_check"}) == V{"cpu.idle_state"});
  CHECK(suggest("display.scale", V{"power.display_scan_mw"}).empty());
  CHECK(suggest("kmd.hang", V{"kmd.validate_signaled_handles"}).empty());
  CHECK(suggest("c6", V{"C1", "C1E", "C3", "C6"}) == V{"C6"});
  CHECK(suggest("fence_signl", V{"fence_signal", "fence_stress", "fence_race"}) == V{"fence_signal"});
  CHECK(suggest("xfence.scenaro", V{"xfence.scenario"}) == V{"xfence.scenario"});  // a swap is one edit
  // The edit budget by length, on words no prefix or shared word would find: two edits from 6 to 10
  // characters, three from 11 on; one more is too many.
  CHECK(suggest("fence_sgnl", V{"fence_signal", "fence_stress", "fence_race"}) == V{"fence_signal"});
  CHECK(suggest("xfence.scnro", V{"xfence.scenario"}) == V{"xfence.scenario"});
  CHECK(suggest("fence_sgl", V{"fence_signal"}).empty());
  CHECK(suggest("xfence.scno", V{"xfence.scenario"}).empty());
  CHECK(edit_distance("scenaro", "scenaior") == 2);
  CHECK(edit_distance("ab", "ba") == 1);
  // Nothing close: no suggestion rather than a silly one.
  CHECK(suggest("link.speed", keys).empty());
  CHECK(suggest("c7", V{"C1", "C1E", "C3", "C6"}).empty());  // two characters: no edits
  CHECK(suggest("warp_drive", V{"fence_signal", "copy_bandwidth"}).empty());
  CHECK(suggest("x", keys).empty());
  // At most three.
  CHECK(suggest("cpu.c", V{"cpu.c1", "cpu.c2", "cpu.c3", "cpu.c4"}).size() == 3);
  CHECK(did_you_mean({"a", "b", "c"}) == "; did you mean 'a', 'b' or 'c'?");
  CHECK(did_you_mean({}).empty());
}

TEST_CASE("CLI: an unknown key or option names the closest keys", "[H4]") {
  // The four: a missing letter, another word for a unit, a missing unit, a C-state as a key.
  expect_bad_input(scenario("copy_bandwidth") + " --link.lane=4",
                   "unknown key 'link.lane' (gpumodel --list-params lists every key); did you mean '--link.lanes'?");
  expect_bad_input(scenario("hybrid_present") + " --display.fifo_size=4",
                   "did you mean '--display.fifo_bytes' or '--node.fifo_bytes'?");
  expect_bad_input(scenario("tdr_engine_reset") + " --vidsch.tdr_delay=2", "did you mean '--vidsch.tdr_delay_ms'?");
  expect_bad_input(scenario("fence_signal") + " --c6=1", "'--cpu.idle_state=C6'");
  expect_bad_input(scenario("fence_signal") + " --c6=1", "'--cpu.c6_exit_ns'");
  expect_bad_input(scenario("fence_signal") + " --vdc", "unknown option '--vdc'");
  expect_bad_input(scenario("fence_signal") + " --vdc", "did you mean '--vcd'?");
  // In a scenario file, as the file writes it.
  std::ofstream("cli_suggest_key.ini") << "scenario = copy_bandwidth\n[link]\nlane = 4\n";
  expect_bad_input("cli_suggest_key.ini",
                   "unknown key 'link.lane' (gpumodel --list-params lists every key); did you "
                   "mean 'link.lanes'?");
  // An instance key: the instance's own keys.
  expect_bad_input(scenario("tdr_engine_reset") + " --gpu.node1.reset_n=5", "did you mean '--gpu.node1.reset_ns'?");
  // Another scenario's key, misspelt: whose it is. Spelt right: which scenario has it, as before.
  expect_bad_input(scenario("mmio_roundtrip") + " --copy.byte=64",
                   "did you mean '--copy.bytes' (scenario 'copy_bandwidth')?");
  expect_bad_input(scenario("mmio_roundtrip") + " --copy.bytes=64", "belongs to scenario 'copy_bandwidth'");
  // Nothing close: the message as it was.
  expect_no_suggestion(scenario("copy_bandwidth") + " --link.speed=9");
  expect_no_suggestion(scenario("copy_bandwidth") + " --verbose");
}

TEST_CASE("CLI: a value of an enum or boolean close to an allowed one is named", "[H4]") {
  expect_bad_input(scenario("hybrid_present") + " --present.path=one-copy",
                   "present.path = 'one-copy' is not allowed; allowed: one of {auto, one_copy, two_copy, compose}; did "
                   "you mean 'one_copy'?");
  expect_bad_input(scenario("fence_signal") + " --cpu.idle_state=c6", "did you mean 'C6'?");
  expect_bad_input(scenario("fence_race") + " --cmp.barrier=True", "did you mean 'true'?");
  std::ofstream("cli_suggest_enum.ini") << "scenario = fence_signal\n[cpu]\nidle_state = c1e\n";
  expect_bad_input("cli_suggest_enum.ini", "did you mean 'C1E'?");
  expect_no_suggestion(scenario("fence_race") + " --cmp.barrier=yes");
  expect_no_suggestion(scenario("fence_signal") + " --cpu.idle_state=c7");
}

// A display mode written another way: the named modes at the least distance in pixels (or lines) and
// hertz, each by ratio; every mode at that distance, in the list's order.
TEST_CASE("Suggest: the display modes nearest to a value that names a resolution or a refresh", "[H4][C6]") {
  const std::vector<std::string> modes = {"1280x720@60",   "1920x1080@60", "1920x1080@120",
                                          "2560x1440@120", "3840x2160@60", "3840x2160@120"};
  CHECK(nearest_modes("@120hz", modes) == std::vector<std::string>{"1920x1080@120", "2560x1440@120", "3840x2160@120"});
  CHECK(nearest_modes("120 Hz", modes) == std::vector<std::string>{"1920x1080@120", "2560x1440@120", "3840x2160@120"});
  CHECK(nearest_modes("1080p60", modes) == std::vector<std::string>{"1920x1080@60"});
  CHECK(nearest_modes("4K@120", modes) == std::vector<std::string>{"3840x2160@120"});
  CHECK(nearest_modes("1920x1080", modes) == std::vector<std::string>{"1920x1080@60", "1920x1080@120"});
  // 2560x1600 is nearer 2560x1440 than 3840x2160 in pixels; 100 Hz nearer 120 than 60 by ratio.
  CHECK(nearest_modes("2560 x 1600 @ 100", modes) == std::vector<std::string>{"2560x1440@120"});
  CHECK(nearest_modes("1440p", modes) == std::vector<std::string>{"2560x1440@120"});
  CHECK(nearest_modes("@120hz", modes, 2) == std::vector<std::string>{"1920x1080@120", "2560x1440@120"});
  // A resolution of zero compares with nothing (no infinite distance ties every mode): only the refresh counts.
  CHECK(nearest_modes("1280x000@120", modes) ==
        std::vector<std::string>{"1920x1080@120", "2560x1440@120", "3840x2160@120"});
  CHECK(nearest_modes("foo", modes).empty());
  CHECK(nearest_modes("native", modes).empty());
}

TEST_CASE("CLI: a display mode written another way names the nearest modes, or the form it meant", "[H4][C6]") {
  expect_bad_input(scenario("fence_signal") + " --display.mode=@120hz",
                   "did you mean '1280x720@120', '1920x1080@120', '2560x1440@120' or '3840x2160@120'?");
  expect_bad_input(scenario("fence_signal") + " --display.mode=1080p60", "did you mean '1920x1080@60'?");
  // A valid form but for its "Hz": the form itself, not a named mode.
  expect_bad_input(scenario("fence_signal") + " --display.mode=2560x1600@240Hz", "did you mean '2560x1600@240'?");
  expect_no_suggestion(scenario("fence_signal") + " --display.mode=foo");
}

TEST_CASE("CLI: a setting's name as the registry spells it names its key", "[H4][T3]") {
  expect_bad_input(scenario("tdr_engine_reset") + " --vidsch.tdrdelay=2",
                   "unknown key 'vidsch.tdrdelay' (gpumodel --list-params lists every key); did you mean "
                   "'--vidsch.tdr_delay_ms' (the registry's TdrDelay, in seconds there)?");
  expect_bad_input(scenario("tdr_engine_reset") + " --TdrLimitCount=3",
                   "did you mean '--vidsch.tdr_limit_count' (the registry's TdrLimitCount)?");
  expect_bad_input(scenario("tdr_engine_reset") + " --tdrlimittime=10",
                   "did you mean '--vidsch.tdr_limit_time_ms' (the registry's TdrLimitTime, in seconds there)?");
  // In a scenario file too.
  std::ofstream("cli_suggest_registry.ini") << "scenario = tdr_engine_reset\n[vidsch]\nTdrDelay = 2\n";
  expect_bad_input("cli_suggest_registry.ini", "did you mean 'vidsch.tdr_delay_ms' (the registry's TdrDelay");
}

TEST_CASE("CLI: a misspelt scenario name in a file or on the command line names the closest", "[H4]") {
  std::ofstream("cli_suggest_scenario.ini") << "scenario = fence_signl\n";
  expect_bad_input("cli_suggest_scenario.ini", "scenario = 'fence_signl' is not a scenario");
  expect_bad_input("cli_suggest_scenario.ini", "did you mean 'fence_signal'?");
  expect_bad_input("fence_signl", "'fence_signl' is neither a scenario file nor a scenario name");
  expect_bad_input("fence_signl", "did you mean 'fence_signal'?");
  expect_bad_input("fence_race_no_barier", "did you mean 'fence_race_no_barrier'");  // a variant's file
  expect_bad_input("fence_signl.ini", "did you mean 'fence_signal'?");
  // A path: the closest file beside it.
  expect_bad_input(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/fence_signl.ini",
                   "did you mean '" + std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/fence_signal.ini'?");
  expect_no_suggestion("warp_drive");
}

TEST_CASE("CLI: gpumodel NAME runs scenarios/NAME.ini and --list-scenarios lists every such name", "[H4]") {
  const Run r = run_cli("mmio_roundtrip --quiet");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("scenario mmio_roundtrip") == 0);
  CHECK(r.out.find("verdict: pass") != std::string::npos);
  const fs::path d = scratch("cli_suggest", "name");
  // From anywhere: a relative path in the file (frame_loop's workload.file) is still the file's folder's.
  const Run f = run_in(d, "frame_loop --workload.frames=3 --quiet");
  INFO(f.err);
  CHECK(f.code == 0);
  CHECK(f.out.find("\"" + std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/../workloads/game.json\"") !=
        std::string::npos);
  // An existing file of that name in the working directory is what the user means.
  std::ofstream(d / "mmio_roundtrip") << "scenario = copy_bandwidth\n";
  CHECK(run_in(d, "mmio_roundtrip --quiet").out.find("scenario copy_bandwidth") == 0);
  fs::remove_all(d);

  const Run l = run_cli("--list-scenarios");
  REQUIRE(l.code == 0);
  std::set<std::string> listed;
  std::istringstream lines(l.out);
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(0, line.find(' '));
    INFO(line);
    CHECK(fs::is_regular_file(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/" + name + ".ini"));
    CHECK(line.find_first_not_of(' ', line.find(' ')) != std::string::npos);  // and says what it runs
    listed.insert(name);
  }
  size_t files = 0;
  for (auto& e : fs::directory_iterator(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios"))
    files += e.path().extension() == ".ini";
  CHECK(listed.size() == files);
  for (const ScenarioInfo& s : scenario_registry()) CHECK(listed.count(s.name));
  CHECK(listed.count("fence_race_no_barrier"));
  CHECK(l.out.find("fence_race_no_barrier      (fence_race) ") != std::string::npos);
}
