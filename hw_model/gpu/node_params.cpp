// Node's parameters (its parts' included: the write buffer, the log write-combiner, the DMA engine),
// declared in one place per key; each is read in Node's constructor, which hands the parts theirs.
#include "hw_model/gpu/node.h"

namespace gpumodel {

void Node::declare_params(ParamSet& ps) {
  ps.declare_real("gpu.engine_clock_mhz", 2000, "MHz", 1, 1e5,
                  "Q/A: docs/calibration.md GPU engine clock 2.0 GHz (H100 SXM5 boost 1.98 GHz)");
  ps.declare_enum("node.power_gating", "off", {"off", "on"},
                  "Q: engine power gating (Linux i915 intel_rc6.c render/media power-gate idle "
                  "hysteresis; amdgpu GFXOFF): off, the mechanism scenarios' default, or on");
  ps.declare_real("node.gate_delay_us", 76.8, "us", 0.1, 1e7,
                  "Q: Linux i915 intel_rc6.c gen11_rc6_enable: render and media power-gate idle "
                  "hysteresis 60 x 1.28 us");
  ps.declare_enum(
      "node.fence_wait", "poll", {"poll", "release"},
      "A (a choice the documents leave open; real engines do both): what an engine does while a WAIT it runs "
      "is blocked. poll: it keeps the queue and its fetched packets and stays powered, never gating, until "
      "the CMP unblocks it, as a command streamer re-reading the semaphore does (Linux i915 emits "
      "MI_SEMAPHORE_WAIT with MI_SEMAPHORE_POLL; AMD's PM4 WAIT_REG_MEM polls at an interval, Linux amdgpu "
      "and Mesa sid.h); release: it hands the blocked queue back to the CMP and idles (and gates after "
      "node.gate_delay_us with node.power_gating = on); the unblock makes the queue runnable and the engine "
      "refetches from the WAIT, paying the gate wake if it gated, as NVIDIA's host switches away on a failed "
      "semaphore acquire (open-gpu-doc, Volta channel class clc36f.h SEM_EXECUTE ACQUIRE_SWITCH_TSG)");
  ps.declare_real("node.gate_wake_us", 100, "us", 0, 1e7,
                  "Q: Linux i915 intel_rc6.c: \"the wakeup latency on Broxton is closer to 100us\"");
  ps.declare_int("node.decode_cycles", 8, "cycles", 0, 1 << 20,
                 "A: front-end decode and dispatch of one packet, 8 engine cycles");
  ps.declare_int_choices("node.fetch_bytes", 256, "bytes", {64, 128, 256, 512, 1024, 2048, 4096},
                         "A: one ring fetch is at most a 256 B read (the max payload, one completion)");
  ps.declare_int("node.fifo_bytes", 1024, "bytes", 64, 1 << 20,
                 "A: 1 KiB command prefetch FIFO, so fetch overlaps execution");
  ps.declare_int("node.dma_chunk_bytes", 4096, "bytes", 8, 1 << 20, "A: copy engine works in 4 KiB chunks (one page)");
  ps.declare_int("node.dma_outstanding", 16, "chunks", 1, 1024,
                 "A: 16 chunks in flight (64 KiB), enough to cover the ~1 us link round trip at "
                 "x16 Gen5 rates (bandwidth x delay = 52 GB/s x 1.2 us = 62 KB)");
  ps.declare_int("gpu.timestamp_tick_ps", 1000, "ps", 1, 1000000,
                 "Q: docs/calibration.md GPU timestamp tick, dGPU 1 ns (PTX ISA %globaltimer)");
  ps.declare_real("node.write_buffer_ns", 100, "ns", 0, 1e6,
                  "A: a posted write's time in the engine's write buffer before it leaves for the "
                  "fabric: the window in which a CurrentValue write is pending (F7)");
  ps.declare_real("node.log_entry_wc_ns", 500, "ns", 0, 1e7,
                  "A: a native fence log entry (48 B, a partial cache line) waits this long in the engine's "
                  "write-combining buffer unless a full barrier or the OS's flush (DxgkDdiUpdateNativeFenceLogs) "
                  "pushes it out; the 8-B FirstFreeEntryIndex update goes through the write buffer, so it "
                  "can be visible first (Native GPU fence object 'Synchronously updating the native fence log')");
  ps.declare_int_choices(
      "node.log_barriers", 1, "barriers", {1, 2},
      "Q: Native GPU fence object 'Synchronously updating the native fence log': 1 = the design's GPU order "
      "(entry, index, one barrier; the OS's DxgkDdiUpdateNativeFenceLogs supplies the other); "
      "2 = the order it replaces, a barrier between the entry and the index too");
  ps.declare_real("node.barrier_ns", 100, "ns", 0, 1e6,
                  "Q (low confidence): docs/calibration.md GPU memory barrier, device scope ~100 ns");
  ps.declare_real("node.barrier_system_ns", 200, "ns", 0, 1e6,
                  "Q (low confidence): docs/calibration.md GPU memory barrier, system scope ~200 ns");
  ps.declare_enum("node.preemption", "packet", {"packet", "mid_command"},
                  "Q: TDR in Windows 8 and later / WDDM 1.2 preemption granularity: packet = at a DMA-packet boundary "
                  "(D3DKMDT_GRAPHICS_PREEMPTION_DMA_BUFFER_BOUNDARY); mid_command = also inside a COMPUTE at "
                  "a preemption point and on a blocked WAIT (compute preemption at a thread-group boundary)");
  ps.declare_real("node.preempt_save_ns", 10000, "ns", 0, 1e9,
                  "A: saving a preempted engine's state before it signals the preemption, 10 us (context "
                  "save of a few hundred KB at tens of GB/s)");
  ps.declare_int("node.preempt_point_cycles", 20000, "cycles", 0, int64_t(1) << 40,
                 "A: mid_command: a COMPUTE reaches a preemption point every 20,000 engine cycles (10 us "
                 "at 2 GHz: a thread-group boundary); 0 = at once");
  ps.declare_int("node.translate_ahead_bytes", 262144, "bytes", 0, int64_t(1) << 30,
                 "A: the copy engine translates the pages of the next 256 KiB of a copy ahead of its transfers "
                 "(one walker for the source, one for the destination), so its DMA tags hit the TLB: four 64 KiB "
                 "pages of look-ahead hide a ~1 us walk at x16 Gen5 rates (64 KiB per 1.3 us); 0 = no look-ahead");
  ps.declare_real("node.reset_ns", 174000, "ns", 0, 1e10,
                  "F: docs/calibration.md engine (per-queue) reset 0.1-10 ms; one amdgpu compute ring reset took "
                  "174 us (ROCm issue 6127 log timestamps)");
  ps.declare_int(
      "node.reset_fails_on", -1, "resets", -1, 15,
      "A: fault injection (TDR in Windows 8 and later T9), set per node (gpu.node1.reset_fails_on): -1 = the "
      "node's resets never fail; n = its first n engine resets succeed and every later one fails (its reset "
      "leaves it hung until an adapter reset); 0 = the hardware cannot reset it");
  ps.declare_int(
      "node.pipe", -1, "pipe", -1, 15,
      "A: the adapter's topology, set per node (gpu.node2.pipe = 1): nodes with the same value share one pipe (front "
      "end and state), so the driver reports them as one dependent engine group (TDR in Windows 8 and later, "
      "DxgkDdiQueryDependentEngineGroup) and the OS resets them together; -1 = the node is its own pipe");
  ps.declare_enum(
      "node.kind", "auto", {"auto", "graphics", "compute", "copy", "video"},
      "Q: DXGK_NODEMETADATA::EngineType (DXGK_ENGINE_TYPE 3D, OTHER, COPY, VIDEO_DECODE), set per node "
      "(gpu.node2.kind = copy): which packets the engine runs (a copy engine no COMPUTE, a video engine "
      "no COPY); auto = node 0 the 3D engine, the others compute engines (both run every packet), so a copy or "
      "video engine is one the scenario or user named");
  // Every node.* key, and the adapter's engine clock, can be set for one node: gpu.node1.reset_ns.
  ps.declare_instances("node", {"engine_clock_mhz"});
}

}  // namespace gpumodel
