// gpumodel: run a timing scenario of the GPU platform model. See README.md.
#include <cstdlib>

#include <systemc>

#include "app/cli.h"

namespace {
// SystemC prints its banner when the kernel first starts unless this is set; set it before that.
const int kQuietBanner = setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
}  // namespace

int sc_main(int argc, char** argv) {
  (void)kQuietBanner;
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
  return gpumodel::cli_main(argc, argv);
}
