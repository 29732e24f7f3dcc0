#include "tests/sweep/sweep_options.h"

#include <cstdlib>
#include <iostream>

namespace sweep {

void usage(const std::string& why) {
  std::cerr << "extremes_sweep: " << why
            << "\nusage: extremes_sweep [--gpumodel PATH] [--scenarios DIR] [--jobs N] [--timeout S] "
               "[--mem-gib G] [--only SCENARIO|FILE.ini] [--key KEY] [--numeric-only] [--baselines-only] "
               "[--pairwise [--interactions]] [--verbose] [--dry-run]\n";
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    auto number = [&](double lo) {
      const std::string v = value();
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(d >= lo)) usage(a + " = '" + v + "' is not a number >= " + std::to_string(lo));
      return d;
    };
    if (a == "--gpumodel")
      o.gpumodel = value();
    else if (a == "--scenarios")
      o.scenarios = value();
    else if (a == "--jobs")
      o.jobs = unsigned(number(1));
    else if (a == "--timeout")
      o.timeout_s = number(0.1);
    else if (a == "--mem-gib")
      o.mem_gib = number(0.1);
    else if (a == "--only")
      o.only = value();
    else if (a == "--key")
      o.key = value();
    else if (a == "--numeric-only")
      o.numeric_only = true;
    else if (a == "--baselines-only")
      o.baselines_only = true;
    else if (a == "--pairwise")
      o.pairwise = true;
    else if (a == "--interactions")
      o.interactions = true;
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--dry-run")
      o.dry_run = true;
    else
      usage("unknown option '" + a + "'");
  }
  // The pairwise sweep sets many keys at once over each file's reduced run, its baseline included.
  if (o.pairwise && (o.baselines_only || o.numeric_only || !o.key.empty()))
    usage(std::string("--pairwise sweeps every enum and bool key of a file in pairs: drop ") +
          (o.baselines_only ? "--baselines-only"
           : o.numeric_only ? "--numeric-only"
                            : "--key '" + o.key + "'"));
  if (o.interactions && !o.pairwise) usage("--interactions is a part of --pairwise: add --pairwise");
  return o;
}

}  // namespace sweep
