// libFuzzer target: the command-packet decoder (hw_model/gpu/packets.h) fed from a ring, as a node
// consumes a HW queue's ring.
//
// Input: bytes 0..3 are the read pointer (a byte offset, taken modulo the ring and aligned to a dword);
// the rest is the ring's contents, little-endian dwords, the ring being the largest power of two of
// dwords that fits (a ring's size is a power of two). The whole ring is submitted: the write pointer is
// one ring past the read pointer. Packets are decoded one after another, wrapping at the ring's end,
// until the write pointer or the first error, as the engine does (an error stops the queue).
//
// Checked: a decoded packet consumes 1..16 dwords and no more than are left; an error consumes
// nothing and ends decoding; decode_header agrees with decode_packet; a well-formed packet re-encoded
// with PacketWriter (NOP padding aside) is the same dwords.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hw_model/gpu/packets.h"

using namespace gpumodel;

namespace {

[[noreturn]] void finding(const char* what, size_t at) {
  std::fprintf(stderr, "fuzz_packet_decoder: %s (packet at ring dword %zu)\n", what, at);
  std::abort();
}

PacketWriter encode(const DecodedPacket& d) {
  PacketWriter w;
  switch (d.op) {
    case Op::Nop: w.nop(); break;
    case Op::Write64: w.write64(d.arg[0], d.arg[1]); break;
    case Op::Timestamp: w.timestamp(d.arg[0]); break;
    case Op::Barrier: w.barrier(); break;
    case Op::Compute: w.compute(d.arg[0]); break;
    case Op::Copy: w.copy(d.arg[0], d.arg[1], d.arg[2]); break;
    case Op::Interrupt: w.interrupt(uint32_t(d.arg[0])); break;
    case Op::Signal:  // the logged form (F16) carries the UMD's sequence number and handle in `log`
      if (d.logged)
        w.signal_logged({uint32_t(d.arg[0]), d.arg[2], d.arg[3]}, d.arg[1], uint32_t(d.log), uint32_t(d.log >> 32));
      else
        w.signal({uint32_t(d.arg[0]), d.arg[2], d.arg[3]}, d.arg[1]);
      break;
    case Op::Wait:
      if (d.logged)
        w.wait_logged({uint32_t(d.arg[0]), d.arg[2], 0}, d.arg[1], uint32_t(d.log), uint32_t(d.log >> 32));
      else
        w.wait({uint32_t(d.arg[0]), d.arg[2], 0}, d.arg[1]);
      break;
    case Op::Fence: w.fence(d.arg[0], d.arg[1], uint32_t(d.arg[2])); break;
    case Op::SetPageTable: w.set_page_table(d.arg[0]); break;
    case Op::FlushTlb: w.flush_tlb(d.arg[0]); break;
  }
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t rptr_bytes;
  std::memcpy(&rptr_bytes, data, 4);
  size_t n = (size - 4) / 4;
  while (n & (n - 1)) n &= n - 1;  // largest power of two
  std::vector<uint32_t> ring(n);
  std::memcpy(ring.data(), data + 4, n * 4);

  size_t pos = (rptr_bytes / 4) & (n - 1), left = n;
  while (left) {
    // The engine sees the ring through its FIFO: contiguous dwords, wrapped.
    uint32_t pkt[kMaxPacketDwords];
    const size_t avail = left < kMaxPacketDwords ? left : kMaxPacketDwords;
    for (size_t i = 0; i < avail; ++i) pkt[i] = ring[(pos + i) & (n - 1)];
    const DecodedPacket d = decode_packet(pkt, avail);
    const DecodedPacket h = decode_header(pkt[0]);
    if (d.opcode != h.opcode) finding("decode_header and decode_packet disagree on the opcode", pos);
    if (!d.ok()) {
      if (d.dwords != 0) finding("an error consumed dwords", pos);
      if (d.error == PacketError::Truncated ? !h.ok() || h.dwords <= avail : h.error != d.error)
        finding("decode_header and decode_packet disagree on the error", pos);
      break;  // the engine stops the queue here
    }
    if (!h.ok() || h.dwords != d.dwords || h.op != d.op) finding("decode_header disagrees", pos);
    if (d.dwords == 0 || d.dwords > avail || d.dwords > kMaxPacketDwords) finding("bad length consumed", pos);
    if (d.dwords != header_len(pkt[0])) finding("length differs from the header's", pos);
    if (d.op != Op::Nop || d.dwords == 1) {
      const PacketWriter w = encode(d);
      const std::vector<uint32_t>& re = w.dwords();
      if (re.size() != d.dwords || std::memcmp(re.data(), pkt, d.dwords * 4) != 0)
        finding("PacketWriter does not re-encode the decoded packet", pos);
    }
    pos = (pos + d.dwords) & (n - 1);
    left -= d.dwords;
  }
  return 0;
}
