// Command packets: the binary format a node fetches from a ring buffer in memory.
// Each packet starts with a header dword: [31:24] opcode, [23:16] reserved (zero), [15:0] length in
// dwords including the header.
// 64-bit operands are two dwords, low first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpumodel {

enum class Op : uint8_t {
  Nop = 0x00,
  Write64 = 0x01,    // addr, value: a posted 64-bit write (atomic, F1)
  Timestamp = 0x02,  // addr: write the GPU timestamp
  Barrier = 0x03,    // wait until every earlier write of this node is visible
  Compute = 0x04,    // cycles: the engine is busy for this many engine clocks; bit 63 set: a dispatch
                     // that runs with preemption disabled (no mid-command preemption point in it)
  Copy = 0x05,       // src, dst, bytes: DMA copy
  Interrupt = 0x06,  // vector: ask the CMP to send an MSI
  Signal = 0x07,     // slot, value, cv_va, mv_va: write the fence's CurrentValue at cv_va, conditional
                     // interrupt (F3, F5); the VAs are the queue's process's (FenceVa)
                     // [, seq, hNativeFence]: the logged form, 2 dwords more (F16, F17): see kLogPayloadDwords
  Wait = 0x08,       // slot, value, cv_va: the queue waits on the GPU until CurrentValue >= value (F5)
                     // [, seq, hNativeFence]: the logged form: WAIT_UNBLOCKED logged when it unblocks
  Fence = 0x09,      // addr, id, vector: the end of a DMA packet (packet scheduling, TDR in Windows 8 and later): once
                 // every earlier write is visible, write the SubmissionFenceId `id` to `addr`, latch it as the node's
                 // last completed fence ID, and interrupt (DMA completed). A preemption boundary.
  SetPageTable = 0x0A,  // root: the queue's GPU VA space from here on (the physical address of a process's
                        // root page table; 0 = MMU off): what a KMD puts at the head of each DMA packet
                        // when packets of several processes share a ring
  FlushTlb = 0x0B,      // root: a release, then invalidate every TLB of the adapter for that space (0 = all):
                        // DXGK_OPERATION_FLUSH_TLB after a page-table update
};
// SIGNAL and WAIT with the UMD's log instruction (Native GPU fence object 'Log buffer mechanism': "immediately after
// UMD inserts a native fence wait or signal instruction ... it also inserts a command instructing the GPU to write a
// payload at a particular entry"). The model carries that instruction in the same packet, two more dwords: the UMD's
// running entry sequence number for this queue's log (the UMD owns the progression; the entry is seq % NumberOfEntries)
// and the fence's user-mode handle (the entry's hNativeFence). One packet makes the engine's order a property of one
// command: CV, entry, FirstFreeEntryIndex, barrier, then the conditional interrupt check (F17).
constexpr uint32_t kLogPayloadDwords = 2;
constexpr uint32_t kSignalDwords = 8, kWaitDwords = 6;  // the plain forms; logged: + kLogPayloadDwords

// A native fence as one process's packets name it (Native GPU fence object: "readable and writeable using GPU
// virtual address"): the CMP's slot (the hardware's name for the fence, which the driver gave the UMD when the
// process opened it) and the process's own GPU VAs of CurrentValue and MonitoredValue
// (D3DDDI_NATIVEFENCE_MAPPING). An engine runs the process's packets in the process's space, so it reaches
// the values through these; the CMP reaches them through the system process's (F10).
struct FenceVa {
  uint32_t slot = 0;
  uint64_t cv = 0, mv = 0;
};
constexpr uint64_t kComputeNoPreempt = 1ull << 63;  // COMPUTE operand bit: preemption disabled

inline uint32_t header(Op op, uint32_t dwords) { return (uint32_t(op) << 24) | (dwords & 0xffff); }
inline Op header_op(uint32_t h) { return Op(h >> 24); }
inline uint32_t header_len(uint32_t h) { return h & 0xffff; }

constexpr uint32_t kMaxPacketDwords = 16;  // the engine's packet buffer

// Why a packet is malformed: the engine stops the queue on it and records a fault (STYLE: a malformed
// packet is a hardware fault, never skipped).
enum class PacketError : uint8_t {
  None,
  ZeroLength,  // header length 0
  TooLong,     // header length > kMaxPacketDwords
  UnknownOpcode,
  ReservedBits,  // header bits [23:16] set
  WrongLength,   // a known opcode with another length than its operands need
  Truncated,     // the packet runs past the dwords available (the queue's write pointer)
};
const char* to_string(PacketError e);

// A decoded packet. Operands in the order PacketWriter writes them; SIGNAL/WAIT: arg[0] fence slot,
// arg[1] value, arg[2] CV's VA, arg[3] (SIGNAL) MV's VA, and `log` in the logged form; INTERRUPT: arg[0] vector; FENCE:
// arg[0] addr, arg[1] id, arg[2] vector; SET_PAGE_TABLE, FLUSH_TLB: arg[0] root; NOP (padding, any length) and BARRIER
// have none.
struct DecodedPacket {
  Op op = Op::Nop;
  uint32_t dwords = 0;  // length including the header; what the engine consumes (0 on error)
  PacketError error = PacketError::None;
  uint32_t opcode = 0;  // the header's opcode byte, also when unknown
  uint64_t arg[4] = {0, 0, 0, 0};
  bool logged = false;  // SIGNAL/WAIT in the logged form
  uint64_t log = 0;     // ... its payload: seq | hNativeFence << 32
  bool ok() const { return error == PacketError::None; }
};

// The header alone: op, length and every error but Truncated (operands not read). The engine uses it
// to know how many dwords to wait for.
DecodedPacket decode_header(uint32_t header);
// A whole packet from `available` dwords starting at its header (`available` >= 1).
DecodedPacket decode_packet(const uint32_t* dw, size_t available);

// Builds a command stream (what a UMD writes into a command buffer).
class PacketWriter {
 public:
  PacketWriter& nop() { return put(Op::Nop, {}); }
  PacketWriter& write64(uint64_t addr, uint64_t v) { return put(Op::Write64, {addr, v}); }
  PacketWriter& timestamp(uint64_t addr) { return put(Op::Timestamp, {addr}); }
  PacketWriter& barrier() { return put(Op::Barrier, {}); }
  PacketWriter& compute(uint64_t cycles) { return put(Op::Compute, {cycles}); }
  PacketWriter& copy(uint64_t src, uint64_t dst, uint64_t bytes) { return put(Op::Copy, {src, dst, bytes}); }
  PacketWriter& interrupt(uint32_t vector) {
    dw_.push_back(header(Op::Interrupt, 2));
    dw_.push_back(vector);
    return *this;
  }
  PacketWriter& fence(uint64_t addr, uint64_t id, uint32_t vector) {
    dw_.push_back(header(Op::Fence, 6));
    for (uint64_t v : {addr, id}) {
      dw_.push_back(uint32_t(v));
      dw_.push_back(uint32_t(v >> 32));
    }
    dw_.push_back(vector);
    return *this;
  }
  PacketWriter& set_page_table(uint64_t root) { return put(Op::SetPageTable, {root}); }
  PacketWriter& flush_tlb(uint64_t root) { return put(Op::FlushTlb, {root}); }
  PacketWriter& signal(const FenceVa& f, uint64_t value) { return fence_op(Op::Signal, f, value); }
  PacketWriter& wait(const FenceVa& f, uint64_t value) { return fence_op(Op::Wait, f, value); }
  // The logged forms (F16): `seq` the UMD's entry sequence number in the queue's log, `handle` the
  // fence's hNativeFence as the log entry names it (its user-mode handle in the queue's process).
  PacketWriter& signal_logged(const FenceVa& f, uint64_t value, uint32_t seq, uint32_t handle) {
    return logged_op(Op::Signal, f, value, seq, handle);
  }
  PacketWriter& wait_logged(const FenceVa& f, uint64_t value, uint32_t seq, uint32_t handle) {
    return logged_op(Op::Wait, f, value, seq, handle);
  }
  PacketWriter& raw(uint32_t dw) {  // a dword as is: malformed streams for tests and fuzzing
    dw_.push_back(dw);
    return *this;
  }
  PacketWriter& append(const PacketWriter& o) {
    dw_.insert(dw_.end(), o.dw_.begin(), o.dw_.end());
    return *this;
  }
  const std::vector<uint32_t>& dwords() const { return dw_; }
  bool empty() const { return dw_.empty(); }
  void clear() { dw_.clear(); }
  size_t bytes() const { return dw_.size() * 4; }

 private:
  PacketWriter& put(Op op, std::initializer_list<uint64_t> q) {
    dw_.push_back(header(op, uint32_t(1 + 2 * q.size())));
    for (uint64_t v : q) {
      dw_.push_back(uint32_t(v));
      dw_.push_back(uint32_t(v >> 32));
    }
    return *this;
  }
  void fence_operands(Op op, const FenceVa& f, uint64_t value) {
    for (uint32_t d : {f.slot, uint32_t(value), uint32_t(value >> 32), uint32_t(f.cv), uint32_t(f.cv >> 32)})
      dw_.push_back(d);
    if (op == Op::Signal) {
      dw_.push_back(uint32_t(f.mv));
      dw_.push_back(uint32_t(f.mv >> 32));
    }
  }
  PacketWriter& fence_op(Op op, const FenceVa& f, uint64_t value) {
    dw_.push_back(header(op, op == Op::Signal ? kSignalDwords : kWaitDwords));
    fence_operands(op, f, value);
    return *this;
  }
  PacketWriter& logged_op(Op op, const FenceVa& f, uint64_t value, uint32_t seq, uint32_t handle) {
    dw_.push_back(header(op, (op == Op::Signal ? kSignalDwords : kWaitDwords) + kLogPayloadDwords));
    fence_operands(op, f, value);
    dw_.push_back(seq);
    dw_.push_back(handle);
    return *this;
  }
  std::vector<uint32_t> dw_;
};

}  // namespace gpumodel
