// Runs actions at future simulated times from one process: how a register with side effects (a
// doorbell) or a sideband wire takes effect at the arrival time of the write that caused it, without a
// process per action. Actions at the same time run in the order they were scheduled. The process is a
// thread because an action may issue a transaction (a register write that ends a frame posts its MSI),
// and b_transport may call wait (IEEE 1666-2011, 11.1.1.4 b).
#pragma once
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include <systemc>

namespace gpumodel {

class Deferred : public sc_core::sc_module {
 public:
  explicit Deferred(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(Deferred);
    SC_THREAD(run);
    sensitive << ev_;
    dont_initialize();
  }
  void at(const sc_core::sc_time& when, std::function<void()> fn) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time t = when < now ? now : when;
    q_.push({t, seq_++, std::move(fn)});
    ev_.notify(q_.top().when - now);
  }
  void after(const sc_core::sc_time& d, std::function<void()> fn) { at(sc_core::sc_time_stamp() + d, std::move(fn)); }

 private:
  struct Item {
    sc_core::sc_time when;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Item& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void run() {
    for (;;) {
      // Time is read per action: one whose transaction waited has moved it.
      while (!q_.empty() && q_.top().when <= sc_core::sc_time_stamp()) {
        auto fn = std::move(const_cast<Item&>(q_.top()).fn);
        q_.pop();
        fn();
      }
      if (!q_.empty()) ev_.notify(q_.top().when - sc_core::sc_time_stamp());
      wait();
    }
  }
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q_;
  sc_core::sc_event ev_;
  uint64_t seq_ = 0;
};

}  // namespace gpumodel
