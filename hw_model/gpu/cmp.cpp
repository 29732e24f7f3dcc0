#include "hw_model/gpu/cmp.h"

#include "hw_model/gpu/node.h"

namespace gpumodel {

using namespace sc_core;

void Cmp::declare_params(ParamSet& ps) {
  ps.declare_real("cmp.clock_mhz", 1000, "MHz", 1, 1e5,
                  "A: PARAMETERS.md GPU, CMP clock 1.0 GHz (microcontroller-class scheduler)");
  ps.declare_int("cmp.doorbell_cycles", 64, "cycles", 0, 1 << 24,
                 "A: firmware path doorbell -> run-list update -> node kick, 64 CMP cycles");
  ps.declare_int("cmp.interrupt_cycles", 32, "cycles", 0, 1 << 24,
                 "A: firmware path engine request -> MSI write issued, 32 CMP cycles");
  ps.declare_real("cmp.timeslice_us", 100, "us", 0.001, 1e7,
                  "A: run-list time slice between queues of equal priority on one node");
}

Cmp::Cmp(sc_module_name name, const ParamSet& ps, Vcd& vcd, int queues)
    : sc_module(name),
      isock("isock"),
      bus_(isock),
      deferred_("deferred"),
      vcd_(vcd),
      queues_(size_t(queues)),
      period_(cycles(1, ps.get_real("cmp.clock_mhz"))),
      timeslice_(sc_time(ps.get_real("cmp.timeslice_us"), SC_US)),
      doorbell_cycles_(uint64_t(ps.get_int("cmp.doorbell_cycles"))),
      interrupt_cycles_(uint64_t(ps.get_int("cmp.interrupt_cycles"))) {
  for (int i = 0; i < queues; ++i) queues_[size_t(i)].id = i;
  busy_id_ = vcd_.add_ascii("gpu.cmp.state", "idle");
}

sc_time Cmp::reserve(uint64_t n) {
  const sc_time start = max_time(sc_time_stamp(), busy_until_);
  busy_until_ = start + period_ * double(n);
  if (busy_until_ > start) {
    vcd_.set_ascii(busy_id_, "busy", start);
    vcd_.set_ascii(busy_id_, "idle", busy_until_);
  }
  return busy_until_;
}

void Cmp::doorbell(int q, uint64_t wptr) {
  deferred_.at(reserve(doorbell_cycles_), [this, q, wptr] {
    HwQueue& hq = queues_.at(size_t(q));
    if (wptr > hq.wptr) hq.wptr = wptr;
    if (hq.enabled && size_t(hq.node) < nodes_.size()) nodes_[size_t(hq.node)]->kick(hq);
  });
}

void Cmp::queue_enabled(int q) {
  HwQueue& hq = queues_.at(size_t(q));
  if (hq.node < 0 || size_t(hq.node) >= nodes_.size()) {
    SC_REPORT_ERROR("gpumodel/cmp", "HW queue enabled on a node the adapter does not have");
  }
  if (last_pick_.size() < nodes_.size()) last_pick_.assign(nodes_.size(), -1);
}

HwQueue* Cmp::pick(int node) {
  // Highest priority first; among equals, round robin after the last queue picked on this node.
  HwQueue* best = nullptr;
  const int n = int(queues_.size());
  const int start = last_pick_.empty() ? 0 : last_pick_[size_t(node)] + 1;
  for (int k = 0; k < n; ++k) {
    HwQueue& q = queues_[size_t((start + k) % n)];
    if (q.node != node || !q.runnable()) continue;
    if (!best || q.priority > best->priority) best = &q;
  }
  if (best && !last_pick_.empty()) last_pick_[size_t(node)] = best->id;
  return best;
}

bool Cmp::should_switch(int node, const HwQueue& current, const sc_time& since) const {
  for (const HwQueue& q : queues_) {
    if (&q == &current || q.node != node || !q.runnable()) continue;
    if (q.priority > current.priority) return true;
    if (q.priority == current.priority && sc_time_stamp() - since >= timeslice_) return true;
  }
  return false;
}

void Cmp::raise_interrupt(uint32_t vector) {
  deferred_.at(reserve(interrupt_cycles_), [this, vector] {
    if (!msi_addr_) {
      SC_REPORT_ERROR("gpumodel/cmp", "interrupt raised before the KMD programmed the MSI address");
      return;
    }
    ++msi_sent_;
    bus_.post32(msi_addr_, msi_data_ + vector);  // MSI: a 4-byte posted write (PCIe MSI definition)
  });
}

}  // namespace gpumodel
