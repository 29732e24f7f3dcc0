// The command-packet decoder, and what an engine does with a packet it cannot run: a fault that stops
// the queue at that packet, is counted and named for the results, and leaves the node running.
#include "hw_model/gpu/packets.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;

TEST_CASE("Packet decoder: every PacketWriter packet decodes to its operands", "[H1]") {
  PacketWriter w;
  w.nop()
      .write64(0x1122334455667788, 0x99aabbccddeeff00)
      .timestamp(0xfedcba9876543210)
      .barrier()
      .compute(1ull << 40)
      .copy(1, 2, 3)
      .interrupt(7)
      .signal({65535, 0x0000'5000'0000'1008, 0x0000'5000'0000'2010}, ~0ull)
      .wait({3, 0x0000'5000'0000'3000, 0}, 1ull << 63)
      .signal_logged({7, 0x10, 0x20}, 5, 85, 0x4000'0004);
  struct Want {
    Op op;
    uint32_t dwords;
    uint64_t a0, a1, a2, a3 = 0;
    bool logged = false;
    uint64_t log = 0;
  };
  const Want want[] = {{Op::Nop, 1, 0, 0, 0},
                       {Op::Write64, 5, 0x1122334455667788, 0x99aabbccddeeff00, 0},
                       {Op::Timestamp, 3, 0xfedcba9876543210, 0, 0},
                       {Op::Barrier, 1, 0, 0, 0},
                       {Op::Compute, 3, 1ull << 40, 0, 0},
                       {Op::Copy, 7, 1, 2, 3},
                       {Op::Interrupt, 2, 7, 0, 0},
                       {Op::Signal, 8, 65535, ~0ull, 0x0000'5000'0000'1008, 0x0000'5000'0000'2010},
                       {Op::Wait, 6, 3, 1ull << 63, 0x0000'5000'0000'3000},
                       {Op::Signal, 10, 7, 5, 0x10, 0x20, true, 85 | uint64_t(0x4000'0004) << 32}};
  const auto& dw = w.dwords();
  size_t at = 0;
  for (const Want& x : want) {
    const DecodedPacket d = decode_packet(dw.data() + at, dw.size() - at);
    INFO("packet at dword " << at);
    REQUIRE(d.ok());
    CHECK(d.op == x.op);
    CHECK(d.dwords == x.dwords);
    CHECK(d.arg[0] == x.a0);
    CHECK(d.arg[1] == x.a1);
    CHECK(d.arg[2] == x.a2);
    CHECK(d.arg[3] == x.a3);
    CHECK(d.logged == x.logged);
    CHECK(d.log == x.log);
    at += d.dwords;
  }
  CHECK(at == dw.size());
}

TEST_CASE("Packet decoder: each malformed packet is a named error", "[H1]") {
  auto err = [](std::vector<uint32_t> dw) { return decode_packet(dw.data(), dw.size()).error; };
  CHECK(err({header(Op::Nop, 0)}) == PacketError::ZeroLength);
  CHECK(err({header(Op::Nop, 17)}) == PacketError::TooLong);
  CHECK(err({0x2a000001}) == PacketError::UnknownOpcode);
  CHECK(err({header(Op::Signal, 3), 0, 0}) == PacketError::WrongLength);
  CHECK(err({header(Op::Signal, 4), 0, 0, 0}) == PacketError::WrongLength);     // the old VA-less form
  CHECK(err({header(Op::Wait, 8), 0, 0, 0, 0, 0, 0, 0}) == PacketError::None);  // WAIT's logged form
  CHECK(err({header(Op::Barrier, 2), 0}) == PacketError::WrongLength);
  CHECK(err({header(Op::Write64, 5), 0, 0}) == PacketError::Truncated);
  // Found by fuzz_packet_decoder: a header with its reserved bits [23:16] set decoded as if they were
  // clear, so the engine ran a packet PacketWriter never writes.
  CHECK(err({0x03230001}) == PacketError::ReservedBits);
  // NOP is padding: any length up to the packet buffer.
  std::vector<uint32_t> pad(16, 0);
  pad[0] = header(Op::Nop, 16);
  CHECK(err(pad) == PacketError::None);
  // An error consumes nothing: the engine stops at the packet.
  const uint32_t bad = 0xff000001;
  CHECK(decode_packet(&bad, 1).dwords == 0);
}

TEST_CASE("Node fault: a malformed packet stops its queue, is named, and the node runs on", "[H1][H3]") {
  ParamSet ps = params({{"gpu.timestamp_tick_ps", "1"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  uint64_t ts = 0;
  std::vector<KmdHwQueue*> qs;
  // One queue per kind of fault (a NOP first, so the bad packet sits at ring offset 4), then a
  // TIMESTAMP that must not run; the eighth queue, on the same node, runs after them.
  const std::vector<std::vector<uint32_t>> bad = {
      {0x2a000001},                                     // unknown opcode
      {header(Op::Nop, 0)},                             // zero length
      {header(Op::Nop, 17)},                            // too long
      {header(Op::Signal, 3), 0, 0},                    // wrong length for the opcode
      {header(Op::Write64, 5), 0, 0},                   // runs past the write pointer (the submission's end)
      {header(Op::Signal, 8), 4242, 1, 0, 0, 0, 0, 0},  // a fence slot the CMP does not hold
      {header(Op::Wait, 6), 4243, 1, 0, 0, 0},
  };
  p.cpu.spawn_thread("app", [&] {
    p.kmd.DxgkDdiStartDevice(nullptr);
    ts = p.kmd.scratch();
    for (size_t i = 0; i <= bad.size(); ++i) qs.push_back(p.kmd.DxgkDdiCreateHwQueue(0));
    for (size_t i = 0; i < bad.size(); ++i) {
      PacketWriter w;
      w.nop();
      for (uint32_t d : bad[i]) w.raw(d);
      if (i != 4) w.timestamp(ts + 8 * i);  // (the truncated packet swallows what follows)
      p.kmd.DxgkDdiSubmitCommandToHwQueue(qs[i], w);
      wait(sc_time(20, SC_US));
    }
    PacketWriter good;
    good.timestamp(ts + 8 * bad.size());
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qs.back(), good);
  });
  sc_start();
  const Node& n = *p.gpu.nodes[0];
  CHECK(n.faults() == bad.size());
  for (size_t i = 0; i < bad.size(); ++i) CHECK(p.sysmem.peek64(ts + 8 * i) == 0);
  CHECK(p.sysmem.peek64(ts + 8 * bad.size()) != 0);
  // Each queue stopped at its bad packet: the written-back read pointer is the NOP's 4 bytes.
  for (size_t i = 0; i < bad.size(); ++i) CHECK(p.sysmem.peek64(qs[i]->rptr_addr) == 4);
  REQUIRE(n.fault_messages().size() == bad.size());
  const std::vector<std::string> reason = {"malformed packet (unknown opcode; header 0x2a000001)",
                                           "malformed packet (zero length; header 0x00000000)",
                                           "malformed packet (length over 16 dwords; header 0x00000011)",
                                           "malformed packet (wrong length for the opcode; header 0x07000003)",
                                           "malformed packet (packet runs past the write pointer; header 0x01000005)",
                                           "SIGNAL names fence slot 4242, which the CMP does not hold",
                                           "WAIT names fence slot 4243, which the CMP does not hold"};
  for (size_t i = 0; i < bad.size(); ++i)
    CHECK(n.fault_messages()[i] ==
          "gpu.node0: queue " + std::to_string(i) + " faulted at ring offset 0x4: " + reason[i]);
  // A scenario's run reports each fault as a reason its verdict fails.
  Results r;
  report_engine_faults(p, r);
  CHECK_FALSE(r.pass());
  REQUIRE(r.why_failed().size() == bad.size());
  CHECK(r.why_failed()[0] == "engine fault: gpu.node0: queue 0 faulted at ring offset 0x4: " + reason[0]);
}

TEST_CASE("Node fault: an iGPU engine's fault fails the run too, named by its adapter", "[H1][H3]") {
  // The hybrid platform's iGPU engines fault as the dGPU's do; a run that reported only the dGPU's let an
  // iGPU that stopped at its first packet pass as "waiters never unblocked" (found by the pairwise sweep:
  // cross_adapter_fence, xfence.scenario = 2b with node.kind = copy).
  ParamSet ps = params({{"platform.topology", "hybrid"}, {"igpu.node0.kind", "copy"}});
  Vcd vcd;
  Platform p(ps, vcd, 1);
  REQUIRE(p.igpu != nullptr);
  p.cpu.spawn_thread("app", [&] {
    Kmd& k = p.igpu_driver->kmd;
    k.DxgkDdiStartDevice(nullptr);
    KmdHwQueue* q = k.DxgkDdiCreateHwQueue(0);
    PacketWriter w;
    w.compute(1000);
    k.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  sc_start();
  REQUIRE(p.igpu->nodes[0]->faults() == 1);
  CHECK(p.gpu.nodes[0]->faults() == 0);
  Results r;
  report_engine_faults(p, r);
  CHECK_FALSE(r.pass());
  REQUIRE(r.why_failed().size() == 1);
  CHECK(r.why_failed()[0] ==
        "engine fault: igpu.node0: queue 0 faulted at ring offset 0x0: COMPUTE 1000 cycles is not a command node 0 "
        "(copy) runs");
}
