#include "hw_model/gpu/packets.h"

namespace gpumodel {
namespace {

// Operand widths in dwords, per opcode (PacketWriter's layout); a known opcode has exactly
// 1 + their sum dwords. -1: not an opcode.
struct Layout {
  int operands;      // how many
  uint8_t width[4];  // dwords each
};
constexpr Layout kLayouts[] = {
    {0, {}},            // Nop (padding: any length)
    {2, {2, 2}},        // Write64 addr value
    {1, {2}},           // Timestamp addr
    {0, {}},            // Barrier
    {1, {2}},           // Compute cycles
    {3, {2, 2, 2}},     // Copy src dst bytes
    {1, {1}},           // Interrupt vector
    {4, {1, 2, 2, 2}},  // Signal slot value cv_va mv_va
    {3, {1, 2, 2}},     // Wait slot value cv_va
    {3, {2, 2, 1}},     // Fence addr id vector
    {1, {2}},           // SetPageTable root
    {1, {2}},           // FlushTlb root
};
constexpr uint32_t kOpcodes = sizeof kLayouts / sizeof kLayouts[0];

uint32_t layout_dwords(const Layout& l) {
  uint32_t n = 1;
  for (int i = 0; i < l.operands; ++i) n += l.width[i];
  return n;
}

}  // namespace

const char* to_string(PacketError e) {
  switch (e) {
    case PacketError::None: return "none";
    case PacketError::ZeroLength: return "zero length";
    case PacketError::TooLong: return "length over 16 dwords";
    case PacketError::UnknownOpcode: return "unknown opcode";
    case PacketError::ReservedBits: return "reserved header bits set";
    case PacketError::WrongLength: return "wrong length for the opcode";
    case PacketError::Truncated: return "packet runs past the write pointer";
  }
  return "?";
}

DecodedPacket decode_header(uint32_t h) {
  DecodedPacket d;
  d.opcode = h >> 24;
  d.op = header_op(h);
  const uint32_t len = header_len(h);
  if (len == 0)
    d.error = PacketError::ZeroLength;
  else if (len > kMaxPacketDwords)
    d.error = PacketError::TooLong;
  else if (d.opcode >= kOpcodes)
    d.error = PacketError::UnknownOpcode;
  else if (h & 0x00ff0000)
    d.error = PacketError::ReservedBits;
  else if (d.op != Op::Nop && len != layout_dwords(kLayouts[d.opcode]) &&
           !((d.op == Op::Signal || d.op == Op::Wait) && len == layout_dwords(kLayouts[d.opcode]) + kLogPayloadDwords))
    d.error = PacketError::WrongLength;
  if (d.ok()) d.dwords = len;
  return d;
}

DecodedPacket decode_packet(const uint32_t* dw, size_t available) {
  DecodedPacket d = decode_header(dw[0]);
  if (!d.ok()) return d;
  if (d.dwords > available) {
    d.error = PacketError::Truncated;
    d.dwords = 0;
    return d;
  }
  const Layout& l = kLayouts[d.opcode];
  const uint32_t* p = dw + 1;
  for (int i = 0; i < l.operands; ++i) {
    d.arg[i] = l.width[i] == 2 ? uint64_t(p[0]) | (uint64_t(p[1]) << 32) : p[0];
    p += l.width[i];
  }
  if ((d.op == Op::Signal || d.op == Op::Wait) && d.dwords == layout_dwords(l) + kLogPayloadDwords) {
    d.logged = true;  // the UMD's log payload: entry sequence, hNativeFence
    d.log = uint64_t(p[0]) | (uint64_t(p[1]) << 32);
  }
  return d;
}

}  // namespace gpumodel
