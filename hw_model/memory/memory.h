// A memory target (system DRAM or GPU-local VRAM): sparse byte store with access latency and a port
// bandwidth, and posted writes that become visible at their time.
//
// Parameters (prefix is the instance's, e.g. "sysmem."): read_latency_ns, write_latency_ns,
// bandwidth_gbps, size_bytes. Ports: one multi-target socket. Driver interface: none (it is memory).
// Guarantees: an aligned write of up to 8 bytes becomes visible all at once (F1); a read sees every
// write that arrived before it (it is sampled no earlier than their visibility: an in-order memory
// controller, and with a FIFO link the PCIe rule that a read does not pass an earlier posted write).
// A write still on its way (not arrived) is not waited for: the read sees the old data.
// Byte enables are honoured (PCIe memory TLPs carry them): a write stores only its enabled bytes, a read
// fills only its enabled bytes. A streaming transaction is refused (TLM_BURST_ERROR_RESPONSE).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "hw_model/core/params.h"
#include "hw_model/core/timeline.h"

namespace gpumodel {

class Memory : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Memory> tsock;

  static void declare_params(ParamSet& ps, const std::string& prefix, bool local);
  Memory(sc_core::sc_module_name name, const ParamSet& ps, const std::string& prefix, uint64_t base);
  ~Memory() override;

  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }

  // Backdoor for monitors, tests and the initial loader: no time passes.
  void peek(uint64_t addr, void* dst, unsigned len) const;
  uint64_t peek64(uint64_t addr) const {
    uint64_t v = 0;
    peek(addr, &v, 8);
    return v;
  }
  void poke(uint64_t addr, const void* src, unsigned len);

  // Watch an aligned 64-bit word: `cb` runs when a write to it becomes visible (monitors, traces).
  using Watch = std::function<void(uint64_t addr, unsigned len)>;
  void watch(uint64_t addr, unsigned len, Watch cb);
  // Watch a page: `cb` runs once for each write that touches [page_addr, page_addr + 4096) when it
  // becomes visible, with the write's address and length. For monitors of many words on few pages (the
  // fence values): their state per page, not per word, so a write costs one look-up of its page.
  void watch_page(uint64_t page_addr, Watch cb);
  // Watch reads of an aligned 64-bit word: `cb` gets the 8 bytes a read returned (torn-value monitor).
  using ReadWatch = std::function<void(uint64_t value)>;
  void watch_reads(uint64_t addr, ReadWatch cb) {
    read_watches_[addr & ~7ull].push_back(std::move(cb));
    read_watched_.insert(addr & ~7ull);
    read_watched_pages_.insert(addr / kPage);
  }

  sc_core::sc_time read_latency() const { return read_latency_; }
  // Traffic served through the socket (the backdoor is not counted): DRAM bytes for the results.
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  sc_core::sc_time write_latency() const { return write_latency_; }

 private:
  static constexpr unsigned kPage = 4096;
  void b_transport(int port, tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void serve(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void apply_due();  // SC_METHOD: makes due pending writes visible
  // `enables`: empty, or one flag per byte (the write's byte enables).
  // `p` null: len zero bytes.
  void store(uint64_t addr, const unsigned char* p, unsigned len, const std::vector<unsigned char>& enables);
  void zero(uint64_t addr, unsigned len);            // stores len zero bytes, allocating no page
  bool unbacked(uint64_t addr, unsigned len) const;  // no page holds any of these bytes: they read as zero
  sc_core::sc_time occupy(const sc_core::sc_time& arrival, unsigned len);
  const sc_core::sc_time& xfer(unsigned len);  // len bytes through the port

  struct Pending {
    sc_core::sc_time arrival;  // when the write reached this memory
    sc_core::sc_time visible_at;
    uint64_t seq;
    uint64_t addr;
    unsigned len;
    bool zero;  // all zero: data is empty
    std::vector<unsigned char> data;
    std::vector<unsigned char> enables;  // empty: every byte
  };
  struct Later {
    bool operator()(const Pending* a, const Pending* b) const {
      return a->visible_at != b->visible_at ? a->visible_at > b->visible_at : a->seq > b->seq;
    }
  };

  // Calls f(page, offset in it, bytes in it, bytes before it) for each page [addr, addr + len) touches.
  template <typename F>
  static void for_pages(uint64_t addr, unsigned len, F f) {
    for (unsigned done = 0; done < len;) {
      const uint64_t a = addr + done;
      const unsigned off = unsigned(a % kPage), n = std::min<unsigned>(len - done, kPage - off);
      f(a / kPage, off, n, done);
      done += n;
    }
  }
  std::unordered_map<uint64_t, std::unique_ptr<unsigned char[]>> pages_;
  // The backing of a page, or null (never written non-zero). Pages are never freed, so a direct-mapped
  // cache of recent lookups stays valid: fence values and rings hit the same few pages (host speed only).
  unsigned char* backing(uint64_t page) const;
  struct CachedPage {
    uint64_t page = 0;
    unsigned char* data = nullptr;
  };
  static constexpr unsigned kPageCache = 64;
  mutable std::array<CachedPage, kPageCache> page_cache_{};
  std::vector<Pending*> pending_;  // a heap ordered by Later: the earliest visibility on top
  std::vector<Pending*> free_;     // recycled pending records (the hot path allocates nothing)
  sc_core::sc_event apply_ev_;
  uint64_t seq_ = 0;
  uint64_t bytes_read_ = 0, bytes_written_ = 0;
  Timeline port_;  // bandwidth reservations

  // Write watches by page: a page's qwords index its slots (a fence page holds 64 fences' values at
  // the default stride), so a watched write costs a look-up in a map of pages and one index, and the
  // first watch of a qword sits in its slot; the entries do not grow with the watched words' count.
  struct WatchSlot {
    Watch first;
    std::vector<Watch> more;
  };
  struct WatchedPage {
    std::vector<Watch> page;     // watch_page: every write touching the page
    std::vector<uint16_t> slot;  // per qword: 1 + its index in `slots`, 0 = not watched (empty: none)
    std::vector<WatchSlot> slots;
  };
  std::unordered_map<uint64_t, std::unique_ptr<WatchedPage>> watch_pages_;  // by page number
  std::unordered_map<uint64_t, std::vector<ReadWatch>> read_watches_;
  // The watched qwords in address order: a large access (a copy chunk, a scan-out request) visits only
  // the watched qwords inside it instead of looking up each of its qwords.
  std::set<uint64_t> watched_, read_watched_;
  std::set<uint64_t> page_watched_;  // page numbers with a watch_page
  // The pages holding a read-watched qword: a read looks here first, in a set a fence's page adds one
  // entry to, so reads that touch no watched qword (ring fetches, shadow MVs) cost no look-up in the
  // per-qword map, whose entries grow with the fence count and fall out of the host's caches.
  std::unordered_set<uint64_t> read_watched_pages_;
  static bool any_page(const std::unordered_set<uint64_t>& pages, uint64_t addr, uint64_t len) {
    const uint64_t first = addr / kPage, last = (addr + len - 1) / kPage;
    if (last - first >= 16) return true;  // a large access: each_watched visits only what it holds
    for (uint64_t p = first; p <= last; ++p)
      if (pages.count(p)) return true;
    return false;
  }
  static constexpr unsigned kScanBytes = 64;  // up to this length, look up each qword
  template <typename F>
  static void each_watched(const std::set<uint64_t>& keys, uint64_t first, uint64_t end, F f) {
    for (auto it = keys.lower_bound(first); it != keys.end() && *it < end; ++it) f(*it);
  }

  uint64_t base_, size_;
  sc_core::sc_time read_latency_, write_latency_;
  double bytes_per_ps_;
  unsigned xfer_len_ = ~0u;  // xfer's last length and its time
  sc_core::sc_time xfer_;
};

}  // namespace gpumodel
