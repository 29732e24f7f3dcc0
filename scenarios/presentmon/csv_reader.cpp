#include "scenarios/presentmon/csv_reader.h"

namespace gpumodel {

int CsvReader::peek() {
  if (pos_ == len_ && !end_) {
    len_ = source_(buf_.data(), buf_.size());
    pos_ = 0;
    end_ = len_ == 0;
  }
  return pos_ < len_ ? static_cast<unsigned char>(buf_[pos_]) : -1;
}

int CsvReader::get() {
  const int c = peek();
  if (c >= 0) ++pos_;
  if (c == '\n') ++line_;
  return c;
}

bool CsvReader::next(std::vector<std::string>& fields) {
  fields.clear();
  if (peek() < 0) return false;
  record_line_ = line_;
  std::string cur;
  for (;;) {
    int c = get();
    if (c == '"' && cur.empty()) {  // a quoted field, to its closing quote
      for (;;) {
        c = get();
        if (c < 0) throw CsvError("a quoted field opened here is never closed", record_line_);
        if (c == '"') {
          if (peek() != '"') break;
          get();
        }
        cur += char(c);
      }
      c = get();
      if (c == '\r' && peek() == '\n') c = get();
      if (c != ',' && c != '\n' && c >= 0) throw CsvError("a character after a quoted field's closing quote", line_);
    } else {
      // An unquoted field, to the next comma or line end.
      while (c >= 0 && c != ',' && c != '\n') {
        if (c == '"') throw CsvError("a quote inside an unquoted field", line_);
        if (c == '\r' && peek() == '\n') {
          c = get();
          break;
        }
        cur += char(c);
        c = get();
      }
    }
    fields.push_back(std::move(cur));
    cur.clear();
    if (c != ',') return true;  // a line end, or the input's
  }
}

}  // namespace gpumodel
