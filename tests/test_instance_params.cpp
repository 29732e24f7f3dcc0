// Per-instance parameters: `<adapter>.node<N>.<key>` gives one node its own value of a node.* key (or of
// its adapter's engine clock), with the class key's range; a node without one takes the class key; a
// node the platform does not have is refused before anything runs.
#include <fstream>

#include "tb.h"

using namespace tb;

namespace {
std::string write_params_ini(const std::string& name, const std::string& text) {
  const std::string path = "instance_test_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("Params: an instance key falls back to its class key and keeps its range", "[H4]") {
  ParamSet ps = params({{"node.reset_ns", "1000"}, {"gpu.node1.reset_ns", "2000"}});
  CHECK(ps.class_key_of("gpu.node1.reset_ns") == "node.reset_ns");
  CHECK(ps.class_key_of("igpu.node0.engine_clock_mhz") == "igpu.engine_clock_mhz");
  CHECK(ps.class_key_of("gpu.node1.nodes").empty());         // not a key a node reads
  CHECK(ps.class_key_of("gpu.node01.reset_ns").empty());     // an instance number has no leading zero
  CHECK(ps.class_key_of("gpu.cmp0.barrier_ns").empty());     // only nodes have instances
  CHECK(ps.get_real("gpu.node1", "node.reset_ns") == 2000);  // its own
  CHECK(ps.get_real("gpu.node0", "node.reset_ns") == 1000);  // the class key
  CHECK(ps.get_real("gpu.node0", "gpu.engine_clock_mhz") == 2000);
  ps.set("gpu.node0.engine_clock_mhz", "1500", "test");
  CHECK(ps.get_real("gpu.node0", "gpu.engine_clock_mhz") == 1500);
  CHECK(ps.get_real("gpu.engine_clock_mhz") == 2000);
  // The class key's range, in a message that names the instance key.
  CHECK_THROWS_WITH(ps.set("gpu.node1.reset_ns", "-5", "test"),
                    Catch::Contains("gpu.node1.reset_ns = '-5' is out of range; allowed: a number in [0"));
  CHECK_THROWS_WITH(ps.set("gpu.node1.reset_fails_on", "16", "test"), Catch::Contains("[-1, 15]"));
  CHECK_THROWS_WITH(ps.set("gpu.node1.preemption", "never", "test"), Catch::Contains("one of {packet, mid_command}"));
  // A node the platform lacks: refused with the key and the nodes there are.
  CHECK_NOTHROW(ps.check_instances({"gpu.node0", "gpu.node1"}));
  CHECK_THROWS_WITH(ps.check_instances({"gpu.node0"}),
                    Catch::Contains("gpu.node1.reset_ns names gpu.node1, which this platform does not have") &&
                        Catch::Contains("gpu.node0"));
  // The effective configuration records the instance keys that were set.
  const nlohmann::json j = ps.effective("copy_bandwidth");
  CHECK(j["gpu.node1.reset_ns"] == 2000.0);
  CHECK(j["node.reset_ns"] == 1000.0);
  CHECK_FALSE(j.contains("gpu.node0.reset_ns"));
}

TEST_CASE("Node: each node reads its own keys, the others the class keys", "[H4]") {
  ParamSet ps = params({{"gpu.nodes", "3"}, {"gpu.node1.engine_clock_mhz", "1000"}, {"gpu.node2.decode_cycles", "4"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  CHECK(p.gpu.nodes[0]->engine_period() == sc_time(500, SC_PS));   // gpu.engine_clock_mhz 2000
  CHECK(p.gpu.nodes[1]->engine_period() == sc_time(1000, SC_PS));  // its own 1000 MHz
  CHECK(p.gpu.nodes[2]->engine_period() == sc_time(500, SC_PS));
}

TEST_CASE("CLI: an instance key from a file section or the command line, and a node the platform lacks is refused",
          "[H4]") {
  const std::string ini = write_params_ini("section", "scenario = mmio_roundtrip\n[gpu.node1]\nreset_ns = 2000\n");
  Run r = run_cli(ini + " --gpu.node0.write_buffer_ns=50");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("gpu.node1.reset_ns") != std::string::npos);
  CHECK(r.out.find("gpu.node0.write_buffer_ns") != std::string::npos);
  // gpu.node9 on two nodes: exit 2, one line naming the key and the nodes there are, nothing run.
  for (const std::string& args :
       {scenario("mmio_roundtrip") + " --gpu.node9.reset_ns=1000",
        write_params_ini("missing", "scenario = mmio_roundtrip\n[gpu.node9]\nreset_ns = 1000\n")}) {
    r = run_cli(args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("gpu.node9.reset_ns names gpu.node9, which this platform does not have (gpu.nodes = 2); "
                     "allowed: the instances gpu.node0, gpu.node1") != std::string::npos);
    CHECK(r.out.empty());
  }
  // A bad value on an instance key: the class key's range.
  r = run_cli(scenario("mmio_roundtrip") + " --gpu.node1.fetch_bytes=100");
  CHECK(r.code == 2);
  CHECK(r.err.find("gpu.node1.fetch_bytes = '100' is not allowed") != std::string::npos);
  // Cross-key rules hold per node.
  r = run_cli(scenario("mmio_roundtrip") + " --gpu.node1.fetch_bytes=2048");
  CHECK(r.code == 2);
  CHECK(r.err.find("gpu.node1.fetch_bytes = 2048 is larger than node.fifo_bytes = 1024") != std::string::npos);
}

TEST_CASE("CLI: --list-params says how instance keys are formed", "[H4]") {
  const Run r = run_cli("--list-params");
  CHECK(r.code == 0);
  CHECK(r.out.find("Per-instance keys: <adapter>.<instance>.<key>") != std::string::npos);
  CHECK(r.out.find("gpu.node1.reset_ns before node.reset_ns") != std::string::npos);
}
