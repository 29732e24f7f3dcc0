#include "hw_model/memory/memory.h"

#include <algorithm>
#include <cstring>

#include "hw_model/core/bus.h"
#include "hw_model/core/tlm_check.h"

namespace gpumodel {

using namespace sc_core;

namespace {
constexpr tlm_check::TargetCaps kCaps{/*byte_enables=*/true, /*streaming=*/false};

// Whether a read filled all eight bytes from `off` (a torn-value watch sees only whole words).
bool whole_qword(const tlm::tlm_generic_payload& t, unsigned off) {
  if (!t.get_byte_enable_ptr()) return true;
  for (unsigned i = off; i < off + 8; ++i)
    if (!tlm_check::byte_enabled(t, i)) return false;
  return true;
}
}  // namespace

void Memory::declare_params(ParamSet& ps, const std::string& p, bool local) {
  if (local) {
    ps.declare_real(p + "read_latency_ns", 250, "ns", 0, 1e6,
                    "docs/calibration.md GPU: local memory access 400-600 engine cycles, default 500 at the "
                    "2.0 GHz engine clock = 250 ns (CUDA C++ Best Practices Guide, Memory Instructions)");
    ps.declare_real(p + "write_latency_ns", 250, "ns", 0, 1e6,
                    "D: a write is visible when it reaches the same point a read samples, so it takes "
                    "the read path's 250 ns (docs/calibration.md local memory access)");
    ps.declare_real(p + "bandwidth_gbps", 1008, "GB/s", 0.001, 1e5,
                    "Q: RTX 4090 GDDR6X 1008 GB/s (vendor specification page)");
    ps.declare_int(p + "size_bytes", int64_t(16) << 30, "bytes", 1 << 20, int64_t(1) << 40,
                   "A: 16 GiB of VRAM, a desktop dGPU");
  } else {
    ps.declare_real(p + "read_latency_ns", 90, "ns", 0, 1e6,
                    "D: 550 ns GPU small-read round trip (docs/calibration.md, pcie-bench) minus 2 x 200 ns "
                    "link hop minus 2 x 30 ns root complex = 90 ns; typical loaded DDR4/DDR5 latency");
    ps.declare_real(p + "write_latency_ns", 90, "ns", 0, 1e6,
                    "D: equal to the read latency, so a read never passes an earlier write (PCIe "
                    "ordering) by construction");
    ps.declare_real(p + "bandwidth_gbps", 76.8, "GB/s", 0.001, 1e5,
                    "Q: dual-channel DDR5-4800, 2 x 38.4 GB/s (JEDEC JESD79-5 data rate x 8 B)");
    ps.declare_int(p + "size_bytes", int64_t(16) << 30, "bytes", 1 << 20, int64_t(1020) << 30,
                   "A: 16 GiB of host DRAM; at most 1020 GiB, the room the address map leaves between "
                   "its base (4 GiB, above the PCI hole) and the VRAM aperture at 1 TiB");
  }
}

Memory::Memory(sc_module_name name, const ParamSet& ps, const std::string& p, uint64_t base)
    : sc_module(name),
      tsock("tsock"),
      base_(base),
      size_(uint64_t(ps.get_int(p + "size_bytes"))),
      read_latency_(ps.get_ns(p + "read_latency_ns")),
      write_latency_(ps.get_ns(p + "write_latency_ns")),
      bytes_per_ps_(ps.get_real(p + "bandwidth_gbps") / 1000.0) {
  tsock.register_b_transport(this, &Memory::b_transport);
  SC_HAS_PROCESS(Memory);
  SC_METHOD(apply_due);
  sensitive << apply_ev_;
  dont_initialize();
}

Memory::~Memory() {
  for (Pending* p : pending_) delete p;
  for (Pending* p : free_) delete p;
}

const sc_time& Memory::xfer(unsigned len) {
  // sc_time's double constructor is costly and accesses repeat one length (a CV, a packet fetch): the
  // last length's time is kept, computed exactly as before.
  if (len != xfer_len_) {
    xfer_len_ = len;
    xfer_ = sc_time(double(len) / bytes_per_ps_, SC_PS);
  }
  return xfer_;
}

sc_time Memory::occupy(const sc_time& arrival, unsigned len) { return port_.reserve(arrival, xfer(len)); }

void Memory::b_transport(int, tlm::tlm_generic_payload& t, sc_time& delay) {
  checked_target(t, delay, name(), kCaps, [this](tlm::tlm_generic_payload& tt, sc_time& d) { serve(tt, d); });
}

namespace {
// Whether n bytes are all zero, a word at a time (the bulk copies of the display scenarios move mostly
// never-written surfaces; see poke).
bool all_zero(const unsigned char* p, unsigned n) {
  static const unsigned char zeros[4096] = {};
  for (unsigned i = 0; i < n; i += sizeof zeros)
    if (std::memcmp(p + i, zeros, std::min<unsigned>(sizeof zeros, n - i))) return false;
  return true;
}
}  // namespace

void Memory::serve(tlm::tlm_generic_payload& t, sc_time& delay) {
  uint64_t addr = t.get_address();
  unsigned len = t.get_data_length();
  if (t.get_streaming_width() < len) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);  // a memory port, not a FIFO: no streaming
    return;
  }
  if (t.get_byte_enable_ptr() && t.get_byte_enable_length() == 0) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);  // enables with no length: refused, in any build
    return;
  }
  if (addr < base_ || addr + len > base_ + size_ || len == 0) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const sc_time now = sc_time_stamp();
  const sc_time xfer = Memory::xfer(len);
  if (t.is_write()) {
    const sc_time arrival = now + delay;
    sc_time start = occupy(arrival, len);
    Pending* w;
    if (free_.empty()) {
      w = new Pending;
    } else {
      w = free_.back();
      free_.pop_back();
    }
    w->arrival = arrival;
    w->visible_at = start + xfer + write_latency_;
    w->seq = seq_++;
    w->addr = addr;
    w->len = len;
    // An all-zero write (most of a never-drawn surface's copy) keeps no copy of its data: host speed only,
    // it becomes visible exactly as any other write.
    const ZeroHint* zh = t.get_extension<ZeroHint>();
    w->zero = !t.get_byte_enable_ptr() && ((zh && zh->buffer_zero) || all_zero(t.get_data_ptr(), len));
    if (w->zero)
      w->data.clear();
    else
      w->data.assign(t.get_data_ptr(), t.get_data_ptr() + len);
    bytes_written_ += len;
    w->enables.clear();
    if (t.get_byte_enable_ptr())
      for (unsigned i = 0; i < len; ++i) w->enables.push_back(tlm_check::byte_enabled(t, i));
    const bool earliest = pending_.empty() || Later()(pending_.front(), w);
    pending_.push_back(w);
    std::push_heap(pending_.begin(), pending_.end(), Later());
    if (earliest) apply_ev_.notify(w->visible_at - now);
    delay = w->visible_at - now;
  } else if (t.is_read()) {
    const sc_time arrival = now + delay;
    sc_time start = occupy(arrival, len);
    bytes_read_ += len;
    // A read does not pass a write that reached the controller before it.
    sc_time sample = start + xfer + read_latency_;
    for (const Pending* w : pending_)
      if (w->arrival <= arrival && w->visible_at > sample) sample = w->visible_at;
    if (sample > now) wait(sample - now);
    apply_due();
    ZeroHint* zh = t.get_extension<ZeroHint>();
    if (zh && !t.get_byte_enable_ptr() && unbacked(addr, len)) {  // never written: zeros
      if (!zh->buffer_zero) std::memset(t.get_data_ptr(), 0, len);
      zh->data_zero = true;
    } else if (!t.get_byte_enable_ptr()) {
      peek(addr, t.get_data_ptr(), len);
    } else {  // only the enabled bytes are the memory's; the rest stay as the initiator left them
      std::vector<unsigned char> all(len);
      peek(addr, all.data(), len);
      for (unsigned i = 0; i < len; ++i)
        if (tlm_check::byte_enabled(t, i)) t.get_data_ptr()[i] = all[i];
    }
    if (!read_watches_.empty() && len >= 8 && any_page(read_watched_pages_, addr, len)) {
      auto check = [&](uint64_t q) {
        auto it = read_watches_.find(q);
        if (it == read_watches_.end() || !whole_qword(t, unsigned(q - addr))) return;
        uint64_t v;
        std::memcpy(&v, t.get_data_ptr() + (q - addr), 8);
        for (auto& cb : it->second) cb(v);
      };
      const uint64_t first = (addr + 7) & ~7ull, end = (addr + len) & ~7ull;  // whole qwords inside
      if (len <= kScanBytes) {
        for (uint64_t q = first; q < end; q += 8) check(q);
      } else {
        each_watched(read_watched_, first, end, check);
      }
    }
    delay = SC_ZERO_TIME;
  } else {
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Memory::apply_due() {
  const sc_time now = sc_time_stamp();
  while (!pending_.empty() && pending_.front()->visible_at <= now) {
    std::pop_heap(pending_.begin(), pending_.end(), Later());
    Pending* w = pending_.back();
    pending_.pop_back();
    store(w->addr, w->zero ? nullptr : w->data.data(), w->len, w->enables);
    free_.push_back(w);
  }
  if (!pending_.empty()) apply_ev_.notify(pending_.front()->visible_at - now);
}

void Memory::store(uint64_t addr, const unsigned char* p, unsigned len, const std::vector<unsigned char>& enables) {
  // One copy, at one time: an aligned 8-byte write is never seen torn (F1).
  if (!p) {
    zero(addr, len);
  } else if (enables.empty()) {
    poke(addr, p, len);
  } else {
    for (unsigned i = 0; i < len; ++i)
      if (enables[i]) poke(addr + i, p + i, 1);
  }
  if (watch_pages_.empty()) return;
  // Page watches first, once per watched page the write touches.
  if (!page_watched_.empty()) {
    const uint64_t first = addr / kPage, last = (addr + len - 1) / kPage;
    auto call = [&](uint64_t page) {
      auto it = watch_pages_.find(page);
      if (it != watch_pages_.end())
        for (auto& cb : it->second->page) cb(addr, len);
    };
    if (last - first < 16) {
      for (uint64_t page = first; page <= last; ++page) call(page);
    } else {
      each_watched(page_watched_, first, last + 1, call);
    }
  }
  if (watched_.empty()) return;
  const WatchedPage* wp = nullptr;
  uint64_t wp_page = ~0ull;
  auto notify = [&](uint64_t q) {
    if (q / kPage != wp_page) {
      wp_page = q / kPage;
      auto it = watch_pages_.find(wp_page);
      wp = it == watch_pages_.end() || it->second->slot.empty() ? nullptr : it->second.get();
    }
    if (!wp) return;
    const unsigned i = wp->slot[(q % kPage) / 8];
    if (!i) return;
    const WatchSlot& s = wp->slots[i - 1];
    s.first(addr, len);
    for (auto& cb : s.more) cb(addr, len);
  };
  if (len <= kScanBytes) {
    for (uint64_t q = addr & ~7ull; q < addr + len; q += 8) notify(q);
  } else {
    each_watched(watched_, addr & ~7ull, addr + len, notify);
  }
}

unsigned char* Memory::backing(uint64_t page) const {
  CachedPage& c = page_cache_[page % kPageCache];
  if (c.data && c.page == page) return c.data;
  auto it = pages_.find(page);
  if (it == pages_.end()) return nullptr;  // not cached: it may be backed later
  c = {page, it->second.get()};
  return c.data;
}

void Memory::peek(uint64_t addr, void* dst, unsigned len) const {
  auto* out = static_cast<unsigned char*>(dst);
  for_pages(addr, len, [&](uint64_t page, unsigned off, unsigned n, unsigned done) {
    const unsigned char* pg = backing(page);
    if (!pg)
      std::memset(out + done, 0, n);
    else
      std::memcpy(out + done, pg + off, n);
  });
}

void Memory::poke(uint64_t addr, const void* src, unsigned len) {
  auto* in = static_cast<const unsigned char*>(src);
  for_pages(addr, len, [&](uint64_t page, unsigned off, unsigned n, unsigned done) {
    unsigned char* pg = backing(page);
    if (!pg) {
      if (all_zero(in + done, n)) return;  // an absent page reads as zero already
      auto& owned = pages_[page];
      owned.reset(new unsigned char[kPage]);
      std::memset(owned.get(), 0, kPage);
      pg = owned.get();
    }
    std::memcpy(pg + off, in + done, n);
  });
}

bool Memory::unbacked(uint64_t addr, unsigned len) const {
  for (uint64_t page = addr / kPage, last = (addr + len - 1) / kPage; page <= last; ++page)
    if (backing(page)) return false;
  return true;
}

void Memory::zero(uint64_t addr, unsigned len) {
  for_pages(addr, len, [&](uint64_t page, unsigned off, unsigned n, unsigned) {
    if (unsigned char* pg = backing(page)) std::memset(pg + off, 0, n);  // an absent page is zero already
  });
}

void Memory::watch(uint64_t addr, unsigned len, Watch cb) {
  for (uint64_t q = addr & ~7ull; q < addr + len; q += 8) {
    auto& wp = watch_pages_[q / kPage];
    if (!wp) wp = std::make_unique<WatchedPage>();
    if (wp->slot.empty()) wp->slot.assign(kPage / 8, 0);
    uint16_t& i = wp->slot[(q % kPage) / 8];
    if (!i) {
      wp->slots.push_back({cb, {}});
      i = uint16_t(wp->slots.size());
    } else {
      wp->slots[i - 1].more.push_back(cb);
    }
    watched_.insert(q);
  }
}

void Memory::watch_page(uint64_t page_addr, Watch cb) {
  auto& wp = watch_pages_[page_addr / kPage];
  if (!wp) wp = std::make_unique<WatchedPage>();
  wp->page.push_back(std::move(cb));
  page_watched_.insert(page_addr / kPage);
}

}  // namespace gpumodel
