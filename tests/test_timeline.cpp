// The timeline (--timeline): Trace Event JSON that the DevTools Performance panel, Perfetto and
// speedscope open. Each scenario's file passes the schema check (complete slices nested or apart in
// the viewers' arithmetic, time order per track, paired flows bound to slices), has the tracks the
// issue names, and a flow from every fence signal to the wake or unblock it caused; the check itself
// rejects broken files; the file is deterministic and the progress line changes nothing. (The DevTools
// trace engine itself reads the files in tests/viewers/.)
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "tb.h"
#include "tests/trace_check.h"

using namespace tb;
using nlohmann::json;

namespace {
json load_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return json::parse(in);
}
// Track names by (pid, tid), from the thread_name metadata.
std::map<std::pair<int64_t, int64_t>, std::string> tracks(const json& doc) {
  std::map<std::pair<int64_t, int64_t>, std::string> t;
  for (auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") t[{e["pid"], e["tid"]}] = e["args"]["name"];
  return t;
}
// Runs `args` with --timeline `out`, and returns the timeline after checking it is valid (the problems
// the check found are printed with the failure).
json valid_timeline(const std::string& args, const std::string& out) {
  const Run r = run_cli(args + " --timeline " + out + " --quiet");
  REQUIRE(r.code == 0);
  const json doc = load_json(out);
  std::string problems;
  for (auto& p : check_trace_events(doc)) problems += p + "\n";
  INFO(problems);
  CHECK(problems.empty());
  return doc;
}
std::string track_of(const std::map<std::pair<int64_t, int64_t>, std::string>& t, const json& e) {
  auto it = t.find({e["pid"].get<int64_t>(), e.value("tid", int64_t(0))});
  return it == t.end() ? "" : it->second;
}
}  // namespace

TEST_CASE("fence_race's timeline is valid Trace Event JSON with a flow from each signal to the wake it caused",
          "[H4][F3]") {
  // 2,000 signals on 64 fences with CPU waiters, the bulk copy loading the link.
  const json doc =
      valid_timeline(scenario("fence_race") + " --workload.signals=2000 --workload.bulk_copy_bytes=1048576",
                     "timeline_fence_race.json");
  const auto t = tracks(doc);
  std::set<std::string> names;
  for (auto& [k, v] : t) names.insert(v);
  for (const char* want : {"gpu.node0.packets", "gpu.node0.state", "gpu.cmp.state", "link.up_busy", "link.down_busy",
                           "cpu.context", "intc.msi"})
    CHECK(names.count(want));
  // Every flow starts on an engine's packet track, at a SIGNAL packet's start, and ends on the CPU (a
  // waiter woken by the DPC) or the CMP (a queue unblocked): the signal came first.
  std::map<int64_t, std::pair<json, json>> flows;
  std::map<std::pair<std::string, double>, std::string> signal_at;  // (track, ts) -> packet label
  for (auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") flows[e["id"]].first = e;
    if (e["ph"] == "f") flows[e["id"]].second = e;
    if (e["ph"] == "X" && e["name"].get<std::string>().rfind("SIGNAL fence", 0) == 0)
      signal_at[{track_of(t, e), e["ts"].get<double>()}] = e["name"];
  }
  REQUIRE(flows.size() > 10);
  // Each flow starts at the earliest SIGNAL of its fence (on any engine) whose value reached the waited
  // one: the signal that satisfied the wait, not a later one of the same fence.
  std::map<uint64_t, std::vector<std::pair<double, uint64_t>>> signals_of;  // fence -> (ts, value)
  for (auto& [at, label] : signal_at) {
    uint64_t fence = 0, value = 0;
    REQUIRE(std::sscanf(label.c_str(), "SIGNAL fence %lu value %lu", &fence, &value) == 2);
    signals_of[fence].push_back({at.second, value});
  }
  for (auto& [fence, v] : signals_of) std::sort(v.begin(), v.end());
  for (auto& [id, sf] : flows) {
    uint64_t fence = 0;
    REQUIRE(std::sscanf(sf.first["name"].get<std::string>().c_str(), "gpu fence %lu", &fence) == 1);
    const uint64_t waited = sf.second["args"]["waited"];
    double first = -1;
    for (auto& [ts, value] : signals_of[fence])
      if (value >= waited) {
        first = ts;
        break;
      }
    CHECK(sf.first["ts"].get<double>() == first);
  }
  for (auto& [id, sf] : flows) {
    const std::string from = track_of(t, sf.first), to = track_of(t, sf.second);
    CHECK(from.find(".packets") != std::string::npos);
    CHECK(signal_at.count({from, sf.first["ts"].get<double>()}));  // bound to its SIGNAL packet
    CHECK((to == "cpu.context" || to == "gpu.cmp.state"));
    CHECK(sf.second["ts"].get<double>() >= sf.first["ts"].get<double>());
  }
}

TEST_CASE("hybrid_present's timeline is valid and shows both adapters, the display's frames and flips, and the link",
          "[H4][C2]") {
  const json doc = valid_timeline(scenario("hybrid_present") + " --workload.frames=10", "timeline_hybrid_present.json");
  const auto t = tracks(doc);
  std::map<std::string, int> slices;  // track -> slices
  for (auto& e : doc["traceEvents"])
    if (e["ph"] == "X") ++slices[track_of(t, e)];
  CHECK(slices["gpu.node0.packets"] > 0);      // the dGPU renders
  CHECK(slices["igpu.display.vblank"] >= 10);  // one vertical blank a refresh: the frames
  CHECK(slices["igpu.display.flip"] >= 1);
  CHECK(slices["link.up_busy"] > 0);  // the copies cross the link
  CHECK(slices["cpu.context"] > 0);
}

TEST_CASE("The trace check rejects B/E slices and overlapping ones and out-of-order events and broken flows", "[H4]") {
  // A valid document, then one mutation at a time: each must be caught.
  const json good = json::parse(R"({"traceEvents":[
    {"ph":"M","cat":"__metadata","name":"process_name","pid":1,"args":{"name":"gpu"}},
    {"ph":"M","cat":"__metadata","name":"process_name","pid":2,"args":{"name":"cpu"}},
    {"ph":"M","cat":"__metadata","name":"thread_name","pid":1,"tid":11,"args":{"name":"gpu.node0.packets"}},
    {"ph":"M","cat":"__metadata","name":"thread_name","pid":1,"tid":12,"args":{"name":"gpu.node0.queue"}},
    {"ph":"M","cat":"__metadata","name":"thread_name","pid":2,"tid":21,"args":{"name":"cpu.context"}},
    {"ph":"X","name":"SIGNAL fence 0 value 1","cat":"model","pid":1,"tid":11,"ts":1,"dur":1,"args":{}},
    {"ph":"I","s":"t","name":"gpu fence 0 = 1 signalled","cat":"fence","pid":1,"tid":11,"ts":1,"args":{}},
    {"ph":"s","name":"gpu fence 0 = 1","cat":"fence","id":1,"pid":1,"tid":11,"ts":1,"args":{}},
    {"ph":"C","name":"gpu.node0.queue","cat":"counter","pid":1,"tid":12,"ts":2.5,"args":{"queue":3}},
    {"ph":"X","name":"dpc","cat":"signal","pid":2,"tid":21,"ts":3,"dur":1,"args":{}},
    {"ph":"I","s":"t","name":"gpu fence 0 >= 1 satisfied","cat":"fence","pid":2,"tid":21,"ts":3.5,"args":{}},
    {"ph":"f","name":"gpu fence 0 = 1","cat":"fence","id":1,"bp":"e","pid":2,"tid":21,"ts":3.5,"args":{"waited":1}},
    {"ph":"X","name":"isr","cat":"signal","pid":2,"tid":21,"ts":4,"dur":0.5,"args":{}}]})");
  enum { kSignal = 5, kSignalMark, kStart, kCounter, kDpc, kWaitMark, kEnd, kIsr };
  CHECK(check_trace_events(good).empty());
  auto broken = [&](const std::function<void(json&)>& mutate) {
    json d = good;
    mutate(d["traceEvents"]);
    return !check_trace_events(d).empty();
  };
  // Broken in one viewer's arithmetic: a problem naming it ("as DevTools", "as Perfetto", "as speedscope").
  auto broken_as = [&](const char* viewer, const std::function<void(json&)>& mutate) {
    json d = good;
    mutate(d["traceEvents"]);
    for (const std::string& p : check_trace_events(d))
      if (p.find(viewer) != std::string::npos) return true;
    return false;
  };
  auto x = [](const char* ts, const char* dur) {  // an X on the CPU's track
    return json::parse(std::string(R"({"ph":"X","name":"x","cat":"signal","args":{},"pid":2,"tid":21,"ts":)") + ts +
                       ",\"dur\":" + dur + "}");
  };
  // Slices: B/E instead of X; an X without a duration or a category, or of a negative one or none (an
  // instant's); an instant not of its thread; two that overlap without nesting; one that ends past the
  // next one's start only in a viewer's arithmetic: 5.4 + 0.2 is 5.6000000000000005 as DevTools adds it;
  // 7.008 + 1 is 8008 ns as Perfetto truncates each, while 8.008 is 8007 ns; on a track whose first
  // slice is at 3, speedscope's (5 - 3) + 0.1 is 2.1000000000000001, past 5.1 - 3 = 2.0999999999999996.
  CHECK(broken([](json& ev) {
    ev[kDpc] = json::parse(R"({"ph":"B","name":"dpc","pid":2,"tid":21,"ts":3})");
    ev.push_back(json::parse(R"({"ph":"E","name":"dpc","pid":2,"tid":21,"ts":4})"));
  }));
  CHECK(broken([](json& ev) { ev[kIsr].erase("dur"); }));
  CHECK(broken([](json& ev) { ev[kIsr].erase("cat"); }));
  CHECK(broken([](json& ev) { ev[kIsr]["dur"] = -0.5; }));
  CHECK(broken([](json& ev) { ev[kIsr]["dur"] = 0; }));
  CHECK(broken([](json& ev) { ev[kWaitMark].erase("s"); }));
  CHECK(broken([](json& ev) { ev[kWaitMark]["s"] = "g"; }));
  CHECK(broken([](json& ev) { ev[kIsr]["ts"] = 3.9; }));  // isr [3.9, 4.4] overlaps dpc [3, 4]
  CHECK_FALSE(broken([&](json& ev) {                      // apart and nested: fine
    ev.push_back(x("5", "1"));
    ev.push_back(x("6", "0.5"));
    ev.push_back(x("6.1", "0.2"));
  }));
  CHECK(broken_as("as DevTools", [&](json& ev) {
    ev.push_back(x("5.4", "0.2"));
    ev.push_back(x("5.6", "0.1"));
  }));
  CHECK_FALSE(broken([&](json& ev) {  // the same, the first a picosecond shorter
    ev.push_back(x("5.4", "0.199999"));
    ev.push_back(x("5.6", "0.1"));
  }));
  CHECK(broken_as("as Perfetto", [&](json& ev) {
    ev.push_back(x("7.008", "1"));
    ev.push_back(x("8.008", "0.1"));
  }));
  CHECK(broken_as("as speedscope", [&](json& ev) {
    ev.push_back(x("5", "0.1"));
    ev.push_back(x("5.1", "0.1"));
  }));
  CHECK_FALSE(broken([&](json& ev) {  // the same on the grid the writer uses (multiples of 2^-20 us): exact
    ev.push_back(x("5", "0.125"));
    ev.push_back(x("5.125", "0.125"));
  }));
  // Order and fields: time going back on a track, no phase, no name, a text counter.
  CHECK_FALSE(broken([](json& ev) { ev[kCounter]["ts"] = 0.5; }));  // fine alone on its track ...
  CHECK(broken([](json& ev) {
    ev[kCounter]["ts"] = 0.5;
    ev[kCounter]["tid"] = 11;  // ... but on the packet track it goes back in time
  }));
  CHECK(broken([](json& ev) { ev[kCounter].erase("ph"); }));
  CHECK(broken([](json& ev) { ev[kCounter].erase("name"); }));
  CHECK(broken([](json& ev) { ev[kCounter]["args"]["queue"] = "three"; }));
  // Categories and args, as DevTools' older parser needs them: metadata, a counter or a slice without a
  // category; a slice, an instant or a flow start without args.
  CHECK(broken([](json& ev) { ev[0].erase("cat"); }));
  CHECK(broken([](json& ev) { ev[kCounter].erase("cat"); }));
  CHECK(broken([](json& ev) { ev[kIsr].erase("args"); }));
  CHECK(broken([](json& ev) { ev[kWaitMark].erase("args"); }));
  CHECK(broken([](json& ev) { ev[kStart].erase("args"); }));
  CHECK(broken([](json& ev) { ev[kEnd].erase("args"); }));
  // Tracks: one without a thread name, a tid that is also a pid, a tid in two processes.
  CHECK(broken([](json& ev) { ev.erase(4); }));
  CHECK(broken([](json& ev) {
    for (auto& e : ev)
      if (e["pid"] == 2) e["tid"] = 1;
  }));
  CHECK(broken([](json& ev) { ev[kCounter]["tid"] = 21; }));
  // Flows: the start gone; the end gone; the end first in the file; both ends at one time; the end
  // without "bp":"e"; an end on no slice of its time, track or category; a second start of the id.
  CHECK(broken([](json& ev) { ev.erase(kStart); }));
  CHECK(broken([](json& ev) { ev.erase(kEnd); }));
  CHECK(broken([](json& ev) {
    ev.push_back(ev[kStart]);
    ev.erase(kStart);
  }));
  CHECK(broken([](json& ev) {
    for (int k : {kWaitMark, kEnd}) {  // both ends at 1 us on the packet track
      ev[k]["ts"] = 1;
      ev[k]["pid"] = 1;
      ev[k]["tid"] = 11;
    }
    ev.erase(kIsr);
    ev.erase(kDpc);
  }));
  CHECK(broken([](json& ev) { ev[kEnd].erase("bp"); }));
  CHECK(broken([](json& ev) { ev[kWaitMark]["ts"] = 3.4; }));
  CHECK(broken([](json& ev) { ev[kWaitMark]["cat"] = "signal"; }));
  CHECK(broken([](json& ev) { ev[kSignalMark]["tid"] = 12; }));
  CHECK(broken([](json& ev) { ev.insert(ev.begin() + kCounter, ev[kStart]); }));
  CHECK_FALSE(check_trace_events(json::parse("{}")).empty());
}

TEST_CASE("The timeline is deterministic and the progress line changes nothing simulated", "[H4]") {
  // Two runs of one scenario and seed give the same timeline byte for byte; a third with the progress
  // line (the simulation run in slices) gives the same results, waveform (but its $date) and timeline.
  const std::string args = scenario("fence_race") + " --workload.signals=1000 --workload.bulk_copy_bytes=65536 ";
  REQUIRE(run_cli(args + "--timeline tl_a.json --vcd tl_a.vcd --results tl_a.json.r --quiet").code == 0);
  REQUIRE(run_cli(args + "--timeline tl_b.json --results tl_b.json.r --quiet").code == 0);
  const Run p = run_cli(args + "--timeline tl_c.json --vcd tl_c.vcd --results tl_c.json.r --progress");
  REQUIRE(p.code == 0);
  CHECK(p.err.find("simulated") != std::string::npos);  // the line was shown
  CHECK(p.err.find("signals") != std::string::npos);
  CHECK(slurp("tl_a.json") == slurp("tl_b.json"));
  CHECK(slurp("tl_a.json") == slurp("tl_c.json"));
  CHECK(results_without_host("tl_a.json.r") == results_without_host("tl_c.json.r"));
  auto undated = [](const std::string& f) {
    std::string s = slurp(f);
    const size_t a = s.find("$date"), b = s.find("$end", a);
    return s.erase(a, b - a);
  };
  CHECK(undated("tl_a.vcd") == undated("tl_c.vcd"));
}

TEST_CASE("The timeline option refuses a path it cannot write and a file the run also writes", "[H4]") {
  const Run bad = run_cli(scenario("fence_signal") + " --timeline /nonexistent/dir/t.json");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--timeline") != std::string::npos);
  const Run same = run_cli(scenario("fence_signal") + " --timeline same.json --results same.json");
  CHECK(same.code == 2);
  CHECK(same.err.find("--timeline") != std::string::npos);
  const Run both = run_cli(scenario("fence_signal") + " --quiet --progress");
  CHECK(both.code == 2);
}

TEST_CASE("A fence flow starts at the earliest signal that reached the waited value and only at one that came first",
          "[H4]") {
  // The pairing rule alone, on a hand-made record: signals of fence 0 with values 1, 2, 3 at 10, 20 and
  // 30 ps; a wake for value 2 at 40 ps comes from the signal at 20 (not 30, also >= 2 and earlier than
  // the wake); a wake for value 5 (never signalled), a wake for 3 at 25 ps (before the signal of 3) and
  // one for 1 at 10 ps (the very time of its signal: DevTools cannot draw a flow whose ends are at one
  // time) have no arrow. Each end of the flow lies on a "fence" instant event of its track and time.
  Vcd vcd;
  vcd.enable_timeline();
  const std::string key = fence_flow_key("gpu", 0);
  for (uint64_t v : {1, 2, 3}) {
    const sc_core::sc_time at(double(10 * v), sc_core::SC_PS);
    vcd.slice("gpu.node0.packets", "SIGNAL fence 0 value " + std::to_string(v), at,
              at + sc_core::sc_time(5, sc_core::SC_PS));
    vcd.flow_begin(key, v, "gpu.node0.packets", at);
  }
  vcd.flow_end(key, 2, "cpu.context", sc_core::sc_time(40, sc_core::SC_PS));
  vcd.flow_end(key, 5, "cpu.context", sc_core::sc_time(50, sc_core::SC_PS));
  vcd.flow_end(key, 3, "cpu.context", sc_core::sc_time(25, sc_core::SC_PS));
  vcd.flow_end(key, 1, "cpu.context", sc_core::sc_time(10, sc_core::SC_PS));
  REQUIRE(vcd.write_timeline("timeline_pairing.json", sc_core::sc_time(60, sc_core::SC_PS)).empty());
  const json doc = load_json("timeline_pairing.json");
  CHECK(check_trace_events(doc).empty());
  const auto t = tracks(doc);
  std::vector<json> s, f, marks;
  for (auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") s.push_back(e);
    if (e["ph"] == "f") f.push_back(e);
    if (e["ph"] == "I" && e["cat"] == "fence") marks.push_back(e);
  }
  REQUIRE(s.size() == 1);
  REQUIRE(f.size() == 1);
  CHECK(s[0]["ts"].get<double>() == Approx(20e-6).margin(1e-6));  // to the picosecond  // 20 ps, in microseconds
  CHECK(f[0]["ts"].get<double>() == Approx(40e-6).margin(1e-6));
  CHECK(f[0]["args"]["waited"] == 2);
  CHECK(f[0]["bp"] == "e");
  REQUIRE(marks.size() == 2);
  CHECK(marks[0]["name"] == "gpu fence 0 = 2 signalled");
  CHECK(track_of(t, marks[0]) == "gpu.node0.packets");
  CHECK(marks[0]["ts"] == s[0]["ts"]);
  CHECK(marks[1]["name"] == "gpu fence 0 >= 2 satisfied");
  CHECK(track_of(t, marks[1]) == "cpu.context");
  CHECK(marks[1]["ts"] == f[0]["ts"]);
  for (auto& m : marks) {
    CHECK(m["s"] == "t");
    CHECK_FALSE(m.contains("dur"));
  }
}

TEST_CASE(
    "The timeline's slices follow the record: last value of a timestamp, no split on an unchanged value, closed at the "
    "end",
    "[H4]") {
  // A text signal set to "a" at 10 ps, to "b" then "c" at 20 ps (only "c" counts), to "c" again at
  // 30 ps (no new slice), and left at "c" until the run ends at 50 ps; a counter, present at 0; a
  // zero-length model slice (an instant event of its thread).
  Vcd vcd;
  vcd.enable_timeline();
  const Vcd::Id st = vcd.add_ascii("gpu.node0.state", "");
  const Vcd::Id n = vcd.add("os.waiters", 16, 3);
  auto ps = [](double v) { return sc_core::sc_time(v, sc_core::SC_PS); };
  vcd.set_ascii(st, "a", ps(10));
  vcd.set_ascii(st, "b", ps(20));
  vcd.set_ascii(st, "c", ps(20));
  vcd.set_ascii(st, "c", ps(30));
  vcd.set(n, 4, ps(40));
  vcd.slice("gpu.node0.packets", "NOP", ps(15), ps(15));
  REQUIRE(vcd.write_timeline("timeline_record.json", ps(50)).empty());
  const json doc = load_json("timeline_record.json");
  CHECK(check_trace_events(doc).empty());
  std::vector<std::tuple<std::string, double, double>> states;  // name, ts, dur on the state track
  std::vector<json> counters, instants;
  for (auto& e : doc["traceEvents"]) {
    CHECK(e["ph"] != "B");
    CHECK(e["ph"] != "E");
    if (e["ph"] == "X" && e["name"] != "NOP") states.emplace_back(e["name"], e["ts"], e["dur"]);
    CHECK_FALSE((e["ph"] == "X" && e["name"] == "NOP"));
    if (e["ph"] == "I") instants.push_back(e);
    if (e["ph"] == "C") counters.push_back(e);
  }
  const std::vector<std::tuple<std::string, double, double>> want = {{"a", 10e-6, 10e-6}, {"c", 20e-6, 30e-6}};
  REQUIRE(states.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(std::get<0>(states[i]) == std::get<0>(want[i]));
    CHECK(std::get<1>(states[i]) == Approx(std::get<1>(want[i])).margin(1e-6));  // to the picosecond
    CHECK(std::get<2>(states[i]) == Approx(std::get<2>(want[i])).margin(1e-6));
  }
  REQUIRE(counters.size() == 2);
  CHECK(counters[0]["ts"].get<double>() == 0);
  CHECK(counters[0]["args"]["waiters"] == 3);
  CHECK(counters[1]["args"]["waiters"] == 4);
  REQUIRE(instants.size() == 1);
  CHECK(instants[0]["name"] == "NOP");
  CHECK(instants[0]["s"] == "t");
  CHECK(instants[0]["ts"].get<double>() == Approx(15e-6).margin(1e-6));
  CHECK(instants[0]["cat"] == "model");
}

TEST_CASE("Timeline times lie on a grid where every viewer's arithmetic ends a slice where the next begins", "[H4]") {
  // Back-to-back states: 0.1 to 0.3 to 0.4 to 0.5 us (0.1 + 0.2 as decimals in doubles is past 0.3, so
  // DevTools would drop the second as overlapping the first); 0.001 to 1.001 to 1.002 us (0.001 + 1 is
  // 1001 ns as Perfetto truncates each number, past the 1000 ns it makes of 1.001); 13.144954 to
  // 13.148954 to 13.3 us on a track that starts at 2 us (speedscope rebases on the first slice:
  // (13.144954 - 2) + 0.004 is past 13.148954 - 2). Each time is written as the first multiple of
  // 2^-20 us at or after it: 0.1 us (104,857.6 steps) as step 104,858, 0.10000038146972656.
  Vcd vcd;
  vcd.enable_timeline();
  const Vcd::Id a = vcd.add_ascii("gpu.node0.state", ""), b = vcd.add_ascii("gpu.node1.state", ""),
                c = vcd.add_ascii("gpu.node2.state", "");
  auto at = [](uint64_t ps) { return sc_core::sc_time::from_value(ps); };
  const std::vector<std::pair<Vcd::Id, std::vector<uint64_t>>> held = {
      {a, {100000, 300000, 400000, 500000}},  // 400,000 ps is 419,430.4 steps: written as step 419,431
      {b, {1000, 1001000, 1002000}},
      {c, {2000000, 3000000, 13144954, 13148954, 13300000}}};
  for (auto& [id, times] : held) {
    for (size_t i = 0; i + 1 < times.size(); ++i) vcd.set_ascii(id, ("s" + std::to_string(i)).c_str(), at(times[i]));
    vcd.set_ascii(id, "", at(times.back()));
  }
  REQUIRE(vcd.write_timeline("timeline_durations.json", at(20000000)).empty());
  const std::string text = slurp("timeline_durations.json");
  CHECK(text.find(R"("ts":0.10000038146972656,"dur":0.19999980926513672,)") != std::string::npos);
  const json doc = json::parse(text);
  CHECK(check_trace_events(doc).empty());
  const auto t = tracks(doc);
  for (auto& [id, times] : held) {
    const std::string name = id == a ? "gpu.node0.state" : id == b ? "gpu.node1.state" : "gpu.node2.state";
    std::vector<json> slices;
    for (auto& e : doc["traceEvents"])
      if (e["ph"] == "X" && track_of(t, e) == name) slices.push_back(e);
    REQUIRE(slices.size() == times.size() - 1);
    const double first = slices[0]["ts"].get<double>();
    for (size_t i = 0; i < slices.size(); ++i) {
      const double ts = slices[i]["ts"], dur = slices[i]["dur"];
      // On the grid: at or after the time, by less than a picosecond.
      CHECK(ts * 1e6 >= double(times[i]) - 1e-6 * ts * 1e6);
      CHECK(ts * 1e6 < double(times[i]) + 1.0);
      // Perfetto's whole nanoseconds are the time's own.
      CHECK(int64_t(ts * 1000.0) == int64_t(times[i] / 1000));
      if (i + 1 == slices.size()) continue;
      const double next = slices[i + 1]["ts"];
      CHECK(ts + dur == next);                    // DevTools: ends where the next begins, exactly
      CHECK((ts - first) + dur == next - first);  // speedscope, rebased on the track's first slice
    }
  }
}
