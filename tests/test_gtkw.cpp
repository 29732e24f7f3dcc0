// The GTKWave save file a run with --vcd writes beside its waveform (app/gtkw.h): read back as GTKWave
// 3.3 reads it (savefile.c: '*' line = zoom, primary marker, named markers A..Z; [markername] A<name>;
// [timestart]; '+' rows name signals), it must put a marker at each of the run's key events (the results
// file's "events", to the picosecond), open a view that shows the events the view is for, and trace
// signals the VCD declares; for fence_race_no_barrier the traced fences are the lost interrupts'.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include "app/gtkw.h"
#include "tests/tb.h"

namespace {

using nlohmann::json;
using tb::run_cli;
using tb::scenario;
using tb::slurp;

struct SaveFile {
  std::string dumpfile;
  int64_t timestart = -1;
  double zoom = 1;
  int64_t marker = -2;
  std::vector<int64_t> named;         // A..Z, -1 unset
  std::map<char, std::string> names;  // [markername]
  std::vector<std::string> signals;   // '+' rows: the full names without "top." and bit range
  std::vector<std::string> titles;    // group titles, once each
};

SaveFile parse_gtkw(const std::string& text) {
  SaveFile s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("[dumpfile] ", 0) == 0) s.dumpfile = line.substr(11);
    if (line.rfind("[timestart] ", 0) == 0) s.timestart = std::stoll(line.substr(12));
    if (line.rfind("[markername] ", 0) == 0) s.names[line[13]] = line.substr(14);
    if (line[0] == '*') {
      std::istringstream w(line.substr(1));
      w >> s.zoom >> s.marker;
      int64_t t;
      while (w >> t) s.named.push_back(t);
    }
    if (line[0] == '+') {
      std::string name = line.substr(line.rfind(' ') + 1);
      name = name.substr(0, name.find('['));
      REQUIRE(name.rfind("top.", 0) == 0);
      s.signals.push_back(name.substr(4));
    }
    if (line[0] == '-' && (s.titles.empty() || s.titles.back() != line.substr(1))) s.titles.push_back(line.substr(1));
  }
  return s;
}

// The VCD's declared names (scopes joined with dots, without "top.") and every change, per name.
struct VcdFile {
  std::set<std::string> names;
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> changes;
  uint64_t last = 0;
};

VcdFile parse_vcd(const std::string& path) {
  VcdFile v;
  std::map<std::string, std::string> by_id;
  std::vector<std::string> scope;
  std::istringstream in(slurp(path));
  std::string tok;
  while (in >> tok) {
    if (tok == "$scope") {
      std::string kind, name;
      in >> kind >> name;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      scope.pop_back();
    } else if (tok == "$var") {
      std::string type, width, id, name, full;
      in >> type >> width >> id >> name;
      for (size_t i = 1; i < scope.size(); ++i) full += scope[i] + ".";
      v.names.insert(full + name);
      by_id[id] = full + name;
    } else if (tok == "$enddefinitions") {
      break;
    }
  }
  uint64_t t = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '$') continue;
    if (line[0] == '#') {
      t = v.last = std::stoull(line.substr(1));
      continue;
    }
    std::string value, id;
    if (line[0] == 'b') {
      const size_t sp = line.find(' ');
      value = line.substr(1, sp - 1), id = line.substr(sp + 1);
    } else {
      value = line.substr(0, 1), id = line.substr(1);
    }
    if (by_id.count(id)) v.changes[by_id[id]].push_back({t, value});
  }
  return v;
}

// The time a 1,100-pixel wave pane shows at `zoom` (GTKWave's calczoom: 200 pixels show 2^-zoom ps, the
// VCD's unit): GTKWave 3.3.118's pane at the file's [size] 1400 800 and [signals_width] 236.
double page_of(double zoom) { return 1100.0 * std::pow(2.0, -zoom) / 200.0; }

struct Checked {
  json results;
  SaveFile gtkw;
  VcdFile vcd;
};

// Runs `args` with --vcd and --results, and checks what every save file must hold: a named marker per
// event (time order, names, ps), the primary marker at the first event the view is for, a view that
// shows those events and that GTKWave honours, short group titles, rows the VCD declares.
Checked run_and_check(const std::string& args, const std::string& tag, int expect_code = 0) {
  const std::string base = "gtkw_" + tag + "_" + std::to_string(::getpid());
  const auto r = run_cli(args + " --vcd " + base + ".vcd --results " + base + ".json");
  REQUIRE(r.code == expect_code);
  Checked c{json::parse(slurp(base + ".json")), parse_gtkw(slurp(base + ".gtkw")), parse_vcd(base + ".vcd")};
  for (const char* ext : {".vcd", ".json", ".gtkw"}) std::remove((base + ext).c_str());
  const SaveFile& g = c.gtkw;
  const json& events = c.results["events"];
  REQUIRE(events.is_array());
  REQUIRE(!events.empty());
  CHECK(g.dumpfile == "\"" + base + ".vcd\"");
  REQUIRE(g.named.size() == 26);
  // Every event has a named marker, in time order, while there are letters: its own, at its time, or,
  // when it is nearer the marker before it than that marker's label is wide in the view (7 px a
  // character), that marker's, its name joined to the label ("reset done, recovery"): labels never overlap.
  const double px_ps = std::pow(2.0, -g.zoom) / 200.0;
  size_t k = 0;
  if (events.size() <= 26) {
    for (size_t i = 0; i < events.size(); ++i) {
      INFO("event " << i << " " << events[i]["name"]);
      const int64_t ps = events[i]["ps"].get<int64_t>();
      const std::string name = events[i]["name"];
      if (k > 0) {
        const std::string& label = g.names.at(char('A' + k - 1));
        const double gap_px = double(ps - g.named[k - 1]) / px_ps;
        const std::string tail = ", " + name;
        const bool joined =
            label.size() >= tail.size() && label.compare(label.size() - tail.size(), tail.size(), tail) == 0;
        if (joined && k < 26 && g.named[k] != ps) {  // shares the marker before: too near for its own label
          CHECK(gap_px < 7.0 * double(label.size() - tail.size() + 1));
          continue;
        }
      }
      REQUIRE(k < 26);
      CHECK(g.named[k] == ps);
      CHECK(g.names.at(char('A' + k)).rfind(name, 0) == 0);
      ++k;
    }
    for (size_t j = 1; j < k; ++j) {  // the labels that stay apart are a label's width apart
      INFO("marker " << char('A' + j));
      const std::string& before = g.names.at(char('A' + j - 1));
      if (events.size() > 0 && g.named[j] > int64_t(g.timestart) && g.named[j - 1] > int64_t(g.timestart))
        CHECK(double(g.named[j] - g.named[j - 1]) / px_ps >= 7.0 * double(before.size() + 1) - 1e-9);
    }
  } else {
    k = 26;
  }
  for (size_t j = k; j < 26; ++j) CHECK(g.named[j] == -1);
  // The view: [timestart] and the zoom's page hold every event the view is for; the primary marker is
  // the first of them.
  const double page = page_of(g.zoom);
  int64_t first_in_view = -1;
  for (auto& e : events) {
    if (!e["in_view"].get<bool>()) continue;
    const int64_t t = e["ps"].get<int64_t>();
    if (first_in_view < 0) first_in_view = t;
    INFO(e["name"].get<std::string>() << " at " << t << " ps, view " << g.timestart << " + " << page);
    CHECK(t >= g.timestart);
    // To the pixel: an event at the dump's very end (fence_signal's wake) can lie past the view's end by
    // less than one, the start being a multiple of GTKWave's rounding and at most the end less a page.
    CHECK(double(t) <= double(g.timestart) + page + page / 1100);
  }
  CHECK(g.marker == first_in_view);
  // GTKWave honours [timestart] only up to the dump's end less a page.
  CHECK(double(g.timestart) <= double(c.vcd.last) - page);
  CHECK(g.zoom <= 0);
  // Not t=0..end: the view is a window of the run.
  CHECK(page < double(c.vcd.last));
  for (auto& t : g.titles) {
    INFO(t);
    CHECK(t.size() <= 24);
  }
  CHECK(g.signals.size() >= 8);
  for (auto& s : g.signals) {
    INFO(s);
    CHECK(c.vcd.names.count(s) == 1);
  }
  return c;
}

// The value `name` holds at `t` (its last change at or before `t`), as the VCD writes it.
std::string value_at(const VcdFile& v, const std::string& name, uint64_t t) {
  std::string value;
  for (auto& [at, x] : v.changes.at(name))
    if (at <= t) value = x;
  return value;
}

double event_ps(const json& events, const std::string& name) {
  for (auto& e : events)
    if (e["name"] == name) return double(e["ps"].get<int64_t>());
  FAIL("no event " << name);
  return 0;
}

}  // namespace

TEST_CASE("fence_signal's save file marks the warm signal and its wake and opens on them", "[H4][F2]") {
  const Checked c = run_and_check(scenario("fence_signal"), "fence_signal");
  const json& ev = c.results["events"];
  REQUIRE(ev.size() == 3);
  CHECK(ev[0]["name"] == "signal");
  CHECK(ev[1]["name"] == "MSI");
  CHECK(ev[2]["name"] == "wake");
  // The markers are the headline figure's two ends.
  CHECK(event_ps(ev, "wake") - event_ps(ev, "signal") ==
        Approx(c.results["metrics"]["signal_to_wake_ns"].get<double>() * 1000).margin(0.5));
  // The 15 us of interest fill most of the view: at least a third of it (not 50 pixels of 1,100).
  const double page = page_of(c.gtkw.zoom);
  CHECK(event_ps(ev, "wake") - event_ps(ev, "signal") > page / 3);
  // The fence and the path: f0's values, the CMP, the MSI, the CPU.
  for (const char* s : {"fences.f0.cv", "fences.f0.shadow_mv", "gpu.cmp.state", "intc.msi", "cpu.context"}) {
    INFO(s);
    CHECK(std::count(c.gtkw.signals.begin(), c.gtkw.signals.end(), s) == 1);
  }
}

TEST_CASE("gpu_wait's save file marks the warm signal and node B's unblock", "[H4][F5]") {
  const Checked c = run_and_check(scenario("gpu_wait"), "gpu_wait");
  const json& ev = c.results["events"];
  REQUIRE(ev.size() == 2);
  CHECK(ev[0]["name"] == "signal");
  CHECK(ev[1]["name"] == "unblock");
  // The figure puts the signal on the TIMESTAMP's 1 ns clock: within a tick of the markers' difference.
  CHECK(event_ps(ev, "unblock") - event_ps(ev, "signal") ==
        Approx(c.results["metrics"]["signal_to_unblock_ns"].get<double>() * 1000).margin(1000));
}

TEST_CASE("tdr_engine_reset's save file opens on the timeout to the recovery with the hang marked", "[H4][T1][T3]") {
  const Checked c = run_and_check(scenario("tdr_engine_reset"), "tdr_engine_reset");
  const json& ev = c.results["events"];
  const json& m = c.results["metrics"];
  std::vector<std::string> names;
  for (auto& e : ev) names.push_back(e["name"]);
  CHECK(names == std::vector<std::string>{"hang", "timeout", "reset", "reset done", "recovery"});
  // The reset's return and the recovery are under a label's width apart in the view: one marker, both
  // names, so the labels do not overlap.
  CHECK(c.gtkw.names.at('D') == "reset done, recovery");
  CHECK(c.gtkw.named[4] == -1);
  // Each marker pair is a metric's two ends.
  CHECK(event_ps(ev, "timeout") - event_ps(ev, "hang") == Approx(m["detect_ns"].get<double>() * 1000).margin(0.5));
  CHECK(event_ps(ev, "reset done") - event_ps(ev, "reset") == Approx(m["reset_ns"].get<double>() * 1000).margin(0.5));
  CHECK(event_ps(ev, "recovery") - event_ps(ev, "timeout") == Approx(m["recover_ns"].get<double>() * 1000).margin(0.5));
  // The hang is TdrDelay (20 ms) before the timeout: marked, outside the view; the view is the
  // sequence's quarter millisecond, not the 33 ms run.
  CHECK(ev[0]["in_view"] == false);
  CHECK(double(c.gtkw.timestart) > event_ps(ev, "hang"));
  const double page = page_of(c.gtkw.zoom);
  CHECK(page < 4 * (event_ps(ev, "recovery") - event_ps(ev, "timeout")));
  CHECK(std::count(c.gtkw.signals.begin(), c.gtkw.signals.end(), "gpu.vidsch.tdr_node1") == 1);
  CHECK(std::count(c.gtkw.signals.begin(), c.gtkw.signals.end(), "gpu.node1.state") == 1);
}

TEST_CASE("fence_race_no_barrier's save file traces exactly the fences of the lost interrupts", "[H4][F7]") {
  // 15,000 signals lose four interrupts (the default 100,000: 35, in 24 s).
  const Checked c = run_and_check(scenario("fence_race_no_barrier") + " --workload.signals=15000", "frnb");
  const json& ev = c.results["events"];
  // A lost and an overdue event per violation the monitor counted.
  const uint64_t lost = c.results["monitors"]["lost_interrupt"]["violations"];
  REQUIRE(lost >= 2);
  std::set<std::string> lost_traces;
  std::set<uint64_t> lost_times;
  std::map<uint64_t, std::set<uint64_t>> lost_slots;  // by the time CV reached the value
  size_t n_lost = 0;
  for (auto& e : ev) {
    const std::string name = e["name"];
    if (name.rfind("lost slot ", 0) != 0) continue;
    ++n_lost;
    REQUIRE(e.contains("trace"));
    const std::string trace = e["trace"];
    const uint64_t t = e["ps"];
    lost_traces.insert(trace);
    lost_times.insert(t);
    lost_slots[t].insert(std::stoull(name.substr(10)));
    INFO(name << " " << trace << " at " << t);
    // The monitor's own waveform names the slot when the window opens ...
    CHECK(std::stoull(value_at(c.vcd, "monitor.lost_fence", t), nullptr, 2) == std::stoull(name.substr(10)));
    CHECK(value_at(c.vcd, "monitor.lost_interrupt", t) == "1");
    // ... and the traced fence is the one whose CurrentValue write reached the waited value then.
    bool written = false;
    for (auto& [at, v] : c.vcd.changes.at(trace + ".cv")) written = written || at == t;
    CHECK(written);
  }
  CHECK(n_lost == lost);
  // Every rising edge of monitor.lost_interrupt is a lost event's time (overlapping windows merge).
  for (auto& [at, v] : c.vcd.changes.at("monitor.lost_interrupt"))
    if (v == "1") CHECK(lost_times.count(at) == 1);
  // The save file's fences are exactly those.
  std::set<std::string> traced;
  for (auto& s : c.gtkw.signals)
    if (s.rfind("fences.", 0) == 0) traced.insert(s.substr(0, s.rfind('.')));
  CHECK(traced == lost_traces);
  CHECK(std::count(c.gtkw.signals.begin(), c.gtkw.signals.end(), "monitor.lost_interrupt") == 1);
  // Each loss has its three events, with the fence: armed (the waiter added) <= lost < overdue.
  for (auto& e : ev) {
    const std::string name = e["name"];
    if (name.rfind("lost slot ", 0) != 0) continue;
    const std::string slot = name.substr(5);
    INFO(slot);
    CHECK(event_ps(ev, "armed " + slot) <= event_ps(ev, name));
    CHECK(event_ps(ev, "overdue " + slot) > event_ps(ev, name));
  }
  // The view is the first loss's race, the waiter armed to CV reaching its value: microseconds, not the
  // 30 ms run; its overdue verdict (the wake bound later) is marked outside it.
  const double page = page_of(c.gtkw.zoom);
  CHECK(page < 0.001 * double(c.vcd.last));
  std::vector<std::string> in_view;
  for (auto& e : ev)
    if (e["in_view"].get<bool>()) in_view.push_back(e["name"]);
  REQUIRE(in_view.size() == 2);
  const std::string first = "slot " + std::to_string(*lost_slots.begin()->second.begin());
  CHECK(in_view == std::vector<std::string>{"armed " + first, "lost " + first});
}

TEST_CASE("copy_bandwidth's save file opens on the copy and cross_adapter_fence's on a warm signal", "[H4][F15]") {
  {
    const Checked c = run_and_check(scenario("copy_bandwidth"), "copy");
    const json& ev = c.results["events"];
    REQUIRE(ev.size() == 2);
    // duration_ns's two ends (the GPU's timestamps, 1 ns ticks).
    CHECK(event_ps(ev, "copy end") - event_ps(ev, "copy start") ==
          Approx(c.results["metrics"]["duration_ns"].get<double>() * 1000).margin(0.5));
  }
  const Checked c = run_and_check(scenario("cross_adapter_fence"), "xfence");
  const json& ev = c.results["events"];
  const json& m = c.results["metrics"];
  REQUIRE(ev.size() == 2);
  // One of the signals the mean counts: within its min and max.
  const double d = (event_ps(ev, "unblock") - event_ps(ev, "signal")) / 1000;
  CHECK(d >= m["signal_to_unblock_min_ns"].get<double>() - 1e-6);
  CHECK(d <= m["signal_to_unblock_max_ns"].get<double>() + 1e-6);
  CHECK(d != Approx(m["signal_to_unblock_first_ns"].get<double>()));  // not the cold first
}

// A fence's 64-bit values are shown as signed decimals (GTKWave's TR_SIGNED | TR_DEC | TR_RJUSTIFY,
// flags 0x424), so the all-ones value a fence's MV holds before its first write reads -1, not a
// 20-digit number cut short; other 64-bit rows stay unsigned decimal (0x24) or text (0x820).
TEST_CASE("A fence's values are signed decimals in the save file, other numbers unsigned", "[H4][F2]") {
  const std::string base = "gtkw_signed_" + std::to_string(::getpid());
  REQUIRE(run_cli(scenario("fence_signal") + " --quiet --vcd " + base + ".vcd").code == 0);
  const std::string text = slurp(base + ".gtkw");
  for (const char* ext : {".vcd", ".gtkw"}) std::remove((base + ext).c_str());
  std::istringstream in(text);
  std::string flags, line;
  int fences = 0, others = 0;
  while (std::getline(in, line)) {
    if (line.rfind("@", 0) == 0) flags = line;
    if (line.rfind("+{", 0) != 0 || line.find("[63:0]") == std::string::npos) continue;
    INFO(line);
    if (line.find(" top.fences.") != std::string::npos) {
      CHECK(flags == "@424");
      ++fences;
    } else {
      CHECK((flags == "@24" || flags == "@820"));  // unsigned decimal, or a state's text
      ++others;
    }
  }
  CHECK(fences >= 3);  // the first fence's CV, MV and shadow MV at least
  CHECK(others >= 1);
}

// A run of one engine busy from `busy` to `idle` ps, its dump written (and removed) so the dump's end is
// known: `end` if the run went on after its last change, else that change.
static void busy_then_idle(gpumodel::Vcd& vcd, uint64_t busy, uint64_t idle, uint64_t end) {
  vcd.enable();
  const gpumodel::Vcd::Id a = vcd.add_ascii("gpu.node0.state", "idle");
  vcd.set_ascii(a, "busy", sc_core::sc_time::from_value(busy));
  vcd.set_ascii(a, "idle", sc_core::sc_time::from_value(idle));
  const std::string path = "gtkw_run_" + std::to_string(::getpid()) + ".vcd";
  REQUIRE(vcd.write(path, "date", end).empty());
  std::remove(path.c_str());
  REQUIRE(vcd.last_time_ps() == std::max(idle, end));
}

TEST_CASE("A run without key events opens the whole run and marks nothing", "[H4]") {
  // Every shipped scenario names key events (tests/gtkw/check_views.py); a run of none (a scenario that
  // adds none, or one cut before its first) gets the whole run in view and no marker.
  gpumodel::Vcd vcd;
  busy_then_idle(vcd, 40000000, 70000000, 100000000);
  const SaveFile g = parse_gtkw(gpumodel::make_gtkw("none.vcd", "none.gtkw", vcd, gpumodel::Results{}));
  CHECK(g.timestart == 0);
  CHECK(g.marker == -1);
  for (auto t : g.named) CHECK(t == -1);
  const double page = page_of(g.zoom);
  CHECK(page >= 100000000.0);
  CHECK(page < 2.2 * 100000000.0);  // zoomed to fit, to a tenth of a zoom step
}

TEST_CASE("One key event alone opens 5 us each side of it", "[H4]") {
  // A run whose only event is at 50 ms of 100: the view is that event and 5 us each side (10 us in the
  // 1100-pixel pane, to a tenth of a zoom step), not a run-sized window in which it is one pixel.
  gpumodel::Vcd vcd;
  busy_then_idle(vcd, 40000000000, 100000000000, 0);
  gpumodel::Results r;
  r.events.push_back({"the one event", 50000000000, true, ""});
  const SaveFile g = parse_gtkw(gpumodel::make_gtkw("one.vcd", "one.gtkw", vcd, r));
  const double page = page_of(g.zoom);
  CHECK(g.marker == 50000000000);
  CHECK(page >= 10000000);
  CHECK(page < 10000000 * std::pow(2.0, 0.1) * 1.001);
  CHECK(g.timestart <= 50000000000 - 5000000 + int64_t(page / 1100));
  CHECK(double(g.timestart) + page >= 50000000000 + 5000000 - page / 1100);
}

TEST_CASE("Over 26 events: every event the view shows gets a named marker, the rest the earliest, A..Z in time",
          "[H4]") {
  // 20 events outside the view (1..20 us) before 10 the view shows (50..59 us): GTKWave has 26 named
  // markers, so the 10 in view and the 16 earliest others get them, lettered in time order.
  gpumodel::Vcd vcd;
  vcd.enable();
  const gpumodel::Vcd::Id a = vcd.add_ascii("gpu.node0.state", "idle");
  vcd.set_ascii(a, "busy", sc_core::sc_time::from_value(100000000));
  const std::string path = "gtkw_many_" + std::to_string(::getpid()) + ".vcd";
  REQUIRE(vcd.write(path, "date").empty());
  std::remove(path.c_str());
  gpumodel::Results r;
  for (int i = 1; i <= 20; ++i) r.events.push_back({"out " + std::to_string(i), uint64_t(i) * 1000000, false, ""});
  for (int i = 0; i < 10; ++i) r.events.push_back({"in " + std::to_string(i), uint64_t(50 + i) * 1000000, true, ""});
  const SaveFile g = parse_gtkw(gpumodel::make_gtkw("many.vcd", "many.gtkw", vcd, r));
  REQUIRE(g.named.size() == 26);
  std::vector<int64_t> want;
  for (int i = 1; i <= 16; ++i) want.push_back(int64_t(i) * 1000000);
  for (int i = 0; i < 10; ++i) want.push_back(int64_t(50 + i) * 1000000);
  CHECK(g.named == want);
  CHECK(g.names.at('A') == "out 1");
  CHECK(g.names.at('Q') == "in 0");
  CHECK(g.names.at('Z') == "in 9");
}

TEST_CASE("Events listed out of time order still get markers lettered in time", "[H4]") {
  // The results list events as the run reports them; the save file letters its markers by time.
  gpumodel::Vcd vcd;
  vcd.enable();
  const gpumodel::Vcd::Id a = vcd.add_ascii("gpu.node0.state", "idle");
  vcd.set_ascii(a, "busy", sc_core::sc_time::from_value(100000000));
  const std::string path = "gtkw_order_" + std::to_string(::getpid()) + ".vcd";
  REQUIRE(vcd.write(path, "date").empty());
  std::remove(path.c_str());
  gpumodel::Results r;
  r.events.push_back({"late", 30000000, true, ""});
  r.events.push_back({"early", 10000000, true, ""});
  r.events.push_back({"middle", 20000000, true, ""});
  const SaveFile g = parse_gtkw(gpumodel::make_gtkw("order.vcd", "order.gtkw", vcd, r));
  REQUIRE(g.named.size() >= 3);  // 26 markers, -1 where unused
  CHECK(std::vector<int64_t>(g.named.begin(), g.named.begin() + 3) ==
        std::vector<int64_t>{10000000, 20000000, 30000000});
  CHECK(g.names.at('A') == "early");
  CHECK(g.names.at('B') == "middle");
  CHECK(g.names.at('C') == "late");
}

TEST_CASE("The save file is identical between identical runs and absent beside /dev/null", "[H4]") {
  std::string text[2];
  for (int i = 0; i < 2; ++i) {
    const std::string base = "gtkw_det" + std::to_string(i) + "_" + std::to_string(::getpid());
    REQUIRE(run_cli(scenario("tdr_engine_reset") + " --vcd " + base + ".vcd").code == 0);
    text[i] = slurp(base + ".gtkw");
    // It names its own dump; the rest is the same.
    const size_t at = text[i].find(base);
    REQUIRE(at != std::string::npos);
    text[i] = std::regex_replace(text[i], std::regex(base), "BASE");
    for (const char* ext : {".vcd", ".gtkw"}) std::remove((base + ext).c_str());
  }
  CHECK(text[0] == text[1]);
  CHECK(run_cli(scenario("mmio_roundtrip") + " --vcd /dev/null").code == 0);
  CHECK(!std::filesystem::exists("/dev/null.gtkw"));
  // A waveform named without an extension: FILE.gtkw beside it, naming it.
  const std::string bare = "gtkw_bare_" + std::to_string(::getpid());
  REQUIRE(run_cli(scenario("mmio_roundtrip") + " --vcd " + bare).code == 0);
  CHECK(parse_gtkw(slurp(bare + ".gtkw")).dumpfile == "\"" + bare + "\"");
  for (const char* ext : {"", ".gtkw"}) std::remove((bare + ext).c_str());
}

TEST_CASE("The committed save files are a default run's", "[H4]") {
  // waveforms/make.sh copies each from a default run; all but the two fence_race files (20 s each) are
  // checked here by making them again.
  const std::filesystem::path dir = std::string(GPUMODEL_SOURCE_DIR) + "/waveforms";
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string stem = e.path().stem().string();
    if (e.path().extension() != ".gtkw" || stem.rfind("fence_race", 0) == 0) continue;
    ++files;
    INFO(stem);
    const std::string tmp = "gtkw_committed_" + std::to_string(::getpid());
    std::filesystem::create_directories(tmp);
    const auto r = run_cli(scenario(stem) + " --quiet --vcd " + tmp + "/" + stem + ".vcd");
    CHECK((r.code == 0 || r.code == 1));
    CHECK(slurp(tmp + "/" + stem + ".gtkw") == slurp(e.path().string()));
    std::filesystem::remove_all(tmp);
  }
  CHECK(files >= 10);
}

TEST_CASE("The waveform spans the run: a run that goes on after its last change ends the dump at its end", "[H4]") {
  // A signal changes at 10 and 20 ns; the run ends at 35 ns: the dump's last line is "#35000", a time
  // with no change, so GTKWave shows the value held to the run's end (and a view can show an event at
  // 20 ns with room after it). A run that ends at its last change adds no line; nor does an end given
  // as earlier than the last change.
  auto write = [](uint64_t end_ps, const std::string& name) {
    gpumodel::Vcd vcd;
    vcd.enable();
    const gpumodel::Vcd::Id a = vcd.add_ascii("gpu.node0.state", "idle");
    vcd.set_ascii(a, "busy", sc_core::sc_time::from_value(10000));
    vcd.set_ascii(a, "idle", sc_core::sc_time::from_value(20000));
    const std::string path = name + std::to_string(::getpid()) + ".vcd";
    REQUIRE(vcd.write(path, "date", end_ps).empty());
    const std::string text = slurp(path);
    std::remove(path.c_str());
    return std::make_pair(text, vcd.last_time_ps());
  };
  const auto [tail, tail_end] = write(35000, "gtkw_span_");
  CHECK(tail.size() >= 7);
  CHECK(tail.substr(tail.size() - 7) == "#35000\n");
  CHECK(tail.find("#20000\n") != std::string::npos);
  CHECK(tail_end == 35000);
  const auto [at_last, at_last_end] = write(20000, "gtkw_span_at_");
  CHECK(at_last.substr(at_last.size() - 7) != "#20000\n");  // the change's own line ends it, no timestamp after
  CHECK(at_last.find("#20000\n") == at_last.rfind("#"));
  CHECK(at_last_end == 20000);
  const auto [early, early_end] = write(15000, "gtkw_span_early_");
  CHECK(early.find("#15000") == std::string::npos);
  CHECK(early_end == 20000);
}

TEST_CASE("The display's scan line and FIFO level open as analog steps three rows tall, other counters as numbers",
          "[H4]") {
  // They change every line: as digital rows they are solid bars at a frame's zoom. GTKWave's own form
  // (written by it for Analog/Step and two Insert_Analog_Height_Extension): flags 0x8000 on the row,
  // then two blank rows flagged 0x20000.
  const std::string base = "gtkw_analog_" + std::to_string(::getpid());
  REQUIRE(run_cli(scenario("hybrid_present") + " --workload.frames=4 --quiet --vcd " + base + ".vcd").code == 0);
  const std::string text = slurp(base + ".gtkw");
  for (const char* ext : {".vcd", ".gtkw"}) std::remove((base + ext).c_str());
  const std::regex analog(
      R"(@8024\n\+\{[^}]*\} top\.igpu\.display\.(line\[15|fifo_bytes\[31):0\]\n@20000\n-\n@20000\n-\n)");
  CHECK(std::distance(std::sregex_iterator(text.begin(), text.end(), analog), std::sregex_iterator()) == 2);
  CHECK(std::regex_search(text, std::regex(R"(@24\n\+\{[^}]*\} top\.igpu\.display\.underflow\[31:0\]\n)")));
}
