// What the cross-adapter fence tests share (test_xfence*.cpp): the scenario's command line, the derived
// bounds of a signal's way to the other adapter's waiter, and a bench's fence shared by both adapters.
#pragma once
#include <string>

#include "fence_bench.h"
#include "kernel_stub/dxgkrnl/adapter_start.h"
#include "kernel_stub/dxgkrnl/cross_adapter_fence.h"

namespace tb {

inline std::string xfence(const std::string& scenario, const std::string& pair, bool doorbell = false) {
  // The CPU idles in C1 only (the platform's default), so every CPU step's cost is a fixed parameter.
  std::string a = tb::scenario("cross_adapter_fence") + " --cpu.idle_governor=fixed --cpu.idle_state=C1" +
                  " --xfence.scenario=" + scenario + " --xfence.pair=" + pair;
  if (scenario != "1") a += " --igpu.kmd_native_gpu_fence=never";
  if (doorbell) a += " --xfence.gpu_doorbell=true";
  return a;
}

// The CPU's part of a fence interrupt (cpu.*): leaving C1 2,000 ns, interrupt entry 500, the ISR 2,000,
// the DPC 1,000. Every GPU signal without the doorbell reaches its waiter through it (F15: MV = 0, or on
// 2b the INTERRUPT after which VidSch writes CV): a lower bound.
constexpr double kInterruptPath = 2000 + 500 + 2000 + 1000;
constexpr double kThreadWake = 2000;  // cpu.thread_wake_ns: a CPU waiter's thread dispatched
// What else lies on a path, each step under 1 us with defaults: an MMIO write of the notification (100 ns
// of CPU, then root complex, link hop and BAR0 write: < 0.5 us), CPU reads of CV (150 ns), the CMP's
// firmware (20-32 cycles at 1 GHz), its barrier (200 ns), a CV or probe write (write buffer 100 ns,
// link or SoC fabric 100-230 ns, DRAM 90 ns), a CV read by a CMP (< 0.6 us across the link): at most
// ten of them on any path below: 5 us.
// With native fence logs (on by default: logging is mandatory) a logged signal adds, on the GPU, its log
// entry, the index write and the engine's barrier before the conditional check (< 1 us), and the DPC reads
// the logs before it wakes anyone: per HW queue of the device the two logs' 8-byte headers (the logs sit
// in the dGPU's VRAM: each read crosses the link, under 1.2 us), the KMD's log barrier (a BAR0 read:
// 540 ns plus a link round trip), and the new entry (48 B, one read across the link): under 5 us more.
constexpr double kHardwareSlack = 5000 + 5000;

// Both adapters started, then a cross-adapter fence created on the dGPU (its MVs in `mv`) and opened on
// the iGPU, from a CPU thread of process 1.
inline CrossAdapterFence* start_both_and_share(Platform& p, Segment mv = Segment::System) {
  DxgkrnlStartAdapter(p.kmd, "dGPU");
  DxgkrnlStartAdapter(p.igpu_driver->kmd, "iGPU");
  CrossAdapterFence* x = p.xfences.Create(1, 0, NativeFenceType::Default, nullptr, mv);
  p.xfences.Open(*x, 1, 1);
  return x;
}

}  // namespace tb
