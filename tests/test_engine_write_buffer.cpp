// The engine's write buffer alone (hw_model/gpu/write_buffer.h): a posted write leaves `hold` after it
// enters, in order; a flush completes when the writes before it have left, with their visibility time;
// a write the path refuses (posted-write flow control) waits at the head for its grant, the later ones
// behind it; and a target that waits in b_transport is served, since the writes leave from a thread.
#include <cstring>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "hw_model/gpu/write_buffer.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {

const sc_time kBufferHold(100, SC_NS);    // node.write_buffer_ns
const sc_time kBufferLatency(30, SC_NS);  // the target's: a write is visible this long after it arrives

// What a link and a memory do to a posted write, in one target: records it, adds its latency to the
// delay (the visibility time); on request refuses one flow-controlled write as a full link does, or
// synchronises in b_transport as an ordinary loosely-timed memory does.
struct Sink : sc_module {
  tlm_utils::simple_target_socket<Sink> tsock;
  struct Arrival {
    uint64_t addr;
    uint64_t value;
    sc_time at;
  };
  std::vector<Arrival> arrivals;
  bool refuse_next = false, waits = false;
  sc_event* grant = nullptr;  // the refused requester's
  explicit Sink(sc_module_name n) : sc_module(n), tsock("tsock") { tsock.register_b_transport(this, &Sink::bt); }
  void bt(tlm::tlm_generic_payload& t, sc_time& d) {
    auto* fc = t.get_extension<PostedFlowControl>();
    if (refuse_next && fc) {
      refuse_next = false;
      fc->refused = true;
      fc->bytes = t.get_data_length();
      grant = fc->grant;
      return;  // left INCOMPLETE: not delivered
    }
    if (waits) {
      wait(d);
      d = SC_ZERO_TIME;
    }
    uint64_t v = 0;
    std::memcpy(&v, t.get_data_ptr(), std::min(8u, t.get_data_length()));
    arrivals.push_back({t.get_address(), v, sc_time_stamp() + d});
    d += kBufferLatency;
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// The engine's side: its bus, the write buffer on it, and a thread for the test's body.
struct Engine : sc_module {
  tlm_utils::simple_initiator_socket<Engine> isock;
  BusMaster<Engine> bus;
  std::vector<std::pair<uint64_t, sc_time>> left;  // what the buffer reported leaving
  WriteBuffer wb;
  std::function<void()> body;
  explicit Engine(sc_module_name n)
      : sc_module(n),
        isock("isock"),
        bus(isock),
        wb(
            "wb", kBufferHold,
            [this](uint64_t a, const void* src, unsigned len, PostedFlowControl& fc, sc_time& vis) {
              return bus.try_post(a, src, len, fc, vis);
            },
            [this](uint64_t a, const sc_time& vis) { left.emplace_back(a, vis); }) {
    SC_HAS_PROCESS(Engine);
    SC_THREAD(run);
  }
  void run() {
    if (body) body();
  }
  void push64(uint64_t addr, uint64_t v, const sc_time& offset = SC_ZERO_TIME) { wb.push(addr, &v, 8, offset); }
};

struct BufferBench {
  Sink sink{"sink"};
  Engine eng{"eng"};
  BufferBench() { eng.isock.bind(sink.tsock); }
};

}  // namespace

TEST_CASE("write buffer: writes leave hold after they enter, in order, visible at the target's time", "[engine][F7]") {
  BufferBench b;
  b.eng.body = [&] {
    b.eng.push64(0x1000, 1);
    b.eng.push64(0x1008, 2, sc_time(10, SC_NS));  // entered 10 ns later (still decoding its packet)
    b.eng.push64(0x1010, 3);                      // earlier leave time, but behind the others: in order
  };
  sc_start(sc_time(1, SC_US));
  REQUIRE(b.sink.arrivals.size() == 3);
  CHECK(b.sink.arrivals[0].value == 1);
  CHECK(b.sink.arrivals[0].at == kBufferHold);
  CHECK(b.sink.arrivals[1].value == 2);
  CHECK(b.sink.arrivals[1].at == kBufferHold + sc_time(10, SC_NS));
  CHECK(b.sink.arrivals[2].value == 3);
  CHECK(b.sink.arrivals[2].at == kBufferHold + sc_time(10, SC_NS));
  REQUIRE(b.eng.left.size() == 3);
  CHECK(b.eng.left[0].second == kBufferHold + kBufferLatency);
  CHECK(b.eng.wb.visible() == kBufferHold + sc_time(10, SC_NS) + kBufferLatency);
  CHECK(b.eng.wb.entered() == 3);
  CHECK(b.eng.wb.left() == 3);
  CHECK(b.eng.wb.empty());
}

TEST_CASE("write buffer: a flush waits for the writes before it, not after, and gives their visibility",
          "[engine][F7]") {
  BufferBench b;
  WriteBuffer::Flush empty_flush, f;
  sc_time done_at;
  b.eng.body = [&] {
    b.eng.wb.request_flush(empty_flush);  // nothing entered yet: done at once
    b.eng.push64(0x2000, 7);
    b.eng.wb.request_flush(f);
    b.eng.push64(0x2008, 8, sc_time(50, SC_NS));  // after the flush: not its business
    CHECK_FALSE(f.done);
    while (!f.done) wait(b.eng.wb.flush_event());
    done_at = sc_time_stamp();
  };
  sc_start(sc_time(1, SC_US));
  CHECK(empty_flush.done);
  CHECK(empty_flush.visible == SC_ZERO_TIME);
  CHECK(f.done);
  CHECK(f.visible == kBufferHold + kBufferLatency);  // the first write's, not the second's (150 + 30 ns)
  CHECK(done_at == kBufferHold);                     // when the write left (flush_event is a delta notification)
  CHECK(b.eng.wb.visible() == kBufferHold + sc_time(50, SC_NS) + kBufferLatency);
}

TEST_CASE("write buffer: a refused write waits at the head for its grant, later writes behind it", "[engine][H1]") {
  BufferBench b;
  b.sink.refuse_next = true;
  const sc_time grant_at(400, SC_NS);
  sc_time emptied;
  b.eng.body = [&] {
    b.eng.push64(0x3000, 1);
    b.eng.push64(0x3008, 2);
    wait(grant_at);
    REQUIRE(b.sink.grant);
    CHECK(b.sink.arrivals.empty());  // both held: the head was refused, the second keeps the order
    CHECK(b.eng.wb.entered() == 2);
    CHECK(b.eng.wb.left() == 0);
    b.sink.grant->notify();  // the link has room again: the head's turn
    b.eng.wb.wait_empty();
    emptied = sc_time_stamp();
  };
  sc_start(sc_time(1, SC_US));
  REQUIRE(b.sink.arrivals.size() == 2);
  CHECK(b.sink.arrivals[0].value == 1);
  CHECK(b.sink.arrivals[0].at == grant_at);
  CHECK(b.sink.arrivals[1].value == 2);
  CHECK(b.sink.arrivals[1].at == grant_at);
  CHECK(emptied == grant_at);
}

TEST_CASE("write buffer: a target that waits in b_transport is served (writes leave from a thread)", "[engine][H1]") {
  // IEEE 1666-2011, 11.1.1.4 b: b_transport may call wait. From a method process this target would
  // stop the simulation with an error.
  BufferBench b;
  b.sink.waits = true;
  b.eng.body = [&] { b.eng.push64(0x4000, 5, sc_time(20, SC_NS)); };
  sc_start(sc_time(1, SC_US));
  REQUIRE(b.sink.arrivals.size() == 1);
  CHECK(b.sink.arrivals[0].at == kBufferHold + sc_time(20, SC_NS));
  CHECK(b.eng.wb.visible() == kBufferHold + sc_time(20, SC_NS) + kBufferLatency);
}
