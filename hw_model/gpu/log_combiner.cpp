#include "hw_model/gpu/log_combiner.h"

#include <cstring>

namespace gpumodel {

using namespace sc_core;

LogCombiner::LogCombiner(sc_module_name name, const sc_time& hold, Post post, Left left)
    : sc_module(name), hold_(hold), post_(std::move(post)), left_(std::move(left)) {
  SC_HAS_PROCESS(LogCombiner);
  SC_THREAD(writer);
}

void LogCombiner::push(uint64_t addr, const void* entry, const sc_time& offset) {
  const sc_time enter = sc_time_stamp() + offset;
  Entry e{enter, enter + hold_, addr, {}};
  std::memcpy(e.data, entry, sizeof e.data);
  // The writer wakes once, when the entry is due: an idle writer at its leave time; a busy one reaches it
  // in order (entries leave first in, first out).
  if (wc_.empty()) ev_.notify(offset + hold_);
  wc_.push_back(e);
}

bool LogCombiner::entered() const { return !wc_.empty() && wc_.front().enter_at <= sc_time_stamp(); }

void LogCombiner::writer() {
  for (;;) {
    const sc_time now = sc_time_stamp();
    if (!entered()) {  // empty, or its entry is still to enter (pushed with an offset): nothing to flush
      if (flush_waiting_ > 0) empty_ev_.notify(SC_ZERO_TIME);
      if (wc_.empty())
        wait(ev_);
      else
        wait(wc_.front().leave_at - now, ev_);
      continue;
    }
    if (!flushing_ && wc_.front().leave_at > now) {
      wait(wc_.front().leave_at - now, ev_);
      continue;
    }
    const Entry e = wc_.front();
    wc_.pop_front();
    const sc_time vis = post_(e.addr, e.data, sizeof e.data);
    if (vis > visible_) visible_ = vis;
    if (left_) left_(e.addr, vis);
    if (!entered()) flushing_ = false;
  }
}

void LogCombiner::flush() {
  // Every entry in the buffer now, and those entering while it empties, as one burst.
  if (entered()) {
    flushing_ = true;
    ev_.notify(SC_ZERO_TIME);
    ++flush_waiting_;
    while (entered()) wait(empty_ev_);
    --flush_waiting_;
  }
  if (visible_ > sc_time_stamp()) wait(visible_ - sc_time_stamp());
}

}  // namespace gpumodel
