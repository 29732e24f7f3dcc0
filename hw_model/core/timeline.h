// A resource's future reservations (a memory port): each request takes the first free gap of its
// length at or after its arrival, so a request that arrives earlier is never queued behind one that was
// issued earlier but arrives later. Intervals that ended before `now` are dropped as they pass.
//
// Host speed: the intervals sit in one sorted vector (start order, never overlapping) whose passed
// front is skipped by an index and compacted now and then. Requests mostly arrive in order, so a
// reservation appends; the hot path allocates nothing (a std::map cost two heap operations per
// reservation, a tenth of a fence signal's host time).
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <systemc>

namespace gpumodel {

class Timeline {
 public:
  // Reserves `dur` at the earliest start >= arrival; returns the start.
  sc_core::sc_time reserve(const sc_core::sc_time& arrival, const sc_core::sc_time& dur) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    while (head_ < busy_.size() && busy_[head_].second <= now) ++head_;
    if (head_ == busy_.size()) {
      busy_.clear();
      head_ = 0;
    } else if (head_ >= 64 && head_ * 2 >= busy_.size()) {  // compact: amortised O(1) per interval
      busy_.erase(busy_.begin(), busy_.begin() + std::ptrdiff_t(head_));
      head_ = 0;
    }
    uint64_t start = arrival.value();
    const uint64_t len = dur.value();
    // The first interval that starts after `start` (as std::map::upper_bound on the start).
    auto it = std::upper_bound(busy_.begin() + std::ptrdiff_t(head_), busy_.end(), start,
                               [](uint64_t s, const Interval& iv) { return s < iv.first; });
    if (it != busy_.begin() + std::ptrdiff_t(head_)) {  // one that starts before us may still cover our start
      const auto prev = std::prev(it);
      if (prev->second > start) start = prev->second;
    }
    while (it != busy_.end() && it->first < start + len) {  // does not fit before the next: go after it
      if (it->second > start) start = it->second;
      ++it;
    }
    if (len) busy_.insert(it, Interval{start, start + len});  // `it`: the first interval after the gap
    return sc_core::sc_time::from_value(start);
  }

 private:
  using Interval = std::pair<uint64_t, uint64_t>;  // start, end, in kernel time units
  std::vector<Interval> busy_;
  size_t head_ = 0;  // busy_[0, head_) ended before the last request
};

}  // namespace gpumodel
