#include "hw_model/core/output_file.h"

#include <fcntl.h>
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

bool FdWriteBuf::drain() {
  const char* p = pbase();
  while (error_ == 0 && p < pptr()) {
    const ssize_t n = ::write(fd_, p, size_t(pptr() - p));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      error_ = n < 0 ? errno : EIO;
    else
      p += n;
  }
  setp(buf_.data(), buf_.data() + buf_.size());  // what could not be written is dropped: the file failed
  return error_ == 0;
}

FdWriteBuf::int_type FdWriteBuf::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

OutputFile::OutputFile(const std::string& path) : path_(path), target_(path) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)) && fs::exists(path, ec)) target_ = fs::canonical(path, ec).string();
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {  // a device or a pipe: written in place
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    std::vector<char> name;
    const std::string pattern = temp_pattern_beside(target_);
    name.assign(pattern.begin(), pattern.end());
    name.push_back('\0');
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ >= 0) {
      temp_ = name.data();
      // mkstemp makes the file 0600: give it the mode the target has, or a new file's (0666 less the umask).
      mode_t mode = st.st_mode & 07777;
      if (!exists) {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
      }
      ::fchmod(fd_, mode);
    }
  }
  if (fd_ < 0) error_ = std::strerror(errno);
  buf_.attach(fd_);
}

OutputFile::~OutputFile() {
  if (done_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

bool OutputFile::commit() {
  if (done_) return error_.empty();
  done_ = true;
  if (error_.empty() && !buf_.drain()) error_ = std::strerror(buf_.error());
  if (fd_ >= 0 && ::close(fd_) != 0 && error_.empty()) error_ = std::strerror(errno);  // NFS reports late
  fd_ = -1;
  if (temp_.empty()) return error_.empty();
  if (error_.empty() && std::rename(temp_.c_str(), target_.c_str()) != 0) error_ = std::strerror(errno);
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
