// An engine's write-combining buffer for native fence log entries (48 B, a partial cache line): an
// entry waits `hold` for the rest of its line, unless a flush (a full barrier, or the OS's
// DxgkDdiUpdateNativeFenceLogs) pushes the buffer out; then it leaves as one posted write. Entries
// leave in order, from a thread (b_transport may call wait: IEEE 1666-2011, 11.1.1.4 b).
//
// Ports: none; `post` is the engine's bus.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>

#include <systemc>

namespace gpumodel {

class LogCombiner : public sc_core::sc_module {
 public:
  static constexpr unsigned kEntryBytes = 48;
  // A posted write; returns its visibility time.
  using Post = std::function<sc_core::sc_time(uint64_t addr, const void* src, unsigned len)>;
  using Left = std::function<void(uint64_t addr, const sc_core::sc_time& visible)>;  // as each entry leaves

  LogCombiner(sc_core::sc_module_name name, const sc_core::sc_time& hold, Post post, Left left = nullptr);

  // An entry of kEntryBytes at physical `addr`, entering `offset` after now (not in the buffer before).
  void push(uint64_t addr, const void* entry, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME);
  // From a thread: pushes every entry in the buffer out now (and those entering while it empties) and
  // returns once all of them are visible; an entry still to enter is not pushed.
  void flush();
  bool empty() const { return wc_.empty(); }  // counting entries still to enter
  // When the last entry that left becomes visible.
  sc_core::sc_time visible() const { return visible_; }

 private:
  struct Entry {
    sc_core::sc_time enter_at, leave_at;  // enter_at: pushed with an offset, it is in the buffer from then
    uint64_t addr;
    unsigned char data[kEntryBytes];
  };
  void writer();         // SC_THREAD
  bool entered() const;  // an entry is in the buffer (its enter time has come)
  const sc_core::sc_time hold_;
  Post post_;
  Left left_;
  std::deque<Entry> wc_;
  sc_core::sc_event ev_, empty_ev_;
  sc_core::sc_time visible_ = sc_core::SC_ZERO_TIME;
  bool flushing_ = false;
  int flush_waiting_ = 0;  // flush() calls waiting for the buffer to empty: the writer notifies empty_ev_
};

}  // namespace gpumodel
