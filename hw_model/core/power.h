// Power-state clocks: how long a component spent in each of its power states, for the energy model
// (platform/energy.h). A component sets its state when it changes (event-driven: no sampling); the time
// in a state is read at any instant, the current stretch included, without changing anything, so the
// energy can be read mid-run (per frame) by a probe that does not drive the model.
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

namespace gpumodel {

class StateClock {
 public:
  explicit StateClock(size_t states, size_t initial = 0) : acc_(states), entries_(states), state_(initial) {}

  // Enters `s` at `now` (no-op if already there). `now` never goes back: a change dated before the
  // current stretch began is taken at the stretch's start.
  void set(size_t s, const sc_core::sc_time& now) {
    if (s == state_) return;
    const sc_core::sc_time at = now > since_ ? now : since_;
    acc_[state_] += at - since_;
    since_ = at;
    state_ = s;
    ++entries_[s];
  }
  size_t state() const { return state_; }
  const sc_core::sc_time& since() const { return since_; }
  // Time in `s` up to `now`, the current stretch included.
  sc_core::sc_time time_in(size_t s, const sc_core::sc_time& now) const {
    return acc_[s] + (s == state_ && now > since_ ? now - since_ : sc_core::SC_ZERO_TIME);
  }
  uint64_t entries(size_t s) const { return entries_[s]; }
  size_t states() const { return acc_.size(); }

 private:
  std::vector<sc_core::sc_time> acc_;
  std::vector<uint64_t> entries_;
  size_t state_;
  sc_core::sc_time since_ = sc_core::SC_ZERO_TIME;
};

}  // namespace gpumodel
