#include "hw_model/gpu/mmu.h"

#include <algorithm>

namespace gpumodel {

void GpuMmu::declare_params(ParamSet& ps) {
  ps.declare_int("mmu.tlb_entries", 512, "entries", 1, 1 << 16,
                 "A: a GPU engine's last-level TLB, 512 entries (NVIDIA's L2 uTLB is reported at 512-2048 "
                 "entries, Jia et al. 'Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking' "
                 "2018); 512 x 64 KiB covers 32 MiB");
  ps.declare_int("mmu.tlb_ways", 8, "ways", 1, 1 << 16,
                 "A: 8-way set associative, LRU (a common last-level TLB organisation); = mmu.tlb_entries: fully "
                 "associative");
  ps.declare_int("mmu.pwc_entries", 32, "entries", 0, 1 << 16,
                 "A: a page-walk cache of 32 dual PDEs (64 MiB of reach): a miss in a recently walked 2 MiB region "
                 "reads only its PTE (GPU MMUs cache upper levels, e.g. AMD's UTCL2 'PDE cache'; Power et al., "
                 "'Supporting x86-64 Address Translation for 100s of GPU Lanes', HPCA 2014); 0 = none");
  ps.declare_real("mmu.invalidate_ns", 250, "ns", 0, 1e6,
                  "A: a FLUSH_TLB's invalidation handshake with every TLB of the adapter after its release, "
                  "250 ns (about a system-scope barrier, docs/calibration.md ~200 ns, plus the acknowledgement)");
}

GpuMmu::GpuMmu(const ParamSet& ps, Read read) : read_(std::move(read)) {
  const unsigned entries = unsigned(ps.get_int("mmu.tlb_entries"));
  ways_ = std::min<unsigned>(unsigned(ps.get_int("mmu.tlb_ways")), entries);
  sets_ = entries / ways_;
  tlb_.resize(size_t(sets_) * ways_);
  pwc_.resize(size_t(ps.get_int("mmu.pwc_entries")));
}

GpuMmu::Entry* GpuMmu::find(uint64_t root, uint64_t va, bool big) {
  const uint64_t vpn = va / (big ? pt::kBigPage : pt::kSmallPage);
  Entry* set = &tlb_[size_t(vpn % sets_) * ways_];
  for (unsigned w = 0; w < ways_; ++w) {
    Entry& e = set[w];
    if (e.valid && e.vpn == vpn && e.root == root && e.big == big) return &e;
  }
  return nullptr;
}

void GpuMmu::insert(uint64_t root, uint64_t va, bool big, uint64_t frame, bool system, bool read_only) {
  if (find(root, va, big)) return;  // another walker of this unit filled it meanwhile
  const uint64_t vpn = va / (big ? pt::kBigPage : pt::kSmallPage);
  Entry* set = &tlb_[size_t(vpn % sets_) * ways_];
  Entry* victim = &set[0];
  for (unsigned w = 0; w < ways_; ++w) {
    if (!set[w].valid) {
      victim = &set[w];
      break;
    }
    if (set[w].lru < victim->lru) victim = &set[w];
  }
  *victim = Entry{root, vpn, frame, ++tick_, true, big, system, read_only};
}

GpuMmu::Result GpuMmu::lookup(uint64_t root, uint64_t va) {
  Result r;
  if (root == 0) return {true, va, uint64_t(1) << 62, false};  // MMU off: physical
  for (bool big : {false, true}) {
    if (Entry* e = find(root, va, big)) {
      const uint64_t page = big ? pt::kBigPage : pt::kSmallPage;
      e->lru = ++tick_;
      r.ok = true;
      r.addr = e->frame * page + va % page;
      r.page_left = page - va % page;
      r.system = e->system;
      r.read_only = e->read_only;
      return r;
    }
  }
  return r;
}

uint64_t GpuMmu::read64(uint64_t addr) {
  uint64_t v = 0;
  read_(addr, &v, 8);
  ++walk_reads_;
  return v;
}

GpuMmu::Result GpuMmu::translate(uint64_t root, uint64_t va) {
  Result r = lookup(root, va);
  if (r.ok) {
    ++hits_;
    return r;
  }
  // Miss coalescing: another walk of this unit in the same 64 KiB region: wait for it, look again.
  const std::pair<uint64_t, uint64_t> key{root, va / pt::kBigPage};
  bool waited = false;
  while (std::find(walking_.begin(), walking_.end(), key) != walking_.end()) {
    waited = true;
    sc_core::wait(walk_done_);
  }
  if (waited) {
    ++coalesced_;
    r = lookup(root, va);
    if (r.ok) return r;
  }
  ++misses_;
  walking_.push_back(key);
  r = walk(root, va);
  walking_.erase(std::find(walking_.begin(), walking_.end(), key));
  walk_done_.notify(sc_core::SC_ZERO_TIME);
  return r;
}

GpuMmu::Result GpuMmu::walk(uint64_t root, uint64_t va) {
  Result r;
  auto fault = [this] {
    ++faults_;
    return Result{};
  };
  if (va >> pt::kVaBits) return fault();
  uint64_t pde[2] = {0, 0};
  const uint64_t region = va / pt::kPdeSpan;
  Pde* cached = nullptr;
  for (Pde& p : pwc_)
    if (p.valid && p.region == region && p.root == root) cached = &p;
  if (cached) {
    ++pwc_hits_;
    cached->lru = ++tick_;
    pde[0] = cached->pde[0];
    pde[1] = cached->pde[1];
  } else {
    uint64_t table = root;
    for (int level = 3; level >= 2; --level) {
      const uint64_t e = read64(table + 8ull * pt::index(va, level));
      if (!(e & pt::kValid)) return fault();
      table = e & pt::kTableMask;
    }
    read_(table + 16ull * pt::index(va, 1), pde, 16);
    ++walk_reads_;
    if (!pwc_.empty() && ((pde[0] | pde[1]) & pt::kValid)) {
      Pde* victim = &pwc_[0];
      for (Pde& p : pwc_) {
        if (!p.valid) {
          victim = &p;
          break;
        }
        if (p.lru < victim->lru) victim = &p;
      }
      *victim = Pde{root, region, ++tick_, {pde[0], pde[1]}, true};
    }
  }
  uint64_t pte = 0;
  bool big = false;
  if (pde[0] & pt::kValid) pte = read64((pde[0] & pt::kTableMask) + 8ull * pt::index(va, 0));
  if (!(pte & pt::kValid) && (pde[1] & pt::kValid)) {
    pte = read64((pde[1] & pt::kTableMask) + 8ull * pt::big_index(va));
    big = true;
  }
  if (!(pte & pt::kValid)) return fault();
  const uint64_t page = big ? pt::kBigPage : pt::kSmallPage;
  const uint64_t frame = (pte & pt::kAddrMask) / page;
  insert(root, va, big, frame, pte & pt::kSystem, pte & pt::kReadOnly);
  r.ok = true;
  r.addr = frame * page + va % page;
  r.page_left = page - va % page;
  r.system = pte & pt::kSystem;
  r.read_only = pte & pt::kReadOnly;
  return r;
}

void GpuMmu::invalidate(uint64_t root) {
  ++invalidations_;
  for (Entry& e : tlb_)
    if (root == 0 || e.root == root) e.valid = false;
  for (Pde& p : pwc_)
    if (root == 0 || p.root == root) p.valid = false;
}

}  // namespace gpumodel
