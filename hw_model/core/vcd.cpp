#include "hw_model/core/vcd.h"

#include <algorithm>
#include <fstream>
#include <map>

namespace gpumodel {

uint64_t Vcd::pack(const char* text) {
  uint64_t v = 0;
  int n = 0;
  for (; n < 8 && text[n]; ++n) v = (v << 8) | uint8_t(text[n]);
  for (; n < 8; ++n) v <<= 8;
  // Strip trailing NUL bytes so GTKWave's ASCII view shows no padding: right-justify the text.
  while (v && (v & 0xff) == 0) v >>= 8;
  return v;
}

Vcd::Id Vcd::add(const std::string& name, int width, uint64_t initial) {
  if (!enabled_) return kNone;
  signals_.push_back({name, width, initial});
  return Id(signals_.size() - 1);
}

Vcd::Id Vcd::add_ascii(const std::string& name, const std::string& initial) {
  return add(name, 64, pack(initial.c_str()));
}

namespace {
std::string vcd_id(int n) {  // printable identifier codes '!'..'~'
  std::string s;
  do {
    s.push_back(char('!' + n % 94));
    n /= 94;
  } while (n);
  return s;
}
std::string value_text(uint64_t v, int width, const std::string& id) {
  if (width == 1) return std::string(1, (v & 1) ? '1' : '0') + id;
  std::string bits;
  if (v == 0) bits = "0";
  while (v) {
    bits.push_back((v & 1) ? '1' : '0');
    v >>= 1;
  }
  std::reverse(bits.begin(), bits.end());
  return "b" + bits + " " + id;
}

// Scope tree, kept in first-registration order so the header is deterministic.
struct Scope {
  std::vector<std::string> order;
  std::map<std::string, Scope> children;
  std::vector<int> signals;
};
void emit(std::ostream& os, const Scope& s, const std::vector<std::string>& leaf,
          const std::vector<int>& widths) {
  for (int id : s.signals)
    os << "$var wire " << widths[id] << " " << vcd_id(id) << " " << leaf[id] << " $end\n";
  for (auto& name : s.order) {
    os << "$scope module " << name << " $end\n";
    emit(os, s.children.at(name), leaf, widths);
    os << "$upscope $end\n";
  }
}
}  // namespace

bool Vcd::write(const std::string& path, const std::string& date) const {
  std::ofstream os(path);
  if (!os) return false;
  Scope root;
  std::vector<std::string> leaf(signals_.size());
  std::vector<int> widths(signals_.size());
  for (size_t i = 0; i < signals_.size(); ++i) {
    const std::string& full = signals_[i].name;
    Scope* s = &root;
    size_t start = 0, dot;
    while ((dot = full.find('.', start)) != std::string::npos) {
      std::string part = full.substr(start, dot - start);
      if (!s->children.count(part)) s->order.push_back(part);
      s = &s->children[part];
      start = dot + 1;
    }
    leaf[i] = full.substr(start);
    s->signals.push_back(int(i));
    widths[i] = signals_[i].width;
  }
  os << "$date\n  " << date << "\n$end\n$version\n  gpumodel\n$end\n$timescale 1ps $end\n";
  os << "$scope module top $end\n";
  emit(os, root, leaf, widths);
  os << "$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n";
  for (size_t i = 0; i < signals_.size(); ++i)
    os << value_text(signals_[i].initial, signals_[i].width, vcd_id(int(i))) << "\n";
  os << "$end\n";

  std::vector<Change> sorted = changes_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Change& a, const Change& b) { return a.time_ps < b.time_ps; });
  // Within one timestamp only the last value of a signal counts; emit each signal once per time.
  std::vector<uint64_t> current(signals_.size());
  for (size_t i = 0; i < signals_.size(); ++i) current[i] = signals_[i].initial;
  size_t i = 0;
  std::vector<int> touched;
  std::vector<uint64_t> last(signals_.size());
  while (i < sorted.size()) {
    uint64_t t = sorted[i].time_ps;
    touched.clear();
    for (; i < sorted.size() && sorted[i].time_ps == t; ++i) {
      if (std::find(touched.begin(), touched.end(), sorted[i].id) == touched.end())
        touched.push_back(sorted[i].id);
      last[sorted[i].id] = sorted[i].value;
    }
    bool header = false;
    for (int id : touched) {
      if (last[id] == current[id]) continue;
      current[id] = last[id];
      if (!header) {
        os << "#" << t << "\n";
        header = true;
      }
      os << value_text(current[id], signals_[id].width, vcd_id(id)) << "\n";
    }
  }
  os.close();  // flushes: a full disk or /dev/full shows only now
  return !os.fail();
}

}  // namespace gpumodel
