#include "hw_model/gpu/bar0.h"

#include <cstring>

#include "hw_model/core/tlm_check.h"
#include "hw_model/gpu/cmp.h"
#include "hw_model/gpu/node.h"
#include "hw_model/gpu/regs.h"

namespace gpumodel {

using namespace sc_core;

void Bar0::declare_params(ParamSet& ps) {
  ps.declare_real("gpu.bar0_read_latency_ns", 540, "ns", 0, 1e6,
                  "D: CPU MMIO read 1.0 us (middle of gdrcopy copylat's 0.9-1.1 us) minus "
                  "2 x (200 link hop + 30 root complex) = 540 ns register-bus latency");
  ps.declare_real("gpu.bar0_write_latency_ns", 20, "ns", 0, 1e6,
                  "A: posted register write lands 20 ns after it reaches the adapter");
}

Bar0::Bar0(sc_module_name name, const ParamSet& ps, Cmp& cmp, std::vector<Node*> nodes, const std::string& adapter,
           uint64_t base)
    : sc_module(name),
      tsock("tsock"),
      cmp_(cmp),
      nodes_(std::move(nodes)),
      deferred_("deferred"),
      base_(base),
      read_latency_(ps.get_ns(adapter + ".bar0_read_latency_ns")),
      write_latency_(ps.get_ns(adapter + ".bar0_write_latency_ns")),
      tick_ps_(uint64_t(ps.get_int(adapter + ".timestamp_tick_ps"))),
      engines_(adapter == "gpu" ? uint32_t(ps.get_int("gpu.linked_engines")) : 1),
      link_status_(adapter == "gpu"
                       ? uint32_t(ps.get_int("link.gen")) | uint32_t(ps.get_int("link.lanes")) << regs::kLinkWidthShift
                       : 0) {
  tsock.register_b_transport(this, &Bar0::b_transport);
  map_registers();
}

void Bar0::b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
  checked_target(t, delay, name(), tlm_check::TargetCaps{},
                 [this](tlm::tlm_generic_payload& tt, sc_time& d) { serve(tt, d); });
}

void Bar0::serve(tlm::tlm_generic_payload& t, sc_time& delay) {
  const uint64_t off = t.get_address() - base_;
  const unsigned len = t.get_data_length();
  if (!t.is_read() && !t.is_write()) {
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);  // an IGNORE is not a register write
    return;
  }
  if (t.get_byte_enable_ptr()) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);  // whole registers only, no byte lanes
    return;
  }
  if (t.get_streaming_width() < len || (len != 4 && len != 8) || off % len) {
    t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);  // registers take aligned 32/64-bit access
    return;
  }
  if (t.is_read()) {
    wait(delay + read_latency_);         // sampled when the request has crossed the register bus
    const uint64_t v = regs_.read(off);  // a register with a read side effect may block here (kQLogFlush)
    std::memcpy(t.get_data_ptr(), &v, len);
    delay = SC_ZERO_TIME;
  } else {
    uint64_t v = 0;
    std::memcpy(&v, t.get_data_ptr(), len);
    delay += write_latency_;
    deferred_.after(delay, [this, off, v, len] { regs_.write(off, v, len); });
  }
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

// The adapter's own registers and the nodes' blocks; the CMP declares its fence table, event ring, HW
// queue blocks and doorbells (Cmp::map_registers).
void Bar0::map_registers() {
  using namespace regs;
  using A = RegisterTable;
  regs_.single()
      .reg(kId, "ID", A::R, [](unsigned) { return uint64_t(kIdValue); })
      .reg(kCaps, "CAPS", A::R,
           [this](unsigned) {
             return uint64_t(nodes_.size()) | (cmp_.mv_from_memory() ? kCapsMvFromMemory : 0) |
                    kCapsFenceIrqNamesQueue | (cmp_.combined_fence_events() ? kCapsFenceEventsCombined : 0) |
                    (uint64_t(engines_ - 1) << kCapsEnginesShift) |
                    (uint64_t(cmp_.queue_count() - 1) << kCapsQueuesShift);
           })
      .reg(kLinkStatus, "LINK_STATUS", A::R, [this](unsigned) { return uint64_t(link_status_); })
      .reg(kTimestamp, "TIMESTAMP", A::R, [this](unsigned) { return sc_time_stamp().value() / tick_ps_; })
      .reg(
          kMsiAddr, "MSI_ADDR", A::RW, [this](unsigned) { return msi_addr_; },
          [this](unsigned, uint64_t v, unsigned len) {
            msi_addr_ = len == 8 ? v : (msi_addr_ & ~0xffffffffull) | v;  // a 32-bit write sets the low half
            cmp_.set_msi(msi_addr_, msi_data_);
          })
      .reg(
          kMsiData, "MSI_DATA", A::RW, [this](unsigned) { return uint64_t(msi_data_); },
          [this](unsigned, uint64_t v, unsigned) {
            msi_data_ = uint32_t(v);
            cmp_.set_msi(msi_addr_, msi_data_);
          })
      .reg(kAdapterReset, "ADAPTER_RESET", A::W, nullptr,
           [this](unsigned, uint64_t v, unsigned) {
             if (v & 1) cmp_.adapter_reset();
           })
      .reg(kAdapterStatus, "ADAPTER_STATUS", A::R,
           [this](unsigned) { return uint64_t(cmp_.adapter_resetting()) | (cmp_.busy() ? uint64_t(kAdapterBusy) : 0); })
      .reg(
          kVramSelfRefresh, "VRAM_SELF_REFRESH", A::RW, [this](unsigned) { return uint64_t(vram_self_refresh_); },
          [this](unsigned, uint64_t v, unsigned) { vram_self_refresh_ = (v & 1) != 0; });
  auto node = [this](unsigned n) -> Node& { return *nodes_[n]; };
  regs_.block(kNodeBase, kNodeStride, unsigned(nodes_.size()))
      .reg(kNDmaReadLastPs, "DMA_READ_LAST_PS", A::R, [node](unsigned n) { return node(n).last_dma_read().value(); })
      .reg(kNPackets, "PACKETS", A::R, [node](unsigned n) { return node(n).packets_executed(); })
      .reg(kNLastFence, "LAST_FENCE", A::R, [node](unsigned n) { return node(n).last_fence(); })
      .reg(kNControl, "CONTROL", A::W, nullptr,
           [this](unsigned n, uint64_t v, unsigned) { cmp_.node_control(int(n), uint32_t(v)); })
      .reg(kNStatus, "STATUS", A::R, [node](unsigned n) { return uint64_t(node(n).status()); })
      .reg(
          kNPreemptVector, "PREEMPT_VECTOR", A::RW, [node](unsigned n) { return uint64_t(node(n).preempt_vector()); },
          [node](unsigned n, uint64_t v, unsigned) { node(n).set_preempt_vector(uint32_t(v)); })
      .reg(kNFaultVa, "FAULT_VA", A::R, [node](unsigned n) { return node(n).last_fault_va(); })
      .reg(
          kNFaultVector, "FAULT_VECTOR", A::RW, [node](unsigned n) { return uint64_t(node(n).fault_vector()); },
          [node](unsigned n, uint64_t v, unsigned) { node(n).set_fault_vector(uint32_t(v)); })
      .reg(kNPageFaults, "PAGE_FAULTS", A::R, [node](unsigned n) { return uint64_t(uint32_t(node(n).page_faults())); })
      .reg(kNEngineType, "ENGINE_TYPE", A::R,
           [node](unsigned n) { return uint64_t(dxgk_engine_type(node(n).engine_kind())); })
      .reg(kNPipe, "PIPE", A::R, [node](unsigned n) { return uint64_t(node(n).pipe()); });
  cmp_.map_registers(regs_);
}

}  // namespace gpumodel
