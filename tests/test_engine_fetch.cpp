// The engine's ring fetcher alone (hw_model/gpu/ring_fetcher.h) against system memory, with a stub
// translation (GPU VA = physical address, one page that faults on demand). Fetches are whole (a full
// fetch fits in the FIFO, or all that is left does), never cross the ring's end or a page, start again
// only when a whole fetch fits; a stop drops a fetch in flight; a faulting fetch wakes the executor.
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "hw_model/gpu/ring_fetcher.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {

constexpr unsigned kFetch = 64, kFifo = 128;

struct FetchBench : sc_module {
  tlm_utils::simple_initiator_socket<FetchBench> isock;
  BusMaster<FetchBench> bus;
  ParamSet ps;
  Memory mem;
  HwQueue q;
  uint64_t fault_page = ~0ull;
  struct Read {
    uint64_t addr;
    unsigned len;
    sc_time at;
  };
  std::vector<Read> reads;
  unsigned faults = 0;
  RingFetcher fetch;
  std::function<void(FetchBench&)> body;

  FetchBench(sc_module_name n, uint64_t ring_base, uint32_t ring_size)
      : sc_module(n),
        isock("isock"),
        bus(isock),
        ps(sysmem_params({{"sysmem.bandwidth_gbps", "1000"}})),  // n bytes occupy the port n ps
        mem("sysmem", ps, "sysmem.", kMem),
        fetch("fetch", kFetch, kFifo,
              RingFetcher::Port{[this](uint64_t, uint64_t va, GpuMmu::Result& r) {
                                  r = {};
                                  if (va / 4096 == fault_page) {
                                    ++faults;
                                    return false;
                                  }
                                  r.ok = true;
                                  r.addr = va;
                                  r.page_left = 4096 - va % 4096;
                                  return true;
                                },
                                [this](uint64_t pa, void* dst, unsigned len) {
                                  reads.push_back({pa, len, sc_time_stamp()});
                                  bus.read(pa, dst, len);
                                }}) {
    isock.bind(mem.tsock);
    q.ring_base = ring_base;
    q.ring_size = ring_size;
    for (uint32_t i = 0; i < ring_size / 4; ++i) mem.poke(ring_base + 4 * i, &i, 4);  // dword i holds i
    SC_HAS_PROCESS(FetchBench);
    SC_THREAD(run);
  }
  void run() { body(*this); }
};

const sc_time kFetchRead(90, SC_NS);  // sysmem.read_latency_ns
sc_time read_time(unsigned n) { return kFetchRead + ps(n); }

}  // namespace

TEST_CASE(
    "Ring fetcher: whole fetches of node.fetch_bytes while the FIFO has room and the next only once a whole one fits",
    "[H2][engine]") {
  FetchBench b("bench", kMem + 0x1000, 4096);
  std::vector<uint32_t> got;
  size_t dwords_at_wait = 0;
  b.body = [&](FetchBench& x) {
    x.q.wptr = 200;  // 50 dwords: 64 + 64 fill the FIFO; 72 wait
    x.fetch.start(&x.q);
    wait(sc_time(1, SC_US));
    dwords_at_wait = x.fetch.dwords();
    uint32_t d[32];
    x.fetch.take(d, 8);  // 32 B free: not a whole fetch
    got.insert(got.end(), d, d + 8);
    x.fetch.kick(x.q);  // a doorbell now: still no room for a whole fetch
    wait(sc_time(1, SC_US));
    x.fetch.take(d, 8);  // 64 B free: the next fetch goes
    got.insert(got.end(), d, d + 8);
    wait(sc_time(1, SC_US));
    while (x.fetch.dwords()) {
      const uint32_t n = std::min<uint32_t>(32, uint32_t(x.fetch.dwords()));
      x.fetch.take(d, n);
      got.insert(got.end(), d, d + n);
      wait(sc_time(1, SC_US));
    }
  };
  sc_start(sc_time(20, SC_US));
  CHECK(dwords_at_wait == kFifo / 4);
  // Reads are serial (one fetcher): the first at 0, the second once the first's data arrived.
  REQUIRE(b.reads.size() == 4);
  CHECK(b.reads[0].addr == kMem + 0x1000);
  CHECK(b.reads[0].len == 64);
  CHECK(b.reads[0].at == SC_ZERO_TIME);
  CHECK(b.reads[1].addr == kMem + 0x1040);
  CHECK(b.reads[1].at == read_time(64));
  CHECK(b.reads[2].at == sc_time(2, SC_US));  // not at 1 us: only 32 B were free then
  CHECK(b.reads[2].len == 64);
  CHECK(b.reads[3].len == 8);  // what is left up to the write pointer
  REQUIRE(got.size() == 50);
  for (uint32_t i = 0; i < 50; ++i) CHECK(got[i] == i);  // in ring order
  CHECK(b.fetch.drained());
}

TEST_CASE("Ring fetcher: a fetch stops at the ring's end and at a page's end", "[H2][engine]") {
  // A 256 B ring 48 B before a page boundary, read pointer 224, 96 B to fetch: 32 B to the ring's end;
  // then from the ring's start a whole fetch of 64 B would cross the page: 48 B, then the last 16 B.
  const uint64_t base = kMem + 0x1000 - 48;
  FetchBench b("bench", base, 256);
  b.body = [](FetchBench& x) {
    x.q.rptr = 224;
    x.q.wptr = 224 + 96;
    x.fetch.start(&x.q);
    wait(sc_time(2, SC_US));
  };
  sc_start(sc_time(5, SC_US));
  REQUIRE(b.reads.size() == 3);
  CHECK(b.reads[0].addr == base + 224);
  CHECK(b.reads[0].len == 32);  // to the ring's end
  CHECK(b.reads[1].addr == base);
  CHECK(b.reads[1].len == 48);  // to the page's end
  CHECK(b.reads[2].addr == kMem + 0x1000);
  CHECK(b.reads[2].len == 16);
  CHECK(b.reads[1].at == read_time(32));
  CHECK(b.reads[2].at == read_time(32) + read_time(48));
  CHECK(b.fetch.dwords() == 96 / 4);
  CHECK(b.fetch.front() == 224 / 4);  // the ring's dword at the read pointer
}

TEST_CASE("Ring fetcher: a stop drops the fetch in flight and a faulting fetch wakes the executor with no data",
          "[H2][engine]") {
  FetchBench b("bench", kMem + 0x2000, 4096);
  size_t after_stop = 99;
  bool woken = false;
  sc_time woken_at;
  b.body = [&](FetchBench& x) {
    x.q.wptr = 64;
    x.fetch.start(&x.q);
    wait(sc_time(10, SC_NS));  // the read is in flight (90 ns)
    x.fetch.stop();
    wait(sc_time(1, SC_US));
    after_stop = x.fetch.dwords();
    x.fault_page = (kMem + 0x2000) / 4096;
    x.fetch.start(&x.q);
    wait(x.fetch.data_event());
    woken = true;
    woken_at = sc_time_stamp();
  };
  sc_start(sc_time(5, SC_US));
  CHECK(after_stop == 0);  // the bytes that arrived after the stop were dropped
  CHECK(b.reads.size() == 1);
  CHECK(b.faults == 1);
  CHECK(woken);
  CHECK(woken_at == sc_time(1010, SC_NS));  // at once (a delta after the fault), no read
  CHECK(b.fetch.dwords() == 0);
}
