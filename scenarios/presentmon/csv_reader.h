// RFC 4180 CSV records from a byte stream, read in bounded chunks (a capture is never held whole): a
// quoted field may hold commas, line breaks and "" (a quote); CRLF or LF ends a record. What RFC 4180
// does not allow is refused, not guessed at: a quote inside an unquoted field, anything but a comma or
// a line end after a closing quote, a quoted field never closed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpumodel {

// A malformed record: what is wrong, and where (the line it was found on, 1-based).
struct CsvError : std::runtime_error {
  CsvError(const std::string& what, uint64_t line) : std::runtime_error(what), line(line) {}
  uint64_t line;
};

class CsvReader {
 public:
  // Fills up to n bytes of the buffer and returns how many; 0 at the end of the input.
  using Source = std::function<size_t(char*, size_t)>;
  explicit CsvReader(Source source) : source_(std::move(source)) {}

  // The next record's fields (a blank line is a record of one empty field); false at the end.
  bool next(std::vector<std::string>& fields);
  // The line the last record began on (1-based), for messages.
  uint64_t line() const { return record_line_; }

 private:
  int get();  // the next byte, or -1 at the end
  int peek();
  Source source_;
  std::vector<char> buf_ = std::vector<char>(size_t(1) << 16);
  size_t pos_ = 0, len_ = 0;
  bool end_ = false;
  uint64_t line_ = 1, record_line_ = 0;
};

}  // namespace gpumodel
