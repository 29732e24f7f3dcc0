// The display engine's register map (offsets from its MMIO base). Whole aligned 32/64-bit accesses;
// a 32-bit write to a 64-bit register sets its low half. Unimplemented offsets read as zero.
#pragma once
#include <cstdint>

namespace gpumodel::display_regs {

constexpr uint64_t kRegsSize = 0x1000;

constexpr uint64_t kId = 0x000;            // RO32: kIdValue
constexpr uint64_t kControl = 0x004;       // RW32: kCtrl* bits
constexpr uint64_t kMsiAddr = 0x008;       // RW64: MSI address (interrupt controller window)
constexpr uint64_t kMsiData = 0x010;       // RW32: MSI data base; the vector is base + k*Vector
constexpr uint64_t kPitch = 0x014;         // RW32: bytes between rows; 0 (or less than a row) = packed
constexpr uint64_t kSurfaceAddr = 0x018;   // RW64: the flip register; latched at the next vblank start
constexpr uint64_t kCurrentAddr = 0x020;   // RO64: the latched surface (the frame being or next scanned)
constexpr uint64_t kFrameCount = 0x028;    // RO64: frames whose first active line has started
constexpr uint64_t kScanline = 0x030;      // RO32: the beam's line, 0..v_total-1 (v_active.. = blank)
constexpr uint64_t kFlipPending = 0x034;   // RO32: 1 while a written surface awaits its latch
constexpr uint64_t kUnderflows = 0x038;    // RO64: requests that arrived after their first byte was needed
constexpr uint64_t kFlipsLatched = 0x040;  // RO64: flips latched at a vblank start
constexpr uint64_t kPixelClock = 0x048;    // RW32: the pixel clock in Hz from the next enable (0: the mode's,
                                           // display.mode): a VidPN mode's refresh on the mode's raster
// WO64: an immediate flip (DXGK_FLIPCAPS FlipImmediateMmio): the surface takes effect from the next scan-out
// request the DMA issues, mid-frame (a tear at that request's line); it cancels a pending vsync'd flip.
// The flip-complete MSI (kCtrlFlipIrq) goes when that request is issued.
constexpr uint64_t kSurfaceAddrImmediate = 0x050;

constexpr uint32_t kIdValue = 0x44535031;  // 'DSP1'

constexpr uint32_t kCtrlEnable = 1u << 0;     // scan-out enable: 0 -> 1 starts the timing generator
constexpr uint32_t kCtrlVblankIrq = 1u << 1;  // MSI at each vblank start
constexpr uint32_t kCtrlFlipIrq = 1u << 2;    // MSI when a flip is latched

constexpr uint32_t kVblankVector = 0;
constexpr uint32_t kFlipVector = 1;

}  // namespace gpumodel::display_regs
