// Shared by the native fence scenarios: the fence.* parameters and small helpers.
#pragma once
#include <string>

#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "scenarios/common/scenario.h"

namespace gpumodel {

inline void declare_fence_params(ParamSet& ps, const std::string& owner) {
  ps.declare_enum("fence.kind", "native", {"native", "legacy"},
                  "Q: F5: a WDDM 3.2 native fence (GPU wait, conditional interrupt) or a WDDM 2.x "
                  "monitored fence (no GPU wait, every GPU signal interrupts)",
                  owner);
  ps.declare_enum("fence.storage", "system", {"system", "local"},
                  "Q: F1/F6: CurrentValue and MonitoredValue in system memory (the OS pool; a CPU "
                  "waiter reads it cheaply) or in the local memory segment",
                  owner);
}

// fence.kind = legacy runs with or without native fences on the adapter (F9): a monitored fence is the
// OS's alone. The scenarios that take fence.kind register this as runs_without_native_fences.
inline bool legacy_fence_kind(const ParamSet& ps) { return ps.get_enum("fence.kind") == "legacy"; }

inline Segment fence_storage(const ParamSet& ps) {
  return ps.get_enum("fence.storage") == "local" ? Segment::Local : Segment::System;
}

struct FenceKind {
  bool legacy;
  Segment storage;
  explicit FenceKind(const ParamSet& ps) : legacy(legacy_fence_kind(ps)), storage(fence_storage(ps)) {}
  // Node n's GPU signals of a fence of this kind: a native fence's SIGNAL packets, or a monitored fence's
  // WRITE64 of the value (VidSch::gpu_signal): how many ran, and when the last one began (decoded).
  uint64_t signals_run(const Node& n) const { return legacy ? n.executed(Op::Write64) : n.signals(); }
  sc_core::sc_time signal_start(const Node& n) const {
    return legacy ? n.last_start(Op::Write64) : n.last_signal_start();
  }
};

// Dxgkrnl's adapter start (its F9 check included: a driver that advertises native fences the OS did not
// enable fails it), from an app thread; false, with the reason among the run's failures, if it failed.
inline bool start_adapter(Platform& p, Results& r, DxgkAdapterInfo* info = nullptr) {
  const AdapterStart s = DxgkrnlStartAdapter(p.kmd, "dGPU");
  if (info) *info = s.info;
  return r.check(s.started, s.reason);
}

// Each fence belongs to one signalling node (so its values only grow): refuse fewer fences than nodes.
inline void require_fence_per_node(const ParamSet& ps, int64_t signalling_nodes) {
  const int64_t fences = ps.get_int("workload.fences");
  if (fences < signalling_nodes)
    throw ConfigError("workload.fences = " + std::to_string(fences) + " is not allowed with " +
                      std::to_string(signalling_nodes) +
                      " signalling nodes (gpu.nodes): each node signals "
                      "fences of its own, so at least " +
                      std::to_string(signalling_nodes) + " fences are needed");
}

inline double ns_between(const sc_core::sc_time& a, const sc_core::sc_time& b) { return to_ns(b) - to_ns(a); }

// A COMPUTE packet's operand for `ns` of engine time at gpu.engine_clock_mhz.
inline uint64_t engine_cycles(const ParamSet& ps, double ns) {
  return uint64_t(ns * ps.get_real("gpu.engine_clock_mhz") / 1000.0);
}

// Interrupts that woke no CPU waiter (F8 allows them): the DPC's, and MSIs whose entries an earlier
// ISR had already taken.
inline uint64_t spurious_interrupts(const Platform& p) {
  return p.vidsch.spurious_interrupts() + p.kmd.unclaimed_interrupts();
}

}  // namespace gpumodel

namespace gpumodel {

// A HW queue whose progress fence is a native fence (F14), and a way to stream more work into it than
// its ring holds: at most two submissions are in the ring; before a third the thread waits (a CPU
// wait on the progress fence, so it sleeps) for the oldest to finish.
struct StreamQueue {
  KmdHwQueue* q = nullptr;
  NativeFence* progress = nullptr;
};

inline StreamQueue make_stream_queue(Platform& p, int node, int process) {
  StreamQueue s;
  s.progress = p.vidsch.CreateNativeFence(process, Segment::System, false);
  s.q = p.vidsch.CreateHwQueue(node, 0, s.progress->handle, process);
  // The scenarios' validate refuses too few queues before elaboration; this is the backstop.
  if (!s.q)
    throw std::runtime_error("DxgkDdiCreateHwQueue failed for node " + std::to_string(node) + ": no free HW queue");
  return s;
}

// One submission of a stream: units `i` on, as many as half the ring holds. Returns the next unit.
inline uint64_t submit_batch(Platform& p, StreamQueue& s, uint64_t i, uint64_t count,
                             const std::function<void(uint64_t, PacketWriter&)>& unit) {
  const uint64_t budget = s.q->ring_size / 2 - 64;
  PacketWriter w;
  while (i < count && w.bytes() + 64 <= budget) unit(i++, w);
  if (s.q->submissions >= 2) p.vidsch.WaitFromCpu(s.progress, s.q->submissions - 1);
  p.kmd.DxgkDdiSubmitCommandToHwQueue(s.q, w);
  return i;
}

inline void submit_stream(Platform& p, StreamQueue& s, uint64_t count,
                          const std::function<void(uint64_t, PacketWriter&)>& unit) {
  for (uint64_t i = 0; i < count;) i = submit_batch(p, s, i, count, unit);
}

inline nlohmann::ordered_json idle_residency(const Cpu& cpu, const sc_core::sc_time& total) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const char* st : {"C1", "C1E", "C3", "C6"}) {
    auto it = cpu.residency().find(st);
    j[st] = it == cpu.residency().end() || total == sc_core::SC_ZERO_TIME ? 0.0 : it->second / total;
  }
  return j;
}

}  // namespace gpumodel
