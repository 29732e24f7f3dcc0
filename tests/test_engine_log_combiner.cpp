// The engine's log write-combiner alone (hw_model/gpu/log_combiner.h): a 48-byte log entry leaves
// `hold` after it enters unless a flush pushes it out first; entries leave in order, whole; a flush
// returns when every entry so far is visible.
#include <cstring>
#include <vector>

#include "hw_model/gpu/log_combiner.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {

const sc_time kCombinerHold(500, SC_NS);    // node.log_entry_wc_ns
const sc_time kCombinerLatency(90, SC_NS);  // the stub path's: visibility after the post

struct CombinerBench : sc_module {
  struct Sent {
    uint64_t addr;
    unsigned len;
    unsigned char first;
    sc_time at;
  };
  std::vector<Sent> sent;
  std::vector<sc_time> left;
  LogCombiner wc;
  std::function<void()> body;
  CombinerBench()
      : sc_module("bench"),
        wc(
            "wc", kCombinerHold,
            [this](uint64_t a, const void* src, unsigned len) {
              sent.push_back({a, len, *static_cast<const unsigned char*>(src), sc_time_stamp()});
              return sc_time_stamp() + kCombinerLatency;
            },
            [this](uint64_t, const sc_time& vis) { left.push_back(vis); }) {
    SC_HAS_PROCESS(CombinerBench);
    SC_THREAD(run);
  }
  void run() {
    if (body) body();
  }
  void push(uint64_t addr, unsigned char tag, const sc_time& offset = SC_ZERO_TIME) {
    unsigned char e[LogCombiner::kEntryBytes];
    std::memset(e, tag, sizeof e);
    wc.push(addr, e, offset);
  }
};

}  // namespace

TEST_CASE("log write-combiner: an entry leaves whole after its hold, in order", "[engine][F17]") {
  CombinerBench b;
  b.body = [&] {
    b.push(0x1000, 1);
    b.push(0x1030, 2, sc_time(10, SC_NS));
  };
  sc_start(sc_time(2, SC_US));
  REQUIRE(b.sent.size() == 2);
  CHECK(b.sent[0].addr == 0x1000);
  CHECK(b.sent[0].len == 48);
  CHECK(b.sent[0].first == 1);
  CHECK(b.sent[0].at == kCombinerHold);
  CHECK(b.sent[1].first == 2);
  CHECK(b.sent[1].at == kCombinerHold + sc_time(10, SC_NS));
  CHECK(b.wc.visible() == kCombinerHold + sc_time(10, SC_NS) + kCombinerLatency);
  CHECK(b.wc.empty());
}

TEST_CASE("log write-combiner: a flush pushes the entries out now and returns once they are visible", "[engine][F17]") {
  CombinerBench b;
  const sc_time t0(100, SC_NS);
  sc_time returned;
  b.body = [&] {
    wait(t0);
    b.push(0x2000, 7);
    b.push(0x2030, 8);
    b.wc.flush();
    returned = sc_time_stamp();
  };
  sc_start(sc_time(2, SC_US));
  REQUIRE(b.sent.size() == 2);
  CHECK(b.sent[0].at == t0);  // not t0 + hold
  CHECK(b.sent[1].at == t0);
  CHECK(returned == t0 + kCombinerLatency);
  CHECK(b.left.size() == 2);
}

TEST_CASE("log write-combiner: a flush of an empty buffer returns at once", "[engine][F17]") {
  CombinerBench b;
  sc_time returned = sc_time(1, SC_SEC);
  b.body = [&] {
    b.wc.flush();
    returned = sc_time_stamp();
  };
  sc_start(sc_time(1, SC_US));
  CHECK(returned == SC_ZERO_TIME);
  CHECK(b.sent.empty());
}

TEST_CASE("log write-combiner: an entry pushed with an offset is not in the buffer before it enters", "[engine][F17]") {
  // The engine pushes a logged SIGNAL's entry as it decodes, entering at the decode's end (t0 + 10 ns).
  // A flush at t0 + 5 ns (the OS's DxgkDdiUpdateNativeFenceLogs through the CMP) finds nothing yet: the
  // entry leaves at its hold, t0 + 10 ns + 500 ns, and the flush returns at once. A second entry pushed
  // at t0 + 700 ns enters at t0 + 710 ns; a flush 20 ns after the push pushes it out then.
  CombinerBench b;
  const sc_time t0(100, SC_NS), decode(10, SC_NS);
  sc_time early, late;
  b.body = [&] {
    wait(t0);
    b.push(0x3000, 5, decode);
    wait(sc_time(5, SC_NS));
    b.wc.flush();
    early = sc_time_stamp();
    wait(t0 + sc_time(700, SC_NS) - sc_time_stamp());
    b.push(0x3030, 6, decode);  // enters at t0 + 710 ns
    wait(sc_time(20, SC_NS));
    b.wc.flush();
    late = sc_time_stamp();
  };
  sc_start(sc_time(3, SC_US));
  REQUIRE(b.sent.size() == 2);
  CHECK(early == t0 + sc_time(5, SC_NS));                      // nothing to flush: returned at once
  CHECK(b.sent[0].at == t0 + decode + kCombinerHold);          // left at its hold, not at the early flush
  CHECK(b.sent[1].at == t0 + sc_time(720, SC_NS));             // entered at t0 + 710 ns, flushed at t0 + 720 ns
  CHECK(late == t0 + sc_time(720, SC_NS) + kCombinerLatency);  // and visible then
}

TEST_CASE("log write-combiner: a flush returns only once an entry that entered meanwhile is out too", "[engine][F17]") {
  // Entry A in the buffer at t0; entry B pushed at t0 to enter at t0 + 10 ns. The flush at t0 pushes A
  // out at t0; B has not entered, so the flush is done (it returns at A's visibility, t0 + 90 ns) and B
  // leaves at its own hold.
  CombinerBench b;
  const sc_time t0(100, SC_NS);
  sc_time returned;
  b.body = [&] {
    wait(t0);
    b.push(0x4000, 1);
    b.push(0x4030, 2, sc_time(10, SC_NS));
    b.wc.flush();
    returned = sc_time_stamp();
  };
  sc_start(sc_time(3, SC_US));
  REQUIRE(b.sent.size() == 2);
  CHECK(b.sent[0].at == t0);
  CHECK(b.sent[1].at == t0 + sc_time(10, SC_NS) + kCombinerHold);
  CHECK(returned == t0 + kCombinerLatency);
}
