#include "hw_model/core/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace fs = std::filesystem;

namespace gpumodel {
namespace {

// A new, empty, uniquely named file from `pattern` (ending in XXXXXX); its path, or "" with errno set.
std::string make_temp(const std::string& pattern) {
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return "";
  ::close(fd);
  return name.data();
}

std::string temp_pattern_beside(const std::string& path) {
  const fs::path p(path);
  const fs::path dir = p.parent_path();
  return (dir / ("." + p.filename().string() + ".part-XXXXXX")).string();
}

std::string why_errno(const char* fallback) { return errno ? std::strerror(errno) : fallback; }

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path), target_(path) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)) && fs::exists(path, ec)) target_ = fs::canonical(path, ec).string();
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {  // a device or a pipe: written in place
    out_.open(target_, std::ios::binary | std::ios::out);
    if (!out_) error_ = why_errno("cannot open");
    return;
  }
  errno = 0;
  temp_ = make_temp(temp_pattern_beside(target_));
  if (temp_.empty()) {
    error_ = why_errno("cannot create a file beside it");
    return;
  }
  // mkstemp makes the file 0600: give it the mode the target has, or a new file's (0666 less the umask).
  mode_t mode = st.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::chmod(temp_.c_str(), mode);
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) error_ = why_errno("cannot open");
}

OutputFile::~OutputFile() {
  if (done_ || temp_.empty()) return;
  out_.close();
  ::unlink(temp_.c_str());
}

bool OutputFile::commit() {
  if (done_) return error_.empty();
  done_ = true;
  if (error_.empty()) {
    errno = 0;
    if (out_.is_open()) {
      out_.flush();
      if (!out_) error_ = why_errno("write error");
      out_.close();
      if (error_.empty() && out_.fail()) error_ = why_errno("write error");
    } else {
      error_ = "not open";
    }
  }
  if (temp_.empty()) return error_.empty();
  if (error_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0) error_ = why_errno("cannot rename");
  if (!error_.empty()) ::unlink(temp_.c_str());
  return error_.empty();
}

std::string cannot_create_beside(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  errno = 0;
  const std::string probe = make_temp((dir / ".gpumodel-probe-XXXXXX").string());
  if (probe.empty()) return why_errno("cannot create a file there");
  ::unlink(probe.c_str());
  return "";
}

}  // namespace gpumodel
