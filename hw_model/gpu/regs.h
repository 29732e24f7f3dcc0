// BAR0 register map and the platform address map. The KMD programs the adapter only through these
// registers (MMIO) and through memory.
#pragma once
#include <cstdint>

namespace gpumodel::regs {

// Platform physical address map (one flat space; the GPU sees its VRAM at its BAR2 address).
constexpr uint64_t kSysmemBase = 0x1'0000'0000ull;    // host DRAM above the 4 GiB hole
constexpr uint64_t kBar0Base = 0xF000'0000ull;        // adapter registers
constexpr uint64_t kBar0Size = 0x0100'0000ull;        // 16 MiB
constexpr uint64_t kVramBase = 0x100'0000'0000ull;    // BAR2: local memory aperture (resizable BAR)

// BAR0 offsets.
constexpr uint64_t kId = 0x0000;            // RO 32: 'GPM1'
constexpr uint32_t kIdValue = 0x47504D31;
constexpr uint64_t kCaps = 0x0004;          // RO 32: [7:0] nodes, [15:8] HW queues
constexpr uint64_t kTimestamp = 0x0008;     // RO 64: GPU timestamp in ticks
constexpr uint64_t kMsiAddr = 0x0010;       // RW 64: MSI target address (from the MSI capability)
constexpr uint64_t kMsiData = 0x0018;       // RW 32: MSI data base; vector v sends data base + v

constexpr uint64_t kQueueBase = 0x1000;     // per HW queue q: kQueueBase + q * kQueueStride
constexpr uint64_t kQueueStride = 0x40;
constexpr uint64_t kQRingBase = 0x00;       // RW 64
constexpr uint64_t kQRingSize = 0x08;       // RW 32: bytes, power of two
constexpr uint64_t kQNode = 0x0C;           // RW 32: node ordinal
constexpr uint64_t kQRptrAddr = 0x10;       // RW 64: where the queue writes back its read pointer
constexpr uint64_t kQPriority = 0x18;       // RW 32: higher runs first
constexpr uint64_t kQEnable = 0x1C;         // RW 32: 1 = created (run-list member)

constexpr uint64_t kNodeBase = 0x2000;      // per node n: kNodeBase + n * kNodeStride
constexpr uint64_t kNodeStride = 0x40;
constexpr uint64_t kNDmaReadLastPs = 0x00;  // RO 64: latency of the node's last DMA read, in ps
constexpr uint64_t kNPackets = 0x08;        // RO 64: packets executed

constexpr uint64_t kDoorbellBase = 0x10000; // per HW queue q: + q * 8; write the new write pointer (bytes)

}  // namespace gpumodel::regs
