// The engine (Node) alone: its fetcher, decoder and executor against a memory and a stub CMP that
// implements CmpPort (hw_model/gpu/engine_ports.h) and records what the engine asks of it. No adapter,
// no driver, no link: the ring is poked into memory and the stub hands the engine its one queue, so
// each timing below is the engine's own (the memory's latencies and the engine's parameters) and
// nothing else's. The GPU MMU is off (page-table root 0: GPU VAs are physical), so a translation costs
// nothing.
//
// Timing terms used in the derivations (memory: sysmem.read_latency_ns = sysmem.write_latency_ns =
// 90 ns; sysmem.bandwidth_gbps = 1000 here, so n bytes occupy the port n ps):
//   fetch(n)   the ring read of n bytes: 90 ns + n ps (it is sampled when its data has crossed the port)
//   decode     node.decode_cycles at gpu.engine_clock_mhz: 8 cycles at 2 GHz = 4 ns
//   hold       node.write_buffer_ns: a posted write leaves the engine that long after it was issued
//   visible    a posted 8-byte write is visible 8 ps + 90 ns after it leaves
#include <cstring>
#include <string>
#include <vector>

#include "hw_model/gpu/node.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {

constexpr uint64_t kRing = kMem + 0x1000;
constexpr uint64_t kData = kMem + 0x8000, kFenceId = kMem + 0x8100, kCv = kMem + 0x8200, kMv = kMem + 0x8208;
constexpr uint64_t kRptr = kMem + 0x8300;
constexpr uint32_t kNodeSlot = 3, kFenceVector = 5, kPreemptVector = 9;

struct StubCmp : CmpPort {
  HwQueue q;
  FenceEntry f;
  struct Call {
    std::string what;
    uint64_t a = 0, b = 0;
    sc_time at;
  };
  std::vector<Call> calls;
  BlockedWait blocked_on;
  void log(const std::string& w, uint64_t a = 0, uint64_t b = 0) { calls.push_back({w, a, b, sc_time_stamp()}); }
  const Call* find(const std::string& w, size_t nth = 0) const {
    for (const Call& c : calls)
      if (c.what == w && nth-- == 0) return &c;
    return nullptr;
  }
  size_t count(const std::string& w) const {
    size_t n = 0;
    for (const Call& c : calls) n += c.what == w;
    return n;
  }

  StubCmp() {
    q.enabled = true;
    q.ring_base = kRing;
    q.ring_size = 4096;
    q.rptr_addr = kRptr;
    f.cv_addr = kCv;
    f.flags = 1;  // valid
  }
  const HwQueue* pick(int) override { return q.runnable() ? &q : nullptr; }
  bool should_switch(int, const HwQueue&, const sc_time&) const override { return false; }
  bool other_runnable(int, const HwQueue&) const override { return false; }
  void executed(const HwQueue&, uint64_t bytes) override {
    q.rptr += bytes;
    log("executed", bytes);
  }
  void set_context(const HwQueue&, uint64_t root) override {
    q.ctx_root = root;
    log("set_context", root);
  }
  void fault_queue(const HwQueue&) override {
    q.faulted = true;
    log("fault_queue");
  }
  void block(const HwQueue&, const BlockedWait& w) override {
    q.blocked = true;
    blocked_on = w;
    log("block", w.slot, w.value);
  }
  void drop_rest(const HwQueue&) override {
    q.rptr = q.wptr;
    q.blocked = false;
    log("drop_rest");
  }
  void reset_queue(const HwQueue&) override {
    q.rptr = q.wptr;
    q.blocked = q.faulted = false;
    log("reset_queue");
  }
  std::vector<const HwQueue*> queues_of(int) const override { return {&q}; }
  void raise_interrupt(uint32_t vector, int node) override { log("interrupt", vector, uint64_t(node)); }
  void invalidate_tlbs(uint64_t root) override { log("invalidate", root); }
  const FenceEntry* fence(uint32_t slot) const override { return slot == kNodeSlot ? &f : nullptr; }
  uint64_t system_root() const override { return 0; }
  bool mv_from_memory() const override { return false; }
  uint64_t check_mv_addr(uint32_t) const override { return kMv; }
  void fence_written(uint32_t slot, uint64_t value, bool interrupt, const HwQueue*) override {
    log(interrupt ? "fence_written_raise" : "fence_written_suppress", slot, value);
  }
};

std::map<std::string, std::string> with_fast_port(std::map<std::string, std::string> o) {
  o.emplace("sysmem.bandwidth_gbps", "1000");
  return o;
}

struct NodeRig : sc_module {
  ParamSet ps;
  Vcd vcd;
  Memory mem;
  StubCmp cmp;
  Node node;
  std::function<void(NodeRig&)> body;
  NodeRig(sc_module_name n, const PacketWriter& ring, std::map<std::string, std::string> overrides = {})
      : sc_module(n),
        ps(params(with_fast_port(std::move(overrides)))),
        mem("sysmem", ps, "sysmem.", kMem),
        node("node0", ps, vcd, 0, cmp) {
    node.isock.bind(mem.tsock);
    node.set_preempt_vector(kPreemptVector);
    mem.poke(kRing, ring.dwords().data(), unsigned(ring.bytes()));
    cmp.q.wptr = ring.bytes();
    SC_HAS_PROCESS(NodeRig);
    SC_THREAD(run);
  }
  void run() {
    if (body) body(*this);
  }
};

const sc_time kNodeRead(90, SC_NS), kWrite(90, SC_NS);
sc_time fetch(unsigned bytes) { return kNodeRead + ps(bytes); }
const sc_time kNodeDecode(4, SC_NS);  // 8 cycles at 2 GHz (the defaults; the test checks them below)

void check_node_defaults(const ParamSet& p) {
  REQUIRE(p.get_int("node.decode_cycles") == 8);
  REQUIRE(p.get_real("gpu.engine_clock_mhz") == 2000);
  REQUIRE(p.get_real("sysmem.read_latency_ns") == 90);
  REQUIRE(p.get_real("sysmem.write_latency_ns") == 90);
  REQUIRE(p.get_int("node.fetch_bytes") >= 256);
}

}  // namespace

TEST_CASE(
    "Engine alone: a WRITE64 and a FENCE are fetched and decoded and executed and the FENCE interrupts once its ID is "
    "visible",
    "[H1][H2][T5][engine]") {
  PacketWriter w;
  w.write64(kData, 42).fence(kFenceId, 7, kFenceVector);  // 20 + 24 bytes
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  const sc_time hold = rig.ps.get_ns("node.write_buffer_ns"), bar_sys = rig.ps.get_ns("node.barrier_system_ns");
  sc_start(sc_time(20, SC_US));
  // The ring arrives in one fetch of 44 B at t1. WRITE64: decoded at t1 + decode, its write leaves at
  // + hold and is visible 8 ps + 90 ns later. FENCE: decoded at t1 + 2 decode; its release waits for
  // that write to be visible, then the system-scope handshake (the write went to system memory); its ID
  // is written then, leaves after hold, and the interrupt goes once the ID is visible.
  const sc_time t1 = fetch(44);
  const sc_time data_visible = t1 + kNodeDecode + hold + ps(8) + kWrite;
  const sc_time released = data_visible + bar_sys;
  const sc_time irq = released + hold + ps(8) + kWrite;
  REQUIRE(rig.cmp.count("executed") == 2);
  CHECK(rig.cmp.find("executed", 0)->a == 20);
  CHECK(rig.cmp.find("executed", 0)->at == t1 + kNodeDecode);
  CHECK(rig.cmp.find("executed", 1)->a == 24);
  CHECK(rig.cmp.find("executed", 1)->at == irq);
  REQUIRE(rig.cmp.count("interrupt") == 1);
  CHECK(rig.cmp.find("interrupt")->a == kFenceVector);
  CHECK(rig.cmp.find("interrupt")->at == irq);
  CHECK(rig.node.last_fence() == 7);
  CHECK(rig.mem.peek64(kData) == 42);
  CHECK(rig.mem.peek64(kFenceId) == 7);
  CHECK(rig.mem.peek64(kRptr) == 44);  // the read pointer written back when the ring ran dry
  CHECK(rig.node.packets_executed() == 2);
  CHECK(rig.cmp.count("fault_queue") == 0);
}

TEST_CASE("Engine alone: a malformed packet header faults the queue at that packet and nothing behind it executes",
          "[H1][engine]") {
  PacketWriter w;
  w.raw(0xFFFF'FFFFu).write64(kData, 1);
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  sc_start(sc_time(20, SC_US));
  // The fault is raised as the header is decoded (the fetch of the 24 bytes has arrived), before the
  // decode time it costs.
  REQUIRE(rig.cmp.count("fault_queue") == 1);
  CHECK(rig.cmp.find("fault_queue")->at == fetch(24));
  CHECK(rig.cmp.count("executed") == 0);
  CHECK(rig.cmp.q.rptr == 0);  // stopped at the packet
  CHECK(rig.node.faults() == 1);
  REQUIRE(rig.node.fault_messages().size() == 1);
  CHECK(rig.node.fault_messages()[0].find("queue 0 faulted at ring offset 0x0: malformed packet") != std::string::npos);
  CHECK(rig.mem.peek64(kData) == 0);  // the WRITE64 behind it never ran
}

namespace {
// SIGNAL of kNodeSlot to 9 against an MV of `mv` in memory.
void signal_check(uint64_t mv, const char* expect) {
  PacketWriter w;
  w.signal({kNodeSlot, kCv, kMv}, 9);  // 32 bytes
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  rig.mem.poke(kMv, &mv, 8);
  const sc_time hold = rig.ps.get_ns("node.write_buffer_ns");
  sc_start(sc_time(20, SC_US));
  // F3: the engine issues the CV write and the MV read together once decoded (the read rides the
  // decode as its offset); the verdict goes to the CMP when the MV arrives: fetch(16) + decode + 8 ps +
  // 90 ns. The CV write is still in the write buffer then (hold > 0): the window the CMP's barrier closes.
  const sc_time t1 = fetch(32);
  const sc_time verdict = t1 + kNodeDecode + ps(8) + kNodeRead;
  REQUIRE(rig.cmp.count(expect) == 1);
  CHECK(rig.cmp.find(expect)->a == kNodeSlot);
  CHECK(rig.cmp.find(expect)->b == 9);
  CHECK(rig.cmp.find(expect)->at == verdict);
  CHECK(rig.cmp.count("interrupt") == 0);    // the engine does not interrupt; the CMP decides
  CHECK(t1 + kNodeDecode + hold > verdict);  // the CV write had not left the engine at the verdict
  CHECK(rig.mem.peek64(kCv) == 9);
  CHECK(rig.node.signals() == 1);
}
}  // namespace

TEST_CASE("Engine alone: SIGNAL past the MV the CMP names asks for the interrupt (value > MV)", "[F1][F3][engine]") {
  signal_check(5, "fence_written_raise");
}

TEST_CASE("Engine alone: SIGNAL not past the MV suppresses the interrupt (value <= MV)", "[F3][engine]") {
  signal_check(9, "fence_written_suppress");
}

TEST_CASE(
    "Engine alone: an unresolved WAIT blocks the queue through the CMP and the next packet runs only once unblocked",
    "[F5][engine]") {
  PacketWriter w;
  w.wait({kNodeSlot, kCv, 0}, 5).write64(kData, 77);  // 24 + 20 bytes
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  const uint64_t cv = 1;
  rig.mem.poke(kCv, &cv, 8);
  const sc_time unblock(10, SC_US);
  uint64_t data_before_unblock = ~0ull;
  rig.body = [&](NodeRig& r) {
    wait(unblock);
    data_before_unblock = r.mem.peek64(kData);
    r.cmp.q.blocked = false;  // the CMP's unblock (F5), then its kick
    r.node.kick(r.cmp.q);
  };
  sc_start(sc_time(20, SC_US));
  // WAIT: decoded at t1 + decode, then reads CV (8 ps + 90 ns); CV 1 < 5, so the queue blocks then.
  const sc_time t1 = fetch(44);
  const sc_time blocked = t1 + kNodeDecode + ps(8) + kNodeRead;
  REQUIRE(rig.cmp.count("block") == 1);
  CHECK(rig.cmp.find("block")->at == blocked);
  CHECK(rig.cmp.blocked_on.slot == kNodeSlot);
  CHECK(rig.cmp.blocked_on.value == 5);
  CHECK_FALSE(rig.cmp.blocked_on.logged);
  CHECK(rig.cmp.blocked_on.observed == (t1 + kNodeDecode).value() / uint64_t(rig.ps.get_int("gpu.timestamp_tick_ps")));
  CHECK(data_before_unblock == 0);  // the WRITE64 behind the WAIT had not run
  // Unblocked at 10 us: the WRITE64 (already fetched) decodes at once and is visible hold + 8 ps + 90 ns later.
  REQUIRE(rig.cmp.count("executed") == 2);
  CHECK(rig.cmp.find("executed", 1)->at == unblock + kNodeDecode);
  CHECK(rig.mem.peek64(kData) == 77);
  CHECK(rig.node.last_wait_read() == t1 + kNodeDecode);
}

TEST_CASE(
    "Engine alone: a preemption requested mid-packet is taken at the DMA packet's FENCE and the rest of the ring goes "
    "back",
    "[T3][engine]") {
  PacketWriter w;
  w.compute(1000).fence(kFenceId, 1, kFenceVector).compute(1000).fence(kFenceId, 2, kFenceVector);  // 72 B
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  const sc_time hold = rig.ps.get_ns("node.write_buffer_ns"), bar = rig.ps.get_ns("node.barrier_ns");
  const sc_time save = rig.ps.get_ns("node.preempt_save_ns");
  REQUIRE(rig.ps.get_enum("node.preemption") == "packet");
  rig.body = [](NodeRig& r) {
    wait(sc_time(100, SC_NS));  // inside the first COMPUTE
    r.node.request_preempt();
  };
  sc_start(sc_time(100, SC_US));
  // COMPUTE: decode, then 1000 cycles at 2 GHz = 500 ns. FENCE: decode; nothing written to system
  // memory yet, so a device-scope release (node.barrier_ns); its ID leaves after hold and is visible
  // 8 ps + 90 ns later, then the interrupt. The preemption is taken at that boundary: the state saved
  // (node.preempt_save_ns), the rest of the ring given back, the preemption vector raised.
  const sc_time t1 = fetch(72);
  const sc_time fence1 = t1 + kNodeDecode + sc_time(500, SC_NS) + kNodeDecode + bar + hold + ps(8) + kWrite;
  REQUIRE(rig.cmp.count("interrupt") == 2);
  CHECK(rig.cmp.find("interrupt", 0)->a == kFenceVector);
  CHECK(rig.cmp.find("interrupt", 0)->at == fence1);
  CHECK(rig.cmp.find("interrupt", 1)->a == kPreemptVector);
  CHECK(rig.cmp.find("interrupt", 1)->at == fence1 + save);
  REQUIRE(rig.cmp.count("drop_rest") == 1);
  CHECK(rig.cmp.find("drop_rest")->at == fence1 + save);
  CHECK(rig.node.last_fence() == 1);  // the second DMA packet never ran
  CHECK(rig.node.compute_time() == sc_time(500, SC_NS));
  CHECK(rig.node.preemptions() == 1);
  CHECK(rig.mem.peek64(kRptr) == 72);  // given back: the read pointer at the write pointer
}

TEST_CASE("Engine alone: a reset stops a COMPUTE where it is and empties the engine's queues after node.reset_ns",
          "[T1][T3][engine]") {
  PacketWriter w;
  w.compute(1'000'000'000).fence(kFenceId, 1, kFenceVector);  // 0.5 s of compute: a hang
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  const sc_time reset = rig.ps.get_ns("node.reset_ns");
  const sc_time asked(1, SC_US);
  uint32_t status_during = 0, status_after = 0;
  rig.body = [&](NodeRig& r) {
    wait(asked);
    r.node.request_reset();
    wait(sc_time(1, SC_NS));
    status_during = r.node.status();
    wait(r.node.reset_done_event());
    wait(SC_ZERO_TIME);
    status_after = r.node.status();
  };
  sc_start(sc_time(1, SC_MS));
  CHECK((status_during & regs::kNStResetting) != 0);
  CHECK(status_after == 0);  // reset, idle, nothing pending
  REQUIRE(rig.cmp.count("reset_queue") == 1);
  CHECK(rig.cmp.find("reset_queue")->at == asked + reset);  // the reset request is taken in the same instant
  CHECK(rig.node.resets() == 1);
  CHECK(rig.node.compute_time() == asked - (fetch(36) + kNodeDecode));  // the COMPUTE stopped at the request
  CHECK(rig.cmp.count("interrupt") == 0);                               // its FENCE never ran
  CHECK(rig.node.last_fence() == 0);
  CHECK(rig.mem.peek64(kRptr) == 36);  // the emptied queue's read pointer written back
}

TEST_CASE("Engine alone: SET_PAGE_TABLE tells the CMP the running context's space so the queue resumes in it",
          "[H1][engine]") {
  // The queue's space after a SET_PAGE_TABLE is the CMP's to keep (HwQueue::ctx_root): a queue that
  // leaves its engine and comes back starts in it, not in the ring's own space (pt_root).
  constexpr uint64_t kRoot = kMem + 0x40000;
  PacketWriter w;
  w.set_page_table(kRoot);  // 12 bytes
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  sc_start(sc_time(20, SC_US));
  REQUIRE(rig.cmp.count("set_context") == 1);
  CHECK(rig.cmp.find("set_context")->a == kRoot);
  CHECK(rig.cmp.find("set_context")->at == fetch(12) + kNodeDecode);
  CHECK(rig.cmp.q.ctx_root == kRoot);
  CHECK(rig.cmp.q.pt_root == 0);  // the ring's space is unchanged
}

TEST_CASE(
    "Engine alone: a reset asked for while a WAIT reads CV completes once the engine stops and leaves the queue "
    "unblocked",
    "[T3][engine]") {
  // node.reset_ns = 0: the reset completes as soon as the executor has stopped. It is asked for inside
  // the WAIT's CV read (from fetch(24) + decode, 8 ps + 90 ns); the executor finishes that bounded step,
  // blocks the queue, then stops: the reset empties the queue only then, so the block does not outlive it.
  PacketWriter w;
  w.wait({kNodeSlot, kCv, 0}, 5);
  NodeRig rig("rig", w, {{"node.reset_ns", "0"}});
  check_node_defaults(rig.ps);
  const uint64_t cv = 1;
  rig.mem.poke(kCv, &cv, 8);
  const sc_time t1 = fetch(24), read_done = t1 + kNodeDecode + ps(8) + kNodeRead;
  rig.body = [&](NodeRig& r) {
    wait(t1 + kNodeDecode + sc_time(10, SC_NS));
    r.node.request_reset();
  };
  sc_start(sc_time(20, SC_US));
  REQUIRE(rig.cmp.count("block") == 1);
  CHECK(rig.cmp.find("block")->at == read_done);
  REQUIRE(rig.cmp.count("reset_queue") == 1);
  CHECK(rig.cmp.find("reset_queue")->at == read_done);
  CHECK_FALSE(rig.cmp.q.blocked);
  CHECK(rig.node.resets() == 1);
  CHECK(rig.node.status() == 0);
}

TEST_CASE(
    "Engine kinds: a copy engine faults a COMPUTE at that packet after running what came before and names its kind",
    "[H1][engine][kinds]") {
  PacketWriter w;
  w.write64(kData, 5).compute(1000).write64(kData + 8, 6);  // 20 + 12 + 20 bytes
  NodeRig rig("rig", w, {{"gpu.node0.kind", "copy"}});
  check_node_defaults(rig.ps);
  REQUIRE(rig.node.engine_kind() == EngineKind::Copy);
  sc_start(sc_time(20, SC_US));
  // One fetch of 52 B at t1. WRITE64 is decoded at t1 + decode; the COMPUTE's fault is raised as it is
  // decoded (before the decode time the fault costs, as for a malformed header): at t1 + decode.
  const sc_time t1 = fetch(52);
  REQUIRE(rig.cmp.count("fault_queue") == 1);
  CHECK(rig.cmp.find("fault_queue")->at == t1 + kNodeDecode);
  CHECK(rig.cmp.count("executed") == 1);  // the WRITE64 only
  CHECK(rig.cmp.q.rptr == 20);            // stopped at the COMPUTE
  CHECK(rig.mem.peek64(kData) == 5);
  CHECK(rig.mem.peek64(kData + 8) == 0);  // the WRITE64 behind it never ran
  REQUIRE(rig.node.fault_messages().size() == 1);
  CHECK(rig.node.fault_messages()[0].find("COMPUTE 1000 cycles is not a command node 0 (copy) runs") !=
        std::string::npos);
  CHECK(rig.node.compute_time() == SC_ZERO_TIME);
}

TEST_CASE("Engine kinds: a video engine runs COMPUTE at its own clock and faults a COPY", "[H1][engine][kinds]") {
  {
    PacketWriter w;
    w.compute(1000).copy(kData, kData + 0x100, 64);
    // The video engine's own clock: 1,000 cycles at 500 MHz take 2 us (8 decode cycles take 16 ns).
    NodeRig rig("rig", w, {{"gpu.node0.kind", "video"}, {"gpu.node0.engine_clock_mhz", "500"}});
    sc_start(sc_time(20, SC_US));
    CHECK(rig.node.engine_kind() == EngineKind::Video);
    CHECK(rig.node.compute_time() == sc_time(2, SC_US));
    REQUIRE(rig.cmp.count("fault_queue") == 1);
    CHECK(rig.node.fault_messages()[0].find("COPY 64 bytes is not a command node 0 (video) runs") != std::string::npos);
    CHECK(rig.cmp.q.rptr == 12);  // past the COMPUTE, stopped at the COPY
  }
}

TEST_CASE("Engine kinds: a copy engine runs a COPY", "[H1][engine][kinds]") {
  {
    PacketWriter w;
    w.copy(kData, kData + 0x100, 64);
    NodeRig rig("rig", w, {{"gpu.node0.kind", "copy"}});
    rig.mem.poke(kData, "0123456789abcdef", 16);
    sc_start(sc_time(20, SC_US));
    CHECK(rig.cmp.count("fault_queue") == 0);
    char got[17] = {};
    rig.mem.peek(kData + 0x100, got, 16);
    CHECK(std::string(got) == "0123456789abcdef");
  }
}

namespace {
// A logged SIGNAL (the queue has a signal log) with a reset asked for `asked` after the packet's fetch:
// whether the engine still made its conditional check (the CMP's fence_written) and was reset.
struct LoggedSignalReset {
  bool checked = false;
  size_t resets = 0;
};
LoggedSignalReset logged_signal_reset(const sc_time& asked) {
  constexpr uint64_t kLog = kMem + 0xA000;
  PacketWriter w;
  w.signal_logged({kNodeSlot, kCv, kMv}, 9, 0, 0x40);
  NodeRig rig("rig", w);
  check_node_defaults(rig.ps);
  rig.cmp.q.signal_log = kLog;
  rig.cmp.q.log_entries = 8;
  const uint64_t mv = 5;
  rig.mem.poke(kMv, &mv, 8);
  const sc_time t1 = fetch(unsigned(w.bytes()));
  rig.body = [&](NodeRig& r) {
    wait(t1 + asked);
    r.node.request_reset();
  };
  sc_start(sc_time(1, SC_MS));      // past node.reset_ns (174 us)
  CHECK(rig.mem.peek64(kCv) == 9);  // the CV write was issued with the decode, before any reset
  return {rig.cmp.count("fence_written_raise") == 1, size_t(rig.node.resets())};
}
}  // namespace

TEST_CASE("Engine alone: a reset asked for while a logged SIGNAL decodes stops it before the conditional check",
          "[F17][T1][engine]") {
  // The decode takes 4 ns from the fetch (t1); the engine does not wake for it, but a reset asked for by
  // then (t1 + 1 ns) stops the engine at the barrier's end as if it had: no conditional check.
  const LoggedSignalReset r = logged_signal_reset(sc_time(1, SC_NS));
  CHECK_FALSE(r.checked);
  CHECK(r.resets == 1);
}

TEST_CASE("Engine alone: a reset asked for after a logged SIGNAL decoded lets it make its conditional check",
          "[F17][T1][engine]") {
  // Asked for at t1 + 10 ns, during the barrier (it ends past t1 + decode + hold): the engine was past
  // its last stop point, as before the change; the check reaches the CMP, then the reset takes the engine.
  const LoggedSignalReset r = logged_signal_reset(sc_time(10, SC_NS));
  CHECK(r.checked);
  CHECK(r.resets == 1);
}
