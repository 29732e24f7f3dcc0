#include "app/gtkw.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include "hw_model/core/output_file.h"
#include "hw_model/core/params.h"

namespace gpumodel {

namespace fs = std::filesystem;

std::string gtkw_path_for(const std::string& vcd_path) {
  fs::path p(vcd_path);
  if (p.filename().empty() || p.filename() == "." || p.filename() == "..") return vcd_path + ".gtkw";
  return p.replace_extension(".gtkw").string();
}

bool writes_gtkw(const std::string& vcd_path) {
  std::error_code ec;
  const fs::file_status st = fs::status(vcd_path, ec);
  return !fs::exists(st) || fs::is_regular_file(st);
}

namespace {

constexpr int kNamedMarkers = 26;  // GTKWave 3.3: WAVE_NUM_NAMED_MARKERS, A..Z
constexpr double kLabelPx = 7;     // about a marker name's character width, in px, in GTKWave's default font

struct Row {
  std::string name;   // the VCD's full name, without "top."
  std::string alias;  // shown in the signal pane
  int width;
  bool ascii;
  bool analog;  // drawn as an analog step (Vcd::add_analog)
};

struct Group {
  std::string title;  // at most 24 characters
  std::vector<Row> rows;
};

class Layout {
 public:
  explicit Layout(const Vcd& vcd) {
    for (auto& s : vcd.signal_list()) by_name_[s.name] = {s.name, alias_of(s.name), s.width, s.ascii, s.analog};
  }
  bool has(const std::string& name) const { return by_name_.count(name) != 0; }
  // Adds `name` to `g` if the VCD declares it.
  void add(Group& g, const std::string& name) const {
    const auto it = by_name_.find(name);
    if (it != by_name_.end()) g.rows.push_back(it->second);
  }
  std::vector<std::string> adapters() const {
    std::vector<std::string> out;
    for (const char* a : {"gpu", "igpu"})
      if (has(std::string(a) + ".node0.state")) out.push_back(a);
    return out;
  }
  const std::map<std::string, Row>& all() const { return by_name_; }

 private:
  // "gpu.node1.state" -> "node1 state"; "igpu.node0.state" -> "igpu node0 state"; "fences.f3.cv" -> "f3 cv".
  static std::string alias_of(std::string n) {
    for (const char* drop : {"gpu.vidsch.", "gpu.", "fences."})
      if (n.rfind(drop, 0) == 0) {
        n = n.substr(std::string(drop).size());
        break;
      }
    std::replace(n.begin(), n.end(), '.', ' ');
    return n;
  }
  std::map<std::string, Row> by_name_;
};

// The fences to show: those the events name (a lost interrupt's), in the order of their first event;
// else the first four traced.
std::vector<std::string> fences_to_show(const Layout& l, const std::vector<RunEvent>& events) {
  std::vector<std::string> out;
  for (auto& e : events)
    if (e.trace.rfind("fences.", 0) == 0 && std::find(out.begin(), out.end(), e.trace) == out.end() &&
        l.has(e.trace + ".cv"))
      out.push_back(e.trace);
  if (!out.empty()) return out;
  for (int i = 0; i < 4 && l.has("fences.f" + std::to_string(i) + ".cv"); ++i)
    out.push_back("fences.f" + std::to_string(i));
  return out;
}

std::vector<Group> groups_for(const Layout& l, const std::vector<RunEvent>& events) {
  std::vector<Group> gs;
  bool lost = false;
  for (auto& e : events) lost = lost || e.name.rfind("lost ", 0) == 0;
  if (lost) {
    Group g{"Monitors", {}};
    l.add(g, "monitor.lost_interrupt");
    l.add(g, "monitor.lost_fence");
    gs.push_back(g);
  }
  {
    Group g{"TDR steps", {}};
    for (auto& a : l.adapters()) {
      l.add(g, a + ".vidsch.tdr_adapter");
      for (int n = 0; n < 16; ++n) l.add(g, a + ".vidsch.tdr_node" + std::to_string(n));
    }
    gs.push_back(g);
  }
  // The fences: a TDR run's traced fence is a bystander unless an event names it.
  bool tdr = !gs.back().rows.empty(), named = false;
  for (auto& e : events) named = named || e.trace.rfind("fences.", 0) == 0;
  // Named fences (lost interrupts'): the first event's in full at the top, the others' CV and shadow MV
  // last, below the path from the nodes to the CPU.
  Group others{"Other lost fences", {}};
  if (!tdr || named) {
    const std::vector<std::string> fences = fences_to_show(l, events);
    const bool split = named && fences.size() > 1;
    Group g{fences.size() == 1 || split ? "Fence " + fences[0].substr(7) : "Fences", {}};
    for (size_t i = 0; i < fences.size(); ++i) {
      Group& to = split && i > 0 ? others : g;
      l.add(to, fences[i] + ".cv");
      if (fences.size() <= 4 || (split && i == 0)) l.add(to, fences[i] + ".mv");
      l.add(to, fences[i] + ".shadow_mv");
    }
    gs.push_back(g);
  }
  for (auto& a : l.adapters()) {
    Group nodes{a == "gpu" ? "Nodes" : a + " nodes", {}};
    for (int n = 0; l.has(a + ".node" + std::to_string(n) + ".state"); ++n) {
      const std::string p = a + ".node" + std::to_string(n);
      l.add(nodes, p + ".state");
      l.add(nodes, p + ".queue");
      l.add(nodes, p + ".fence");
    }
    gs.push_back(nodes);
    Group cmp{a == "gpu" ? "CMP" : a + " CMP", {}};
    l.add(cmp, a + ".cmp.state");
    l.add(cmp, a + ".cmp.decision");
    gs.push_back(cmp);
    Group d{a == "gpu" ? "Display" : a + " display", {}};
    for (const char* s : {"line", "fifo_bytes", "underflow", "vblank", "flip", "surface", "tear"})
      l.add(d, a + ".display." + s);
    gs.push_back(d);
    Group v{a == "gpu" ? "VidMm" : a + " VidMm", {}};
    l.add(v, a + ".vidmm.evict");
    gs.push_back(v);
  }
  Group link{"Link", {}};
  for (const char* s : {"up_busy", "up_held", "down_busy", "down_held"}) l.add(link, std::string("link.") + s);
  gs.push_back(link);
  Group irq{"Interrupts", {}};
  l.add(irq, "intc.msi");
  l.add(irq, "intc.vector");
  gs.push_back(irq);
  Group cpu{"CPU", {}};
  l.add(cpu, "cpu.context");
  l.add(cpu, "cpu.threads");
  gs.push_back(cpu);
  Group os{"OS", {}};
  l.add(os, "os.waiters");
  gs.push_back(os);
  gs.push_back(others);
  gs.erase(std::remove_if(gs.begin(), gs.end(), [](const Group& g) { return g.rows.empty(); }), gs.end());
  return gs;
}

struct View {
  uint64_t start = 0;  // [timestart], ps
  double zoom = 0;     // the '*' line's zoom
  uint64_t marker = 0;
  bool has_marker = false;
};

double zoom_for(double span_ps) {
  // 200 pixels show 2^-zoom ps (GTKWave's calczoom, zoombase 2): the span in kWaveWidthPx pixels.
  const double z = -std::log2(std::max(span_ps, 1.0) * 200.0 / kWaveWidthPx);
  return std::min(0.0, std::floor(z * 10.0) / 10.0);  // rounded out, to a tenth; GTKWave's finest is 0
}

uint64_t page_ps(double zoom) { return uint64_t(std::ceil(kWaveWidthPx * std::pow(2.0, -zoom) / 200.0)); }

View view_for(const std::vector<RunEvent>& events, uint64_t last) {
  View v;
  uint64_t a = UINT64_MAX, b = 0;
  for (auto& e : events)
    if (e.in_view) {
      if (!v.has_marker) v.marker = e.ps, v.has_marker = true;
      a = std::min(a, e.ps);
      b = std::max(b, e.ps);
    }
  if (a == UINT64_MAX) {  // nothing to show: the whole run
    v.zoom = zoom_for(double(last));
    return v;
  }
  // A margin of an eighth of the span each side; one event alone, 5 us each side.
  const uint64_t span = b - a, margin = span ? std::max<uint64_t>(span / 8, 500) : 5000000;
  v.zoom = zoom_for(double(span + 2 * margin));
  const uint64_t page = page_ps(v.zoom);
  // Centred on the events; GTKWave ignores a start past the dump's end less a page, so it is kept
  // there (less a page and a quarter where the events allow: a window wider than the file's has a
  // longer page). Events at the dump's very end are seen only in the file's window or a narrower one.
  const int64_t lo = int64_t(b + margin) - int64_t(page), hi = int64_t(a) - int64_t(margin);
  int64_t s = int64_t(a + span / 2) - int64_t(page / 2);
  s = std::max(lo, std::min(hi, s));
  s = std::min(s, std::max(lo, int64_t(last) - int64_t(page) * 5 / 4));
  s = std::min(s, int64_t(last) - int64_t(page));
  // GTKWave truncates the start to a multiple of the largest power of ten within a pixel's time
  // (currenttime.c, time_trunc_set): the file holds the start it will show.
  const double ps_per_px = std::pow(2.0, -v.zoom) / 200.0;
  int64_t trunc = 1;
  for (int64_t c = 1000000000000000; c > 1 && trunc == 1; c /= 10)
    if (ps_per_px >= double(c)) trunc = c;
  v.start = uint64_t(std::max<int64_t>(0, s) / trunc * trunc);
  return v;
}

std::string base_name(const std::string& p) { return fs::path(p).filename().string(); }

}  // namespace

std::string make_gtkw(const std::string& vcd_path, const std::string& gtkw_path, const Vcd& vcd, const Results& r) {
  std::vector<RunEvent> events = r.events;
  std::stable_sort(events.begin(), events.end(), [](const RunEvent& x, const RunEvent& y) { return x.ps < y.ps; });
  const View v = view_for(events, vcd.last_time_ps());
  // Named markers: every event if they fit, else the ones the view shows first, then the earliest.
  std::vector<size_t> named;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < events.size() && named.size() < kNamedMarkers; ++i)
      if (events[i].in_view == (pass == 0)) named.push_back(i);
  std::sort(named.begin(), named.end());
  // A marker's name is drawn at its top: two markers nearer than a label's width in the view would
  // overlap, so the later one's name joins the earlier's ("reset done, recovery") and its marker goes.
  std::vector<std::string> label(events.size());
  for (size_t i = 0; i < events.size(); ++i) label[i] = events[i].name;
  const double ps_per_px = std::pow(2.0, -v.zoom) / 200.0;
  size_t merged = 0;
  for (size_t k = 1; k < named.size();) {
    const RunEvent &a = events[named[k - 1]], &b = events[named[k]];
    const double gap_px = double(b.ps - a.ps) / ps_per_px;
    if (a.in_view && b.in_view && gap_px < kLabelPx * double(label[named[k - 1]].size() + 1)) {
      label[named[k - 1]] += ", " + label[named[k]];
      named.erase(named.begin() + std::ptrdiff_t(k));
      ++merged;
    } else {
      ++k;
    }
  }

  std::ostringstream os;
  os << "[*] Written by gpumodel with the waveform: the view and the markers are this run's key events.\n";
  for (size_t k = 0; k < named.size(); ++k) {
    const RunEvent& e = events[named[k]];
    os << "[*] " << char('A' + k) << " " << label[named[k]] << " at " << e.ps << " ps"
       << (e.in_view ? "" : " (outside the view)") << "\n";
  }
  if (events.size() > named.size() + merged)
    os << "[*] " << events.size() - named.size() - merged << " more events in the results file have no marker\n";
  os << "[dumpfile] \"" << base_name(vcd_path) << "\"\n";
  os << "[savefile] \"" << base_name(gtkw_path) << "\"\n";
  os << "[timestart] " << v.start << "\n";
  os << "[size] 1400 800\n";
  char zoom[32];
  std::snprintf(zoom, sizeof zoom, "%f", v.zoom);
  os << "*" << zoom << " " << (v.has_marker ? std::to_string(v.marker) : std::string("-1"));
  for (int k = 0; k < kNamedMarkers; ++k)
    os << " " << (size_t(k) < named.size() ? std::to_string(events[named[size_t(k)]].ps) : std::string("-1"));
  os << "\n";
  for (size_t k = 0; k < named.size(); ++k) os << "[markername] " << char('A' + k) << label[named[k]] << "\n";
  const Layout l(vcd);
  const std::vector<Group> groups = groups_for(l, events);
  os << "[signals_width] " << kSignalsWidthPx << "\n";
  os << "[sst_expanded] 0\n";
  for (auto& g : groups) {
    os << "@800200\n-" << g.title << "\n";
    for (auto& row : g.rows) {
      // Flags (GTKWave's TR_*): ASCII text, binary bits, decimal numbers right-justified; a fence's
      // 64-bit values signed (TR_SIGNED 0x400), so the all-ones value a fence holds before its first
      // write reads -1 instead of a 20-digit number cut to "184467+".
      const bool fence_value = row.width == 64 && row.name.rfind("fences.", 0) == 0;
      // A level the model registered as analog (the display's scan line and FIFO, one change a line: at a
      // frame's zoom a digital row is a solid bar) is an analog step (TR_ANALOG_STEP 0x8000) three rows
      // tall (two height extensions, TR_ANALOG_BLANK_STRETCH 0x20000), as GTKWave writes it itself.
      os << "@"
         << (row.ascii        ? "820"
             : row.width == 1 ? "28"
             : fence_value    ? "424"
             : row.analog     ? "8024"
                              : "24")
         << "\n";
      os << "+{" << row.alias << "} top." << row.name;
      if (row.width > 1) os << "[" << row.width - 1 << ":0]";
      os << "\n";
      if (row.analog) os << "@20000\n-\n@20000\n-\n";
    }
    os << "@1000200\n-" << g.title << "\n";
  }
  return os.str();
}

std::string write_gtkw(const std::string& gtkw_path, const std::string& vcd_path, const Vcd& vcd, const Results& r) {
  OutputFile out(gtkw_path);
  out.stream() << make_gtkw(vcd_path, gtkw_path, vcd, r);
  out.commit();
  return out.error();
}

}  // namespace gpumodel
