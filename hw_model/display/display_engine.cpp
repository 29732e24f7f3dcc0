#include "hw_model/display/display_engine.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "hw_model/core/tlm_check.h"

namespace gpumodel {

using namespace sc_core;
namespace dr = display_regs;

namespace {
constexpr size_t kUnderflowRecords = 64;
}

void DisplayEngine::declare_params(ParamSet& ps) {
  ps.declare_named_or_form(
      "display.mode", "1920x1080@60", display_mode_names(), kDisplayModeForm, display_mode_form_error,
      {"320x200@24", "7680x4320@120", "320x200@240-rb1"},
      "Q: 1920x1080@60 is CTA-861 (A DTV Profile for Uncompressed High Speed Digital Interfaces) VIC 16, "
      "148.5 MHz; each named mode is a CTA-861 VIC where one exists, else VESA Coordinated Video Timings "
      "Standard reduced blanking (docs/display.md, Modes); a WxH@R[-rb1|-rb2] mode is computed by CVT reduced "
      "blanking (RBv2, or RBv1 with -rb1)");
  ps.declare_enum("display.format", "R8G8B8A8_UNORM", display_format_names(),
                  "Q: CASO support C4, the tier-3 minimum scan-out format list");
  ps.declare_int("display.fifo_bytes", 262144, "bytes", 64, int64_t(16) << 20,
                 "Q: 256 KB detile buffer per pipe, DCN 3.2, amdgpu DML det_buffer_size_kbytes");
  ps.declare_int("display.request_bytes", 8192, "bytes", 64, 65536,
                 "Q: 8 KB pixel chunk, DCN 1.0 DML pixel_chunk_size_kbytes");
  ps.declare_int("display.outstanding", 8, "requests", 1, 64,
                 "A: 8 scan-out requests in flight, enough to cover the link and DRAM latency at the "
                 "active-line rate");
  ps.declare_int("display.watermark_pct", 50, "%", 0, 100,
                 "A: refill when the fetch buffer falls below half (0: only once it is empty)");
  ps.declare_int_choices("display.rotation", 0, "degrees", {0, 90, 180, 270},
                         "A: the desktop is not rotated; CASO support names rotation a presentation-bandwidth-limited "
                         "configuration whose overlay checks the driver fails (the scan-out itself is modelled "
                         "unrotated)");
  ps.declare_int("display.other_outputs", 0, "displays", 0, 3,
                 "A: no other display active on the adapter; CASO support names several displays a "
                 "presentation-bandwidth-limited configuration whose overlay checks the driver fails (the other "
                 "displays' scan-out is not modelled)");
  ps.declare_int("display.max_plane_width", 5120, "pixels", 64, 16384,
                 "Q: the widest surface one plane scans: 5120, Linux i915 skl_universal_plane.c for display "
                 "version 11 and later (icl_sdr_plane_max_width, an RGB plane); the display driver answers "
                 "NO_SCANOUT for a cross-adapter primary beyond it (a mode wider than one plane joins pipes, "
                 "which the model does not model)");
  ps.declare_int("display.max_plane_height", 4320, "pixels", 64, 16384,
                 "Q: the tallest surface one plane scans: 4320, Linux i915 skl_universal_plane.c for display "
                 "version 11 and later (icl_plane_max_height)");
  ps.declare_enum("display.psr", "off", {"off", "on"},
                  "Q: eDP Panel Self Refresh (VESA eDP 1.3 PSR1; Linux i915 intel_psr.c): off, the "
                  "mechanism scenarios' default, or on for a panel that has it");
  ps.declare_int("display.psr_idle_frames", 6, "frames", 1, 1000,
                 "Q: Linux i915 intel_psr.c psr_compute_idle_frames: at least 6 idle frames before PSR "
                 "entry (\"Let's use 6 as the minimum\")");
  ps.declare_real("display.reg_read_latency_ns", 540, "ns", 0, 1e6,
                  "D: as gpu.bar0_read_latency_ns: CPU MMIO read 1.0 us (middle of gdrcopy copylat's "
                  "0.9-1.1 us) minus 2 x (200 link hop + 30 root complex) = 540 ns register-bus latency");
  ps.declare_real("display.reg_write_latency_ns", 20, "ns", 0, 1e6,
                  "A: as gpu.bar0_write_latency_ns: a posted register write lands 20 ns after it reaches "
                  "the adapter");
}

void DisplayEngine::validate(const ParamSet& ps) {
  const int64_t fifo = ps.get_int("display.fifo_bytes"), req = ps.get_int("display.request_bytes");
  if (req % 64)
    throw ConfigError("display.request_bytes = " + std::to_string(req) +
                      " is not a multiple of 64; allowed: a multiple of 64 bytes in [64, 65536]");
  if (fifo < req)
    throw ConfigError("display.fifo_bytes = " + std::to_string(fifo) +
                      " is smaller than display.request_bytes = " + std::to_string(req) +
                      " (a FIFO smaller than one request); allowed: display.fifo_bytes >= "
                      "display.request_bytes");
}

DisplayEngine::DisplayEngine(sc_module_name name, const ParamSet& ps, Vcd& vcd, uint64_t regs_base)
    : sc_module(name),
      regs("regs"),
      isock("isock"),
      bus_(isock),
      deferred_("deferred"),
      vcd_(vcd),
      base_(regs_base),
      mode_((validate(ps), display_mode(ps.get_enum("display.mode")))),
      bpp_(bytes_per_pixel(ps.get_enum("display.format"))),
      fifo_(uint64_t(ps.get_int("display.fifo_bytes"))),
      req_(uint64_t(ps.get_int("display.request_bytes"))),
      outstanding_(unsigned(ps.get_int("display.outstanding"))),
      // The hysteresis needs room for a request below the watermark, or it could never resume.
      watermark_(std::min(fifo_ * uint64_t(ps.get_int("display.watermark_pct")) / 100, fifo_ - req_)),
      read_latency_(ps.get_ns("display.reg_read_latency_ns")),
      write_latency_(ps.get_ns("display.reg_write_latency_ns")),
      timing_(new ScanTiming(mode_, bpp_, 0, SC_ZERO_TIME)),
      min_fifo_(fifo_),
      psr_(ps.get_enum("display.psr") == "on"),
      psr_idle_frames_(uint64_t(ps.get_int("display.psr_idle_frames"))) {
  latch_or_dma_ |= latch_ev_;
  latch_or_dma_ |= dma_ev_;
  slot_or_dma_ |= slot_free_ev_;
  slot_or_dma_ |= dma_ev_;
  regs.register_b_transport(this, &DisplayEngine::b_transport);
  SC_HAS_PROCESS(DisplayEngine);
  // A thread: a vblank posts MSIs, and b_transport may call wait (IEEE 1666-2011, 11.1.1.4 b).
  SC_THREAD(vblank_thread);
  sensitive << vblank_ev_;
  dont_initialize();
  SC_THREAD(dma_thread);
  // One thread per outstanding request: a memory read blocks its caller until the data arrives (the
  // target waits to sample it), so requests overlap only from separate threads, as Node's DMA tags do.
  for (unsigned i = 0; i < outstanding_; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    Slot& s = *slots_.back();
    s.buf.resize(req_);
    s.zero.zero_bytes = req_;
    sc_spawn([this, &s] { dma_slot(s); }, ("dma_slot" + std::to_string(i)).c_str());
  }
  if (vcd_.enabled()) {
    const std::string n = this->name();
    line_id_ = vcd_.add_analog(n + ".line", 16, mode_.v_active);  // one change a line
    fifo_id_ = vcd_.add_analog(n + ".fifo_bytes", 32);
    underflow_id_ = vcd_.add(n + ".underflow", 32);
    flip_id_ = vcd_.add(n + ".flip", 1);
    vblank_id_ = vcd_.add(n + ".vblank", 1, 1);
    surface_id_ = vcd_.add(n + ".surface", 64);
    tear_id_ = vcd_.add(n + ".tear", 16);
  }
}

// ---- registers ----

void DisplayEngine::b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
  checked_target(t, delay, name(), tlm_check::TargetCaps{},
                 [this](tlm::tlm_generic_payload& tt, sc_time& d) { serve(tt, d); });
}

void DisplayEngine::serve(tlm::tlm_generic_payload& t, sc_time& delay) {
  const unsigned len = t.get_data_length();
  if (!t.is_read() && !t.is_write()) {
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (t.get_byte_enable_ptr()) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);  // whole registers only
    return;
  }
  if (t.get_address() < base_ || t.get_address() + len > base_ + kRegsSize) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const uint64_t off = t.get_address() - base_;
  if (t.get_streaming_width() < len || (len != 4 && len != 8) || off % len) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);  // aligned 32/64-bit access only
    return;
  }
  if (t.is_read()) {
    wait(delay + read_latency_);  // sampled when the request has crossed the register bus
    catch_up();
    const uint64_t v = read_reg(off);
    std::memcpy(t.get_data_ptr(), &v, len);
    delay = SC_ZERO_TIME;
  } else {
    uint64_t v = 0;
    std::memcpy(&v, t.get_data_ptr(), len);
    delay += write_latency_;
    deferred_.after(delay, [this, off, v, len] {
      catch_up();  // a write landing at a vblank start comes after that latch
      write_reg(off, v, len);
    });
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

uint64_t DisplayEngine::read_reg(uint64_t off) const {
  switch (off) {
    case dr::kId: return dr::kIdValue;
    case dr::kControl: return control_;
    case dr::kMsiAddr: return msi_addr_;
    case dr::kMsiData: return msi_data_;
    case dr::kPitch: return pitch_reg_;
    case dr::kPixelClock: return pixel_clock_reg_;
    case dr::kSurfaceAddr: return surface_reg_;
    case dr::kCurrentAddr: return current_addr_;
    case dr::kFlipPending: return flip_pending_;
    case dr::kUnderflows: return underflows_;
    case dr::kFlipsLatched: return flips_latched_;
  }
  if (off == dr::kFrameCount || off == dr::kScanline) {
    if (!enabled_) return 0;
    // Pixel ticks since the origin, counted from the start of frame -1's active lines.
    const uint64_t p = timing_->ticks(sc_time_stamp()) + uint64_t(mode_.v_active) * mode_.h_total();
    if (off == dr::kFrameCount) return p / (uint64_t(mode_.h_total()) * mode_.v_total());
    return (p / mode_.h_total()) % mode_.v_total();
  }
  return 0;  // unimplemented registers read as zero
}

void DisplayEngine::write_reg(uint64_t off, uint64_t v, unsigned len) {
  auto set64 = [&](uint64_t& r) { r = len == 8 ? v : (r & ~0xffffffffull) | uint32_t(v); };
  switch (off) {
    case dr::kMsiAddr: set64(msi_addr_); return;
    case dr::kMsiData: msi_data_ = uint32_t(v); return;
    case dr::kPitch: pitch_reg_ = uint32_t(v); return;
    case dr::kPixelClock: pixel_clock_reg_ = uint32_t(v); return;
    case dr::kSurfaceAddr:
      set64(surface_reg_);
      if (flip_pending_) ++flips_replaced_;  // the latest write before the latch wins
      flip_pending_ = true;
      return;
    case dr::kSurfaceAddrImmediate:
      // DXGK_FLIPCAPS FlipImmediateMmio: every frame not yet fetched past this point takes the new surface
      // (the one being fetched from its next request on); a pending vsync'd flip is superseded.
      set64(surface_reg_);
      current_addr_ = surface_reg_;
      if (flip_pending_) ++flips_replaced_;
      flip_pending_ = false;
      frames_since_flip_ = 0;
      if (enabled_)
        for (uint64_t f = issued_ / timing_->frame_bytes(); f < surfaces_.size(); ++f)
          if (!surfaces_[f].self_refresh) surfaces_[f].addr = current_addr_;
      immediate_pending_ = enabled_;
      return;
    case dr::kControl: {
      const uint32_t was = control_;
      control_ = uint32_t(v);
      if (!(was & dr::kCtrlEnable) && (control_ & dr::kCtrlEnable)) enable();
      if ((was & dr::kCtrlEnable) && !(control_ & dr::kCtrlEnable)) disable();
      return;
    }
  }
}

// ---- timing generator ----

void DisplayEngine::enable() {
  // Now is the start of a vertical blank; the surface register is latched at once for frame 0.
  const sc_time now = sc_time_stamp();
  ++gen_;
  enabled_ = true;
  DisplayMode m = mode_;
  if (pixel_clock_reg_) m.pixel_clock_hz = pixel_clock_reg_;
  timing_.reset(new ScanTiming(m, bpp_, pitch_reg_, now));
  current_addr_ = surface_reg_;
  flip_pending_ = false;
  immediate_pending_ = false;
  surfaces_.assign(1, Surface{current_addr_, timing_->pitch_bytes()});
  next_vblank_ = 0;
  issued_ = arrived_ = skipped_ = 0;
  stopped_ = false;
  frames_since_flip_ = 0;
  set_power(kScan, now);
  vblank_ev_.notify(timing_->vblank_start(0) - now);
  dma_ev_.notify(SC_ZERO_TIME);
  if (vcd_.enabled()) {
    vcd_.set(vblank_id_, 1);
    vcd_.set(vblank_id_, 0, timing_->frame_start(0));
    vcd_.set(surface_id_, current_addr_);
    trace_lines(0, mode_.v_active, 0);
  }
}

void DisplayEngine::disable() {
  ++gen_;
  enabled_ = false;
  set_power(kOff, sc_time_stamp());
  vblank_ev_.cancel();
  dma_ev_.notify(SC_ZERO_TIME);
}

// Line numbers from pixel tick `first_px` (a vblank start) to the end of frame `frame`'s active lines.
void DisplayEngine::trace_lines(uint64_t first_px, unsigned first_value, uint64_t frame) {
  const unsigned vb = timing_->vblank_lines();
  for (unsigned k = 0; k < vb; ++k)
    vcd_.set(line_id_, first_value + k, timing_->ticks_time(first_px + uint64_t(k) * mode_.h_total()));
  for (unsigned l = 0; l < mode_.v_active; ++l) vcd_.set(line_id_, l, timing_->line_start(frame, l));
}

void DisplayEngine::set_power(size_t s, const sc_time& at) {
  const bool was = power_.state() == kScan;
  power_.set(s, at);
  if (on_fetching && was != (s == kScan)) on_fetching(s == kScan);
}

void DisplayEngine::catch_up() {
  while (enabled_ && timing_->vblank_start(next_vblank_) <= sc_time_stamp()) vblank(next_vblank_++);
}

void DisplayEngine::vblank(uint64_t n) {
  ++vblanks_;
  // Resync: the beam has passed frame n's last pixel. Whatever of frame n is not requested yet is never
  // fetched: the fetch restarts at frame n + 1's first byte, as a display pipe restarts at the vertical
  // blank (without it a DMA behind the beam would fall frames behind and show a buffer the app has
  // since reused). Each request's worth skipped is an underflow; requests in flight arrive, late.
  const uint64_t fb = timing_->frame_bytes(), end = (n + 1) * fb;
  if (issued_ < end && n < surfaces_.size() && surfaces_[n].self_refresh) {  // a PSR frame: nothing to fetch
    issued_ = end;
    dma_ev_.notify(SC_ZERO_TIME);
  } else if (issued_ < end) {
    const uint64_t off = issued_ % fb, skip = end - issued_;
    const unsigned line = unsigned(off / timing_->row_bytes());
    const sc_time now = sc_time_stamp(), need = timing_->need_time(issued_);
    for (uint64_t k = 0; k < (skip + req_ - 1) / req_; ++k) {
      ++underflows_;
      if (underflow_records_.size() < kUnderflowRecords) underflow_records_.push_back({n, line, now, need});
      if (on_underflow) on_underflow(n, line, now);
    }
    if (vcd_.enabled()) vcd_.set(underflow_id_, underflows_);
    issued_ = end;
    skipped_ += skip;
    stopped_ = false;
    dma_ev_.notify(SC_ZERO_TIME);
  }
  const bool latched = flip_pending_;
  if (latched) {
    current_addr_ = surface_reg_;
    flip_pending_ = false;
    ++flips_latched_;
  }
  // Frame n+1's surface is known from now on (C6: a new surface takes effect on the next frame). PSR:
  // after psr_idle_frames vblanks without a flip the panel refreshes itself until the next flip.
  frames_since_flip_ = latched ? 0 : frames_since_flip_ + 1;
  const bool self_refresh = psr_ && frames_since_flip_ >= psr_idle_frames_;
  if (self_refresh) ++psr_frames_;
  surfaces_.push_back(Surface{current_addr_, std::max<uint64_t>(pitch_reg_, timing_->row_bytes()), self_refresh});
  set_power(self_refresh ? kPsr : kScan, timing_->vblank_start(n));
  latch_ev_.notify(SC_ZERO_TIME);
  if (control_ & dr::kCtrlVblankIrq) bus_.post32(msi_addr_, msi_data_ + dr::kVblankVector);
  if (latched && (control_ & dr::kCtrlFlipIrq)) bus_.post32(msi_addr_, msi_data_ + dr::kFlipVector);
  if (vcd_.enabled()) {
    const sc_time v = timing_->vblank_start(n);
    vcd_.set(vblank_id_, 1, v);
    vcd_.set(vblank_id_, 0, timing_->frame_start(n + 1));
    if (latched) {
      vcd_.set(flip_id_, 1, v);
      vcd_.set(flip_id_, 0, v + sc_time(1, SC_NS));
      vcd_.set(surface_id_, current_addr_, v);
    }
    trace_lines(timing_->ticks(v), mode_.v_active, n + 1);
  }
}

void DisplayEngine::vblank_thread() {
  for (;;) {
    catch_up();
    if (enabled_) vblank_ev_.notify(timing_->vblank_start(next_vblank_) - sc_time_stamp());
    wait();
  }
}

// ---- scan-out DMA ----

uint64_t DisplayEngine::bytes_consumed() const { return enabled_ ? timing_->consumed(sc_time_stamp()) : 0; }

sc_time DisplayEngine::active_time() const { return enabled_ ? timing_->active_time(sc_time_stamp()) : SC_ZERO_TIME; }

bool DisplayEngine::beam_in_active(const sc_time& t) const {
  const uint64_t p = timing_->ticks(t), lead = uint64_t(timing_->vblank_lines()) * mode_.h_total();
  if (p < lead) return false;
  return (p - lead) % (uint64_t(mode_.h_total()) * mode_.v_total()) < uint64_t(mode_.v_active) * mode_.h_total();
}

DisplayEngine::Step DisplayEngine::next_step() {
  Step st;
  catch_up();
  if (!enabled_) return st;  // Disabled
  const sc_time now = sc_time_stamp();
  const uint64_t fb = timing_->frame_bytes();
  st.frame = issued_ / fb;
  st.len = std::min(req_, fb - issued_ % fb);  // a request never spans two frames
  // Frame n+1's surface is latched at frame n's vblank start; a PSR frame is not fetched at all.
  if (st.frame >= surfaces_.size() || surfaces_[st.frame].self_refresh) {
    st.kind = Step::WaitLatch;
    return st;
  }
  if (inflight_ >= outstanding_) {
    st.kind = Step::WaitSlot;
    return st;
  }
  const uint64_t consumed = timing_->consumed(now);
  const uint64_t level = issued_ - std::min(issued_, consumed);
  // Resume when the level falls below the watermark: consumed > issued - watermark. A watermark of
  // 0 % resumes when the buffer is empty (below one byte): a level can never fall below zero.
  const uint64_t wm = std::max<uint64_t>(watermark_, 1);
  if (!stopped_ && level + st.len > fifo_) stopped_ = true;  // no room counting everything in flight
  // (stopping implies level >= wm: level > fifo - len >= fifo - request >= watermark, and > 0.)
  if (stopped_ && level >= wm) {
    st.kind = Step::WaitLevel;
    st.until = timing_->time_consumed(issued_ - wm + 1) - now;  // later than now: consumed < issued - wm + 1
    return st;
  }
  stopped_ = false;
  st.kind = Step::Issue;
  return st;
}

void DisplayEngine::dma_thread() {
  for (;;) {
    const Step st = next_step();
    switch (st.kind) {
      case Step::Disabled: wait(dma_ev_); break;
      case Step::WaitLatch: wait(latch_or_dma_); break;
      case Step::WaitSlot: wait(slot_or_dma_); break;
      case Step::WaitLevel: wait(st.until, dma_ev_); break;
      case Step::Issue:
        for (auto& sl : slots_)
          if (!sl->busy) {
            issue(*sl, st.frame, st.len);
            break;
          }
        break;
    }
  }
}

void DisplayEngine::issue(Slot& s, uint64_t frame, uint64_t len) {
  s.busy = true;
  s.ready = true;
  s.stream_byte = issued_;
  s.len = len;
  s.frame = frame;
  s.gen = gen_;
  s.surface = surfaces_[frame];
  s.issue = sc_time_stamp();
  if (immediate_pending_) {  // the immediate flip takes effect with this request: the tear is at its line
    immediate_pending_ = false;
    ++immediate_flips_;
    const TearRecord t{frame, unsigned((issued_ % timing_->frame_bytes()) / timing_->row_bytes()), s.surface.addr,
                       timing_->need_time(issued_)};
    if (on_tear) on_tear(t);
    if (control_ & dr::kCtrlFlipIrq) bus_.post32(msi_addr_, msi_data_ + dr::kFlipVector);
    if (vcd_.enabled()) vcd_.set(tear_id_, t.line, t.time);
  }
  issued_ += len;
  ++inflight_;
  ++requests_;
  s.start.notify();  // the slot's read leaves now
  if (vcd_.enabled()) {
    const uint64_t c = timing_->consumed(sc_time_stamp()), have = arrived_ + skipped_;
    vcd_.set(fifo_id_, have > c ? have - c : 0);
  }
}

void DisplayEngine::dma_slot(Slot& s) {
  for (;;) {
    while (!s.ready) wait(s.start);
    s.ready = false;
    const uint64_t off = s.stream_byte % timing_->frame_bytes(), row = timing_->row_bytes();
    if (s.surface.pitch == row) {
      ZeroHint zh = s.zero.hint(unsigned(s.len));
      bus_.read(s.surface.addr + off, s.buf.data(), unsigned(s.len), SC_ZERO_TIME, &zh);
      s.zero.after_read(zh, unsigned(s.len));
    } else {  // pitched rows: one read per row piece
      s.zero.clobbered();
      for (uint64_t pos = off; pos < off + s.len;) {
        const uint64_t n = std::min(row - pos % row, off + s.len - pos);
        bus_.read(s.surface.addr + (pos / row) * s.surface.pitch + pos % row, s.buf.data() + (pos - off), unsigned(n));
        pos += n;
      }
    }
    arrived(s);
    // The freed slot takes the next request itself when the DMA would issue one now (the common case
    // in a refill): the same instant and stream order as the DMA thread, without waking it.
    const Step st = next_step();
    if (st.kind == Step::Issue)
      issue(s, st.frame, st.len);
    else
      slot_free_ev_.notify(SC_ZERO_TIME);  // a request slot frees at its arrival
  }
}

void DisplayEngine::arrived(Slot& s) {
  s.busy = false;
  --inflight_;
  if (s.gen != gen_) return;  // issued before a disable: dropped
  const sc_time a = sc_time_stamp();
  const ScanTiming& tm = *timing_;
  const uint64_t c = tm.consumed(a);
  const uint64_t have = arrived_ + skipped_;  // the stream bytes the buffer has had (skipped: counted as passed)
  if (beam_in_active(a)) min_fifo_ = std::min(min_fifo_, have > c ? have - c : 0);
  arrived_ += s.len;  // a late chunk still counts as delivered: the beam never stalls
  const uint64_t off = s.stream_byte % tm.frame_bytes();
  const sc_time need = tm.need_time(s.stream_byte);
  if (a > need) {
    ++underflows_;
    const unsigned line = unsigned(off / tm.row_bytes());
    if (underflow_records_.size() < kUnderflowRecords) underflow_records_.push_back({s.frame, line, a, need});
    if (vcd_.enabled()) vcd_.set(underflow_id_, underflows_);
    if (on_underflow) on_underflow(s.frame, line, a);
  }
  if (off == 0) {
    ++frames_started_;
    FrameRecord r{s.frame, s.surface.addr, 0, tm.frame_start(s.frame)};
    std::memcpy(&r.first_qword, s.buf.data(), std::min<uint64_t>(8, s.len));
    if (on_frame) on_frame(r);
  }
  if (vcd_.enabled()) vcd_.set(fifo_id_, have + s.len > c ? have + s.len - c : 0);
  if (on_request)
    on_request(RequestRecord{s.stream_byte, s.len, s.frame,
                             s.surface.addr + (off / tm.row_bytes()) * s.surface.pitch + off % tm.row_bytes(), s.issue,
                             a});
}

}  // namespace gpumodel
