#include "hw_model/gpu/write_buffer.h"

#include <cstring>

namespace gpumodel {

using namespace sc_core;

WriteBuffer::WriteBuffer(sc_module_name name, const sc_time& hold, Issue issue, Left left)
    : sc_module(name), hold_(hold), issue_(std::move(issue)), left_cb_(std::move(left)) {
  fc_.grant = &ev_;
  SC_HAS_PROCESS(WriteBuffer);
  SC_THREAD(drain_thread);
  sensitive << ev_;
  dont_initialize();
}

void WriteBuffer::push(uint64_t addr, const void* src, unsigned len, const sc_time& offset) {
  if (len > kMaxBytes) SC_REPORT_FATAL("gpumodel/node", "buffered write wider than 8 bytes");
  Buffered b{sc_time_stamp() + offset + hold_, addr, len, {}};
  std::memcpy(b.data, src, len);
  if (wb_.empty()) ev_.notify(offset + hold_);
  wb_.push_back(b);
  ++entered_;
}

void WriteBuffer::drain_thread() {
  for (;;) {
    drain();
    wait();
  }
}

void WriteBuffer::drain() {
  while (!wb_.empty() && wb_.front().leave_at <= sc_time_stamp()) {
    const Buffered& b = wb_.front();
    sc_time vis;
    // A full link egress keeps the write here, in order, until the link grants its turn (ev_).
    if (!issue_(b.addr, b.data, b.len, fc_, vis)) return;
    if (vis > visible_) visible_ = vis;
    if (left_cb_) left_cb_(b.addr, vis);
    wb_.pop_front();
    ++left_;
    if (!flushes_.empty()) {
      // Writes leave in order: when the seq-th has left, the running maximum is exactly theirs.
      for (size_t i = 0; i < flushes_.size();) {
        Flush* f = flushes_[i];
        if (f->seq > left_) {
          ++i;
          continue;
        }
        f->done = true;
        f->visible = visible_;
        flushes_[i] = flushes_.back();
        flushes_.pop_back();
        flush_ev_.notify(SC_ZERO_TIME);
      }
    }
  }
  if (wb_.empty()) {
    if (on_empty) on_empty();
    empty_ev_.notify(SC_ZERO_TIME);
  } else
    ev_.notify(wb_.front().leave_at - sc_time_stamp());
}

void WriteBuffer::request_flush(Flush& f) {
  f.seq = entered_;
  f.done = f.seq <= left_;
  f.visible = visible_;  // exact when done: nothing later has left the buffer
  if (!f.done) flushes_.push_back(&f);
}

void WriteBuffer::wait_flushed() {
  Flush f;
  request_flush(f);
  while (!f.done) wait(flush_ev_);
}

void WriteBuffer::wait_empty() {
  while (!wb_.empty()) wait(empty_ev_);
}

}  // namespace gpumodel
