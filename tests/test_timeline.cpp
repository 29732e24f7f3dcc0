// The timeline (--timeline): Trace Event JSON that Perfetto and chrome://tracing open. Each scenario's
// file passes the schema check (balanced slices, time order per track, paired flows), has the tracks
// the issue names, and a flow from every fence signal to the wake or unblock it caused; the check
// itself rejects broken files; the file is deterministic and the progress line changes nothing.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "tb.h"
#include "tests/trace_check.h"

using namespace tb;
using nlohmann::json;

namespace {
json load(const std::string& path) {
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
  const json doc = load(out);
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
    if (e["ph"] == "B" && e["name"].get<std::string>().rfind("SIGNAL fence", 0) == 0)
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
  std::map<std::string, int> slices;  // track -> B events
  for (auto& e : doc["traceEvents"])
    if (e["ph"] == "B") ++slices[track_of(t, e)];
  CHECK(slices["gpu.node0.packets"] > 0);      // the dGPU renders
  CHECK(slices["igpu.display.vblank"] >= 10);  // one vertical blank a refresh: the frames
  CHECK(slices["igpu.display.flip"] >= 1);
  CHECK(slices["link.up_busy"] > 0);  // the copies cross the link
  CHECK(slices["cpu.context"] > 0);
}

TEST_CASE("The trace check rejects an unbalanced slice, out-of-order events and a broken flow", "[H4]") {
  // A valid document, then one mutation at a time: each must be caught.
  const json good = json::parse(R"({"traceEvents":[
    {"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"gpu.node0.packets"}},
    {"ph":"B","name":"SIGNAL fence 0 value 1","pid":1,"tid":0,"ts":1.0},
    {"ph":"s","name":"f","cat":"fence","id":1,"pid":1,"tid":0,"ts":1.0},
    {"ph":"E","name":"SIGNAL fence 0 value 1","pid":1,"tid":0,"ts":2.0},
    {"ph":"C","name":"n","pid":1,"tid":1,"ts":2.5,"args":{"n":3}},
    {"ph":"B","name":"DPC","pid":2,"tid":0,"ts":3.0},
    {"ph":"f","name":"f","cat":"fence","id":1,"bp":"e","pid":2,"tid":0,"ts":3.5},
    {"ph":"E","name":"DPC","pid":2,"tid":0,"ts":4.0}]})");
  CHECK(check_trace_events(good).empty());
  json no_end = good;
  no_end["traceEvents"].erase(3);  // the SIGNAL slice never ends
  CHECK_FALSE(check_trace_events(no_end).empty());
  json extra_end = good;
  extra_end["traceEvents"].push_back(json::parse(R"({"ph":"E","pid":2,"tid":0,"ts":5.0})"));
  CHECK_FALSE(check_trace_events(extra_end).empty());
  json reordered = good;
  std::swap(reordered["traceEvents"][1], reordered["traceEvents"][3]);  // E before its B, time backwards
  CHECK_FALSE(check_trace_events(reordered).empty());
  json backwards = good;
  backwards["traceEvents"][4]["ts"] = 0.5;  // fine alone (its own track) ...
  CHECK(check_trace_events(backwards).empty());
  backwards["traceEvents"][4]["tid"] = 0;  // ... but on the packet track it goes back in time
  CHECK_FALSE(check_trace_events(backwards).empty());
  json orphan = good;
  orphan["traceEvents"].erase(2);  // the flow's start gone
  CHECK_FALSE(check_trace_events(orphan).empty());
  json late_start = good;
  late_start["traceEvents"][6]["ts"] = 0.5;  // the flow ends before it starts (and out of order)
  CHECK_FALSE(check_trace_events(late_start).empty());
  json no_phase = good;
  no_phase["traceEvents"][4].erase("ph");
  CHECK_FALSE(check_trace_events(no_phase).empty());
  json renamed = good;
  renamed["traceEvents"][3]["name"] = "another slice";  // an E closing a B of another name
  CHECK_FALSE(check_trace_events(renamed).empty());
  json no_dur = good;
  no_dur["traceEvents"].push_back(json::parse(R"({"ph":"X","name":"x","pid":3,"tid":0,"ts":1.0})"));
  CHECK_FALSE(check_trace_events(no_dur).empty());
  json text_counter = good;
  text_counter["traceEvents"][4]["args"]["n"] = "three";
  CHECK_FALSE(check_trace_events(text_counter).empty());
  json two_starts = good;
  two_starts["traceEvents"].insert(two_starts["traceEvents"].begin() + 3, good["traceEvents"][2]);
  CHECK_FALSE(check_trace_events(two_starts).empty());
  json two_ends = good;
  two_ends["traceEvents"].insert(two_ends["traceEvents"].begin() + 7, good["traceEvents"][6]);
  CHECK_FALSE(check_trace_events(two_ends).empty());
  json early_end = good;  // the end alone on its track, earlier than the start: in order per track
  early_end["traceEvents"][6]["ts"] = 0.5;
  early_end["traceEvents"][6]["tid"] = 7;
  CHECK_FALSE(check_trace_events(early_end).empty());
  json no_end_flow = good;
  no_end_flow["traceEvents"].erase(6);  // the flow never ends
  CHECK_FALSE(check_trace_events(no_end_flow).empty());
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
  // the wake); a wake for value 5 (never signalled) and a wake for 3 at 25 ps (before the signal of 3)
  // have no arrow.
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
  REQUIRE(vcd.write_timeline("timeline_pairing.json", sc_core::sc_time(60, sc_core::SC_PS)));
  const json doc = load("timeline_pairing.json");
  CHECK(check_trace_events(doc).empty());
  std::vector<json> s, f;
  for (auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") s.push_back(e);
    if (e["ph"] == "f") f.push_back(e);
  }
  REQUIRE(s.size() == 1);
  REQUIRE(f.size() == 1);
  CHECK(s[0]["ts"].get<double>() == Approx(20e-6));  // 20 ps, in microseconds
  CHECK(f[0]["ts"].get<double>() == Approx(40e-6));
  CHECK(f[0]["args"]["waited"] == 2);
}

TEST_CASE(
    "The timeline's slices follow the record: last value of a timestamp, no split on an unchanged value, closed at the "
    "end",
    "[H4]") {
  // A text signal set to "a" at 10 ps, to "b" then "c" at 20 ps (only "c" counts), to "c" again at
  // 30 ps (no new slice), and left at "c" until the run ends at 50 ps; a counter, present at 0; a
  // zero-length model slice (an X of no duration); a flow end at the very time of its signal.
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
  vcd.flow_begin(fence_flow_key("gpu", 1), 1, "gpu.node0.packets", ps(15));
  vcd.flow_end(fence_flow_key("gpu", 1), 1, "cpu.context", ps(15));
  REQUIRE(vcd.write_timeline("timeline_record.json", ps(50)));
  const json doc = load("timeline_record.json");
  CHECK(check_trace_events(doc).empty());
  std::vector<std::tuple<std::string, std::string, double>> states;  // ph, name, ts on the state track
  std::vector<json> counters, instants;
  size_t flows = 0;
  for (auto& e : doc["traceEvents"]) {
    if ((e["ph"] == "B" || e["ph"] == "E") && e["name"] != "NOP") states.emplace_back(e["ph"], e["name"], e["ts"]);
    if (e["ph"] == "C") counters.push_back(e);
    if (e["ph"] == "X") instants.push_back(e);
    if (e["ph"] == "s" || e["ph"] == "f") ++flows;
  }
  const std::vector<std::tuple<std::string, std::string, double>> want = {
      {"B", "a", 10e-6}, {"E", "a", 20e-6}, {"B", "c", 20e-6}, {"E", "c", 50e-6}};
  REQUIRE(states.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(std::get<0>(states[i]) == std::get<0>(want[i]));
    CHECK(std::get<1>(states[i]) == std::get<1>(want[i]));
    CHECK(std::get<2>(states[i]) == Approx(std::get<2>(want[i])));
  }
  REQUIRE(counters.size() == 2);
  CHECK(counters[0]["ts"].get<double>() == 0);
  CHECK(counters[0]["args"]["waiters"] == 3);
  CHECK(counters[1]["args"]["waiters"] == 4);
  REQUIRE(instants.size() == 1);
  CHECK(instants[0]["dur"] == 0);
  CHECK(flows == 2);  // paired although the wake came at the signal's own time
}
