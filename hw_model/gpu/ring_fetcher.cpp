#include "hw_model/gpu/ring_fetcher.h"

#include <algorithm>
#include <cstring>

namespace gpumodel {

using namespace sc_core;

RingFetcher::RingFetcher(sc_module_name name, unsigned fetch_bytes, unsigned fifo_bytes, Port port)
    : sc_module(name), fetch_bytes_(fetch_bytes), fifo_bytes_(fifo_bytes), port_(std::move(port)) {
  buf_.resize(fetch_bytes_);
  SC_HAS_PROCESS(RingFetcher);
  SC_THREAD(fetcher);
}

void RingFetcher::start(const HwQueue* q) {
  q_ = q;
  fetch_ptr_ = q->rptr;
  fifo_.clear();
  ++gen_;
  fetch_ev_.notify(SC_ZERO_TIME);
}

void RingFetcher::stop() {
  q_ = nullptr;
  ++gen_;
  fifo_.clear();
}

void RingFetcher::kick(const HwQueue& q) {
  if (&q == q_) fetch_ev_.notify(SC_ZERO_TIME);
}

void RingFetcher::take(uint32_t* dst, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    dst[i] = fifo_.front();
    fifo_.pop_front();
  }
  if (fifo_bytes_ - fifo_.size() * 4 >= fetch_bytes_) fetch_ev_.notify(SC_ZERO_TIME);  // room for a fetch
}

void RingFetcher::fetcher() {
  for (;;) {
    // Fetch whole chunks: wait until a full fetch fits in the FIFO (or all that is left does).
    const uint64_t space = fifo_bytes_ - std::min<uint64_t>(fifo_bytes_, fifo_.size() * 4);
    if (!q_ || fetch_ptr_ >= q_->wptr || space < std::min<uint64_t>(fetch_bytes_, q_->wptr - fetch_ptr_)) {
      wait(fetch_ev_);
      continue;
    }
    const HwQueue* q = q_;
    const unsigned g = gen_;
    const uint64_t off = fetch_ptr_ & (q->ring_size - 1);
    uint64_t n =
        std::min<uint64_t>({q->wptr - fetch_ptr_, q->ring_size - off, fetch_bytes_, fifo_bytes_ - fifo_.size() * 4});
    n &= ~uint64_t(3);
    if (n == 0) {
      wait(fetch_ev_);
      continue;
    }
    // The ring is in the queue's own space (a packet's SET_PAGE_TABLE changes the context's, not the ring's).
    GpuMmu::Result r;
    if (!port_.translate(q->pt_root, q->ring_base + off, r)) {
      data_ev_.notify(SC_ZERO_TIME);  // the executor stops the queue
      wait(fetch_ev_);
      continue;
    }
    if (g != gen_) continue;
    n = std::min<uint64_t>(n, r.page_left);  // a fetch does not cross a page
    port_.read(r.addr, buf_.data(), unsigned(n));
    if (g != gen_) continue;  // the engine switched queues meanwhile: drop the stale bytes
    for (uint64_t i = 0; i < n; i += 4) {
      uint32_t dw;
      std::memcpy(&dw, buf_.data() + i, 4);
      fifo_.push_back(dw);
    }
    fetch_ptr_ += n;
    data_ev_.notify(SC_ZERO_TIME);
  }
}

}  // namespace gpumodel
