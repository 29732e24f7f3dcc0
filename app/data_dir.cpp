#include "app/data_dir.h"

#include <filesystem>

namespace gpumodel {

const std::string& data_dir() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && !self.empty()) {
      const fs::path share = self.parent_path().parent_path() / "share" / "gpumodel";
      if (fs::is_directory(share / "scenarios", ec)) return share.string();
    }
    return std::string(GPUMODEL_SOURCE_DIR);
  }();
  return dir;
}

}  // namespace gpumodel
