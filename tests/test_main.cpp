// Catch2 runs inside sc_main: every TEST_CASE runs in its own process (catch_discover_tests), so
// each may elaborate its own platform.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include <systemc>

namespace {
const int kQuietBanner = setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);

// The tests write scratch files (cli_test_*.ini, results, waveforms) into the working directory: ctest
// runs them in build/tests. Started from the source tree (./build/tests/gpumodel_tests at the
// repository's root), they would land in the checkout: they run in the binary's directory instead.
void leave_the_source_tree() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path rel =
      fs::weakly_canonical(fs::current_path(ec), ec).lexically_relative(fs::weakly_canonical(GPUMODEL_SOURCE_DIR, ec));
  const bool inside = !rel.empty() && *rel.begin() != ".." && rel.begin()->string().rfind("build", 0) != 0;
  if (inside) fs::current_path(fs::read_symlink("/proc/self/exe", ec).parent_path(), ec);
}
}  // namespace

int sc_main(int argc, char** argv) {
  (void)kQuietBanner;
  leave_the_source_tree();
  return Catch::Session().run(argc, argv);
}
