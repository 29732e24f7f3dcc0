#include "hw_model/core/vcd.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>

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
  const Id id = add(name, 64, pack(initial.c_str()));
  if (id != kNone) signals_[size_t(id)].ascii = true;
  return id;
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

namespace {
std::string unpack(uint64_t v) {  // the text pack() made (right-justified, big-endian)
  std::string s;
  for (int i = 7; i >= 0; --i)
    if (const char c = char((v >> (8 * i)) & 0xff)) s.push_back(c);
  return s;
}
// Trace Event timestamps are microseconds: printed exactly from picoseconds, so the file is the same
// on every machine.
std::string us(uint64_t ps) {
  char b[40];
  std::snprintf(b, sizeof b, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000),
                static_cast<unsigned long long>(ps % 1000000));
  return b;
}
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += char(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += char(c);
    }
  }
  return o + "\"";
}
}  // namespace

bool Vcd::write_timeline(const std::string& path, const sc_core::sc_time& end_time) const {
  const uint64_t end = end_time.value();
  // Tracks: a process per first name component (gpu, igpu, cpu, link, ...), a thread per track, both
  // numbered in the order they first appear (registration order), so the file is deterministic.
  std::map<std::string, int> pid_of, tid_of;
  std::vector<std::string> pids, tids;
  std::vector<int> tid_pid;
  auto track = [&](const std::string& name) -> std::pair<int, int> {
    auto t = tid_of.find(name);
    if (t != tid_of.end()) return {tid_pid[size_t(t->second)], t->second};
    const std::string proc = name.substr(0, name.find('.'));
    auto p = pid_of.find(proc);
    if (p == pid_of.end()) {
      p = pid_of.emplace(proc, int(pids.size()) + 1).first;
      pids.push_back(proc);
    }
    const int tid = int(tids.size());
    tid_of.emplace(name, tid);
    tids.push_back(name);
    tid_pid.push_back(p->second);
    return {p->second, tid};
  };
  // Events, ordered by time; at one time a slice ends before the next begins, then counters, then flows.
  struct Ev {
    uint64_t ts;
    int rank;
    size_t seq;
    std::string text;
  };
  std::vector<Ev> evs;
  auto head = [&](const char* ph, const std::string& name, const std::string& trk, uint64_t ts) {
    const auto [pid, tid] = track(trk);
    return std::string("{\"ph\":\"") + ph + "\",\"name\":" + quoted(name) + ",\"pid\":" + std::to_string(pid) +
           ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + us(ts);
  };
  auto add_slice = [&](const std::string& trk, const std::string& label, uint64_t b, uint64_t e) {
    if (e < b) return;
    if (e == b) {  // an instant: a complete event of no duration (it has no end to balance)
      evs.push_back({b, 1, evs.size(), head("X", label, trk, b) + ",\"dur\":0}"});
      return;
    }
    evs.push_back({b, 1, evs.size(), head("B", label, trk, b) + "}"});
    evs.push_back({e, 0, evs.size(), head("E", label, trk, e) + "}"});
  };
  for (const Signal& sg : signals_) track(sg.name);  // every signal's track, in registration order

  // Signals, from their changes: within one timestamp only the last value of a signal counts (as in
  // the VCD file).
  std::vector<Change> sorted = changes_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Change& a, const Change& b) { return a.time_ps < b.time_ps; });
  std::vector<uint64_t> current(signals_.size()), since(signals_.size(), 0);
  for (size_t i = 0; i < signals_.size(); ++i) current[i] = signals_[i].initial;
  auto leaf = [](const std::string& n) { return n.substr(n.rfind('.') + 1); };
  auto close = [&](size_t id, uint64_t t) {  // the value held since since[id] ends at t
    const Signal& sg = signals_[id];
    if (sg.ascii) {
      const std::string label = unpack(current[id]);
      if (!label.empty() && t > since[id]) add_slice(sg.name, label, since[id], t);
    } else if (sg.width == 1) {
      if (current[id] && t > since[id]) add_slice(sg.name, leaf(sg.name), since[id], t);
    }
  };
  auto counter = [&](size_t id, uint64_t t) {
    const Signal& sg = signals_[id];
    if (sg.ascii || sg.width == 1 || leaf(sg.name) == "line") return;  // a scanline counter: too dense
    evs.push_back({t, 2, evs.size(), head("C", sg.name, sg.name, t) + ",\"args\":{" + quoted(leaf(sg.name)) + ":" +
                                         std::to_string(current[id]) + "}}"});
  };
  for (size_t i = 0; i < signals_.size(); ++i) counter(i, 0);
  std::vector<uint64_t> last(signals_.size());
  std::vector<int> touched;
  for (size_t i = 0; i < sorted.size();) {
    const uint64_t t = sorted[i].time_ps;
    touched.clear();
    for (; i < sorted.size() && sorted[i].time_ps == t; ++i) {
      if (std::find(touched.begin(), touched.end(), sorted[i].id) == touched.end()) touched.push_back(sorted[i].id);
      last[size_t(sorted[i].id)] = sorted[i].value;
    }
    for (int id : touched) {
      const size_t k = size_t(id);
      if (last[k] == current[k]) continue;
      close(k, t);
      current[k] = last[k];
      since[k] = t;
      counter(k, t);
    }
  }
  for (size_t i = 0; i < signals_.size(); ++i) close(i, std::max(end, since[i]));

  // The models' own slices.
  for (const Slice& s : slices_) add_slice(s.track, s.label, s.begin_ps, s.end_ps);

  // Flows: each end from the earliest begin of its key whose value reached the end's.
  struct Begin {
    uint64_t at, value, max_value;
    const Flow* f;
  };
  std::map<std::string, std::vector<Begin>> begins;
  for (const Flow& f : flows_)
    if (f.begin) begins[f.key].push_back({f.at_ps, f.value, 0, &f});
  for (auto& [key, v] : begins) {
    std::stable_sort(v.begin(), v.end(), [](const Begin& a, const Begin& b) { return a.at < b.at; });
    uint64_t m = 0;
    for (Begin& b : v) b.max_value = m = std::max(m, b.value);
  }
  uint64_t flow_id = 0;
  for (const Flow& f : flows_) {
    if (f.begin) continue;
    auto it = begins.find(f.key);
    if (it == begins.end()) continue;
    const auto& v = it->second;
    const auto b = std::lower_bound(v.begin(), v.end(), f.value,
                                    [](const Begin& x, uint64_t val) { return x.max_value < val; });
    if (b == v.end() || b->at > f.at_ps) continue;  // no signal reached it first (a CPU write, the start)
    const std::string id = std::to_string(++flow_id);
    const std::string name = f.key + " = " + std::to_string(b->value);
    evs.push_back({b->at, 3, evs.size(), head("s", name, b->f->track, b->at) + ",\"cat\":\"fence\",\"id\":" + id + "}"});
    evs.push_back({f.at_ps, 3, evs.size(),
                   head("f", name, f.track, f.at_ps) + ",\"cat\":\"fence\",\"id\":" + id +
                       ",\"bp\":\"e\",\"args\":{\"waited\":" + std::to_string(f.value) + "}}"});
  }

  std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return std::tie(a.ts, a.rank, a.seq) < std::tie(b.ts, b.rank, b.seq);
  });
  std::ofstream os(path);
  if (!os) return false;
  os << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"gpumodel\",\"time\":\"simulated\"},\n\"traceEvents\":[\n";
  bool first = true;
  auto out = [&](const std::string& e) {
    os << (first ? "" : ",\n") << e;
    first = false;
  };
  for (size_t p = 0; p < pids.size(); ++p) {
    out("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(p + 1) + ",\"args\":{\"name\":" +
        quoted(pids[p]) + "}}");
    out("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(p + 1) +
        ",\"args\":{\"sort_index\":" + std::to_string(p) + "}}");
  }
  for (size_t t = 0; t < tids.size(); ++t) {
    const std::string ids = ",\"pid\":" + std::to_string(tid_pid[t]) + ",\"tid\":" + std::to_string(t);
    out("{\"ph\":\"M\",\"name\":\"thread_name\"" + ids + ",\"args\":{\"name\":" + quoted(tids[t]) + "}}");
    out("{\"ph\":\"M\",\"name\":\"thread_sort_index\"" + ids + ",\"args\":{\"sort_index\":" + std::to_string(t) + "}}");
  }
  for (const Ev& e : evs) out(e.text);
  os << "\n]}\n";
  os.close();
  return !os.fail();
}

}  // namespace gpumodel
