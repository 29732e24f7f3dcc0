// A resource's future reservations (a memory port): each request takes the first free gap of its
// length at or after its arrival, so a request that arrives earlier is never queued behind one that was
// issued earlier but arrives later. Intervals that ended before `now` are dropped as they pass.
#pragma once
#include <cstdint>
#include <iterator>
#include <map>

#include <systemc>

namespace gpumodel {

class Timeline {
 public:
  // Reserves `dur` at the earliest start >= arrival; returns the start.
  sc_core::sc_time reserve(const sc_core::sc_time& arrival, const sc_core::sc_time& dur) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    while (!busy_.empty() && busy_.begin()->second <= now) busy_.erase(busy_.begin());
    uint64_t start = arrival.value();
    const uint64_t len = dur.value();
    auto it = busy_.upper_bound(start);
    if (it != busy_.begin()) {  // an interval that starts before us may still cover our start
      auto prev = std::prev(it);
      if (prev->second > start) start = prev->second;
    }
    while (it != busy_.end() && it->first < start + len) {  // does not fit before the next: go after it
      if (it->second > start) start = it->second;
      ++it;
    }
    if (len) busy_.emplace(start, start + len);
    return sc_core::sc_time::from_value(start);
  }

 private:
  std::map<uint64_t, uint64_t> busy_;  // start -> end, in kernel time units
};

}  // namespace gpumodel
