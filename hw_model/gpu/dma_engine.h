// An engine's DMA: serves COPY with a fixed number of outstanding chunk transfers (tags), each a
// thread, since a memory read blocks its caller until the data arrives. A copy is cut into chunks that
// end at chunk-size boundaries of the source, as a page-walking DMA does; each tag reads its chunk,
// holds it for the write buffer's time, then posts it under posted-write flow control (its buffer is
// free once the receiver has taken the data). Translation runs ahead of the transfers: one walker per
// side (source, destination) translates the pages of the copy up to `translate_ahead` bytes beyond the
// next chunk a tag takes, so the tags hit the TLB. A translation fault drops the rest of the copy.
//
// Ports: none of its own; the engine lends its bus, TLB and fault recording through `Port`.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "hw_model/core/bus.h"
#include "hw_model/gpu/mmu.h"

namespace gpumodel {

class DmaEngine : public sc_core::sc_module {
 public:
  struct Port {
    // A tag's translation; false: a page fault, which the engine records and reports.
    std::function<bool(uint64_t root, uint64_t va, GpuMmu::Result& r, const char* what)> translate;
    // A walker's: a prefetch whose fault is not reported (the tag that reaches the page reports it).
    std::function<GpuMmu::Result(uint64_t root, uint64_t va)> prefetch;
    std::function<void(uint64_t pa, void* dst, unsigned len, ZeroHint* zh)> read;
    // Posted under flow control, waiting while the path is full; returns the visibility time.
    std::function<sc_core::sc_time(uint64_t pa, const void* src, unsigned len, PostedFlowControl& fc, ZeroHint* zh)>
        post_held;
    std::function<void(uint64_t pa, const sc_core::sc_time& visible)> wrote;  // each write, once sent
  };
  struct Config {
    unsigned chunk_bytes, outstanding;
    uint64_t translate_ahead_bytes;
    sc_core::sc_time hold;  // the write buffer's time, which a chunk's data spends in the engine too
  };
  DmaEngine(sc_core::sc_module_name name, const Config& cfg, Port port);

  // Queues the chunks of a copy of `bytes` from `src` to `dst` (GPU VAs in `root`) and starts the walkers.
  void start(uint64_t root, uint64_t src, uint64_t dst, uint64_t bytes);
  bool busy() const { return !jobs_.empty() || busy_; }
  void drop_queued() { jobs_.clear(); }  // chunks not started; those in flight finish
  const sc_core::sc_event& done_event() const { return done_ev_; }
  // The copy's translation look-ahead stops (when it completes or is abandoned).
  void stop_lookahead() { ahead_[0].bytes = ahead_[1].bytes = 0; }
  // When the last DMA write becomes visible; the last chunk's read time (a probe).
  sc_core::sc_time visible() const { return visible_; }
  sc_core::sc_time last_read() const { return last_read_; }

 private:
  struct Chunk {
    uint64_t src, dst;  // GPU VAs in root
    unsigned len;
    uint64_t root;
  };
  struct Ahead {
    uint64_t root = 0, va = 0, bytes = 0, next = 0;  // next: the offset of the next page to translate
    sc_core::sc_event ev;
  };
  // A tag's chunk buffer and flow-control identity. Owned here, not by the tag's thread: a thread that
  // never returns never destroys its locals (they would leak at exit).
  struct Tag {
    std::vector<unsigned char> buf;
    ZeroTracker zero;  // how much of buf is known zero (host speed only, see ZeroHint)
    sc_core::sc_event granted;
    PostedFlowControl fc;
  };
  void walker(Ahead& a);
  void tag(Tag& t);

  const Config cfg_;
  Port port_;
  std::deque<Chunk> jobs_;
  Ahead ahead_[2];
  uint64_t taken_ = 0;  // offset of the next chunk a tag takes (this copy)
  unsigned busy_ = 0;
  sc_core::sc_event jobs_ev_, done_ev_;
  std::vector<std::unique_ptr<Tag>> tags_;
  sc_core::sc_time visible_ = sc_core::SC_ZERO_TIME, last_read_ = sc_core::SC_ZERO_TIME;
};

}  // namespace gpumodel
