// Link serialisation, posted-write order, read-after-write ordering, visibility and 64-bit atomicity.
#include "hw_model/gpu/regs.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

using namespace tb::dflt;

namespace {
// The platform with two extra initiators: one on the GPU's side (its system-memory accesses cross the
// link) and one on the host's (straight to the root complex).
struct TwoAgents {
  ParamSet ps;
  Vcd vcd;
  Platform p;
  Probe gpu_agent{"gpu_agent"}, host_agent{"host_agent"};
  explicit TwoAgents(const std::map<std::string, std::string>& o = {}) : ps(params(o)), p(ps, vcd, 1) {
    gpu_agent.sock.bind(p.gpu.fabric.tsock);
    host_agent.sock.bind(p.rc.tsock);
  }
};
}  // namespace

TEST_CASE("Posted writes serialise on the link at the derived rate and become visible in issue order", "[H1][H2]") {
  auto ps = params();
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe gpu_agent("gpu_agent");  // a GPU-side initiator: its writes to system memory go up the link
  gpu_agent.sock.bind(p.gpu.fabric.tsock);
  std::vector<unsigned char> data(512, 0xAB);
  std::vector<sc_time> seen;
  for (uint64_t off : {0, 256, 512})  // the first word of each write
    p.sysmem.watch(kA + off, 8, [&](uint64_t, unsigned) { seen.push_back(sc_time_stamp()); });
  sc_time v1, v2, v3;
  gpu_agent.body = [&] {
    v1 = gpu_agent.bus.post(kA, data.data(), 256);
    v2 = gpu_agent.bus.post(kA + 256, data.data(), 256);
    v3 = gpu_agent.bus.post(kA + 512, data.data(), 512);  // two TLPs at MPS 256
  };
  sc_start();
  const sc_time s280 = ser(256 + 24, kRate);
  // v1: one 280-byte TLP, the hop, the root complex, the DRAM port transfer and write latency.
  CHECK(v1 == s280 + kHop + kRc + dram_xfer(256) + kDram);
  // v2 queues behind v1 on the up direction: exactly one TLP time later.
  CHECK(v2 == v1 + s280);
  // v3: two TLPs (2 x 24 B overhead) after v2's TLP; the DRAM port is long free by then.
  CHECK(v3 == s280 + s280 + ser(512 + 48, kRate) + kHop + kRc + dram_xfer(512) + kDram);
  CHECK(p.link.up().tlps == 4);
  CHECK(p.link.up().payload_bytes == 1024);
  CHECK(p.link.down().tlps == 0);
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == v1);
  CHECK(seen[1] == v2);
  CHECK(seen[2] == v3);
  CHECK(p.sysmem.peek64(kA + 1016) == 0xABABABABABABABABull);
}

TEST_CASE("A read does not pass an earlier posted write, and another agent reads only visible data", "[H2]") {
  TwoAgents t;
  auto &gpu_agent = t.gpu_agent, &host_agent = t.host_agent;
  const uint64_t v = 0x1122334455667788ull;
  sc_time vis, gpu_read_done, host_early_done, host_late_done;
  uint64_t gpu_saw = 0, host_early = 1, host_late = 0;
  gpu_agent.body = [&] {
    vis = gpu_agent.bus.post64(kA, v);
    gpu_saw = gpu_agent.bus.read64(kA);  // same direction, right behind the write
    gpu_read_done = sc_time_stamp();
  };
  host_agent.body = [&] {
    host_early = host_agent.bus.read64(kA);  // the write is still on the link
    host_early_done = sc_time_stamp();
    wait(vis - sc_time_stamp());
    host_late = host_agent.bus.read64(kA);
    host_late_done = sc_time_stamp();
  };
  sc_start();
  const sc_time s32 = ser(8 + 24, kRate), s24 = ser(24, kRate), s28 = ser(8 + 20, kRate);
  CHECK(vis == s32 + kHop + kRc + dram_xfer(8) + kDram);
  // The read request TLP serialises after the write's; it reaches DRAM after the write did, so it is
  // sampled no earlier than the write's visibility; here its own path is the later one.
  CHECK(gpu_saw == v);
  CHECK(gpu_read_done == s32 + s24 + kHop + kRc + dram_xfer(8) + kDram + kRc + s28 + kHop);
  // The host read issued at 0 reaches DRAM at 30 ns, long before the write: it sees the old value.
  CHECK(host_early == 0);
  CHECK(host_early_done == kRc + dram_xfer(8) + kDram + kRc);
  CHECK(host_early_done < vis);
  CHECK(host_late == v);
}

TEST_CASE("A read waits for a slow write that reached the memory controller before it, not for one still on its way",
          "[H2]") {
  // DRAM writes take 500 ns to become visible, reads 90 ns to be sampled: a read right behind a write
  // would be sampled before the write is visible, so only the controller's ordering rule (a read does
  // not pass a write that arrived before it) gives it the new value.
  TwoAgents t(std::map<std::string, std::string>{{"sysmem.write_latency_ns", "500"}});
  auto &gpu_agent = t.gpu_agent, &host_agent = t.host_agent;
  const sc_time kWriteLat(500, SC_NS);
  const uint64_t v = 0x1122334455667788ull;
  const sc_time host_issue(100, SC_NS);
  sc_time vis, gpu_read_done, host_read_done;
  uint64_t gpu_saw = 0, host_saw = 1;
  gpu_agent.body = [&] {
    vis = gpu_agent.bus.post64(kA, v);   // posted at 0: pending at the controller from 0, arriving later
    gpu_saw = gpu_agent.bus.read64(kA);  // same direction, right behind the write
    gpu_read_done = sc_time_stamp();
  };
  host_agent.body = [&] {
    wait(host_issue);
    host_saw = host_agent.bus.read64(kA);
    host_read_done = sc_time_stamp();
  };
  sc_start();
  const sc_time s32 = ser(8 + 24, kRate), s24 = ser(24, kRate), s28 = ser(8 + 20, kRate);
  // The write arrives at DRAM after its 32-byte TLP, the hop and the root complex; it is visible after
  // the 8-byte port transfer and the 500 ns write latency.
  const sc_time write_arrival = s32 + kHop + kRc;
  CHECK(vis == write_arrival + dram_xfer(8) + kWriteLat);
  // The GPU read's request TLP serialises behind the write's, so it arrives after the write; its own
  // sample time (arrival + 8 B transfer + 90 ns) comes before the write's visibility, which therefore
  // decides: the read returns the new value at the visibility plus the return path (root complex,
  // a 28-byte completion TLP, the hop).
  const sc_time read_arrival = s32 + s24 + kHop + kRc;
  REQUIRE(read_arrival > write_arrival);
  REQUIRE(read_arrival + dram_xfer(8) + kDram < vis);  // the guard, not the read's own path, decides
  CHECK(gpu_saw == v);
  CHECK(gpu_read_done == vis + kRc + s28 + kHop);
  // The host read leaves at 100 ns and reaches DRAM after the root complex, before the GPU write
  // arrives (the write is already pending there, its delay annotated at 0): it is not held for that
  // write, sees the old value and returns after the 8 B transfer, 90 ns and the root complex back.
  REQUIRE(host_issue + kRc < write_arrival);
  CHECK(host_saw == 0);
  CHECK(host_read_done == host_issue + kRc + dram_xfer(8) + kDram + kRc);
}

TEST_CASE("Aligned 64-bit writes become visible whole, never torn", "[F1][H2]") {
  auto ps = params();
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Probe a("a"), b("b");
  a.sock.bind(p.gpu.fabric.tsock);  // through the link
  b.sock.bind(p.rc.tsock);          // from the host side
  const uint64_t va = 0x1111111122222222ull, vb = 0x3333333344444444ull;
  std::vector<uint64_t> observed;
  p.sysmem.watch(kA, 8, [&](uint64_t, unsigned) { observed.push_back(p.sysmem.peek64(kA)); });
  sc_time vis_a;
  a.body = [&] {
    for (int i = 0; i < 100; ++i) {
      vis_a = a.bus.post64(kA, i % 2 ? va : vb);
      wait(sc_time(3, SC_NS));
    }
  };
  b.body = [&] {
    for (int i = 0; i < 100; ++i) {
      b.bus.post64(kA, i % 2 ? vb : va);
      wait(sc_time(7, SC_NS));
    }
  };
  sc_start();
  REQUIRE(observed.size() == 200);
  for (uint64_t o : observed) CHECK((o == va || o == vb));
}

TEST_CASE("An all-zero write is a write: it overwrites data at its visibility time, and zero pages read as zero",
          "[H2]") {
  // The memory keeps no copy of an all-zero write's data (host speed for never-drawn surfaces); what a
  // reader sees must not change: old data until the write is visible, zeros from then on, and a watch
  // fires at the same time as for any write.
  TwoAgents t;
  std::vector<unsigned char> ones(8192, 0x5A), zeros(8192, 0);
  t.p.sysmem.poke(kA, ones.data(), 8192);  // two pages of data
  const uint64_t kFresh = kA + 0x400000;   // never written
  std::vector<sc_time> seen;
  t.p.sysmem.watch(kA + 4096, 8, [&](uint64_t, unsigned) { seen.push_back(sc_time_stamp()); });
  sc_time v, v_fresh;
  uint64_t before = 0, after = 0, mixed_lo = 0, mixed_hi = 0, fresh = 1;
  t.host_agent.body = [&] {
    v = t.host_agent.bus.post(kA, zeros.data(), 8192);
    v_fresh = t.host_agent.bus.post(kFresh, zeros.data(), 4096);
    wait(v - sc_time(1, SC_PS) - sc_time_stamp());
    before = t.p.sysmem.peek64(kA + 4096);
    wait(v_fresh + sc_time(1, SC_NS) - sc_time_stamp());
    after = t.p.sysmem.peek64(kA + 4096);
    fresh = t.p.sysmem.peek64(kFresh + 8);
    // A partly zero write stores every byte.
    std::vector<unsigned char> half(16, 0);
    half[15] = 0x11;
    const sc_time v2 = t.host_agent.bus.post(kA, half.data(), 16);
    wait(v2 + sc_time(1, SC_NS) - sc_time_stamp());
    mixed_lo = t.p.sysmem.peek64(kA);
    mixed_hi = t.p.sysmem.peek64(kA + 8);
  };
  sc_start();
  CHECK(before == 0x5A5A5A5A5A5A5A5Aull);
  CHECK(after == 0);
  CHECK(fresh == 0);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == v);
  CHECK(mixed_lo == 0);
  CHECK(mixed_hi == 0x1100000000000000ull);
  CHECK(t.p.sysmem.bytes_written() == 8192 + 4096 + 16);
}

TEST_CASE(
    "ZeroHint: an unbacked range reads as zeros into the buffer, a backed one as its data, a hinted zero write stores "
    "zeros",
    "[H2]") {
  // Host speed only: whatever the hint, the initiator's buffer must end up holding exactly what a read
  // returns, and a write hinted as zero must store zeros over data.
  TwoAgents t;
  std::vector<unsigned char> data(8192, 0x77);
  t.p.sysmem.poke(kA, data.data(), 4096);  // page 0 backed, page 1 not
  std::vector<unsigned char> buf(4096, 0xEE);
  ZeroHint r1, r2, r3;
  std::vector<unsigned char> after1, after2, after3;
  t.host_agent.body = [&] {
    // Unbacked page, dirty buffer declared dirty: the memory zeroes it and says so.
    r1.buffer_zero = false;
    t.host_agent.bus.read(kA + 4096, buf.data(), 4096, SC_ZERO_TIME, &r1);
    after1 = buf;
    // Backed page: its data, and no claim of zeros.
    r2.buffer_zero = true;
    t.host_agent.bus.read(kA, buf.data(), 4096, SC_ZERO_TIME, &r2);
    after2 = buf;
    // A range half backed is not unbacked: read normally (the zero half really is zero).
    r3.buffer_zero = false;
    t.host_agent.bus.read(kA + 2048, buf.data(), 4096, SC_ZERO_TIME, &r3);
    after3 = buf;
    // A write hinted zero (its buffer really is zero) over data stores zeros.
    std::vector<unsigned char> z(4096, 0);
    ZeroHint w;
    w.buffer_zero = true;
    PostedFlowControl fc;
    sc_event g;
    fc.grant = &g;
    const sc_time v = t.host_agent.bus.post_held(kA, z.data(), 4096, fc, &w);
    wait(v + sc_time(1, SC_NS) - sc_time_stamp());
  };
  sc_start();
  CHECK(r1.data_zero);
  CHECK(std::all_of(after1.begin(), after1.end(), [](unsigned char c) { return c == 0; }));
  CHECK_FALSE(r2.data_zero);
  CHECK(std::all_of(after2.begin(), after2.end(), [](unsigned char c) { return c == 0x77; }));
  CHECK_FALSE(r3.data_zero);
  CHECK(after3[0] == 0x77);
  CHECK(after3[2047] == 0x77);
  CHECK(after3[2048] == 0);
  CHECK(t.p.sysmem.peek64(kA) == 0);
  CHECK(t.p.sysmem.peek64(kA + 4088) == 0);
}

TEST_CASE("A page watch runs once per visible write that touches its page and for no other", "[H2]") {
  // The fence-value monitors watch pages (one look-up per write). A small write inside
  // the page, a 8-KB write that covers it and its neighbour, and a write to the neighbour alone: the
  // watch runs for the first two, at their visibility, with their address and length.
  TwoAgents t;
  const uint64_t page = kA + 0x10000;  // page-aligned (kA is 1 MiB above the base)
  struct Seen {
    uint64_t addr;
    unsigned len;
    sc_time at;
  };
  std::vector<Seen> seen;
  t.p.sysmem.watch_page(page, [&](uint64_t a, unsigned len) { seen.push_back({a, len, sc_time_stamp()}); });
  std::vector<unsigned char> big(8192, 0x11);
  const uint64_t v8 = 0x0102030405060708ull;
  sc_time v_small, v_big, v_other;
  t.host_agent.body = [&] {
    v_small = t.host_agent.bus.post(page + 0x40, &v8, 8);
    v_big = t.host_agent.bus.post(page - 4096, big.data(), 8192);  // the page before and this one
    v_other = t.host_agent.bus.post(page + 4096, &v8, 8);          // the next page only
  };
  sc_start();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].addr == page + 0x40);
  CHECK(seen[0].len == 8);
  CHECK(seen[0].at == v_small);
  CHECK(seen[1].addr == page - 4096);
  CHECK(seen[1].len == 8192);
  CHECK(seen[1].at == v_big);
  CHECK(v_other > v_big);  // it did become visible, unwatched
}
