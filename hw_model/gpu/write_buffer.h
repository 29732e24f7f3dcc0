// An engine's write buffer: posted writes (already translated, up to 8 bytes) wait `hold` in the engine
// before they leave for the fabric, in order. A write the path refuses for posted-write flow control
// (bus.h, PostedFlowControl) stays at the head until the path grants its turn. A flush request taken
// at some instant completes when every write that entered before it has left; its time is when they
// are all visible (the CMP's barrier, F7, and the engine's own BARRIER and FENCE).
//
// The writes leave from a thread, not a method: b_transport may call wait (IEEE 1666-2011, 11.1.1.4 b),
// so whatever target sits behind the fabric may synchronise.
//
// Ports: none; `issue` is the engine's bus (a posted write under flow control, false: refused for now).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include <systemc>

#include "hw_model/core/bus.h"

namespace gpumodel {

class WriteBuffer : public sc_core::sc_module {
 public:
  // Sends one write; false when the path refused it (nothing sent; `fc.grant` is notified later).
  using Issue = std::function<bool(uint64_t addr, const void* src, unsigned len, PostedFlowControl& fc,
                                   sc_core::sc_time& visible)>;
  // Called as each write leaves, with its visibility time.
  using Left = std::function<void(uint64_t addr, const sc_core::sc_time& visible)>;

  WriteBuffer(sc_core::sc_module_name name, const sc_core::sc_time& hold, Issue issue, Left left = nullptr);

  static constexpr unsigned kMaxBytes = 8;
  // A write of `len` <= kMaxBytes bytes at physical `addr`, entering `offset` after now.
  void push(uint64_t addr, const void* src, unsigned len, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME);

  struct Flush {
    uint64_t seq = 0;                                  // the first `seq` writes that entered the buffer
    sc_core::sc_time visible = sc_core::SC_ZERO_TIME;  // when all of them are visible (once done)
    bool done = false;
  };
  // Snapshots the writes entered so far into `f`; done at once if they have all left, else when the
  // last of them leaves (flush_event() is notified). `f` must live until done.
  void request_flush(Flush& f);
  const sc_core::sc_event& flush_event() const { return flush_ev_; }
  // From a thread: returns once the writes entered so far have left (not yet visible); their
  // visibility time is then visible().
  void wait_flushed();
  void wait_empty();
  bool empty() const { return wb_.empty(); }
  // Called by the drain when the buffer has just become empty (its last write's visibility known), before
  // wait_empty()'s waiters wake: lets the owner finish a barrier without waking a thread first.
  std::function<void()> on_empty;
  // When the last write that left becomes visible.
  sc_core::sc_time visible() const { return visible_; }
  uint64_t entered() const { return entered_; }
  uint64_t left() const { return left_; }

 private:
  struct Buffered {
    sc_core::sc_time leave_at;
    uint64_t addr;
    unsigned len;
    unsigned char data[kMaxBytes];
  };
  void drain_thread();  // SC_THREAD (static sensitivity ev_)
  void drain();         // sends every write due by now
  const sc_core::sc_time hold_;
  Issue issue_;
  Left left_cb_;
  std::deque<Buffered> wb_;
  sc_core::sc_event ev_, empty_ev_, flush_ev_;
  PostedFlowControl fc_;  // the buffer's flow-control identity: its head waits for the link's grant
  uint64_t entered_ = 0, left_ = 0;
  sc_core::sc_time visible_ = sc_core::SC_ZERO_TIME;
  std::vector<Flush*> flushes_;  // waiting for writes still in the buffer
};

}  // namespace gpumodel
