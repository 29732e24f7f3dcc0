// One translating bus master, the engines' and the CMP's: a GPU MMU (its TLB, page-walk cache and
// walker, whose reads go out through the same socket) in front of a TLM-2.0 initiator. Accesses name a
// GPU VA in a space (a page-table root). A page fault is counted, its VA kept, and handed to the
// owner's handler: an engine stops the queue and raises DMA_FAULTED; the CMP's firmware drops the access
// (a read returns 0, a write is not sent). A write (an access whose `what` names a write) to a read-only page
// is a protection fault, handled as a page fault.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>

#include "hw_model/core/bus.h"
#include "hw_model/core/params.h"
#include "hw_model/gpu/mmu.h"

namespace gpumodel {

template <typename Module>
class TranslatingMaster {
 public:
  // `stop`: the faulting access asks its queue to stop (an engine's, see Node); the CMP ignores it.
  using FaultHandler = std::function<void(uint64_t root, uint64_t va, const char* what, bool stop)>;

  TranslatingMaster(tlm_utils::simple_initiator_socket<Module>& s, const ParamSet& ps, FaultHandler on_fault = {})
      : bus_(s),
        mmu_(ps, [this](uint64_t a, void* d, unsigned n) { bus_.read(a, d, n); }),
        fault_(std::move(on_fault)) {}

  BusMaster<Module>& bus() { return bus_; }
  GpuMmu& mmu() { return mmu_; }
  const GpuMmu& mmu() const { return mmu_; }
  // Observer (monitors only, it must not drive the model): every translation, with its result.
  std::function<void(uint64_t root, uint64_t va, uint64_t addr, bool ok)> on_translate;

  // May block for a walk. False: a page fault (counted and handled).
  bool translate(uint64_t root, uint64_t va, GpuMmu::Result& r, const char* what, bool stop = true) {
    r = mmu_.translate(root, va);
    if (r.ok && r.read_only && std::strstr(what, "write")) r.ok = false;  // a protection fault
    if (on_translate) on_translate(root, va, r.addr, r.ok);
    if (r.ok) return true;
    ++page_faults_;
    fault_va_ = va;
    if (fault_) fault_(root, va, what, stop);
    return false;
  }
  // A 64-bit read (ok false, 0: a page fault); `offset` as BusMaster::read.
  uint64_t read64(uint64_t root, uint64_t va, bool& ok, const sc_core::sc_time& offset = sc_core::SC_ZERO_TIME) {
    GpuMmu::Result r;
    ok = translate(root, va, r, "read");
    return ok ? bus_.read64(r.addr, offset) : 0;
  }
  // A posted write straight to the fabric (no write buffer): its visibility time; a fault: now.
  sc_core::sc_time post(uint64_t root, uint64_t va, const void* src, unsigned len) {
    GpuMmu::Result r;
    if (!translate(root, va, r, "write")) return sc_core::sc_time_stamp();
    return bus_.post(r.addr, src, len);
  }

  uint64_t page_faults() const { return page_faults_; }
  uint64_t last_fault_va() const { return fault_va_; }

 private:
  BusMaster<Module> bus_;
  GpuMmu mmu_;
  FaultHandler fault_;
  uint64_t page_faults_ = 0, fault_va_ = 0;
};

}  // namespace gpumodel
