// Where the binary finds its data: scenarios/, platforms/, workloads/, sweeps/ and workbench/.
#pragma once
#include <string>

namespace gpumodel {

// An installed binary's own data, <prefix>/share/gpumodel beside <prefix>/bin/gpumodel (cmake --install,
// the .deb), when it is there; else the source tree the binary was built from (a build tree's binary).
// The installed data wins even where that source tree still exists: a packaged binary never reads the
// build machine's files.
const std::string& data_dir();

}  // namespace gpumodel
