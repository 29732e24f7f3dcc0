// BAR0 register map and the platform address map. The KMD programs the adapter only through these
// registers (MMIO) and through memory.
#pragma once
#include <cstdint>

namespace gpumodel::regs {

// Platform physical address map (one flat space; the GPU sees its VRAM at its BAR2 address).
constexpr uint64_t kSysmemBase = 0x1'0000'0000ull;  // host DRAM above the 4 GiB hole
constexpr uint64_t kBar0Base = 0xF000'0000ull;      // adapter registers
constexpr uint64_t kBar0Size = 0x0100'0000ull;      // 16 MiB
constexpr uint64_t kVramBase = 0x100'0000'0000ull;  // BAR2: local memory aperture (resizable BAR)
constexpr uint64_t kIgpuBar0Base = 0xE000'0000ull;  // the integrated adapter's registers (hybrid)

// BAR0 offsets.
constexpr uint64_t kId = 0x0000;  // RO 32: 'GPM1'
constexpr uint32_t kIdValue = 0x47504D31;
constexpr uint64_t kCaps = 0x0004;                      // RO 32: [7:0] nodes, [15:8] reserved (0), [16] MV from memory,
                                                        // [17] names the HW queue in fence events,
                                                        // [18] one event kind for every fence signal,
                                                        // [21:20] linked physical adapters (engines) - 1,
                                                        // [31:22] HW queues - 1 (1..1,024)
constexpr uint32_t kCapsMvFromMemory = 1u << 16;        // engines read the OS's MonitoredValue: no shadow MV
constexpr uint32_t kCapsFenceIrqNamesQueue = 1u << 17;  // the CMP can name the running HW queue (F19)
// [18]: the CMP raises one event kind for every fence signal (cmp.fence_event_kinds = combined): it cannot
// tell a monitored fence's signal from a native fence's, so each is a NULL kEventNativeFence.
constexpr uint32_t kCapsFenceEventsCombined = 1u << 18;
constexpr uint32_t kCapsEnginesShift = 20;
// The HW queue count has a field of its own, 10 bits wide: hardware schedulers manage up to 1,024
// queues (the old 8-bit field at [15:8] could not say more than 255). It sits in the caps word the KMD
// reads anyway, so adapter start still costs one caps read.
constexpr uint32_t kCapsQueuesShift = 22;
constexpr uint32_t kMaxHwQueues = 1024;
constexpr uint64_t kTimestamp = 0x0008;      // RO 64: GPU timestamp in ticks
constexpr uint64_t kMsiAddr = 0x0010;        // RW 64: MSI target address (from the MSI capability)
constexpr uint64_t kMsiData = 0x0018;        // RW 32: MSI data base; vector v sends data base + v
constexpr uint64_t kAdapterReset = 0x0020;   // W 32: 1 = reset the whole adapter (every node, every HW queue)
constexpr uint64_t kAdapterStatus = 0x0024;  // RO 32: bit 0 an adapter reset is in progress, bit 1 kAdapterBusy
// kAdapterStatus bit 1: work is queued or running (a node busy, preempting or resetting, a HW queue with
// commands not yet executed, blocked or not, the firmware busy or holding work): the KMD's answer to "may
// the adapter power off".
constexpr uint32_t kAdapterBusy = 2;
constexpr uint64_t kMmuSystemRoot = 0x0028;  // RW 64: the system process's page-table root (the CMP's space, F10)
constexpr uint64_t kMmuInvalidate = 0x0030;  // W 64: invalidate every TLB of the adapter for that root (0: all)
// RO 32: the PCI Express Link Status register mirrored (PCIe Base Spec 5.0 section 7.5.3.8): [3:0] current
// link speed (3 = 8.0, 4 = 16.0, 5 = 32.0 GT/s), [9:4] negotiated link width; 0 on an integrated adapter
// (no link: it reaches memory through the host's fabric).
constexpr uint64_t kLinkStatus = 0x0038;
constexpr unsigned kLinkWidthShift = 4;
// RW 32: bit 0: when the slot's power goes off (runtime D3cold), keep local memory in self refresh (its
// contents kept); 0: local memory loses power with the rest of the chip. The KMD sets it before the OS cuts
// the power; the GPU clears it at power-on.
constexpr uint64_t kVramSelfRefresh = 0x003C;

// Native fence table (CMP): select a slot, then program it. Slots are reused; the global handle the
// CMP names in event entries is the KMD's, programmed per slot, never reused (F11; 0 is NULL).
constexpr uint64_t kFenceSelect = 0x0100;        // RW 32: slot the following registers address
constexpr uint64_t kFenceCvAddr = 0x0108;        // RW 64: CurrentValue (a system-process GPU VA, F10)
constexpr uint64_t kFenceMvAddr = 0x0110;        // RW 64: MonitoredValue storage the OS writes (system-process GPU VA)
constexpr uint64_t kFenceFlags = 0x0118;         // RW 32: bit 0 valid (a native fence; monitored fences have no slot)
constexpr uint64_t kFenceMvUpdate = 0x0120;      // W 64: new MonitoredValue for the selected slot (F7 update)
constexpr uint64_t kFenceNotify = 0x0128;        // W 32: slot whose CV the CPU changed (rescan GPU waiters)
constexpr uint64_t kFenceAckAddr = 0x0130;       // RW 64: where the CMP writes its count of completed updates
constexpr uint64_t kShadowMvBase = 0x0138;       // RW 64: VRAM table of shadow MonitoredValues, slot * 8
constexpr uint64_t kEventRingBase = 0x0140;      // RW 64: interrupt event ring in system memory (16 B entries)
constexpr uint64_t kEventRingSize = 0x0148;      // RW 32: entries, power of two
constexpr uint64_t kEventRingWptrAddr = 0x0150;  // RW 64: where the CMP writes its write index: bits [31:0] the
                                                 // index, [47:32] native fence events dropped on a full ring,
                                                 // [63:48] monitored fence events dropped (each mod 2^16)
constexpr uint64_t kEventRingRptr = 0x0158;      // RW 32: the KMD's read index
constexpr uint64_t kFenceHandle = 0x0160;        // W 32: hGlobalNativeFence of the selected slot (event entries)
// F20 (exploration, the document's future GPU-to-GPU signal): a cross-adapter doorbell. A slot with a
// cross-adapter id makes the CMP post that id, after an engine signal of the slot, to the physical address
// in kXDoorbellTarget (a peer adapter's kXDoorbell register, written peer to peer through the root complex);
// a write to kXDoorbell makes this CMP rescan the HW queues waiting on the slots with that id.
constexpr uint64_t kFenceXid = 0x0168;         // W 32: cross-adapter fence id of the selected slot (0: none)
constexpr uint64_t kXDoorbellTarget = 0x0170;  // RW 64: the peer's doorbell (physical address; 0: off)
constexpr uint64_t kXDoorbell = 0x0178;        // W 32: the doorbell: a peer CMP writes a cross-adapter fence id
constexpr uint64_t kFenceIrqMode = 0x0180;     // RW 32: kFenceIrqNamesQueue: fence events name the HW queue (F19)
constexpr uint32_t kFenceValid = 1;
// Event ring entry: u32 type, u32 handle (the slot's kFenceHandle; 0 = NULL: "scan every waiter"), u64 value.
// kEventMonitoredFence: a WDDM 2.x monitored fence's signal (an INTERRUPT packet with
// kMonitoredFenceSignalVector after the engine wrote the value): handle 0, u64 the node ordinal.
constexpr uint32_t kEventNativeFence = 1, kEventMonitoredFence = 2, kEventOverflow = 3;
// F19 (kFenceIrqMode = kFenceIrqNamesQueue): u32 type, u32 the HW queue's kernel handle (its index + 1; 0 =
// NULL: "rescan every queue of the engine"), u64 the node ordinal (kEventAllNodes: the engine is unknown).
constexpr uint32_t kEventNativeFenceQueue = 4;
constexpr uint32_t kFenceIrqNamesQueue = 1;
constexpr uint64_t kEventAllNodes = ~0ull;
constexpr uint32_t kFenceEventVector = 0;  // MSI vector of event-ring interrupts; INTERRUPT packets use >= 1
// The INTERRUPT operand of a monitored fence signal (Native GPU fence object, "Existing monitored fence
// synchronization object": "writing to the monitored fence GPU VA and raising a monitored fence signaled
// interrupt"): the CMP reports it through the event ring as kEventMonitoredFence, in order with the
// native fence events, so a full ring can drop it like them.
constexpr uint32_t kMonitoredFenceSignalVector = 0x34;

// BAR0 map (offsets; each block's end is exclusive):
//   0x00000-0x00FFF  adapter registers and the fence table's window (above)
//   0x02000-0x023FF  per node n: kNodeBase + n * 0x40 (16 nodes at most)
//   0x10000-0x11FFF  doorbells, per HW queue q: kDoorbellBase + q * 8 (1,024 queues)
//   0x20000-0x2FFFF  per HW queue q: kQueueBase + q * 0x40 (1,024 queues)
//   0x80000-0x80FFF  the display engine's registers
// The queue block was at 0x1000 while the count was at most 64 (0x1000-0x1FFF); 1,024 queues need
// 64 KiB, which would have run over the node registers and the doorbells.
constexpr uint64_t kQueueBase = 0x20000;  // per HW queue q: kQueueBase + q * kQueueStride
constexpr uint64_t kQueueStride = 0x40;
constexpr uint64_t kQRingBase = 0x00;    // RW 64
constexpr uint64_t kQRingSize = 0x08;    // RW 32: bytes, power of two
constexpr uint64_t kQNode = 0x0C;        // RW 32: node ordinal
constexpr uint64_t kQRptrAddr = 0x10;    // RW 64: where the queue writes back its read pointer
constexpr uint64_t kQPriority = 0x18;    // RW 32: higher runs first
constexpr uint64_t kQEnable = 0x1C;      // RW 32: 1 = created (run-list member)
constexpr uint64_t kQPageTable = 0x20;   // RW 64: page-table root of the queue's GPU VA space (0: MMU off)
constexpr uint64_t kQSignalLog = 0x28;   // RW 64: the signal log's GPU VA in the queue's process space (F16; 0: none)
constexpr uint64_t kQWaitLog = 0x30;     // RW 64: the wait log's system-process GPU VA (the CMP writes it)
constexpr uint64_t kQLogEntries = 0x38;  // RW 32: NumberOfEntries of both logs
constexpr uint64_t kQLogFlush = 0x3C;    // R 32: read-to-flush: returns 1 once every log write of the queue
                                         // issued before the read is visible (DxgkDdiUpdateNativeFenceLogs)

constexpr uint64_t kNodeBase = 0x2000;  // per node n: kNodeBase + n * kNodeStride
constexpr uint64_t kNodeStride = 0x40;
constexpr uint64_t kNDmaReadLastPs = 0x00;  // RO 64: latency of the node's last DMA read, in ps
constexpr uint64_t kNPackets = 0x08;        // RO 64: packets executed
constexpr uint64_t kNLastFence = 0x10;      // RO 64: the last fence ID the node completed (FENCE); kept by a node
                                            // reset, cleared by an adapter reset (BACO: registers lost)
constexpr uint64_t kNControl = 0x18;        // W 32: kNCtlPreempt requests a preemption, kNCtlReset a node reset
constexpr uint64_t kNStatus = 0x1C;         // RO 32: kNSt* bits
constexpr uint64_t kNPreemptVector = 0x20;  // RW 32: MSI vector the node raises when a preemption completes
constexpr uint64_t kNFaultVa = 0x28;        // RO 64: the GPU VA of the node's last page fault
constexpr uint64_t kNFaultVector = 0x30;    // RW 32: MSI vector the node raises on a page fault (DMA_FAULTED)
constexpr uint64_t kNPageFaults = 0x34;     // RO 32: page faults so far
constexpr uint64_t kNEngineType = 0x38;     // RO 32: the engine's kind as DXGK_ENGINE_TYPE (engine_kind.h)
constexpr uint64_t kNPipe = 0x3C;  // RO 32: the pipe the node belongs to (node.pipe; nodes of one pipe share it)
constexpr uint32_t kNCtlPreempt = 1, kNCtlReset = 2;
constexpr uint32_t kNStResetting = 1, kNStResetFailed = 2, kNStPreemptPending = 4, kNStBusy = 8;
// The node's reset is unavailable (node.reset_fails_on = 0: the hardware cannot reset it).
constexpr uint32_t kNStCannotReset = 16;

constexpr uint64_t kDoorbellBase = 0x10000;  // per HW queue q: + q * 8; write the new write pointer (bytes)
constexpr uint64_t kDoorbellStride = 8;

// Where a repeated block's register is: the one computation of these addresses (BAR0 offsets).
constexpr uint64_t queue_reg(int q, uint64_t reg) { return kQueueBase + uint64_t(q) * kQueueStride + reg; }
constexpr uint64_t node_reg(int n, uint64_t reg) { return kNodeBase + uint64_t(n) * kNodeStride + reg; }
constexpr uint64_t doorbell_reg(int q) { return kDoorbellBase + uint64_t(q) * kDoorbellStride; }

constexpr uint64_t kDisplayOffset = 0x80000;  // the display engine's registers (display/display_regs.h), 4 KiB

constexpr uint64_t kMaxNodes = 16;  // gpu.nodes, igpu.nodes at most
static_assert(kNodeBase + kMaxNodes * kNodeStride <= kDoorbellBase, "node registers run into the doorbells");
static_assert(kDoorbellBase + kMaxHwQueues * 8 <= kQueueBase, "doorbells run into the queue registers");
static_assert(kQueueBase + kMaxHwQueues * kQueueStride <= kDisplayOffset, "queue registers run into the display");
static_assert(kMaxHwQueues - 1 < (1u << (32 - kCapsQueuesShift)), "the caps field cannot hold the queue count");

}  // namespace gpumodel::regs
