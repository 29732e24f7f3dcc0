#include "hw_model/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hw_model/core/params.h"

namespace gpumodel {

namespace {
const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}
}  // namespace

std::string format_bytes(uint64_t bytes) {
  std::string s = std::to_string(bytes) + " bytes";
  if (bytes >= (uint64_t(1) << 20) && bytes % (uint64_t(1) << 20) == 0)
    s += " (" + std::to_string(bytes >> 20) + " MiB)";
  return s;
}

InputFile::InputFile(const std::string& path, const std::string& key, uint64_t max_bytes, const std::string& what)
    : max_(max_bytes), label_(key + " = '" + echo_input(path) + "'"), allowed_(what) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever if none comes. It
  // changes nothing for a regular file, which is all that is read.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw ConfigError(label_ + " cannot be read: " + std::strerror(errno) + allowed());
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    throw ConfigError(label_ + " cannot be read: " + std::strerror(e) + allowed());
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw ConfigError(label_ + " is " + kind_of(st.st_mode) + ", not a regular file" + allowed());
  }
  size_ = uint64_t(st.st_size);
  if (size_ > max_) {
    ::close(fd_);
    throw ConfigError(label_ + " is " + std::to_string(size_) + " bytes, over the limit" + allowed());
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::allowed() const { return "; allowed: " + allowed_ + " of at most " + format_bytes(max_); }

size_t InputFile::read(char* buf, size_t n) {
  for (;;) {
    const ssize_t k = ::read(fd_, buf, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw ConfigError(label_ + " cannot be read: " + std::strerror(errno) + allowed());
    read_ += uint64_t(k);
    // (A file whose size stat() cannot tell, as /proc's report 0, is bounded here too.)
    if (read_ > max_) throw ConfigError(label_ + " grew over the limit while it was read" + allowed());
    return size_t(k);
  }
}

std::string InputFile::read_all() {
  std::string s;
  s.reserve(size_t(size_));
  char buf[1 << 16];
  for (size_t k; (k = read(buf, sizeof buf)) > 0;) s.append(buf, k);
  return s;
}

}  // namespace gpumodel
