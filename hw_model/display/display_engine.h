// DisplayEngine: one display pipe's timing generator and scan-out DMA (C6, H1).
//
// What it models: the beam scans a mode's active pixels at the pixel clock (display_timing.h). The DMA
// fetches the stream of frames into a fetch (detile) buffer of display.fifo_bytes in requests of
// display.request_bytes, at most display.outstanding in flight, each only when the buffer has room for
// it counting everything in flight; once it stops for lack of room it resumes when the level falls
// below the watermark (hysteresis; at 0 % when it is empty). A request arriving after the beam needed
// its first byte is an underflow; the beam never stalls. At each vblank start the fetch resyncs: what is
// not yet requested of the frame just ended is skipped (an underflow per request's worth) and the next
// frame starts fresh. Flips: a write of kSurfaceAddr arms a flip that is latched at the
// next vblank start and takes effect from the next frame; the latest write before the latch wins.
// MSIs (vblank, flip complete) are 4-byte posted writes through the scan-out port, as on hardware.
//
// Event-driven: the timing generator is arithmetic (ScanTiming); one thread wakes only at vblank
// starts, the DMA thread only when it can issue or a completion matters, and each outstanding request
// has a slot thread (see dma_slot) because a memory read is blocking. Registers derived from time
// (frame count, scanline) are computed on read; anything due at a vblank start is applied first
// (catch_up), so a register access at exactly that instant sees the latch whatever the delta order.
//
// Panel self refresh (display.psr, eDP PSR1): after display.psr_idle_frames vertical blanks without a
// flip the panel refreshes from its own frame buffer, so the next frame is not fetched (no scan-out
// reads, no underflow) until a flip is latched; the display's power state is then PSR, not scan.
// Simplification: the panel's resynchronisation on PSR exit does not delay the flipped frame.
//
// Parameters: display.psr, display.psr_idle_frames, display.mode, display.format, display.fifo_bytes,
// display.request_bytes,
//   display.outstanding, display.watermark_pct, display.reg_read_latency_ns, display.reg_write_latency_ns.
// Ports: regs (MMIO target at regs_base, display_regs::kRegsSize bytes, aligned 32/64-bit accesses;
//   reads sampled after the read latency, writes posted and applied at arrival + write latency);
//   isock (scan-out reads and MSI writes).
// Registers: display_regs.h. Trace (when the Vcd is enabled): <name>.line, .fifo_bytes, .underflow,
//   .flip, .vblank, .surface.
// Simplifications: a request that crosses a row end of a pitched surface is read as one TLM read per
//   row piece, one after the other within its slot; pitch and surface are latched together; disabling
//   drops the timing (in-flight reads complete and are discarded); a pitch below the row size (0
//   included) means packed rows.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/bus.h"
#include "hw_model/core/deferred.h"
#include "hw_model/core/params.h"
#include "hw_model/core/power.h"
#include "hw_model/core/vcd.h"
#include "hw_model/display/display_regs.h"
#include "hw_model/display/display_timing.h"

namespace gpumodel {

class DisplayEngine : public sc_core::sc_module {
 public:
  static constexpr uint64_t kRegsSize = display_regs::kRegsSize;

  tlm_utils::simple_target_socket<DisplayEngine> regs;
  tlm_utils::simple_initiator_socket<DisplayEngine> isock;

  static void declare_params(ParamSet& ps);
  // ConfigError naming the key when the parameters cannot make a working engine.
  static void validate(const ParamSet& ps);
  DisplayEngine(sc_core::sc_module_name name, const ParamSet& ps, Vcd& vcd, uint64_t regs_base);

  struct FrameRecord {
    uint64_t frame;
    uint64_t surface;
    uint64_t first_qword;  // the frame's first 8 bytes as read: a tag the workload writes
    sc_core::sc_time first_line_time;
  };
  struct UnderflowRecord {
    uint64_t frame;
    unsigned line;
    sc_core::sc_time time;  // the late request's arrival
    sc_core::sc_time need;  // when the beam needed its first byte
  };
  // An immediate flip taking effect: from `line` of `frame` on, the beam shows `surface` (line 0: the
  // flip landed between frames, no visible tear); `time` is when the beam reaches that line.
  struct TearRecord {
    uint64_t frame;
    unsigned line;
    uint64_t surface;
    sc_core::sc_time time;
  };
  struct RequestRecord {
    uint64_t stream_byte, len, frame;
    uint64_t addr;  // the first byte's address
    sc_core::sc_time issue, arrival;
  };
  // Observers (monitors and tests only; they must not drive the model).
  std::function<void(uint64_t frame, unsigned line, sc_core::sc_time)> on_underflow;
  std::function<void(const FrameRecord&)> on_frame;
  std::function<void(const RequestRecord&)> on_request;  // at each arrival
  std::function<void(const TearRecord&)> on_tear;        // when an immediate flip's first request is issued

  const ScanTiming& timing() const { return *timing_; }
  bool enabled() const { return enabled_; }
  uint64_t fifo_bytes() const { return fifo_; }
  uint64_t request_bytes() const { return req_; }
  unsigned outstanding() const { return outstanding_; }
  uint64_t watermark_bytes() const { return watermark_; }
  uint64_t frames_started() const { return frames_started_; }  // frames whose first request arrived
  uint64_t bytes_fetched() const { return arrived_; }
  uint64_t bytes_issued() const { return issued_ - skipped_; }
  uint64_t bytes_skipped() const { return skipped_; }  // never requested: the beam passed them (resync)
  uint64_t bytes_consumed() const;                     // by the beam, now
  sc_core::sc_time active_time() const;                // the beam's time on active pixels, summed over frames, now
  uint64_t requests() const { return requests_; }
  unsigned in_flight() const { return inflight_; }
  uint64_t vblanks() const { return vblanks_; }
  uint64_t flips_latched() const { return flips_latched_; }
  uint64_t flips_replaced() const { return flips_replaced_; }
  uint64_t immediate_flips() const { return immediate_flips_; }  // immediate flips that took effect
  uint64_t underflows() const { return underflows_; }
  const std::vector<UnderflowRecord>& underflow_records() const { return underflow_records_; }  // first 64
  // Lowest buffer level just before an arrival while the beam scans active lines (during the vertical
  // blank the buffer refills from empty by design); fifo_bytes() until there is one.
  uint64_t min_fifo_bytes() const { return min_fifo_; }
  uint64_t current_surface() const { return current_addr_; }
  // Power states (energy model): off, scanning (fetching frames), panel self refresh.
  enum Power : size_t { kOff, kScan, kPsr, kPowerStates };
  const StateClock& power() const { return power_; }
  uint64_t psr_frames() const { return psr_frames_; }
  // Told when the engine starts or stops fetching from memory (the host package's hold).
  std::function<void(bool fetching)> on_fetching;
  bool flip_pending() const { return flip_pending_; }

 private:
  struct Surface {
    uint64_t addr, pitch;
    bool self_refresh = false;  // a PSR frame: the panel shows its own copy, nothing is fetched
  };
  void set_power(size_t s, const sc_core::sc_time& at);
  struct Slot {
    std::vector<unsigned char> buf;  // request_bytes: the read's real data
    ZeroTracker zero;                // how much of buf is known zero (host speed only, see ZeroHint)
    sc_core::sc_event start;
    bool ready = false, busy = false;
    uint64_t stream_byte = 0, len = 0, frame = 0, gen = 0;
    Surface surface{0, 0};
    sc_core::sc_time issue;
  };

  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void serve(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  uint64_t read_reg(uint64_t off) const;
  void write_reg(uint64_t off, uint64_t v, unsigned len);
  void enable();
  void disable();
  void catch_up();          // applies every vblank start due by now
  void vblank(uint64_t n);  // frame n's vblank start: latch, MSIs, trace
  void vblank_thread();
  struct Step {  // what the DMA does now
    enum Kind { Disabled, WaitLatch, WaitSlot, WaitLevel, Issue } kind = Disabled;
    uint64_t frame = 0, len = 0;                     // Issue
    sc_core::sc_time until = sc_core::SC_ZERO_TIME;  // WaitLevel: how long, at most
  };
  Step next_step();
  void dma_thread();
  void dma_slot(Slot& s);
  void issue(Slot& s, uint64_t frame, uint64_t len);
  void arrived(Slot& s);
  bool beam_in_active(const sc_core::sc_time& t) const;
  void trace_lines(uint64_t first_px, unsigned first_line_value, uint64_t frame);

  BusMaster<DisplayEngine> bus_;
  Deferred deferred_;
  Vcd& vcd_;
  const uint64_t base_;
  const DisplayMode mode_;
  uint32_t pixel_clock_reg_ = 0;
  const unsigned bpp_;
  const uint64_t fifo_, req_;
  const unsigned outstanding_;
  const uint64_t watermark_;
  const sc_core::sc_time read_latency_, write_latency_;

  // Registers.
  uint64_t msi_addr_ = 0, surface_reg_ = 0, current_addr_ = 0;
  uint32_t msi_data_ = 0, control_ = 0, pitch_reg_ = 0;
  bool flip_pending_ = false;
  bool immediate_pending_ = false;  // an immediate flip waits for the DMA's next request
  uint64_t immediate_flips_ = 0;

  // Timing generator and stream.
  bool enabled_ = false;
  uint64_t gen_ = 0;  // bumped by enable and disable: stale completions are dropped
  std::unique_ptr<ScanTiming> timing_;
  std::vector<Surface> surfaces_;  // by frame: known from the previous frame's vblank start
  uint64_t next_vblank_ = 0;       // the frame whose vblank start comes next
  sc_core::sc_event vblank_ev_, latch_ev_, dma_ev_, slot_free_ev_;
  sc_core::sc_event_or_list latch_or_dma_, slot_or_dma_;  // built once: an `a | b` per wait allocates

  // DMA.
  std::vector<std::unique_ptr<Slot>> slots_;
  uint64_t issued_ = 0, arrived_ = 0, skipped_ = 0;  // stream bytes requested, arrived, skipped at a resync
  unsigned inflight_ = 0;
  bool stopped_ = false;  // stopped for lack of room: waits for the watermark

  // Statistics.
  uint64_t frames_started_ = 0, requests_ = 0, vblanks_ = 0, flips_latched_ = 0, flips_replaced_ = 0, underflows_ = 0,
           min_fifo_;
  std::vector<UnderflowRecord> underflow_records_;
  const bool psr_;
  const uint64_t psr_idle_frames_;
  uint64_t frames_since_flip_ = 0, psr_frames_ = 0;
  StateClock power_{kPowerStates, kOff};

  Vcd::Id line_id_ = Vcd::kNone, fifo_id_ = Vcd::kNone, underflow_id_ = Vcd::kNone, flip_id_ = Vcd::kNone,
          vblank_id_ = Vcd::kNone, surface_id_ = Vcd::kNone, tear_id_ = Vcd::kNone;
};

}  // namespace gpumodel
