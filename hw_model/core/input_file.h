// A file a parameter names (a workload file, a capture), opened for reading with its bounds checked
// first: it must be a regular file (a device such as /dev/zero never ends, a FIFO with no writer blocks
// the open forever) of at most a documented size. Every refusal is a ConfigError naming the key, the
// path and what is allowed (exit 2).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpumodel {

class InputFile {
 public:
  // `key` names the parameter ("workload.file"), `allowed` says what it may name ("a workload JSON
  // file"); `max_bytes` is the size limit the parameter's description documents.
  InputFile(const std::string& path, const std::string& key, uint64_t max_bytes, const std::string& allowed);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Up to `n` bytes into `buf`; 0 at the end. A file that grows past the limit while it is read
  // (it was written to meanwhile) is refused as one that was too large.
  size_t read(char* buf, size_t n);
  // The whole file.
  std::string read_all();
  // The size the file had when opened.
  uint64_t size() const { return size_; }
  // "workload.file = 'PATH'" as messages begin.
  const std::string& label() const { return label_; }
  // "... ; allowed: <allowed> of at most <limit>", the tail every refusal of this file ends with.
  std::string allowed() const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0, read_ = 0, max_ = 0;
  std::string label_, allowed_;
};

// A byte count as messages print it: "8388608 bytes (8 MiB)".
std::string format_bytes(uint64_t bytes);

}  // namespace gpumodel
