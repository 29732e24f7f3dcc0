// The command line as a user meets it: every kind of bad input exits 2 with one message on stderr that
// names the key or file and what is allowed.
#include <fstream>

#include "scenarios/cli.h"

#include "tb.h"

using namespace tb;

namespace {
std::string write_ini(const std::string& name, const std::string& text) {
  const std::string path = "cli_test_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}
void expect_bad_input(const std::string& args, const std::string& must_name) {
  const Run r = run_cli(args);
  INFO("gpumodel " << args << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(must_name) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one message
  CHECK(r.out.empty());                                       // nothing ran
}
}  // namespace

TEST_CASE("CLI: an unknown key in the scenario file is rejected", "[H4]") {
  expect_bad_input(write_ini("unknown", "scenario = copy_bandwidth\n[link]\ngenn = 4\n"), "link.genn");
}

TEST_CASE("CLI: an unknown key on the command line is rejected", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --link.speed=9", "link.speed");
}

TEST_CASE("CLI: a value of the wrong type is rejected with what is allowed", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --copy.bytes=lots", "copy.bytes");
  expect_bad_input(scenario("copy_bandwidth") + " --link.hop_ns=fast", "a number in");
  expect_bad_input(write_ini("bool", "scenario = copy_bandwidth\n[cpu]\nidle_governor = 3\n"), "one of {fixed, menu}");
}

TEST_CASE("CLI: an out-of-range or disallowed value is rejected with the range", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --link.gen=6", "one of the integers {3, 4, 5}");
  expect_bad_input(scenario("copy_bandwidth") + " --link.lanes=3", "link.lanes");
  expect_bad_input(scenario("copy_bandwidth") + " --link.hop_ns=-1", "link.hop_ns");
  expect_bad_input(scenario("copy_bandwidth") + " --copy.direction=sideways", "h2d, d2h");
}

TEST_CASE("CLI: a missing or unreadable scenario file is rejected", "[H4]") {
  expect_bad_input("no_such_scenario.ini", "no_such_scenario.ini");
  expect_bad_input(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios", "not a regular file");
}

TEST_CASE("CLI: a malformed INI file is rejected", "[H4]") {
  expect_bad_input(write_ini("malformed", "scenario = copy_bandwidth\n[link\ngen = 4\n"), "cli_test_malformed.ini");
  expect_bad_input(write_ini("noequals", "scenario = copy_bandwidth\n[link]\ngen 4\n"), "cli_test_noequals.ini");
  expect_bad_input(write_ini("twice", "scenario = copy_bandwidth\n[link]\ngen = 4\ngen = 5\n"), "link.gen");
}

TEST_CASE("CLI: a missing or unknown scenario name is rejected with the known ones", "[H4]") {
  expect_bad_input(write_ini("noscenario", "[link]\ngen = 4\n"), "scenario = NAME");
  expect_bad_input(write_ini("badscenario", "scenario = warp_drive\n"), "copy_bandwidth, mmio_roundtrip");
}

TEST_CASE("CLI: another scenario's key is rejected", "[H4]") {
  expect_bad_input(scenario("mmio_roundtrip") + " --copy.bytes=64", "belongs to scenario 'copy_bandwidth'");
}

TEST_CASE("CLI: bad options are rejected", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --seed=-3", "--seed");
  expect_bad_input(scenario("copy_bandwidth") + " --seed=abc", "--seed");
  expect_bad_input(scenario("copy_bandwidth") + " --link.gen", "--link.gen");
  expect_bad_input(scenario("copy_bandwidth") + " --vcd", "vcd");
  expect_bad_input(scenario("copy_bandwidth") + " --vcd=/no/such/dir/x.vcd", "/no/such/dir/x.vcd");
  expect_bad_input(scenario("copy_bandwidth") + " " + scenario("mmio_roundtrip"), "one scenario file");
  expect_bad_input("", "no scenario file");
}

TEST_CASE("CLI: --list-params names every parameter with unit, range and source", "[H4]") {
  const Run r = run_cli("--list-params");
  CHECK(r.code == 0);
  const ParamSet ps = params();
  for (auto& [name, spec] : ps.specs()) {
    INFO(name);
    CHECK(r.out.find(name) != std::string::npos);
    CHECK(!spec.source.empty());
  }
  CHECK(r.out.find("source:") != std::string::npos);
}

TEST_CASE("CLI: a fence_race topology that cannot run is refused before anything is built", "[H4]") {
  // The bulk copy takes the last node: one node leaves none to signal.
  expect_bad_input(scenario("fence_race") + " --gpu.nodes=1", "gpu.nodes");
  // Each fence belongs to one signalling node: four signalling nodes need four fences.
  expect_bad_input(scenario("fence_race") + " --workload.fences=3", "workload.fences");
  expect_bad_input(scenario("fence_stress") + " --workload.fences=2", "workload.fences");
  // Without the copy, one node with one fence is fine (a short run, to show the refusal is exact).
  const Run ok = run_cli(scenario("fence_race") + " --gpu.nodes=1 --workload.bulk_copy_bytes=0 --workload.fences=1 "
                         "--workload.signals=50 --workload.waiter_threads=1");
  CHECK(ok.code == 0);
}

// Found by fuzz_scenario_loader: Boost 1.74's message for a malformed line substitutes the line into
// its "%invalid_line%" template until no placeholder is left, so a line holding one looped forever.
TEST_CASE("Loader: a malformed line holding a %placeholder% is refused with its line number", "[H4]") {
  ParamSet ps = params();
  for (const std::string text : {"%invalid_line%\n", "scenario = gpu_wait\n[fence\n", "scenario = gpu_wait\n\n  %p% \n"}) {
    INFO(text);
    try {
      load_scenario_text(text, "x.ini", ps);
      FAIL("accepted");
    } catch (const ConfigError& e) {
      const std::string m = e.what();
      CHECK(m.find("scenario file 'x.ini': line ") == 0);
      CHECK(m.find("is neither [section] nor key = value") != std::string::npos);
    }
  }
}
