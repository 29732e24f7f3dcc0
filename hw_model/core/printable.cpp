#include "hw_model/core/printable.h"

#include <cstdint>
#include <cstdio>

namespace gpumodel {

std::string printable(const std::string& s) {
  std::string out;
  auto hex = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        hex(c);
      else
        out += char(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: lead byte, then continuation bytes; overlong forms and surrogates refused.
    const size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    bool ok = n != 0 && i + n <= s.size();
    uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; ok && k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xC0) == 0x80;
      cp = (cp << 6) | (d & 0x3F);
    }
    ok = ok && !(n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) &&
         !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF));
    if (!ok) {
      hex(c);
      ++i;
      continue;
    }
    // Invisible or control code points are shown by number.
    if (cp == 0xFEFF || (cp >= 0x80 && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u{%04X}", unsigned(cp));
      out += buf;
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

}  // namespace gpumodel
