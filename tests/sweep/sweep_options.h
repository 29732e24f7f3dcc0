// The sweep's command line (extremes_sweep --help-less: a wrong option prints the usage, exit 2).
#pragma once
#include <algorithm>
#include <string>
#include <thread>

namespace sweep {

struct Options {
  std::string gpumodel = GPUMODEL_BIN;
  std::string scenarios = std::string(GPUMODEL_SOURCE_DIR) + "/scenarios";
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  double timeout_s = 30;
  double mem_gib = 4;
  std::string only, key;
  bool numeric_only = false, baselines_only = false, pairwise = false, interactions = false, verbose = false,
       dry_run = false;
};

// Prints why and the usage, exits 2.
[[noreturn]] void usage(const std::string& why);

Options parse_options(int argc, char** argv);

}  // namespace sweep
