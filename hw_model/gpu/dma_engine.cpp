#include "hw_model/gpu/dma_engine.h"

#include <algorithm>
#include <string>

namespace gpumodel {

using namespace sc_core;

DmaEngine::DmaEngine(sc_module_name name, const Config& cfg, Port port)
    : sc_module(name), cfg_(cfg), port_(std::move(port)) {
  for (int side = 0; side < 2; ++side)
    sc_spawn([this, side] { walker(ahead_[side]); }, side ? "translate_ahead_dst" : "translate_ahead_src");
  for (unsigned i = 0; i < cfg_.outstanding; ++i) {
    tags_.push_back(std::make_unique<Tag>());
    Tag& t = *tags_.back();
    t.buf.resize(cfg_.chunk_bytes);
    t.zero.zero_bytes = cfg_.chunk_bytes;  // resize value-initialises
    t.fc.grant = &t.granted;
    sc_spawn([this, &t] { tag(t); }, (std::string("dma_tag") + std::to_string(i)).c_str());
  }
}

void DmaEngine::walker(Ahead& a) {
  for (;;) {
    while (a.next >= a.bytes || a.next >= taken_ + cfg_.translate_ahead_bytes) wait(a.ev);
    const GpuMmu::Result r = port_.prefetch(a.root, a.va + a.next);
    a.next += r.ok ? r.page_left : pt::kSmallPage - (a.va + a.next) % pt::kSmallPage;
  }
}

void DmaEngine::start(uint64_t root, uint64_t src, uint64_t dst, uint64_t bytes) {
  taken_ = 0;
  for (int side = 0; side < 2; ++side) {
    Ahead& a = ahead_[side];
    a.root = root;
    a.va = side ? dst : src;
    a.bytes = bytes;
    a.next = 0;
    a.ev.notify(SC_ZERO_TIME);
  }
  while (bytes) {
    const unsigned n = unsigned(std::min<uint64_t>(bytes, cfg_.chunk_bytes - (src % cfg_.chunk_bytes)));
    jobs_.push_back({src, dst, n, root});
    src += n;
    dst += n;
    bytes -= n;
  }
  jobs_ev_.notify(SC_ZERO_TIME);
}

void DmaEngine::tag(Tag& t) {
  std::vector<unsigned char>& buf = t.buf;
  for (;;) {
    while (jobs_.empty()) wait(jobs_ev_);
    const Chunk c = jobs_.front();
    jobs_.pop_front();
    ++busy_;
    taken_ += c.len;
    ahead_[0].ev.notify(SC_ZERO_TIME);
    ahead_[1].ev.notify(SC_ZERO_TIME);
    const sc_time t0 = sc_time_stamp();
    // Translated page by page (a chunk ends at a chunk boundary of the source; the destination may
    // cross a page). A fault drops the rest of the copy; the engine stops the queue.
    bool ok = true;
    GpuMmu::Result r;
    for (unsigned done = 0; ok && done < c.len;) {
      if (!(ok = port_.translate(c.root, c.src + done, r, "DMA read"))) break;
      const unsigned n = unsigned(std::min<uint64_t>(c.len - done, r.page_left));
      if (n == c.len) {
        ZeroHint rz = t.zero.hint(c.len);
        port_.read(r.addr, buf.data(), c.len, &rz);
        t.zero.after_read(rz, c.len);
      } else {
        port_.read(r.addr, buf.data() + done, n, nullptr);
        t.zero.clobbered();
      }
      done += n;
    }
    last_read_ = sc_time_stamp() - t0;
    if (ok) wait(cfg_.hold);  // the chunk's data leaves through the write buffer too
    sc_time vis = sc_time_stamp();
    for (unsigned done = 0; ok && done < c.len;) {
      if (!(ok = port_.translate(c.root, c.dst + done, r, "DMA write"))) break;
      const unsigned n = unsigned(std::min<uint64_t>(c.len - done, r.page_left));
      ZeroHint wz = t.zero.hint(n);
      const sc_time v = port_.post_held(r.addr, buf.data() + done, n, t.fc, done == 0 ? &wz : nullptr);
      if (v > visible_) visible_ = v;
      port_.wrote(r.addr, v);
      vis = max_time(vis, v);
      done += n;
    }
    if (!ok) jobs_.clear();
    // Posted-write flow control: the tag's buffer is free once the receiver has taken the data.
    wait(vis - sc_time_stamp());
    --busy_;
    if (jobs_.empty() && !busy_) done_ev_.notify(SC_ZERO_TIME);
  }
}

}  // namespace gpumodel
