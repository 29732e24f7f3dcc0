// An output file written whole or not at all. The text goes to a temporary file beside the target
// (same folder, so the final rename never crosses a file system); commit() flushes it, checks every
// write, and renames it over the target. A run that fails, throws or is cut before commit() leaves
// the target as it was: the destructor removes the temporary file. An existing target that is not a
// regular file (/dev/null, a pipe, a terminal) cannot be replaced by a rename: it is written directly,
// and its write errors are still reported (/dev/full fails the commit). A symbolic link to a regular
// file keeps the link: its target is replaced.
#pragma once
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace gpumodel {

// A stream buffer over a file descriptor that keeps the errno of its first failed write (a stream
// reports only that it failed, and errno is long overwritten by then).
class FdWriteBuf : public std::streambuf {
 public:
  FdWriteBuf() : buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  void attach(int fd) { fd_ = fd; }
  int error() const { return error_; }
  // Writes what is buffered; false once any write has failed.
  bool drain();

 protected:
  int_type overflow(int_type c) override;
  int sync() override { return drain() ? 0 : -1; }

 private:
  std::vector<char> buf_;
  int fd_ = -1;
  int error_ = 0;
};

class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Whether the file could be opened and every write so far succeeded.
  bool ok() const { return error_.empty() && buf_.error() == 0; }
  std::ostream& stream() { return out_; }
  // Flushes, closes and renames into place. True when the whole file is where it was asked for; else
  // false, with error() saying why (the temporary file removed, the target untouched).
  bool commit();
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;    // what the user named
  std::string target_;  // where the bytes end: path_, or a symbolic link's target
  std::string temp_;    // beside target_; empty when written directly
  int fd_ = -1;
  FdWriteBuf buf_;
  std::ostream out_{&buf_};
  std::string error_;
  bool done_ = false;
};

// Why a file cannot be created beside `path` (in its folder), found by creating and removing one
// there; "" when it can. Catches what access(2) cannot: root on a read-only mount, /proc, /sys.
std::string cannot_create_beside(const std::string& path);

}  // namespace gpumodel
