// Catch2 runs inside sc_main: every TEST_CASE runs in its own process (catch_discover_tests), so
// each may elaborate its own platform.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include <systemc>

namespace {
const int kQuietBanner = setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
}

int sc_main(int argc, char** argv) {
  (void)kQuietBanner;
  return Catch::Session().run(argc, argv);
}
