// Writes fuzz_packet_decoder's seed corpus: PacketWriter-encoded rings (4-byte read pointer, then the
// ring's dwords) of every opcode, alone and together, wrapped, and a few malformed ones.
// Usage: make_packet_corpus DIR
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "hw_model/gpu/packets.h"
#include "hw_model/gpu/regs.h"

using namespace gpumodel;

namespace {
void put(const std::string& dir, const std::string& name, uint32_t rptr_bytes, const std::vector<uint32_t>& ring) {
  FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
  if (!f) {
    std::perror(name.c_str());
    std::exit(1);
  }
  std::fwrite(&rptr_bytes, 4, 1, f);
  std::fwrite(ring.data(), 4, ring.size(), f);
  std::fclose(f);
}
// Pads to a power of two with NOPs, as a ring is.
std::vector<uint32_t> ring_of(PacketWriter w) {
  size_t n = 1;
  while (n < w.dwords().size()) n *= 2;
  while (w.dwords().size() < n) w.nop();
  return w.dwords();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_packet_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const uint64_t sys = regs::kSysmemBase + 0x200000, vram = regs::kVramBase + 0x1000;
  struct One {
    const char* name;
    PacketWriter w;
  };
  std::vector<One> ones = {
      {"nop", PacketWriter().nop()},
      {"write64", PacketWriter().write64(sys + 0x100, 0x1122334455667788)},
      {"timestamp", PacketWriter().timestamp(sys + 0x200)},
      {"barrier", PacketWriter().barrier()},
      {"compute", PacketWriter().compute(2000)},
      {"copy", PacketWriter().copy(vram, sys + 0x1000, 4096)},
      {"interrupt", PacketWriter().interrupt(5)},
      {"signal", PacketWriter().signal({0, 0x5000'0000'0000, 0x5000'0000'1000}, 1)},
      {"wait", PacketWriter().wait({0, 0x5000'0000'0000, 0}, 1)},
      {"signal_logged", PacketWriter().signal_logged({0, 0x5000'0000'0000, 0x5000'0000'1000}, 1, 85, 0x1000)},  // F16
      {"wait_logged", PacketWriter().wait_logged({0, 0x5000'0000'0000, 0}, 1, 85, 0x1000)},
      {"fence", PacketWriter().fence(sys + 0x300, 7, 0x10)},
  };
  PacketWriter all;
  for (auto& o : ones) {
    put(dir, o.name, 0, ring_of(o.w));
    all.append(o.w);
  }
  const std::vector<uint32_t> ring = ring_of(all);
  put(dir, "every_opcode", 0, ring);
  // The same ring read from its middle: packets wrap at the ring's end.
  put(dir, "every_opcode_wrapped", 4 * 13, ring);
  PacketWriter nop16;
  nop16.raw(header(Op::Nop, 16));
  for (int i = 0; i < 15; ++i) nop16.raw(0xdeadbeef);
  put(dir, "nop_padding16", 0, ring_of(nop16));
  PacketWriter stress;
  for (uint32_t i = 0; i < 16; ++i)
    stress.signal({i % 4, 0x5000'0000'0000ull + 8ull * (i % 4), 0x5000'0000'1000ull}, i + 1);
  put(dir, "signals", 0, ring_of(stress));
  put(dir, "bad_unknown_opcode", 0, ring_of(PacketWriter().nop().raw(0x2a000001)));
  put(dir, "bad_zero_length", 0, ring_of(PacketWriter().nop().raw(header(Op::Nop, 0))));
  put(dir, "bad_too_long", 0, ring_of(PacketWriter().nop().raw(header(Op::Copy, 17))));
  put(dir, "bad_wrong_length", 0, ring_of(PacketWriter().raw(header(Op::Signal, 3)).raw(0).raw(0).raw(0)));
  put(dir, "bad_truncated", 0, {header(Op::Write64, 5), 0});
  return 0;
}
