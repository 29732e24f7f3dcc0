// An engine's front end: it prefetches the ring of the HW queue the engine runs into a FIFO of dwords
// through TLM reads, overlapping with execution. A fetch is whole: it waits until a full
// node.fetch_bytes fits in the FIFO (node.fifo_bytes), or all that is left up to the write pointer does,
// and never crosses a page or the ring's end. A queue change (start, stop) discards a fetch in flight.
// A fetch whose translation faults stops fetching and wakes the executor (the fault is the port's to
// record; the executor stops the queue).
//
// The executor takes whole packets from the front (decode_header says how many dwords); the fetcher
// fetches again as soon as a whole fetch fits. Ports: `Port`, the engine's translation and bus read.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include <systemc>

#include "hw_model/gpu/hw_queue.h"
#include "hw_model/gpu/mmu.h"

namespace gpumodel {

class RingFetcher : public sc_core::sc_module {
 public:
  struct Port {
    // The ring is in the queue's own space (q.pt_root): false, a page fault.
    std::function<bool(uint64_t root, uint64_t va, GpuMmu::Result& r)> translate;
    std::function<void(uint64_t pa, void* dst, unsigned len)> read;  // a blocking TLM read
  };
  RingFetcher(sc_core::sc_module_name name, unsigned fetch_bytes, unsigned fifo_bytes, Port port);

  void start(const HwQueue* q);  // fetch `q` from its read pointer, the FIFO empty
  void stop();                   // no queue: the FIFO empty, a fetch in flight dropped
  void kick(const HwQueue& q);   // `q`'s write pointer moved (a doorbell)

  size_t dwords() const { return fifo_.size(); }
  uint32_t front() const { return fifo_.front(); }
  // Takes `n` dwords from the front (n <= dwords()); fetching resumes once a whole fetch fits.
  void take(uint32_t* dst, uint32_t n);
  // Everything up to the queue's write pointer has been fetched.
  bool drained() const { return q_ && fetch_ptr_ >= q_->wptr; }
  // Notified when dwords arrive, and when a fetch faulted.
  const sc_core::sc_event& data_event() const { return data_ev_; }

 private:
  void fetcher();  // SC_THREAD
  const unsigned fetch_bytes_, fifo_bytes_;
  Port port_;
  const HwQueue* q_ = nullptr;
  uint64_t fetch_ptr_ = 0;
  unsigned gen_ = 0;  // bumps when the queue changes, so a fetch in flight is discarded
  std::deque<uint32_t> fifo_;
  std::vector<unsigned char> buf_;  // the read buffer
  sc_core::sc_event fetch_ev_, data_ev_;
};

}  // namespace gpumodel
