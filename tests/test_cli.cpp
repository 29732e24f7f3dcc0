// The command line as a user meets it: every kind of bad input exits 2 with one message on stderr that
// names the key or file and what is allowed.
#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/cli.h"

#include "tb.h"

using namespace tb;

namespace {
std::string write_cli_ini(const std::string& name, const std::string& text) {
  const std::string path = "cli_test_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("CLI: an unknown key in the scenario file is rejected", "[H4]") {
  expect_bad_input(write_cli_ini("unknown", "scenario = copy_bandwidth\n[link]\ngenn = 4\n"), "link.genn");
}

TEST_CASE("CLI: an unknown key on the command line is rejected", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --link.speed=9", "link.speed");
}

TEST_CASE("CLI: a value of the wrong type is rejected with what is allowed", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --copy.bytes=lots", "copy.bytes");
  expect_bad_input(scenario("copy_bandwidth") + " --link.hop_ns=fast", "a number in");
  expect_bad_input(write_cli_ini("bool", "scenario = copy_bandwidth\n[cpu]\nidle_governor = 3\n"),
                   "one of {fixed, menu}");
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
  expect_bad_input(write_cli_ini("malformed", "scenario = copy_bandwidth\n[link\ngen = 4\n"), "cli_test_malformed.ini");
  expect_bad_input(write_cli_ini("noequals", "scenario = copy_bandwidth\n[link]\ngen 4\n"), "cli_test_noequals.ini");
  expect_bad_input(write_cli_ini("twice", "scenario = copy_bandwidth\n[link]\ngen = 4\ngen = 5\n"), "link.gen");
}

TEST_CASE("CLI: a missing or unknown scenario name is rejected with the known ones", "[H4]") {
  expect_bad_input(write_cli_ini("noscenario", "[link]\ngen = 4\n"), "scenario = NAME");
  expect_bad_input(write_cli_ini("badscenario", "scenario = warp_drive\n"), "copy_bandwidth, mmio_roundtrip");
}

TEST_CASE("CLI: another scenario's key is rejected", "[H4]") {
  expect_bad_input(scenario("mmio_roundtrip") + " --copy.bytes=64", "belongs to scenario 'copy_bandwidth'");
}

TEST_CASE("CLI: bad options are rejected", "[H4]") {
  expect_bad_input(scenario("copy_bandwidth") + " --seed=-3", "--seed");
  expect_bad_input(scenario("copy_bandwidth") + " --seed=abc", "--seed");
  expect_bad_input(scenario("copy_bandwidth") + " --link.gen", "--link.gen");
  expect_bad_input(scenario("copy_bandwidth") + " --vcd=", "the argument for option '--vcd'");
  expect_bad_input(scenario("copy_bandwidth") + " --vcd --vcd", "--vcd given twice");
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
  const Run ok = run_cli(scenario("fence_race") +
                         " --gpu.nodes=1 --workload.bulk_copy_bytes=0 --workload.fences=1 "
                         "--workload.signals=50 --workload.waiter_threads=1");
  CHECK(ok.code == 0);
}

TEST_CASE("Params: a shared key takes the range of the scenario that runs", "[H4]") {
  // fence_race declares workload.signals up to 1e9, conditional_interrupt up to 1e8: each scenario's
  // own range applies, whichever scenario declared the key first.
  ParamSet race = params();
  race.apply_scenario_defaults("fence_race");
  CHECK_NOTHROW(race.set("workload.signals", "500000000", "test"));
  CHECK(race.get_int("workload.signals") == 500000000);
  ParamSet cond = params();
  cond.apply_scenario_defaults("conditional_interrupt");
  CHECK_THROWS_WITH(cond.set("workload.signals", "500000000", "test"),
                    Catch::Contains("workload.signals") && Catch::Contains("[1, 100000000]"));
  // --list-params shows each scenario's own range.
  const Run r = run_cli("--list-params");
  CHECK(r.out.find("an integer in [1, 100000000] signals") != std::string::npos);
  CHECK(r.out.find("an integer in [1, 1000000000] signals") != std::string::npos);
}

TEST_CASE("Params: integers are decimal or 0x hexadecimal, never octal", "[H4]") {
  ParamSet ps = params();
  ps.set("gpu.nodes", "0x8", "test");
  CHECK(ps.get_int("gpu.nodes") == 8);
  ps.set("gpu.nodes", "10", "test");
  CHECK(ps.get_int("gpu.nodes") == 10);
  CHECK_THROWS_WITH(ps.set("gpu.nodes", "010", "test"), Catch::Contains("leading zero"));
  CHECK_THROWS_WITH(ps.set("gpu.nodes", " 8", "test"), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(ps.set("gpu.nodes", "18446744073709551616", "test"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(ps.set("link.hop_ns", "1e999", "test"), Catch::Contains("out of range"));
}

TEST_CASE("Monitors: the wake bound does not change the simulated run", "[F7][H4]") {
  // An observer must not change what it observes: the lost-interrupt monitor judges waiters when they
  // leave and at the end, with no timer of its own, so the simulated end time and every model metric
  // are the same whatever the bound; only the verdict on lateness changes. 20,000 signals: since each
  // process reaches its fences through its own mappings, the 4,000 of the golden run lose one interrupt
  // and wake no waiter late, so the bound would change nothing there.
  auto run = [](const std::string& bound) {
    const std::string out = "cli_test_bound_" + bound + ".json";
    const Run r = run_cli(scenario("fence_race_no_barrier") +
                          " --workload.signals=20000 --monitor.wake_bound_ns=" + bound + " --results " + out);
    std::ifstream in(out);
    return nlohmann::json::parse(in);
  };
  const nlohmann::json tight = run("100000"), loose = run("100000000");
  CHECK(tight["sim_time_ns"] == loose["sim_time_ns"]);
  CHECK(tight["metrics"]["signals"] == loose["metrics"]["signals"]);
  CHECK(tight["metrics"]["interrupts_raised"] == loose["metrics"]["interrupts_raised"]);
  CHECK(tight["metrics"]["cpu_wait_timeouts"] == loose["metrics"]["cpu_wait_timeouts"]);
  CHECK(tight["monitors"]["lost_interrupt"]["violations"].get<int>() > 0);  // the race loses some ...
  CHECK(loose["monitors"]["lost_interrupt"]["violations"].get<int>() <
        tight["monitors"]["lost_interrupt"]["violations"].get<int>());  // ... a looser bound forgives late ones
}

namespace {
// Every number in the metrics (nested objects too) finite and not negative.
bool metrics_sane(const nlohmann::json& j) {
  if (j.is_number()) return std::isfinite(j.get<double>()) && j.get<double>() >= 0;
  if (j.is_object() || j.is_array())
    for (auto& v : j)
      if (!metrics_sane(v)) return false;
  return true;
}
}  // namespace

TEST_CASE("fence_signal: a delay too short to arm the wait fails with why, never a negative stage", "[F3][H4]") {
  // With no GPU work before the SIGNAL, it runs while DxgkDdiUpdateMonitoredValues is still arming the
  // wait: the thread is woken by F8's re-read or by a second interrupt, and the stage stamps would come
  // from different interrupts (they gave isr_ns = -8208). The run says so instead of reporting them.
  // The SIGNAL starts ~10.9 us into the run plus the delay (its queue's ring fetch and the fence's
  // creation include cold-TLB walks); the wait is armed at ~11.3 us: 0 and 0.25 us are too short.
  for (const char* delay : {"0", "0.25"}) {
    const std::string out = std::string("cli_test_fs_delay_") + delay + ".json";
    const Run r = run_cli(scenario("fence_signal") + " --workload.signal_delay_us=" + delay + " --results " + out);
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("FAILED: workload.signal_delay_us = " + std::string(delay) + " is too short") !=
          std::string::npos);
    std::ifstream in(out);
    const nlohmann::json j = nlohmann::json::parse(in);
    CHECK(metrics_sane(j["metrics"]));
    CHECK(!j["metrics"].contains("isr_ns"));
  }
  // 5 us of GPU work is enough: the wait is armed (~11.3 us into the run) before the SIGNAL starts (~15.9 us).
  const Run ok = run_cli(scenario("fence_signal") + " --workload.signal_delay_us=5");
  CHECK(ok.code == 0);
}

// Found by fuzz_scenario_loader: Boost 1.74's message for a malformed line substitutes the line into
// its "%invalid_line%" template until no placeholder is left, so a line holding one looped forever.
TEST_CASE("Loader: a malformed line holding a %placeholder% is refused with its line number", "[H4]") {
  ParamSet ps = params();
  for (const std::string text :
       {"%invalid_line%\n", "scenario = gpu_wait\n[fence\n", "scenario = gpu_wait\n\n  %p% \n"}) {
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

TEST_CASE("Params: a key declared again with its own range only", "[H4]") {
  // Same default and source, another range: the second scenario's range still applies to it.
  ParamSet ps;
  ps.declare_int("k.n", 1, "", 0, 10, "A: test", "a");
  ps.declare_int("k.n", 1, "", 0, 100, "A: test", "b");
  ps.apply_scenario_defaults("b");
  CHECK_NOTHROW(ps.set("k.n", "50", "test"));
  ps.apply_scenario_defaults("a");
  CHECK_THROWS_WITH(ps.set("k.n", "50", "test"), Catch::Contains("[0, 10]"));
  // One key, two types: a declaration error, not a silent reinterpretation.
  CHECK_THROWS_AS(ps.declare_real("k.n", 1, "", 0, 1, "A: test", "c"), ConfigError);
}

TEST_CASE("Verdict: a bug check or an engine fault fails the run and says so", "[H4]") {
  Results r;
  CHECK(r.pass());
  r.bug_check(0x1a8, {1, 2});
  CHECK_FALSE(r.pass());
  REQUIRE(r.why_failed().size() == 1);
  CHECK(r.why_failed()[0].find("bug check") == 0);
  Results m;
  m.monitors["lost_interrupt"] = 3;
  CHECK_FALSE(m.pass());
  CHECK(m.why_failed().at(0) == "monitor lost_interrupt: 3 violation(s)");
}

TEST_CASE("run_scenario: refuses an impossible platform before elaborating", "[H4]") {
  // The CLI checks first; run_scenario checks again for any other caller (tests, benches).
  ParamSet fetch = params({{"node.fetch_bytes", "4096"}});
  fetch.apply_scenario_defaults("mmio_roundtrip");
  RunOptions o;
  o.scenario = "mmio_roundtrip";
  Results r;
  CHECK_THROWS_WITH(run_scenario(fetch, o, r), Catch::Contains("node.fifo_bytes"));
  ParamSet queues = params({{"gpu.hw_queues", "1"}});
  queues.apply_scenario_defaults("gpu_wait");
  o.scenario = "gpu_wait";
  CHECK_THROWS_WITH(run_scenario(queues, o, r), Catch::Contains("gpu.hw_queues = 1 is too few"));
}

TEST_CASE("The list of scenarios has a line for each registered scenario and help shows no internal option", "[H4]") {
  // Each line a name `gpumodel NAME` runs (test_cli_suggest.cpp checks them against scenarios/): every
  // registered scenario's, then its variants'.
  const Run r = run_cli("--list-scenarios");
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  std::set<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    names.insert(line.substr(0, line.find(' ')));
    CHECK(line.find_first_not_of(' ', line.find(' ')) != std::string::npos);  // and says what it does
  }
  for (const ScenarioInfo& s : scenario_registry()) CHECK(names.count(s.name) == 1);
  const Run h = run_cli("--help");
  REQUIRE(h.code == 0);
  CHECK(h.out.find("--timeline") != std::string::npos);
  CHECK(h.out.find("--quiet") != std::string::npos);
  CHECK(h.out.find("scenario-file") == std::string::npos);  // the positional's internal name
  CHECK(h.out.find("--progress") == std::string::npos);     // a test's switch
}

TEST_CASE("A structured metric prints a line per member and a residency as percentages", "[H4][F15]") {
  const Run r = run_cli(scenario("cross_adapter_fence") + " --quiet");
  REQUIRE(r.code == 0);
  for (const char* state : {"C1", "C1E", "C3", "C6"})
    CHECK(r.out.find(std::string("cpu_idle_residency.") + state) != std::string::npos);
  const size_t at = r.out.find("cpu_idle_residency.C6");
  REQUIRE(at != std::string::npos);
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  CHECK(line.substr(line.size() - 2) == " %");
  CHECK(r.out.find("{\"C1\"") == std::string::npos);  // not the raw JSON object
}

TEST_CASE("The timeline may name neither the scenario file nor the waveform", "[H4]") {
  const Run a = run_cli(scenario("fence_signal") + " --timeline " + scenario("fence_signal"));
  CHECK(a.code == 2);
  CHECK(a.err.find("--timeline") != std::string::npos);
  const Run b = run_cli(scenario("fence_signal") + " --timeline same_tl.vcd --vcd same_tl.vcd");
  CHECK(b.code == 2);
  CHECK(b.err.find("--timeline") != std::string::npos);
}

TEST_CASE("A residency prints as percentages of the fractions in the results", "[H4][F15]") {
  const Run r = run_cli(scenario("cross_adapter_fence") + " --quiet --results residency.json");
  REQUIRE(r.code == 0);
  std::ifstream in("residency.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const char* state : {"C1", "C1E", "C3", "C6"}) {
    const std::string key = std::string("cpu_idle_residency.") + state;
    const size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    // Printed with two decimals: 100 x the fraction, to 0.005.
    CHECK(std::stod(r.out.substr(at + key.size())) ==
          Approx(100 * j["metrics"]["cpu_idle_residency"][state].get<double>()).margin(0.006));
  }
}

TEST_CASE("The progress line shows the scenario's own count and a cut-off run is the same with it", "[H4]") {
  const Run s = run_cli(scenario("fence_stress") + " --workload.signals=2000 --progress");
  REQUIRE(s.code == 0);
  CHECK(s.err.find("signals executed (2000 asked") != std::string::npos);
  const Run h = run_cli(scenario("hybrid_present") + " --workload.frames=4 --progress");
  REQUIRE(h.code == 0);
  CHECK(h.err.find("frame 4 of 4 flipped") != std::string::npos);
  // sim.limit_ms cuts fence_race short: with and without the progress line's slices, the same end.
  const std::string args = scenario("fence_race") + " --workload.signals=5000 --sim.limit_ms=3 ";
  const Run a = run_cli(args + "--quiet --results cut_a.json");
  const Run b = run_cli(args + "--progress --results cut_b.json");
  CHECK(a.code == b.code);
  const nlohmann::json ja = results_without_host("cut_a.json"), jb = results_without_host("cut_b.json");
  // Cut by the limit: still busy there, ended at its last event no later than 3 ms (fence_race has
  // events every few microseconds, so that last event lies within 0.1 ms of the limit).
  // What the driver's finish adds of its own ("not every signal executed") follows the limit's failure.
  REQUIRE(ja["checks_failed"].size() >= 1);
  CHECK(ja["checks_failed"][0].get<std::string>().find("still busy at sim.limit_ms") != std::string::npos);
  CHECK(ja["incomplete"].get<std::string>().find("sim.limit_ms = 3 ms reached") != std::string::npos);
  CHECK(ja["sim_time_ns"].get<double>() <= 3e6);
  CHECK(ja["sim_time_ns"].get<double>() > 2.9e6);
  CHECK(ja == jb);
}

TEST_CASE(
    "CLI: outputs that name one file two ways, relative or absolute, and a results path through a dangling link are "
    "refused before the run",
    "[H4]") {
  // Run from a scratch directory, as a user gives relative names: "x" and "./x", "$PWD/z" and "z" are
  // one file that does not exist yet; the second output would overwrite the first after the run.
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute("cli_same_file_scratch");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string cd = "cd '" + dir.string() + "' && ";
  const std::string ini = scenario("mmio_roundtrip");
  expect_bad_input(ini + " --vcd=x --results=./x", "--results and --vcd name the same file");
  expect_bad_input(ini + " --vcd=x --timeline=./x", "--timeline and --vcd name the same file");
  expect_bad_input(ini + " --timeline=x --results=" + fs::absolute("x").string(),
                   "--results and --timeline name the same file");
  // run_cli runs the binary in the test's directory; the same with a cd into the scratch directory:
  const Run r = run_cli(ini + " --vcd=" + (dir / "z").string() + " --results=z");  // two different files here
  CHECK(r.code == 0);
  fs::remove("z");
  fs::remove(dir / "z");
  {
    const std::string cmd = cd + GPUMODEL_BIN + std::string(" ") + ini + " --vcd=" + (dir / "z").string() +
                            " --results=z >out.txt 2>err.txt; echo $? >rc.txt";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK(slurp((dir / "rc.txt").string()) == "2\n");
    CHECK(slurp((dir / "err.txt").string()).find("--results and --vcd name the same file") != std::string::npos);
    CHECK(slurp((dir / "out.txt").string()).empty());
    CHECK_FALSE(fs::exists(dir / "z"));
  }
  // A results path that is a symbolic link to a file in a directory that does not exist: refused now,
  // not after the whole run.
  fs::create_symlink(dir / "no_such_dir" / "r.json", dir / "dangling.json");
  expect_bad_input(ini + " --results=" + (dir / "dangling.json").string(), "which does not exist");
  expect_bad_input(ini + " --vcd=" + (dir / "dangling.json").string(), "--vcd: cannot write");
  fs::remove_all(dir);
}

TEST_CASE(
    "A run cut by sim.limit_ms keeps what it measured, says it is incomplete and fails, and a metric of an event that "
    "never happened is absent with its reason",
    "[H4][T3]") {
  // conditional_interrupt: 600 signals 16.67 ms apart (a 60 Hz frame loop) need 10 s; a limit of 1 s
  // cuts it after about 60 of them. The results keep every metric measured so far, say why the run is
  // incomplete, and the verdict fails (exit 1).
  const std::string args = scenario("conditional_interrupt") +
                           " --workload.signals=600 --workload.signal_interval_ns=16666667 --sim.limit_ms=1000 --quiet "
                           "--results cut_ci.json";
  const Run r = run_cli(args);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const nlohmann::json j = nlohmann::json::parse(slurp("cut_ci.json"));
  CHECK(j["verdict"] == "fail");
  CHECK(j["incomplete"].get<std::string>().find("sim.limit_ms = 1000 ms reached") != std::string::npos);
  CHECK(j["metrics"].size() >= 5);
  CHECK(r.out.find("INCOMPLETE: sim.limit_ms = 1000 ms") != std::string::npos);
  // tdr_limit with 100 ms DPCs: the OS bug checks at the fifth timeout before any engine reset returns.
  // reset_ns was reported as 0; it is absent, with the reason, in the results and on stdout.
  const Run t =
      run_cli(scenario("tdr_limit") +
              " --workload.hangs=1000 --cpu.dpc_ns=100000000 --workload.packet_us=10 --quiet --results cut_tdr.json");
  INFO(t.out << t.err);
  const nlohmann::json k = nlohmann::json::parse(slurp("cut_tdr.json"));
  CHECK_FALSE(k["metrics"].contains("reset_ns"));
  CHECK(k["absent"]["reset_ns"].get<std::string>().find("no DxgkDdiResetEngine call returned") != std::string::npos);
  CHECK(t.out.find("reset_ns") != std::string::npos);
  CHECK(t.out.find("absent: no DxgkDdiResetEngine call returned") != std::string::npos);
}

TEST_CASE("CLI: a message echoes at most 200 characters of the input, with its length", "[H4]") {
  // A 100 kB value and a 100 kB key (an argument may not exceed 128 KiB): each message is one line of a
  // few hundred bytes naming the length.
  const std::string big(100000, '7');
  const Run v = run_cli(scenario("mmio_roundtrip") + " --link.hop_ns=" + big);
  CHECK(v.code == 2);
  CHECK(v.err.size() < 500);
  CHECK(v.err.find("... (100000 characters)") != std::string::npos);
  CHECK(v.err.find("link.hop_ns") != std::string::npos);
  const Run k = run_cli(scenario("mmio_roundtrip") + " --link." + big + "=1");
  CHECK(k.code == 2);
  CHECK(k.err.size() < 500);
  CHECK(k.err.find("(100005 characters)") != std::string::npos);
}
