// Records that outgrow memory, sorted on disk: what lets a waveform or a timeline of any length be
// written with the memory of a short one.
//
// TempFile: an unlinked temporary file in $TMPDIR (or /tmp); it disappears when closed, even when the
// process dies. SpillSorter<Rec>: an external merge sort. Records are buffered up to a byte budget; a full
// buffer is sorted and appended to the temporary file as one run; cursor() merges the runs (and whatever
// is still buffered) into one ordered stream, which can be opened again. Rec supplies a total order
// (`operator<`, never a tie between two records: sequence numbers break them), its memory size, and
// its encoding: `void encode(std::string&) const` and `bool decode(RunReader&)`.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace gpumodel {

class TempFile {
 public:
  TempFile() {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/gpumodel-spill-XXXXXX";
    fd_ = ::mkstemp(path.data());
    if (fd_ < 0) {
      error_ = errno;
      return;
    }
    ::unlink(path.c_str());
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Appends at the end; false (error() set) when the disk refuses.
  bool append(const char* p, size_t n) {
    while (n && fd_ >= 0 && !error_) {
      const ssize_t w = ::pwrite(fd_, p, n, off_t(size_));
      if (w < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      p += w;
      n -= size_t(w);
      size_ += uint64_t(w);
    }
    return fd_ >= 0 && !error_;
  }
  // Reads up to n bytes at `at`; returns the count (0 at the end or on an error).
  size_t read(char* p, size_t n, uint64_t at) const {
    if (fd_ < 0) return 0;
    for (;;) {
      const ssize_t r = ::pread(fd_, p, n, off_t(at));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) error_ = errno;
      return r < 0 ? 0 : size_t(r);
    }
  }
  uint64_t size() const { return size_; }
  int error() const { return fd_ < 0 && !error_ ? EBADF : error_; }

 private:
  int fd_ = -1;
  mutable int error_ = 0;
  uint64_t size_ = 0;
};

// A byte range of a TempFile, read in order through a buffer of its own.
class RunReader {
 public:
  RunReader(const TempFile& f, uint64_t begin, uint64_t end, size_t buffer)
      : f_(&f), at_(begin), end_(end), buf_(buffer) {}
  bool get(void* out, size_t n) {
    char* o = static_cast<char*>(out);
    while (n) {
      if (pos_ == len_ && !fill()) return false;
      const size_t k = std::min(n, len_ - pos_);
      std::memcpy(o, buf_.data() + pos_, k);
      pos_ += k;
      o += k;
      n -= k;
    }
    return true;
  }
  template <class T>
  bool get(T& v) {
    return get(&v, sizeof v);
  }
  bool get(std::string& s) {  // a length-prefixed string
    uint32_t n;
    if (!get(n)) return false;
    s.resize(n);
    return get(s.data(), n);
  }

 private:
  bool fill() {
    if (at_ >= end_) return false;
    len_ = f_->read(buf_.data(), size_t(std::min<uint64_t>(buf_.size(), end_ - at_)), at_);
    pos_ = 0;
    at_ += len_;
    return len_ > 0;
  }
  const TempFile* f_;
  uint64_t at_, end_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
};

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
inline void put(std::string& out, const std::string& s) {
  put(out, uint32_t(s.size()));
  out += s;
}

template <class Rec>
class SpillSorter {
 public:
  explicit SpillSorter(size_t budget_bytes = size_t(32) << 20) : budget_(budget_bytes) {}

  void push(Rec r) {
    held_ += r.memory();
    buf_.push_back(std::move(r));
    if (held_ >= budget_) spill();
  }
  bool empty() const { return buf_.empty() && runs_.empty(); }
  size_t held_bytes() const { return held_; }
  size_t runs() const { return runs_.size(); }
  // The errno of a failed spill (disk full), or 0.
  int error() const { return file_ ? file_->error() : 0; }

  // The records in order: every run and the buffer, merged.
  class Cursor {
   public:
    const Rec* peek() const { return cur_; }
    void next() {
      if (mem_) {
        cur_ = ++i_ < mem_->size() ? &(*mem_)[i_] : nullptr;
        return;
      }
      // The record handed out last is replaced by its run's next one.
      std::pop_heap(heap_.begin(), heap_.end(), later());
      const size_t r = heap_.back();
      if (head_[r].decode(readers_[r]))
        std::push_heap(heap_.begin(), heap_.end(), later());
      else
        heap_.pop_back();
      cur_ = heap_.empty() ? nullptr : &head_[heap_.front()];
    }

   private:
    friend class SpillSorter;
    auto later() const {
      return [this](size_t a, size_t b) { return head_[b] < head_[a]; };
    }
    const std::vector<Rec>* mem_ = nullptr;
    size_t i_ = 0;
    std::vector<RunReader> readers_;
    std::vector<Rec> head_;
    std::vector<size_t> heap_;  // run indices, the run with the least head first
    const Rec* cur_ = nullptr;
  };

  // Opens the ordered stream; may be called again (the runs stay until the sorter goes).
  Cursor cursor() {
    Cursor c;
    if (runs_.empty()) {  // everything fits in memory: no file at all
      sort();
      c.mem_ = &buf_;
      c.cur_ = buf_.empty() ? nullptr : &buf_[0];
      return c;
    }
    if (!buf_.empty()) spill();
    const size_t per_run = std::clamp<size_t>(budget_ / runs_.size(), 4096, size_t(1) << 20);
    c.readers_.reserve(runs_.size());
    c.head_.resize(runs_.size());
    for (size_t r = 0; r < runs_.size(); ++r) {
      c.readers_.emplace_back(*file_, runs_[r].first, runs_[r].second, per_run);
      if (c.head_[r].decode(c.readers_[r])) c.heap_.push_back(r);
    }
    std::make_heap(c.heap_.begin(), c.heap_.end(), c.later());
    c.cur_ = c.heap_.empty() ? nullptr : &c.head_[c.heap_.front()];
    return c;
  }

 private:
  void sort() {
    if (!sorted_) std::sort(buf_.begin(), buf_.end());
    sorted_ = true;
  }
  void spill() {
    sort();
    if (!file_) file_ = std::make_unique<TempFile>();
    const uint64_t begin = file_->size();
    std::string chunk;
    for (const Rec& r : buf_) {
      r.encode(chunk);
      if (chunk.size() >= (size_t(1) << 20)) {
        file_->append(chunk.data(), chunk.size());
        chunk.clear();
      }
    }
    file_->append(chunk.data(), chunk.size());
    runs_.emplace_back(begin, file_->size());
    buf_.clear();  // its capacity stays for the next run
    held_ = 0;
    sorted_ = false;
  }

  size_t budget_, held_ = 0;
  bool sorted_ = false;
  std::vector<Rec> buf_;
  std::unique_ptr<TempFile> file_;
  std::vector<std::pair<uint64_t, uint64_t>> runs_;
};

}  // namespace gpumodel
