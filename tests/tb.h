// Test bench helpers: a probe initiator that runs a test body as an SC_THREAD, parameter sets with
// overrides, and running the gpumodel binary as a user would.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <string>

#include <catch2/catch.hpp>
#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw_model/core/bus.h"
#include "scenarios/scenario.h"

namespace tb {

using namespace gpumodel;
using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_PS;

inline sc_time ps(double v) { return sc_time(v, SC_PS); }

// Every declared parameter at its default, then the given overrides.
inline ParamSet params(const std::map<std::string, std::string>& overrides = {}) {
  ParamSet p;
  declare_all_params(p);
  for (auto& [k, v] : overrides) p.set(k, v, "test");
  return p;
}

// An extra initiator: bind `sock` into any multi-target socket (a router) during elaboration.
struct Probe : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Probe> sock;
  BusMaster<Probe> bus;
  std::function<void()> body;
  explicit Probe(sc_core::sc_module_name n) : sc_module(n), sock("sock"), bus(sock) {
    SC_HAS_PROCESS(Probe);
    SC_THREAD(run);
  }
  void run() {
    if (body) body();
  }
};

// Payload time of `bytes` on a link at `bytes_per_ns`, rounded to the kernel's 1 ps resolution the
// same way sc_time does.
inline sc_time ser(double bytes, double bytes_per_ns) { return sc_time(bytes / bytes_per_ns * 1000.0, SC_PS); }

struct Run {
  int code = -1;
  std::string out, err;
};
// Runs the gpumodel binary with `args` (shell-quoted by the caller).
inline Run run_cli(const std::string& args) {
  static int n = 0;
  const std::string err_path = "gpumodel_test_stderr_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  const std::string cmd = std::string(GPUMODEL_BIN) + " " + args + " 2>" + err_path;
  Run r;
  FILE* f = ::popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, k);
  const int st = ::pclose(f);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_path);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}
inline std::string scenario(const std::string& name) {
  return std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/" + name + ".ini";
}
inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace tb
