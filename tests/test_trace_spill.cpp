// The waveform's and the timeline's record waits on disk (hw_model/core/spill.h): the same files as a
// record kept whole in memory, in memory that does not grow with the run.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "tests/tb.h"
#include "tests/trace_check.h"

using namespace tb;

namespace {

struct Rec {  // a change-like record: ordered by key, then by arrival
  uint64_t key, seq;
  bool operator<(const Rec& o) const { return key != o.key ? key < o.key : seq < o.seq; }
  size_t memory() const { return sizeof(Rec); }
  void encode(std::string& out) const { put(out, *this); }
  bool decode(RunReader& in) { return in.get(*this); }
};

// A record as the models make one: changes at the present, in the future (a link's reserved interval)
// and in the past (a monitor's verdict on a waiter), text and 1-bit and counter signals, a signal added
// mid-run, model slices out of time order, and flows whose ends come before, at and after their begins,
// some from begins recorded out of time order.
struct FlowIn {
  uint32_t fence;
  uint64_t value, at;
};
struct Recorded {
  std::vector<FlowIn> begins, ends;
};
Recorded record(Vcd& vcd, unsigned n) {
  Recorded rec;
  std::mt19937_64 rng(7);
  const Vcd::Id state = vcd.add_ascii("gpu.node0.state", "idle");
  const Vcd::Id busy = vcd.add("link.up_busy", 1);
  const Vcd::Id count = vcd.add("os.waiters", 16, 3);
  Vcd::Id late = Vcd::kNone;
  const char* states[] = {"idle", "fetch", "execute", "wait"};
  uint64_t value = 0;
  for (unsigned i = 0; i < n; ++i) {
    const uint64_t now = 1000 * uint64_t(i);
    vcd.set_ascii(state, states[rng() % 4], sc_time::from_value(now));
    vcd.set(busy, 1, sc_time::from_value(now + rng() % 5000));  // the future
    vcd.set(busy, 0, sc_time::from_value(now + 5000 + rng() % 5000));
    vcd.set(count, rng() % 8, sc_time::from_value(now > 3000 ? now - rng() % 3000 : now));  // the past
    if (i == n / 2) late = vcd.add("gpu.node0.fence", 32, 0);                               // a signal added mid-run
    if (late != Vcd::kNone) vcd.set(late, i, sc_time::from_value(now));
    const uint64_t began = now > 700 ? now - rng() % 700 : now;
    vcd.slice("gpu.node" + std::to_string(i % 3) + ".packets", "SIGNAL " + std::to_string(i),
              sc_time::from_value(began), sc_time::from_value(now));
    const std::string key = fence_flow_key("gpu", uint32_t(i % 4));
    value += rng() % 3;  // values that repeat and rise
    // A begin may be recorded after later ones of its fence (another engine's longer packet).
    const uint64_t signalled = now > 9000 ? now - rng() % 9000 : now;
    vcd.flow_begin(key, value, "gpu.node" + std::to_string(i % 3) + ".packets", sc_time::from_value(signalled));
    rec.begins.push_back({i % 4, value, signalled});
    if (i % 2) {
      const FlowIn e{i % 4, value - rng() % 3, now + rng() % 3000 - 1000};
      vcd.flow_end(key, e.value, i % 4 ? "cpu.context" : "gpu.cmp.state", sc_time::from_value(e.at));
      rec.ends.push_back(e);
    }
  }
  return rec;
}

// The pairing rule, applied the plain way: each end, in order, from the earliest begin (by time, then
// by arrival) of its fence with a value at least the end's, if that begin came earlier than the end.
std::vector<std::pair<uint64_t, uint64_t>> expected_flows(const Recorded& rec) {
  std::vector<FlowIn> by_time = rec.begins;
  std::stable_sort(by_time.begin(), by_time.end(), [](const FlowIn& a, const FlowIn& b) { return a.at < b.at; });
  std::vector<std::pair<uint64_t, uint64_t>> out;  // (begin time, end time) of each flow drawn
  for (const FlowIn& e : rec.ends)
    for (const FlowIn& b : by_time)
      if (b.fence == e.fence && b.value >= e.value) {
        if (b.at < e.at) out.push_back({b.at, e.at});
        break;
      }
  return out;
}

}  // namespace

TEST_CASE("An external sort's runs merge into the order of a stable in-memory sort, and can be read again",
          "[H4][trace]") {
  std::mt19937_64 rng(1);
  SpillSorter<Rec> s(4096);  // 256 records a run
  std::vector<Rec> all;
  for (uint64_t i = 0; i < 20000; ++i) {
    all.push_back({rng() % 500, i});  // many equal keys: the arrival order must hold among them
    s.push(all.back());
  }
  CHECK(s.runs() > 50);
  CHECK(s.held_bytes() <= 4096);
  std::stable_sort(all.begin(), all.end(), [](const Rec& a, const Rec& b) { return a.key < b.key; });
  for (int pass = 0; pass < 2; ++pass) {
    size_t i = 0;
    bool same = true;
    for (auto c = s.cursor(); const Rec* r = c.peek(); c.next(), ++i)
      same = same && i < all.size() && r->seq == all[i].seq;
    CHECK(same);
    CHECK(i == all.size());
  }
}

TEST_CASE("A waveform and a timeline spilled to disk are byte for byte those of a record held in memory",
          "[H4][trace]") {
  // 30,000 steps make about 4 MB of changes and 10 MB of events: one spill budget holds them whole,
  // the other (64 KiB) spills them in hundreds of runs.
  Vcd whole(size_t(1) << 30), spilled(size_t(64) << 10);
  Recorded rec;
  for (Vcd* v : {&whole, &spilled}) {
    v->enable_timeline();
    rec = record(*v, 30000);
  }
  CHECK(spilled.held_bytes() < whole.held_bytes() / 4);
  REQUIRE(whole.write("spill_whole.vcd", "date").empty());
  REQUIRE(spilled.write("spill_spilled.vcd", "date").empty());
  REQUIRE(whole.write_timeline("spill_whole.json", sc_time::from_value(40000000)).empty());
  REQUIRE(spilled.write_timeline("spill_spilled.json", sc_time::from_value(40000000)).empty());
  const std::string vcd = slurp("spill_whole.vcd"), tl = slurp("spill_whole.json");
  CHECK(vcd.size() > 1000000);
  CHECK(tl.size() > 3000000);
  CHECK(vcd == slurp("spill_spilled.vcd"));
  CHECK(tl == slurp("spill_spilled.json"));
  // The timeline is still well formed, with its flows.
  const nlohmann::json doc = nlohmann::json::parse(tl);
  CHECK(check_trace_events(doc).empty());
  // Its flows are the pairing rule's, drawn in the order the ends came (their ids).
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> drawn;  // id -> (begin ps, end ps)
  // A time is written as the first multiple of 2^-20 us at or after it: under a picosecond later.
  auto ps_of = [](const nlohmann::json& e) { return uint64_t(std::floor(e["ts"].get<double>() * 1e6 + 1e-6)); };
  for (auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") drawn[e["id"].get<uint64_t>()].first = ps_of(e);
    if (e["ph"] == "f") drawn[e["id"].get<uint64_t>()].second = ps_of(e);
  }
  const auto want = expected_flows(rec);
  CHECK(want.size() > 1000);
  REQUIRE(drawn.size() == want.size());
  size_t k = 0, same = 0;
  for (auto& [id, fl] : drawn) same += fl == want[k++];
  CHECK(same == want.size());
}

TEST_CASE("The record's memory stays within its spill budget however long the run", "[H4][trace]") {
  // What is held is the buffers (each at most the budget, plus one record) and the flow begins a later
  // wait could take: one per value a fence reached first. Without flows, four times the run holds no more.
  auto held = [](unsigned n) {
    Vcd v(size_t(256) << 10);
    v.enable();
    const Vcd::Id a = v.add("gpu.node0.queue", 8), b = v.add_ascii("cpu.context", "boot");
    size_t most = 0;
    for (unsigned i = 0; i < n; ++i) {
      v.set(a, i & 0xff, sc_time::from_value(10 * uint64_t(i)));
      v.set_ascii(b, i & 1 ? "isr" : "dpc", sc_time::from_value(10 * uint64_t(i) + 5));
      most = std::max(most, v.held_bytes());
    }
    return most;
  };
  const size_t short_run = held(100000), long_run = held(400000);
  CHECK(short_run <= (size_t(256) << 10) + 64);
  CHECK(long_run <= short_run);
}
