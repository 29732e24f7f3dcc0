// The engine's DMA alone (hw_model/gpu/dma_engine.h) against system memory, with a stub translation:
// GPU VA = physical address + kVaOffset in 4 KiB pages, one page that faults on demand. Chunks end at
// chunk-size boundaries of the source; the data arrives whole; the walkers translate ahead of the tags
// (and not at all with no look-ahead); a fault drops the rest of the copy; the write's visibility is
// reported; no more tags than configured are in flight.
#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "hw_model/gpu/dma_engine.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

namespace {

constexpr uint64_t kVaOffset = 0x10'0000'0000ull;  // GPU VA = PA + this
constexpr uint64_t kSrc = kMem + 0x10000 + 100;    // not chunk-aligned: the first chunk is short
constexpr uint64_t kDst = kMem + 0x80000;
const sc_time kDmaHold(100, SC_NS);

struct DmaBench : sc_module {
  tlm_utils::simple_initiator_socket<DmaBench> isock;
  BusMaster<DmaBench> bus;
  ParamSet ps;
  Memory mem;
  uint64_t fault_page = ~0ull;              // a VA page whose translation faults
  std::vector<uint64_t> reads, prefetched;  // physical chunk-read addresses; VAs the walkers translated
  std::vector<std::pair<uint64_t, sc_time>> wrote;
  unsigned in_flight = 0, max_in_flight = 0;  // reads outstanding at once (each tag has one at most)
  uint64_t faults = 0;
  unsigned started = 0;                               // chunks whose source a tag has begun translating
  std::vector<std::pair<uint64_t, unsigned>> walked;  // each prefetched VA, with `started` then
  DmaEngine dma;
  std::function<void()> body;

  DmaBench(unsigned chunk, unsigned outstanding, uint64_t ahead)
      : sc_module("bench"),
        isock("isock"),
        bus(isock),
        ps(sysmem_params()),
        mem("sysmem", ps, "sysmem.", kMem),
        dma("dma", DmaEngine::Config{chunk, outstanding, ahead, kDmaHold},
            DmaEngine::Port{[this](uint64_t, uint64_t va, GpuMmu::Result& r, const char* what) {
                              if (!std::strcmp(what, "DMA read")) ++started;
                              r = map(va);
                              if (!r.ok) ++faults;
                              return r.ok;
                            },
                            [this](uint64_t, uint64_t va) {
                              prefetched.push_back(va);
                              walked.emplace_back(va, started);
                              return map(va);
                            },
                            [this](uint64_t pa, void* dst, unsigned len, ZeroHint* zh) {
                              reads.push_back(pa);
                              max_in_flight = std::max(max_in_flight, ++in_flight);
                              bus.read(pa, dst, len, SC_ZERO_TIME, zh);
                              --in_flight;
                            },
                            [this](uint64_t pa, const void* src, unsigned len, PostedFlowControl& fc, ZeroHint* zh) {
                              return bus.post_held(pa, src, len, fc, zh);
                            },
                            [this](uint64_t pa, const sc_time& vis) { wrote.emplace_back(pa, vis); }}) {
    isock.bind(mem.tsock);
    SC_HAS_PROCESS(DmaBench);
    SC_THREAD(run);
  }
  GpuMmu::Result map(uint64_t va) const {
    GpuMmu::Result r;
    r.ok = va / pt::kSmallPage != fault_page;
    r.addr = va - kVaOffset;
    r.page_left = pt::kSmallPage - va % pt::kSmallPage;
    r.system = true;
    return r;
  }
  void run() {
    if (body) body();
  }
  // Copies and returns when the DMA is idle again.
  void copy(uint64_t src, uint64_t dst, uint64_t bytes) {
    dma.start(0, src + kVaOffset, dst + kVaOffset, bytes);
    while (dma.busy()) wait(dma.done_event());
    dma.stop_lookahead();
  }
};

std::vector<unsigned char> dma_pattern(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + 3);
  return v;
}

}  // namespace

TEST_CASE("DMA: chunks end at source chunk boundaries and the data arrives whole", "[engine][H1]") {
  DmaBench b(4096, 4, 262144);
  const uint64_t n = 10000;
  const auto data = dma_pattern(n);
  b.mem.poke(kSrc, data.data(), unsigned(n));
  sc_time done;
  b.body = [&] {
    b.copy(kSrc, kDst, n);
    done = sc_time_stamp();
  };
  sc_start(sc_time(1, SC_MS));
  // 100 bytes into a chunk: 3996, then 4096, then the 1908 left.
  REQUIRE(b.reads.size() == 3);
  std::vector<uint64_t> reads = b.reads;
  std::sort(reads.begin(), reads.end());
  CHECK(reads[0] == kSrc);
  CHECK(reads[1] == kSrc + 3996);
  CHECK(reads[2] == kSrc + 3996 + 4096);
  std::vector<unsigned char> got(n);
  b.mem.peek(kDst, got.data(), unsigned(n));
  CHECK(got == data);
  CHECK_FALSE(b.dma.busy());
  // The copy is done when its last write is visible; the DMA's visibility is the latest write's.
  sc_time latest = SC_ZERO_TIME;
  for (auto& [pa, vis] : b.wrote) latest = std::max(latest, vis);
  CHECK(b.dma.visible() == latest);
  CHECK(done == latest);
  CHECK(b.faults == 0);
}

TEST_CASE("DMA: no more tags in flight than configured", "[engine][H1]") {
  DmaBench b(1024, 2, 0);
  b.body = [&] { b.copy(kMem, kDst, 16 * 1024); };
  sc_start(sc_time(1, SC_MS));
  CHECK(b.reads.size() == 16);
  CHECK(b.max_in_flight == 2);
}

TEST_CASE("DMA: the walkers translate every page ahead of the tags, none without look-ahead", "[engine][H1]") {
  {
    DmaBench b(4096, 4, 1 << 20);
    b.body = [&] { b.copy(kMem, kDst, 8 * 4096); };
    sc_start(sc_time(1, SC_MS));
    std::set<uint64_t> pages;
    for (uint64_t va : b.prefetched) pages.insert((va - kVaOffset) / 4096);
    for (uint64_t p = 0; p < 8; ++p) {
      CHECK(pages.count(kMem / 4096 + p) == 1);  // source
      CHECK(pages.count(kDst / 4096 + p) == 1);  // destination
    }
    CHECK(b.prefetched.size() == 16);  // each page once
  }
}

TEST_CASE("DMA: without look-ahead the walkers never run ahead of the tags", "[engine][H1]") {
  DmaBench b(4096, 4, 0);
  b.body = [&] { b.copy(kMem, kDst, 8 * 4096); };
  sc_start(sc_time(1, SC_MS));
  CHECK(b.reads.size() == 8);
  REQUIRE_FALSE(b.walked.empty());
  for (auto& [va, started] : b.walked) {
    const uint64_t pa = va - kVaOffset, off = pa >= kDst ? pa - kDst : pa - kMem;
    CHECK(off < uint64_t(started) * 4096);  // only pages of chunks a tag has already taken
  }
}

TEST_CASE("DMA: a translation fault drops the rest of the copy", "[engine][H1]") {
  DmaBench b(4096, 1, 0);  // one tag: the chunks go in order
  const auto data = dma_pattern(4 * 4096);
  b.mem.poke(kMem, data.data(), unsigned(data.size()));
  b.fault_page = (kDst + 2 * 4096 + kVaOffset) / 4096;  // the third destination page
  b.body = [&] { b.copy(kMem, kDst, 4 * 4096); };
  sc_start(sc_time(1, SC_MS));
  CHECK(b.faults == 1);
  CHECK(b.reads.size() == 3);  // the fourth chunk was never started
  CHECK_FALSE(b.dma.busy());
  std::vector<unsigned char> got(4 * 4096);
  b.mem.peek(kDst, got.data(), unsigned(got.size()));
  CHECK(std::equal(got.begin(), got.begin() + 2 * 4096, data.begin()));
  CHECK(std::all_of(got.begin() + 2 * 4096, got.end(), [](unsigned char c) { return c == 0; }));
}
