// The native fence scenarios through the CLI: the acceptance figures.
#include <cmath>
#include <cstring>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fence_bench.h"

using namespace tb;

namespace {
nlohmann::json run(const std::string& sc, const std::string& args, const std::string& tag, int want = 0) {
  const std::string out = "fence_scenario_" + tag + ".json";
  const Run r = run_cli(scenario(sc) + " " + args + " --results " + out);
  INFO(sc << " " << args << "\n" << r.out << r.err);
  REQUIRE(r.code == want);
  return nlohmann::json::parse(slurp(out));
}
double m(const nlohmann::json& j, const char* k) { return j["metrics"][k].get<double>(); }

// The identifier code the VCD header gives `path` (dotted, below the writer's outer "top" scope), or
// "" when it is not declared.
std::string vcd_code(const std::string& vcd, const std::string& path) {
  std::istringstream in(vcd);
  std::vector<std::string> scopes;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kw, a, b, code, name;
    ls >> kw;
    if (kw == "$enddefinitions") break;
    if (kw == "$scope" && ls >> a >> b) scopes.push_back(b);
    if (kw == "$upscope" && !scopes.empty()) scopes.pop_back();
    if (kw == "$var" && ls >> a >> b >> code >> name) {
      std::string full;
      for (size_t i = 1; i < scopes.size(); ++i) full += scopes[i] + ".";
      if (full + name == path) return code;
    }
  }
  return "";
}
// The values a 1-bit signal takes after the header, in order: its $dumpvars value, then its changes
// ("0<code>" / "1<code>" lines).
std::string vcd_scalar_values(const std::string& vcd, const std::string& code) {
  const size_t body = vcd.find("$enddefinitions");
  std::istringstream in(body == std::string::npos ? std::string() : vcd.substr(body));
  std::string line, values;
  while (std::getline(in, line))
    if (line.size() == code.size() + 1 && std::strchr("01xz", line[0]) && line.compare(1, std::string::npos, code) == 0)
      values += line[0];
  return values;
}
size_t rises(const std::string& values) {
  size_t n = 0;
  for (size_t i = 1; i < values.size(); ++i) n += values[i - 1] != '1' && values[i] == '1';
  return n;
}
}  // namespace

namespace {
// fence_signal's DPC after an MV update's MMIO writes begin at `mmio_start` (the DPC's start): two 100 ns
// MMIO writes (select, MV), the second reaching BAR0 (root complex, 32-byte TLP, hop, 20 ns register
// write) and the CMP: 40 cycles, the shadow write (VRAM), the 200 ns barrier, step 3's CV read, the
// acknowledgement up the link (the CMP's TLB holds those pages since the fence's creation and the wait's
// arming: no walk). The KMD polls it with back-to-back loads from the end of the second MMIO write; the
// first load sampled at or after the acknowledgement's visibility returns (the poll's end).
sc_time mv_update_acknowledged(sc_time before_mmio) {
  using namespace tb::dflt;
  const sc_time mmio2 = before_mmio + sc_time(0.4, SC_NS) + sc_time(100, SC_NS);
  const sc_time ack = mmio2 + kRc + ser(8 + 24, kRate) + kHop + kBarWrite + sc_time(40, SC_NS) + kShadowCheck +
                      kCmpBarrier + sysmem_read(8) + up_write(8);
  sc_time poll = mmio2 + sc_time(100, SC_NS);
  while (poll + kRc + dram_xfer(8) + kDram < ack) poll += cpu_read(8);
  return poll + cpu_read(8);
}
// A CPU load of `bytes` from the dGPU's VRAM (a native fence log): root complex, the 24-byte read request
// down the link, hop, VRAM (250 ns + the transfer), the completion (payload + 20 B) up, hop, root complex.
sc_time cpu_vram_read(double bytes) {
  using namespace tb::dflt;
  return kRc + ser(24, kRate) + kHop + kVram + vram_xfer(bytes) + ser(bytes + 20, kRate) + kHop + kRc;
}
// A CPU read of a BAR0 register (the KMD's log barrier, a read-to-flush): the same way, 540 ns register read.
sc_time cpu_bar0_read() {
  using namespace tb::dflt;
  return kRc + ser(24, kRate) + kHop + sc_time(540, SC_NS) + ser(4 + 20, kRate) + kHop + kRc;
}
}  // namespace

TEST_CASE("fence_signal: each warm part and the cold total equal their derivation from the default parameters",
          "[F3][F8][H2]") {
  using namespace tb::dflt;
  // Without logs first (vidsch.native_fence_logs = false): the interrupt path alone.
  auto j = run("fence_signal", "--vidsch.native_fence_logs=false", "sig");
  // The warm round (the second signal; every page it touches is in the TLBs since the first): the CV
  // write leaves the 100 ns write buffer and crosses to DRAM.
  const sc_time fence_write = kWb + up_write(8);
  // The engine's shadow check returns (VRAM read); the queue is then drained, so the engine writes back
  // its read pointer (system memory: the write buffer, then up the link). The CMP's 20 decision cycles
  // end long before its barrier can: the barrier completes 200 ns after the read-pointer write is
  // visible; then the interrupt firmware's 32 cycles, the event entry and the write index posted (warm
  // pages), the MSI. Measured from CV's visibility (the same write-buffer-and-link time as the read
  // pointer's, so they cancel).
  const sc_time cmp_decision = kShadowCheck + kCmpBarrier + kCmpInterrupt;
  // The 16-byte event entry, the 8-byte write index and the 4-byte MSI leave back to back.
  const sc_time msi_delivery = tb::dflt::msi_delivery();
  // The CPU idles in C1 (2 us exit); the ISR: 500 ns entry, the KMD reads the ring's write index (8 B)
  // and one 16-byte entry, writes its read index (100 ns MMIO), and the 2 us ISR cost.
  const sc_time isr = sc_time(500 + 2000 + 100, SC_NS) + cpu_read(8) + cpu_read(16);
  // The DPC: 1 us, CV read, the waiter woken; MV back up to UINT64_MAX: the OS's copy (8 B at 20 GB/s),
  // the MMIO writes and the acknowledgement's poll; then the F8 re-read of CV.
  const sc_time dpc = mv_update_acknowledged(sc_time(1000, SC_NS) + cpu_read(8)) + cpu_read(8);
  const std::pair<const char*, sc_time> parts[] = {{"fence_write_ns", fence_write},
                                                   {"cmp_decision_ns", cmp_decision},
                                                   {"msi_delivery_ns", msi_delivery},
                                                   {"idle_exit_ns", sc_time(2000, SC_NS)},
                                                   {"isr_ns", isr},
                                                   {"dpc_ns", dpc},
                                                   {"thread_wake_ns", sc_time(2000, SC_NS)}};
  sc_time total = sc_core::SC_ZERO_TIME;
  for (auto& [k, want] : parts) {
    INFO(k);
    CHECK(m(j, k) == Approx(to_ns(want)).margin(1e-3));
    total += want;
  }
  CHECK(m(j, "signal_to_wake_ns") == Approx(to_ns(total)).margin(1e-3));
  // The cold round (the first signal): the same path with its walks. The SIGNAL's CV write is node 0's
  // first touch of the fence's CV page (the process's own mapping of it, a 2 MiB region the node never
  // walked): a full walk before it enters the write buffer. Then the engine's shadow check: its first
  // read of the shadow MV table's page walks too (in full: VRAM, a region the node never walked). The
  // CMP spends 20 cycles, then barriers: the CV write is visible by then, and the read-pointer
  // write-back of the drained queue is not in the buffer yet (the node's first write to that page: a PTE
  // read, its region's PDE cached since the ring's fetch), so the barrier is its 200 ns handshake alone.
  // The interrupt firmware (32 cycles) then writes the event entry and the ring's write index, each the
  // CMP's first write to its page: one PTE read apiece (tb::dflt::cmp_first_fence_interrupt); only the
  // write index's TLP is then still ahead of the MSI (tb::dflt::first_msi_delivery).
  const sc_time cold_cv = walk() + kWb + up_write(8);
  const sc_time cold_msi = walk() + walk() + kShadowCheck + kCmpDecision + kCmpBarrier + cmp_first_fence_interrupt();
  const sc_time cold =
      cold_cv + (cold_msi - cold_cv) + first_msi_delivery() + sc_time(2000, SC_NS) + isr + dpc + sc_time(2000, SC_NS);
  CHECK(m(j, "signal_to_wake_cold_ns") == Approx(to_ns(cold)).margin(1e-3));
  CHECK(m(j, "interrupts_raised") == 2);
  CHECK(m(j, "spurious_interrupts") == 0);

  // With logs (the default: logging is mandatory). On the GPU, the F17 order: after the CV write the
  // engine writes the log entry (into its write-combiner) and FirstFreeEntryIndex (VRAM), then barriers:
  // its system-scope barrier (node.barrier_system_ns, 200 ns: a system-memory write is outstanding) ends
  // 200 ns after the CV write is visible; only then does it read the shadow MV. The rest as above: the
  // CMP's barrier waits for the read-pointer write-back, issued when the shadow check returns.
  auto l = run("fence_signal", "", "sig_logs");
  const sc_time node_barrier(200, SC_NS);
  CHECK(m(l, "fence_write_ns") == Approx(to_ns(fence_write)).margin(1e-3));
  CHECK(m(l, "cmp_decision_ns") == Approx(to_ns(node_barrier + cmp_decision + fence_write)).margin(1e-3));
  // In the DPC, before anything else, Dxgkrnl reads the logs of the fence's device (its one HW queue):
  // both logs' FirstFreeEntryIndex (8 B each, VRAM across the link), then, the signal log having moved,
  // DxgkDdiUpdateNativeFenceLogs (the KMD's read-to-flush of the queue's BAR0 register), then the new
  // 48-byte entry. The entry names the fence at 2: the waiter wakes from the log, and MV goes back up
  // (the same MMIO, acknowledgement and F8 re-read). The interrupt's fence array is then scanned too: one
  // more CV read, nothing left to wake, MV unchanged.
  const sc_time logs_read = cpu_vram_read(8) + cpu_vram_read(8) + cpu_bar0_read() + cpu_vram_read(48);
  const sc_time dpc_logs = mv_update_acknowledged(sc_time(1000, SC_NS) + logs_read) + cpu_read(8) + cpu_read(8);
  CHECK(m(l, "dpc_ns") == Approx(to_ns(dpc_logs)).margin(1e-3));
  for (const char* k : {"msi_delivery_ns", "idle_exit_ns", "isr_ns", "thread_wake_ns"}) {
    INFO(k);
    CHECK(m(l, k) == Approx(m(j, k)).margin(1e-3));
  }
  CHECK(m(l, "signal_to_wake_ns") ==
        Approx(m(j, "signal_to_wake_ns") + to_ns(node_barrier + fence_write) + to_ns(dpc_logs) - to_ns(dpc))
            .margin(1e-3));
}

TEST_CASE(
    "fence_signal with link ASPM: the warm round pays the link's L1 exit and the cold-versus-warm check allows it",
    "[F3][H2]") {
  // The fence in VRAM: the cold round runs right after the set-up's traffic (the link still in L0), the
  // warm one after the cold one's wake and more than link.l1_entry_us (32 us) of quiet, so the CMP's first
  // TLP up the link (its decision's reads) pays the L1 exit, link.l1_exit_us = 4 us, and nothing else moves.
  // The verdict's check that the cold GPU stages cost at least the warm ones must not take that exit for a
  // translation that cost nothing (the pairwise sweep found it failing here): the run passes (want 0).
  auto off = run("fence_signal", "--fence.storage=local", "aspm_off");
  auto l1 = run("fence_signal", "--fence.storage=local --link.aspm=l1", "aspm_l1");
  CHECK(m(l1, "cmp_decision_ns") == Approx(m(off, "cmp_decision_ns") + 4000).margin(1e-6));
  CHECK(m(l1, "signal_to_wake_ns") == Approx(m(off, "signal_to_wake_ns") + 4000).margin(1e-6));
  CHECK(m(l1, "fence_write_ns") == Approx(m(off, "fence_write_ns")).margin(1e-6));
}

TEST_CASE(
    "fence_signal with L1 PM substates: the warm round pays L1.2's exit beyond L1's or L1.1's when the LTR is below "
    "the threshold and the verdict allows it",
    "[F3][H2][link]") {
  // As above, with the link's L1 a substate: the CMP's first TLP up the link pays L1's 4 us plus
  // link.l1_2_exit_us (299 us) from L1.2, or plus link.l1_1_exit_us (0.4 us) from L1.1 when the device's
  // LTR (link.ltr_us = 100 us) is below LTR_L1.2_THRESHOLD (305 us); nothing else moves, and the run passes.
  const std::string base = "--fence.storage=local --link.aspm=l1";
  auto l1 = run("fence_signal", base, "l1ss_l1");
  auto l1_2 = run("fence_signal", base + " --link.l1_substates=l1_2", "l1ss_l1_2");
  auto l1_1 = run("fence_signal", base + " --link.l1_substates=l1_2 --link.ltr_us=100", "l1ss_l1_1");
  CHECK(m(l1_2, "cmp_decision_ns") == Approx(m(l1, "cmp_decision_ns") + 299000).margin(1e-6));
  CHECK(m(l1_2, "signal_to_wake_ns") == Approx(m(l1, "signal_to_wake_ns") + 299000).margin(1e-6));
  CHECK(m(l1_1, "cmp_decision_ns") == Approx(m(l1, "cmp_decision_ns") + 400).margin(1e-6));
  CHECK(m(l1_1, "signal_to_wake_ns") == Approx(m(l1, "signal_to_wake_ns") + 400).margin(1e-6));
  CHECK(m(l1_2, "fence_write_ns") == Approx(m(l1, "fence_write_ns")).margin(1e-6));
  CHECK(l1_2["metrics"]["power_states"]["link_l1_2"].get<double>() > 0);
  CHECK(l1_1["metrics"]["power_states"]["link_l1_2"].get<double>() == 0);
  CHECK(l1_1["metrics"]["power_states"]["link_l1_1"].get<double>() > 0);
}

TEST_CASE("fence_signal: each part's parameter moves that part and the total by exactly its change", "[F3][H2]") {
  auto base = run("fence_signal", "", "base");
  struct Knob {
    const char* param;
    double base_value, delta;
    const char* part;
  } knobs[] = {{"cpu.c1_exit_ns", 2000, 1000, "idle_exit_ns"},
               {"cpu.interrupt_entry_ns", 500, 700, "isr_ns"},
               {"cpu.isr_ns", 2000, 1500, "isr_ns"},
               {"cpu.dpc_ns", 1000, 500, "dpc_ns"},
               {"cpu.thread_wake_ns", 2000, 250, "thread_wake_ns"},
               {"cmp.interrupt_cycles", 32, 100, "cmp_decision_ns"}};  // 1 GHz: 1 ns a cycle
  int i = 0;
  for (auto k : knobs) {
    std::ostringstream v;
    v << k.base_value + k.delta;  // "132", not "132.000000": integer keys take integers
    auto j = run("fence_signal", std::string("--") + k.param + "=" + v.str(), "knob" + std::to_string(i++));
    INFO(k.param);
    CHECK(m(j, "signal_to_wake_ns") == Approx(m(base, "signal_to_wake_ns") + k.delta).margin(1e-6));
    CHECK(m(j, k.part) == Approx(m(base, k.part) + k.delta).margin(1e-6));
  }
}

TEST_CASE(
    "fence_signal with a monitored fence: the CMP's interrupt firmware moves cmp_decision_ns and the total by exactly "
    "its change",
    "[F5][H2]") {
  // The monitored fence's event goes through the same firmware step as a native one: 100 more cycles at
  // the CMP's 1 GHz are 100 ns more between CV's visibility and the MSI, and nothing else moves.
  auto base = run("fence_signal", "--fence.kind=legacy", "legacy_base");
  auto more = run("fence_signal", "--fence.kind=legacy --cmp.interrupt_cycles=132", "legacy_irq132");
  CHECK(m(more, "cmp_decision_ns") == Approx(m(base, "cmp_decision_ns") + 100).margin(1e-6));
  CHECK(m(more, "signal_to_wake_ns") == Approx(m(base, "signal_to_wake_ns") + 100).margin(1e-6));
}

TEST_CASE(
    "conditional_interrupt: one interrupt per satisfied waiter native, one per signal legacy, none without waiters",
    "[F3][F5]") {
  auto native = run("conditional_interrupt", "", "native");
  CHECK(native["metrics"]["counts_checked_exactly"] == true);  // the default 50 us spacing is far apart
  CHECK(m(native, "signals") == 100);
  CHECK(m(native, "interrupts_raised") == 10);  // a waiter on every 10th of 100 values
  CHECK(m(native, "interrupts_suppressed") == 90);
  CHECK(m(native, "waiters_woken") == 10);
  CHECK(m(native, "spurious_interrupts") == 0);
  CHECK(m(native, "cpu_wakeups") == 10);
  auto legacy = run("conditional_interrupt", "--fence.kind=legacy", "legacy");
  CHECK(m(legacy, "interrupts_raised") == 100);
  CHECK(m(legacy, "waiters_woken") == 10);
  CHECK(m(legacy, "cpu_wakeups") == 100);
  auto none = run("conditional_interrupt", "--workload.wait_every=0", "none");
  CHECK(m(none, "interrupts_raised") == 0);
  CHECK(m(none, "cpu_wakeups") == 0);
  // The CPU spends more of the run asleep when the GPU does not wake it for nothing.
  CHECK(native["metrics"]["cpu_idle_residency"]["C1"].get<double>() >
        legacy["metrics"]["cpu_idle_residency"]["C1"].get<double>());
}

TEST_CASE("conditional_interrupt's verdict claims exact counts from its derived spacing on, and only there", "[F3]") {
  // The scenario's far-apart spacing with the defaults: the CPU's part (C1 exit 2000, interrupt entry
  // 500, ISR 2000, DPC 1000, thread wake 2000 ns) plus 24 hardware steps, each bounded by link hop 200
  // + root complex 30 + the slowest memory (VRAM, 250) + 64 B at the slower memory's 76.8 GB/s +
  // fabric 0 + BAR0 read 540 + BAR0 write 20 + CMP barrier 200 + write buffer 100 + MMIO write 100 +
  // the longest CMP firmware path (40 cycles at 1 GHz) ns.
  const double far =
      (2000 + 500 + 2000 + 1000 + 2000) + 24 * (200 + 30 + 250 + 64 / 76.8 + 0 + 540 + 20 + 200 + 100 + 100 + 40);
  std::ostringstream at;
  at << "--workload.wait_every=1 --workload.signal_interval_ns=" << far;
  // A waiter on every value is the tightest case: each signal must find the previous waiter woken and
  // the next one's MV in the CMP's shadow. At exactly that spacing the verdict checks, and passes.
  auto edge = run("conditional_interrupt", at.str(), "edge");
  CHECK(m(edge, "exact_from_interval_ns") == Approx(far));
  CHECK(edge["metrics"]["counts_checked_exactly"] == true);
  CHECK(m(edge, "interrupts_raised") == 100);
  CHECK(m(edge, "waiters_woken") == 100);
  CHECK(m(edge, "spurious_interrupts") == 0);
  // Closer than the path, a signal can still compare against the MV of a waiter already woken: extra
  // (spurious) interrupts are allowed (F8) and the verdict does not claim exact counts.
  auto close = run("conditional_interrupt", "--workload.signal_interval_ns=5000", "close");
  CHECK(close["metrics"]["counts_checked_exactly"] == false);
  CHECK(m(close, "interrupts_raised") > 10);
  CHECK(m(close, "spurious_interrupts") == m(close, "interrupts_raised") - 10);
  CHECK(m(close, "waiters_woken") == 10);
}

TEST_CASE("NULL signaled-fence array: in conditional_interrupt the OS scans every waiter and still wakes each",
          "[F12]") {
  auto j = run("conditional_interrupt", "--cmp.report_fence_set=false", "null");
  CHECK(m(j, "null_array_interrupts") == 10);
  CHECK(m(j, "waiters_woken") == 10);
  auto exact = run("conditional_interrupt", "", "exact");
  CHECK(m(exact, "null_array_interrupts") == 0);
}

TEST_CASE(
    "gpu_wait: native unblocks on the GPU at the derived time with no CPU interrupt, legacy costs a CPU round trip",
    "[F5]") {
  using namespace tb::dflt;
  // 1 ps timestamp ticks, so B's start is exact (the default 1 ns tick floors it).
  auto native = run("gpu_wait", "--gpu.timestamp_tick_ps=1 --vidsch.native_fence_logs=false", "gw_native");
  auto legacy = run("gpu_wait", "--gpu.timestamp_tick_ps=1 --fence.kind=legacy", "gw_legacy");
  // Native: the path of the F5 unit test (test_fences.cpp), from A's SIGNAL to B's next packet: a walk
  // each for the CV write and the MV check (node A's TLB is cold for those pages), the engine's MV check
  // in VRAM, the CMP's 20 cycles and its 200 ns barrier handshake (A's read-pointer write-back is still
  // in its translation, a PTE read, outside the barrier); B resumes with its packets fetched.
  CHECK(m(native, "signal_to_unblock_ns") == Approx(to_ns(gpu_wait_unblock_warm())).margin(1e-6));
  CHECK(m(native, "signal_to_unblock_cold_ns") == Approx(to_ns(gpu_wait_unblock())).margin(1e-6));
  // With logs (the default): A's logged SIGNAL barriers after its log index, 200 ns (system scope) past
  // its CV write's visibility, before its shadow check; the rest as without.
  auto logged = run("gpu_wait", "--gpu.timestamp_tick_ps=1", "gw_native_logs");
  CHECK(m(logged, "signal_to_unblock_ns") ==
        Approx(to_ns(gpu_wait_unblock_warm() + kWb + up_write(8) + sc_time(200, SC_NS))).margin(1e-6));
  CHECK(m(native, "fence_interrupts") == 0);  // no CPU fence interrupt at all
  CHECK(m(native, "gpu_unblocks") == 2);      // one per round
  // Legacy: the OS holds B's work until the signal interrupt. A lower bound, each term on the path in
  // sequence: A's CV write (WRITE64) visible (write buffer, link, DRAM), the decode of the BARRIER that
  // waits for it and of the INTERRUPT after it, the CMP's interrupt firmware (32 cycles) for the monitored
  // fence event, the MSI (a 28-byte TLP, hop, root complex); the CPU leaves C1,
  // enters the interrupt, runs the ISR, then the DPC; the DPC resubmits B's 20 bytes (TIMESTAMP 12 +
  // INTERRUPT 8): ring write and doorbell up to the CMP's kick of node B, which fetches them from system
  // memory. Left out: the cold-TLB walks on the way, the event entry's and write pointer's TLPs ahead of
  // the MSI, the ISR's event-ring reads and MMIO write, the DPC's CV read.
  const sc_time round_trip = node_sysmem_write8() + 2 * kDecode + kCmpInterrupt + ser(4 + 24, kRate) + kHop + kRc +
                             kC1Exit + kIntEntry + kIsr + kDpc + submit_to_kick(20) + sysmem_read(20);
  CHECK(m(legacy, "signal_to_unblock_ns") >= to_ns(round_trip));
  CHECK(m(legacy, "gpu_unblocks") == 0);      // the OS held B's work and submitted it from the DPC
  CHECK(m(legacy, "fence_interrupts") == 2);  // one per round
}

TEST_CASE("A legacy fence runs alike with and without the native fence feature: the same figures, no native fence DDI",
          "[F9][F5]") {
  // A monitored fence is the OS's alone (no driver DDI, no CMP slot), so whether the OS enabled
  // DXGK_FEATURE_NATIVE_FENCE, or the driver has native fences at all, changes nothing on its path:
  // the figures are equal to the picosecond.
  const std::string args = "--gpu.timestamp_tick_ps=1 --fence.kind=legacy --workload.cpu_waiter=true";
  auto on = run("gpu_wait", args, "legacy_on");
  auto off = run("gpu_wait", args + " --os.native_fence_feature=disabled", "legacy_off");
  auto none = run("gpu_wait", args + " --gpu.kmd_native_gpu_fence=never", "legacy_none");
  for (const auto* j : {&off, &none}) {
    CHECK(m(*j, "signal_to_unblock_ns") == m(on, "signal_to_unblock_ns"));
    CHECK(m(*j, "signal_to_cpu_wake_ns") == m(on, "signal_to_cpu_wake_ns"));
    CHECK(m(*j, "fence_interrupts") == 2);  // per round one interrupt releases B's work (and wakes the thread)
    CHECK(m(*j, "gpu_unblocks") == 0);
  }
  // The CPU thread and B's release come from the same DPC: the thread's wake is within the DPC-to-thread
  // path of B's submission, so neither figure is far from the other (both past the interrupt).
  CHECK(m(off, "signal_to_cpu_wake_ns") > 0);
  auto ci = run("conditional_interrupt", "--fence.kind=legacy --os.native_fence_feature=disabled", "ci_legacy_off");
  CHECK(m(ci, "interrupts_raised") == 100);  // every GPU signal of a monitored fence interrupts
  CHECK(m(ci, "waiters_woken") == 10);
  CHECK(m(ci, "signals") == 100);
  // The scenario file that runs it: a WDDM 2.x stack.
  const Run file = run_cli(scenario("monitored_fence"));
  INFO(file.out << file.err);
  CHECK(file.code == 0);
  // A native fence without the feature is refused before the run, naming the way out.
  const Run native = run_cli(scenario("gpu_wait") + " --os.native_fence_feature=disabled");
  CHECK(native.code == 2);
  CHECK(native.err.find("fence.kind = legacy") != std::string::npos);
  CHECK(native.out.empty());
  // A driver that advertises native fences the OS did not enable fails adapter start, even for a
  // monitored fence: the run reports it (exit 1), as the OS would.
  const Run fails = run_cli(scenario("gpu_wait") +
                            " --fence.kind=legacy --os.native_fence_feature=disabled "
                            "--gpu.kmd_native_gpu_fence=always");
  CHECK(fails.code == 1);
  CHECK(fails.out.find("DXGK_FEATURE_NATIVE_FENCE") != std::string::npos);
}

TEST_CASE("fence_race with cmp.mv_source = memory: no lost interrupt under the same load, barrier or not", "[F7][F8]") {
  // No shadow, no CMP MV work: the engine orders its CV write before its MV read, so the F7 barrier
  // plays no part and the no-barrier file, told not to expect losses, loses none either.
  const std::string args = "--workload.signals=20000 --seed 3 --cmp.mv_source=memory";
  auto j = run("fence_race_no_barrier", args + " --monitor.expect_lost_interrupt=false", "race_memory");
  CHECK(j["monitors"]["lost_interrupt"]["violations"] == 0);
  CHECK(m(j, "mv_updates") > 1000);
  CHECK(m(j, "link_up_utilisation") > 0.9);  // the bulk copy kept the link busy
}

TEST_CASE("fence_race: no lost interrupt with the CMP barrier, lost ones without it, marked in the VCD", "[F7][F8]") {
  const std::string shorter = "--workload.signals=20000 --seed 3";
  auto with = run("fence_race", shorter + " --vcd race_with.vcd", "race_with");
  CHECK(with["monitors"]["lost_interrupt"]["violations"] == 0);
  CHECK(m(with, "cpu_waits") > 1000);
  CHECK(with["monitors"]["torn_value"]["violations"] == 0);
  // With the barrier the monitor's marker is declared, starts low and never rises.
  const std::string vcd_with = slurp("race_with.vcd");
  const std::string code_with = vcd_code(vcd_with, "monitor.lost_interrupt");
  REQUIRE_FALSE(code_with.empty());
  const std::string marks_with = vcd_scalar_values(vcd_with, code_with);
  REQUIRE_FALSE(marks_with.empty());
  CHECK(marks_with.find('1') == std::string::npos);
  // The same seed and workload without the barrier: the monitor fires, the scenario expects it.
  const Run r = run_cli(scenario("fence_race_no_barrier") + " " + shorter +
                        " --vcd race.vcd --results fence_scenario_race_without.json");
  REQUIRE(r.code == 0);
  auto without = nlohmann::json::parse(slurp("fence_scenario_race_without.json"));
  const int lost = without["monitors"]["lost_interrupt"]["violations"].get<int>();
  CHECK(lost > 0);
  // The other guard alone: no CMP barrier, but native fence logs on (the default). The engine's barrier
  // after FirstFreeEntryIndex makes each CV write visible before its own MV read (F17), so a signal that
  // read the old MV has its CV visible to the CMP's step-3 read: the same seed and load lose none.
  auto logs = run("fence_race_log_barrier", shorter, "race_log_barrier");
  CHECK(logs["monitors"]["lost_interrupt"]["violations"] == 0);
  CHECK(m(logs, "cpu_waits") > 1000);
  CHECK(without["verdict"] == "pass");
  // In the waveform monitor.lost_interrupt starts low and rises for the lost interrupts: at least once,
  // and at most once per violation (overlapping windows merge into one).
  const std::string vcd = slurp("race.vcd");
  const std::string code = vcd_code(vcd, "monitor.lost_interrupt");
  REQUIRE_FALSE(code.empty());
  const std::string marks = vcd_scalar_values(vcd, code);
  REQUIRE_FALSE(marks.empty());
  CHECK(marks.front() == '0');
  CHECK(rises(marks) >= 1);
  CHECK(rises(marks) <= size_t(lost));
  CHECK_FALSE(vcd_code(vcd, "fences.f0.shadow_mv").empty());  // the CMP's shadow MV is traced beside it
  // Expecting a violation that does not happen fails the run.
  run("fence_race", shorter + " --monitor.expect_lost_interrupt=true", "race_expect", 1);
}

TEST_CASE("fence_stress runs its signals and reports its speed under host only", "[H4]") {
  auto j = run("fence_stress", "--workload.signals=20000 --bench.switches=20000", "stress");
  CHECK(m(j, "signals_executed") >= 20000);
  CHECK(m(j, "interrupts_raised") <= 4);  // no CPU waiter but the four submitters' final progress waits
  for (const char* k : {"signals_per_wall_s", "ns_per_signal", "bare_switch_ns", "cost_ratio", "setup_wall_s",
                        "setup_us_per_fence", "signalling_wall_s"})
    CHECK(j["host"].contains(k));
  CHECK_FALSE(j["metrics"].contains("ns_per_signal"));
  CHECK_FALSE(j["metrics"].contains("setup_wall_s"));
}

TEST_CASE("fence_stress spreads its signals over workload.hw_queues queues across the nodes", "[H4]") {
  // 20,000 signals over 8 queues (two on each of the file's 4 nodes): 2,500 a queue, one submission
  // each (its 16-byte SIGNALs fit half the 1 MiB ring), so each queue's progress fence signals once.
  auto j = run("fence_stress", "--workload.signals=20000 --bench.switches=20000 --workload.hw_queues=8", "stress8");
  CHECK(m(j, "signals_executed") == 20000 + 8);
  // The default: one queue per node, four progress signals (tests/golden/dgpu_results.json: 20,004).
  auto d = run("fence_stress", "--workload.signals=20000 --bench.switches=20000", "stress4");
  CHECK(m(d, "signals_executed") == 20000 + 4);
}

TEST_CASE("fence_race: an interrupt storm makes waiters late, not lost", "[F7][F8][H4]") {
  // Four fences for eight waiter threads: nearly every signal has a waiter, so nearly every signal
  // interrupts (one every ~4.5 us) while an interrupt costs the CPU ~3.5 us of ISR and DPC plus the
  // wake-ups: the CPU falls behind and waiters are woken far past the 100 us bound. Every interrupt
  // arrives; the CPU simply has not reached it. The monitor judges a waiter lost only once the CPU has
  // handled every interrupt it received, so this is lateness (late_cpu_busy), and the barrier keeps
  // the verdict clean; the issue saw 517 "lost interrupts" here.
  auto j = run("fence_race", "--workload.fences=4 --workload.signals=20000", "race_storm");
  CHECK(j["monitors"]["lost_interrupt"]["violations"] == 0);
  CHECK(m(j, "late_cpu_busy") > 100);
  CHECK(m(j, "max_reach_to_wake_ns") > 100000);  // past monitor.wake_bound_ns: the storm is real
  CHECK(j["verdict"] == "pass");
}

TEST_CASE("GPU timestamps are ticks: copy_bandwidth and gpu_wait give the same figures at any tick, within one tick",
          "[F5][H2]") {
  // copy_bandwidth: the 16 MiB d2h copy takes 647.90 us between its TIMESTAMPs (1 ps ticks; the queue's
  // two native fence logs, allocated before the buffers, move them onto a layout with one more PTE read). A tick of
  // 1 us rounds each end down, so the duration is off by less than one tick (0.15 %), never by the
  // factor of the tick in ns (1000: 25,890 GB/s on a 26 GB/s link), nor its inverse at a 1 ps tick.
  const auto fine = run("copy_bandwidth", "--gpu.timestamp_tick_ps=1", "tick_copy_1");
  const double exact_ns = m(fine, "duration_ns");
  CHECK(exact_ns == Approx(647901.820).margin(0.001));
  for (const char* tick : {"1000", "1000000"}) {
    const auto j =
        run("copy_bandwidth", std::string("--gpu.timestamp_tick_ps=") + tick, std::string("tick_copy_") + tick);
    const double tick_ns = std::stod(tick) / 1000.0;
    CHECK(std::abs(m(j, "duration_ns") - exact_ns) < tick_ns);
    CHECK(m(j, "effective_gbps") == Approx(16777216.0 / m(j, "duration_ns")));
    CHECK(m(j, "effective_gbps") < m(j, "link_limit_gbps") * (1 + tick_ns / exact_ns));
  }
  // gpu_wait, the signal at once: the exact figure (1 ps ticks) and the one a 1 us tick gives differ by
  // less than a tick, and the order checks (B after A's signal and after its CV write was visible) hold
  // at the coarse tick too: its TIMESTAMP and the exact times are compared on one clock.
  const auto g1 = run("gpu_wait", "--gpu.timestamp_tick_ps=1 --workload.signal_delay_us=0", "tick_wait_1");
  const auto g2 = run("gpu_wait", "--gpu.timestamp_tick_ps=1000000 --workload.signal_delay_us=0", "tick_wait_1us");
  CHECK(g2["verdict"] == "pass");
  CHECK(std::abs(m(g2, "signal_to_unblock_ns") - m(g1, "signal_to_unblock_ns")) < 1000.0);
  // At the default 1 ns tick both ends of the figure are rounded alike: within 1 ns of the exact one.
  const auto g3 = run("gpu_wait", "", "tick_wait_default");
  const auto g4 = run("gpu_wait", "--gpu.timestamp_tick_ps=1", "tick_wait_default_1");
  CHECK(std::abs(m(g3, "signal_to_unblock_ns") - m(g4, "signal_to_unblock_ns")) < 1.0);
}

TEST_CASE(
    "lost_interrupt: a waiter whose interrupt came late is late by cause, not lost, and one whose signal raised none "
    "is lost even when rescued",
    "[F3][F7][F8]") {
  auto monitor = [](const nlohmann::json& j) { return j["monitors"]["lost_interrupt"]["violations"].get<uint64_t>(); };
  auto u = [](const nlohmann::json& j, const char* k) { return j["metrics"][k].get<uint64_t>(); };
  // One lane: every MSI and CV write queues behind the bulk copy's chunks for tens of microseconds, so
  // some wakes land past the 100 us bound with the CPU idle, waiting for them (the link's delay), and
  // others with the CPU still handling earlier interrupts. Every waiter's signal raised its interrupt
  // (the barrier is on): none is lost. (The monitor called 75 of them lost at 20,000 signals.)
  const auto narrow = run("fence_race", "--link.lanes=1 --workload.signals=20000", "late_link");
  CHECK(monitor(narrow) == 0);
  CHECK(u(narrow, "late_gpu_or_link") > 0);
  CHECK(u(narrow, "late_cpu_busy") > 0);
  // A CMP that takes 16,777,216 cycles (16.8 ms) to raise each interrupt: each frame's waiter wakes a
  // refresh late, all 120 of them late for the GPU, none lost.
  const auto slow_cmp = run("hybrid_present", "--cmp.interrupt_cycles=16777216", "late_cmp");
  CHECK(monitor(slow_cmp) == 0);
  CHECK(u(slow_cmp, "late_gpu_or_link") == u(slow_cmp, "frames_presented"));
  CHECK(u(slow_cmp, "late_cpu_busy") == 0);
  // A CV write in VRAM that takes 282 us to land: the waiter's interrupt waits for it (without logs: with
  // them the engine's log barrier waits for the write before the check, so the interrupt is not late).
  const auto slow_vram =
      run("conditional_interrupt",
          "--fence.storage=local --vram.write_latency_ns=282385 --vidsch.native_fence_logs=false", "late_vram");
  CHECK(monitor(slow_vram) == 0);
  CHECK(u(slow_vram, "late_gpu_or_link") + u(slow_vram, "late_cpu_busy") >= 1);
  // Without the CMP's barrier (F7) signals racing an MV update raise nothing, the CMP's re-read misses
  // them too: lost, though a later signal's interrupt rescues some of them.
  const auto race = run("fence_race_no_barrier", "--workload.signals=10000", "lost_rescued");
  CHECK(monitor(race) >= 1);
  CHECK(u(race, "overdue_woken_later") >= 1);
  CHECK(u(race, "overdue_woken_later") <= monitor(race));
  CHECK(race["verdict"] == "pass");  // the scenario expects its losses
}
