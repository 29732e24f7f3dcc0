#include "hw_model/interconnect/iommu.h"

#include <algorithm>
#include <cstring>

#include "hw_model/core/bus.h"
#include "hw_model/core/tlm_check.h"

namespace gpumodel {

using namespace sc_core;

void Iommu::declare_params(ParamSet& ps) {
  ps.declare_enum(
      "iommu.model", "physical", {"physical", "gpuva_iommu", "gpuva_iommu_global"},
      "Q: Allocation notifications (A3) / DXGK_VIDMMCAPS IoMmu addressing models: physical = no DMA remapping; "
      "gpuva_iommu = GpuVaIoMmu, a domain per adapter; gpuva_iommu_global = GpuVaIoMmuGlobal, one "
      "domain shared by every adapter");
  ps.declare_int("iommu.iotlb_entries", 64, "entries", 1, 1 << 16,
                 "A: IOTLB entries, 64 (Intel VT-d IOTLBs are reported at 32-128 entries; Amit et al., 'IOMMU: "
                 "Strategies for Mitigating the IOTLB Bottleneck', WIOSCA 2010)");
  ps.declare_real("iommu.walk_read_ns", 90, "ns", 0, 1e6,
                  "A: one table level of an IOTLB miss = one DRAM read beside the memory controller "
                  "(sysmem.read_latency_ns 90 ns); 4 levels");
}

Iommu::Model Iommu::model_of(const ParamSet& ps) {
  const std::string& m = ps.get_enum("iommu.model");
  return m == "gpuva_iommu" ? Model::GpuVaIoMmu : m == "gpuva_iommu_global" ? Model::GpuVaIoMmuGlobal : Model::Physical;
}

Iommu::Iommu(sc_module_name name, const ParamSet& ps, Memory& tables, uint64_t msi_base, uint64_t msi_size)
    : sc_module(name),
      tsock("tsock"),
      isock("isock"),
      regs("regs"),
      model_(model_of(ps)),
      tables_(tables),
      msi_base_(msi_base),
      msi_size_(msi_size),
      walk_read_(ps.get_ns("iommu.walk_read_ns")),
      iotlb_(size_t(ps.get_int("iommu.iotlb_entries"))),
      deferred_("deferred") {
  tsock.register_b_transport(this, &Iommu::b_transport);
  regs.register_b_transport(this, &Iommu::b_regs);
}

bool Iommu::walk(uint64_t root, uint64_t addr, uint64_t& frame) {
  uint64_t table = root;
  for (int level = 3; level >= 0; --level) {
    const uint64_t e = tables_.peek64(table + 8ull * ((addr >> (12 + 9 * level)) & 511));
    if (!(e & 1)) return false;
    table = e & 0x000F'FFFF'FFFF'F000ull;
  }
  frame = table >> 12;
  return true;
}

void Iommu::b_transport(int port, tlm::tlm_generic_payload& t, sc_time& delay) {
  const uint64_t a = t.get_address();
  if (model_ == Model::Physical) {
    checked_b_transport(isock, t, delay, isock.name());
    return;
  }
  // In arrival order: a request waits for the one ahead of it in the translation pipe (an MSI does not
  // pass the posted writes before it, PCIe ordering). Every 4 KiB page the access touches is translated
  // (and must be mapped); MSI and the bypass ranges are not remapped.
  const sc_time now = sc_time_stamp();
  sc_time at = max_time(now + delay, busy_until_);
  bool pass = a >= msi_base_ && a - msi_base_ < msi_size_;
  for (auto& [b, s] : bypass_) pass = pass || (a >= b && a - b < s);
  if (pass) {
    busy_until_ = at;
    delay = at - now;
    checked_b_transport(isock, t, delay, isock.name());
    return;
  }
  const uint64_t root = root_[unsigned(port) % kPorts];
  uint64_t frame = 0;
  bool ok = true;
  const uint64_t last = (a + std::max<unsigned>(t.get_data_length(), 1) - 1) >> 12;
  for (uint64_t page = a >> 12; ok && page <= last; ++page) {
    uint64_t f = 0;
    ok = translate_page(root, page, f, at);
    if (page == a >> 12) frame = f;
  }
  busy_until_ = at;
  delay = at - now;
  if (on_dma) on_dma(unsigned(port), a, t.get_data_length(), at, ok);
  if (!ok) {
    ++faults_;
    fault_addr_ = a;
    fault_port_ = unsigned(port);
    if (on_fault) on_fault(unsigned(port), a, t.is_write());
    if (t.is_read()) std::memset(t.get_data_ptr(), 0xff, t.get_data_length());  // UR completion: all ones
    t.set_response_status(tlm::TLM_OK_RESPONSE);  // the requester is not told (a posted write is dropped)
    return;
  }
  // An access does not cross a 4 KiB page of the DMA address (the engines split at pages).
  t.set_address((frame << 12) | (a & 0xfff));
  checked_b_transport(isock, t, delay, isock.name());
  t.set_address(a);
}

bool Iommu::translate_page(uint64_t root, uint64_t page, uint64_t& frame, sc_time& at) {
  for (Entry& e : iotlb_)
    if (e.valid && e.page == page && e.root == root) {
      ++hits_;
      e.lru = ++tick_;
      frame = e.frame;
      return true;
    }
  ++misses_;
  at += walk_read_ * 4.0;
  if (root == 0 || !walk(root, page << 12, frame)) return false;
  Entry* victim = &iotlb_[0];
  for (Entry& e : iotlb_) {
    if (!e.valid) {
      victim = &e;
      break;
    }
    if (e.lru < victim->lru) victim = &e;
  }
  *victim = Entry{root, page, frame, ++tick_, true};
  return true;
}

void Iommu::b_regs(tlm::tlm_generic_payload& t, sc_time& delay) {
  const uint64_t off = t.get_address() - kBase;
  const unsigned len = t.get_data_length();
  uint64_t v = 0;
  if (t.is_write()) {
    std::memcpy(&v, t.get_data_ptr(), len);
    deferred_.after(delay, [this, off, v] {
      if (off < kRoot + 8 * kPorts)
        root_[off / 8] = v;
      else if (off == kInvalidate)
        for (Entry& e : iotlb_)
          if (v == 0 || e.root == v) e.valid = false;
    });
  } else {
    wait(delay);  // a read samples the registers when it arrives
    delay = SC_ZERO_TIME;
    if (off < kRoot + 8 * kPorts)
      v = root_[off / 8];
    else if (off == kFaults)
      v = faults_;
    else if (off == kFaultAddr)
      v = fault_addr_;
    else if (off == kFaultPort)
      v = fault_port_;
    std::memcpy(t.get_data_ptr(), &v, len);
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace gpumodel
