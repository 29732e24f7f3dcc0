#include "hw_model/core/vcd.h"
#include "hw_model/core/output_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
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
  const Id id = Id(signals_.size() - 1);
  signal_track_.push_back(track(name, kSignalEvents, uint64_t(id)));
  return id;
}

Vcd::Id Vcd::add_ascii(const std::string& name, const std::string& initial) {
  const Id id = add(name, 64, pack(initial.c_str()));
  if (id != kNone) signals_[size_t(id)].ascii = true;
  return id;
}

Vcd::Id Vcd::add_analog(const std::string& name, int width, uint64_t initial) {
  const Id id = add(name, width, initial);
  if (id != kNone) signals_[size_t(id)].analog = true;
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
void emit(std::ostream& os, const Scope& s, const std::vector<std::string>& leaf, const std::vector<int>& widths) {
  for (int id : s.signals) os << "$var wire " << widths[id] << " " << vcd_id(id) << " " << leaf[id] << " $end\n";
  for (auto& name : s.order) {
    os << "$scope module " << name << " $end\n";
    emit(os, s.children.at(name), leaf, widths);
    os << "$upscope $end\n";
  }
}
}  // namespace

template <class F>
void Vcd::for_each_time(F f) {
  std::vector<uint64_t> last(signals_.size());
  std::vector<int> touched;
  auto c = changes_.cursor();
  while (const Change* ch = c.peek()) {
    const uint64_t t = ch->time_ps;
    touched.clear();
    for (; ch && ch->time_ps == t; c.next(), ch = c.peek()) {
      if (std::find(touched.begin(), touched.end(), ch->id) == touched.end()) touched.push_back(ch->id);
      last[size_t(ch->id)] = ch->value;
    }
    f(t, touched, last);
  }
}

std::vector<Vcd::SignalInfo> Vcd::signal_list() const {
  std::vector<SignalInfo> out;
  for (auto& s : signals_) out.push_back({s.name, s.width, s.ascii, s.analog});
  return out;
}

std::string Vcd::write(const std::string& path, const std::string& date, uint64_t end_ps) {
  OutputFile file(path);
  if (!file.ok()) return file.error();
  std::ostream& os = file.stream();
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

  // Within one timestamp only the last value of a signal counts; emit each signal once per time.
  std::vector<uint64_t> current(signals_.size());
  for (size_t i = 0; i < signals_.size(); ++i) current[i] = signals_[i].initial;
  for_each_time([&](uint64_t t, const std::vector<int>& touched, const std::vector<uint64_t>& last) {
    bool header = false;
    for (int id : touched) {
      if (last[id] == current[id]) continue;
      current[id] = last[id];
      if (!header) {
        os << "#" << t << "\n";
        header = true;
        last_time_ps_ = t;
      }
      os << value_text(current[id], signals_[id].width, vcd_id(id)) << "\n";
    }
  });
  if (end_ps > last_time_ps_) {
    os << "#" << end_ps << "\n";
    last_time_ps_ = end_ps;
  }
  if (const int e = changes_.error()) return std::strerror(e);  // the record could not wait on disk
  file.commit();                                                // flushes: a full disk or /dev/full shows only now
  return file.error();
}

namespace {
std::string unpack(uint64_t v) {  // the text pack() made (right-justified, big-endian)
  std::string s;
  for (int i = 7; i >= 0; --i)
    if (const char c = char((v >> (8 * i)) & 0xff)) s.push_back(c);
  return s;
}
// Trace Event timestamps are microseconds, written on a grid of 2^-20 us (0.95 ps): the first grid
// point at or after the time (under a picosecond later, so distinct times stay distinct and in order,
// and a time of whole nanoseconds stays those nanoseconds when Perfetto truncates it), printed as the
// shortest decimal that reads back as that point (12.000125 us is 12.000125885009766). The viewers
// add, subtract and compare timestamps as doubles; on the grid that arithmetic is exact (below 2^33 us,
// 2.4 hours), so a slice that ends where the next begins still does after DevTools adds ts and dur and
// after speedscope rebases a track on its first slice. (On decimal microseconds 13.144954 + 0.004,
// rebased, ends 4e-16 us after 13.148954 does, and the next slice opens inside it.) Deterministic: the
// grid is integer arithmetic and std::to_chars is exact.
constexpr int kGridBits = 20;
uint64_t grid(uint64_t ps) {
  return static_cast<uint64_t>(((static_cast<unsigned __int128>(ps) << kGridBits) + 999999) / 1000000);
}
std::string grid_us(uint64_t g) {
  char b[64];
  const auto r =
      std::to_chars(b, b + sizeof b, std::ldexp(static_cast<double>(g), -kGridBits), std::chars_format::fixed);
  return std::string(b, r.ptr);
}
std::string us(uint64_t ps) { return grid_us(grid(ps)); }
// A slice's duration as written: from its begin's grid point to its end's, so begin + duration is its
// end's exactly in a viewer's doubles. Perfetto truncates ts and dur to whole nanoseconds apart; on the
// grid a grid value times 1000 is exact below 8.6 s, and floor(a) + floor(b) <= floor(a + b), so that
// ends no slice after the next one begins (a search up to 10^4 s of simulated time found no case
// either); the tests' trace check applies Perfetto's arithmetic to every timeline they write.
std::string dur_us(uint64_t ts, uint64_t dur) { return grid_us(grid(ts + dur) - grid(ts)); }
std::string json_quoted(const std::string& s) {
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

void Vcd::Event::encode(std::string& out) const {
  put(out, ts);
  put(out, dur);
  put(out, seq);
  put(out, track);
  put(out, rank);
  put(out, source);
  put(out, ph);
  put(out, name);
  put(out, tail);
}

bool Vcd::Event::decode(RunReader& in) {
  return in.get(ts) && in.get(dur) && in.get(seq) && in.get(track) && in.get(rank) && in.get(source) && in.get(ph) &&
         in.get(name) && in.get(tail);
}

size_t Vcd::held_bytes() const {
  size_t n = changes_.held_bytes() + events_.held_bytes();
  for (const auto& v : begins_) n += v.size() * sizeof(FlowBegin);
  return n;
}

uint32_t Vcd::track(const std::string& name, Source source, uint64_t seq) {
  auto [it, fresh] = track_of_.emplace(name, uint32_t(tracks_.size()));
  if (fresh) {
    tracks_.push_back({name, source, seq});
  } else {
    Track& t = tracks_[it->second];
    if (std::tie(source, seq) < std::tie(t.source, t.first)) {
      t.source = source;
      t.first = seq;
    }
  }
  return it->second;
}

void Vcd::add_event(Source source, uint64_t ts, Rank rank, char ph, const std::string& name, uint32_t trk,
                    std::string tail, uint64_t dur) {
  Event e;
  e.ts = ts;
  e.dur = dur;
  e.seq = next_event_[source]++;
  e.track = trk;
  e.rank = rank;
  e.source = source;
  e.ph = ph;
  e.name = json_quoted(name);
  e.tail = std::move(tail);
  events_.push(std::move(e));
}

void Vcd::add_slice(Source source, const char* cat, uint32_t trk, const std::string& label, uint64_t b, uint64_t e) {
  // "args", empty: the Trace Event Format makes it optional, but consumers that build a timeline model
  // (devtools-timeline-model) read it from every complete event. A slice of no length is an instant
  // event of its thread ("s":"t"): speedscope cannot order a zero-length complete event against the
  // slices that begin and end at its time, and DevTools binds a flow to an instant as to a slice. Phase
  // "I", Chromium's own: the DevTools trace engine draws only that one on a thread ("i" is the format
  // document's older letter; Perfetto reads both, speedscope neither).
  const std::string tail = std::string(",\"cat\":\"") + cat + "\",\"args\":{}}";
  if (e == b)
    add_event(source, b, kSlice, 'I', label, trk, ",\"s\":\"t\"" + tail);
  else
    add_event(source, b, kSlice, 'X', label, trk, tail, e - b);
}

void Vcd::add_slice(Source source, const char* cat, const std::string& trk, const std::string& label, uint64_t b,
                    uint64_t e) {
  if (e < b) return;
  add_slice(source, cat, track(trk, source, next_event_[source]), label, b, e);
}

void Vcd::add_flow_begin(const std::string& key, uint64_t value, const std::string& trk, uint64_t at) {
  const auto [k, fresh] = key_of_.emplace(key, uint32_t(keys_.size()));
  if (fresh) {
    keys_.push_back(key);
    begins_.emplace_back();
  }
  // An end takes the earliest begin whose value reached its own: a begin with an earlier one of a value
  // at least as high is never taken, and a begin makes the later ones it reaches past useless.
  std::vector<FlowBegin>& v = begins_[k->second];
  auto pos = std::upper_bound(v.begin(), v.end(), at, [](uint64_t t, const FlowBegin& b) { return t < b.at; });
  if (pos != v.begin() && std::prev(pos)->value >= value) return;
  auto past = pos;
  while (past != v.end() && past->value <= value) ++past;
  pos = v.erase(pos, past);
  // The track is named now but numbered only if a flow is drawn from it (add_flow_end's matching).
  auto [t, new_track] = track_of_.emplace(trk, uint32_t(tracks_.size()));
  if (new_track) tracks_.push_back({trk, kFlowEvents, UINT64_MAX});
  v.insert(pos, FlowBegin{at, value, t->second, false});
}

void Vcd::add_flow_end(const std::string& key, uint64_t value, const std::string& trk, uint64_t at) {
  const auto [k, fresh] = key_of_.emplace(key, uint32_t(keys_.size()));
  if (fresh) {
    keys_.push_back(key);
    begins_.emplace_back();
  }
  auto [t, new_track] = track_of_.emplace(trk, uint32_t(tracks_.size()));
  if (new_track) tracks_.push_back({trk, kFlowEvents, UINT64_MAX});
  if (!ends_) ends_ = std::make_unique<TempFile>();
  std::string rec;
  put(rec, FlowEnd{k->second, t->second, value, at});
  ends_->append(rec.data(), rec.size());
  ++end_count_;
}

// The signals' changes as timeline events: a slice per value held (text and 1-bit signals), a counter
// sample per change of the others.
void Vcd::timeline_signals(uint64_t end) {
  // Signals, from their changes: within one timestamp only the last value of a signal counts (as in
  // the VCD file). Every signal's value starts a counter at 0.
  std::vector<uint64_t> current(signals_.size()), since(signals_.size(), 0);
  for (size_t i = 0; i < signals_.size(); ++i) current[i] = signals_[i].initial;
  auto leaf = [](const std::string& n) { return n.substr(n.rfind('.') + 1); };
  auto close = [&](size_t id, uint64_t t) {  // the value held since since[id] ends at t
    const Signal& sg = signals_[id];
    if (sg.ascii) {
      const std::string label = unpack(current[id]);
      if (!label.empty() && t > since[id]) add_slice(kSignalEvents, "signal", signal_track_[id], label, since[id], t);
    } else if (sg.width == 1) {
      if (current[id] && t > since[id])
        add_slice(kSignalEvents, "signal", signal_track_[id], leaf(sg.name), since[id], t);
    }
  };
  auto counter = [&](size_t id, uint64_t t) {
    const Signal& sg = signals_[id];
    if (sg.ascii || sg.width == 1 || leaf(sg.name) == "line") return;  // a scanline counter: too dense
    add_event(
        kSignalEvents, t, kCounter, 'C', sg.name, signal_track_[id],
        ",\"cat\":\"counter\",\"args\":{" + json_quoted(leaf(sg.name)) + ":" + std::to_string(current[id]) + "}}");
  };
  for (size_t i = 0; i < signals_.size(); ++i) counter(i, 0);
  for_each_time([&](uint64_t t, const std::vector<int>& touched, const std::vector<uint64_t>& last) {
    for (int id : touched) {
      const size_t k = size_t(id);
      if (last[k] == current[k]) continue;
      close(k, t);
      current[k] = last[k];
      since[k] = t;
      counter(k, t);
    }
  });
  for (size_t i = 0; i < signals_.size(); ++i) close(i, std::max(end, since[i]));
}

void Vcd::timeline_flows() {
  // Flows: each end, in the order they came, from the earliest begin of its key whose value reached
  // the end's, if that begin came earlier (else a CPU write or the start reached it: no flow). Each
  // end of a flow lies on a "fence" instant event of its track and time, the event the viewers bind it
  // to: the signal's (once, however many flows it starts) and the wait's.
  uint64_t flow_id = 0;
  std::optional<RunReader> in;
  if (ends_) in.emplace(*ends_, 0, ends_->size(), size_t(1) << 20);
  FlowEnd f;
  auto use = [&](uint32_t t) { track(tracks_[t].name, kFlowEvents, next_event_[kFlowEvents]); };
  for (uint64_t n = 0; in && n < end_count_ && in->get(f); ++n) {
    auto& v = begins_[f.key];
    const auto b =
        std::lower_bound(v.begin(), v.end(), f.value, [](const FlowBegin& x, uint64_t val) { return x.value < val; });
    if (b == v.end() || b->at >= f.at) continue;
    const std::string id = std::to_string(++flow_id);
    const std::string name = keys_[f.key] + " = " + std::to_string(b->value);
    use(b->track);
    if (!b->marked) add_slice(kFlowEvents, "fence", b->track, name + " signalled", b->at, b->at);
    b->marked = true;
    add_event(kFlowEvents, b->at, kFlow, 's', name, b->track, ",\"cat\":\"fence\",\"id\":" + id + ",\"args\":{}}");
    use(f.track);
    const std::string waited = std::to_string(f.value);
    add_slice(kFlowEvents, "fence", f.track, keys_[f.key] + " >= " + waited + " satisfied", f.at, f.at);
    add_event(kFlowEvents, f.at, kFlow, 'f', name, f.track,
              ",\"cat\":\"fence\",\"id\":" + id + ",\"bp\":\"e\",\"args\":{\"waited\":" + waited + "}}");
  }
}

// Tracks: numbered in the order of their first use; a process per first name component (gpu, igpu,
// cpu, link, ...), numbered in the order its first track comes. Unused tracks (a flow's that drew
// none) are left out.
Vcd::TrackLayout Vcd::layout_tracks() const {
  TrackLayout l;
  std::vector<uint32_t>& order = l.order;
  l.tid.assign(tracks_.size(), -1);
  l.pid_of_track.assign(tracks_.size(), 0);
  for (uint32_t t = 0; t < tracks_.size(); ++t)
    if (tracks_[t].first != UINT64_MAX) order.push_back(t);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(tracks_[a].source, tracks_[a].first) < std::tie(tracks_[b].source, tracks_[b].first);
  });
  std::map<std::string, int> pid_of;
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& name = tracks_[order[i]].name;
    const std::string proc = name.substr(0, name.find('.'));
    auto p = pid_of.find(proc);
    if (p == pid_of.end()) {
      p = pid_of.emplace(proc, int(l.pids.size()) + 1).first;
      l.pids.push_back(proc);
    }
    l.pid_of_track[order[i]] = p->second;
  }
  // Thread ids follow the process ids: Perfetto takes a tid equal to a pid for that process's main thread.
  for (size_t i = 0; i < order.size(); ++i) l.tid[order[i]] = int(l.pids.size() + 1 + i);

  return l;
}

void Vcd::write_trace_events(std::ostream& os, const TrackLayout& l) {
  // No displayTimeUnit: older Perfetto releases took "ns" there for the unit of the timestamps themselves.
  os << "{\"otherData\":{\"producer\":\"gpumodel\",\"time\":\"simulated\"},\n\"traceEvents\":[\n";
  bool first = true;
  auto out = [&](const std::string& e) {
    os << (first ? "" : ",\n") << e;
    first = false;
  };
  for (size_t p = 0; p < l.pids.size(); ++p) {
    out("{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"process_name\",\"pid\":" + std::to_string(p + 1) +
        ",\"args\":{\"name\":" + json_quoted(l.pids[p]) + "}}");
    out("{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(p + 1) +
        ",\"args\":{\"sort_index\":" + std::to_string(p) + "}}");
  }
  for (size_t i = 0; i < l.order.size(); ++i) {
    const uint32_t t = l.order[i];
    const std::string ids = ",\"pid\":" + std::to_string(l.pid_of_track[t]) + ",\"tid\":" + std::to_string(l.tid[t]);
    out("{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_name\"" + ids +
        ",\"args\":{\"name\":" + json_quoted(tracks_[t].name) + "}}");
    out("{\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":\"thread_sort_index\"" + ids +
        ",\"args\":{\"sort_index\":" + std::to_string(i) + "}}");
  }
  std::string line;
  for (auto c = events_.cursor(); const Event* e = c.peek(); c.next()) {
    line.assign("{\"ph\":\"");
    line += e->ph;
    line += "\",\"name\":";
    line += e->name;
    line += ",\"pid\":";
    line += std::to_string(l.pid_of_track[e->track]);
    line += ",\"tid\":";
    line += std::to_string(l.tid[e->track]);
    line += ",\"ts\":";
    line += us(e->ts);
    if (e->ph == 'X') {
      line += ",\"dur\":";
      line += dur_us(e->ts, e->dur);
    }
    line += e->tail;
    out(line);
  }
  os << "\n]}\n";
}

std::string Vcd::write_timeline(const std::string& path, const sc_core::sc_time& end_time) {
  if (!timeline_written_) {
    timeline_written_ = true;
    timeline_signals(end_time.value());
    timeline_flows();
  }
  const TrackLayout l = layout_tracks();
  OutputFile file(path);
  if (!file.ok()) return file.error();
  write_trace_events(file.stream(), l);
  int err = events_.error();
  if (!err && ends_) err = ends_->error();
  if (!err) err = changes_.error();
  if (err) return std::strerror(err);  // the record could not wait on disk
  file.commit();
  return file.error();
}

}  // namespace gpumodel
