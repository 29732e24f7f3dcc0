// Cross-adapter native fences (F15) with the optimized signaled interrupt (F19): the interrupt names only the HW
// queue, so the log entries are all the OS learns of a GPU signal, and from them it must do what it does for a
// fence it reads on the other paths: wake the CPU waiters, release the work it holds (a kernel-mode queue's, a
// monitored fence's) and forward the value to the other adapter. Scenario runs of every form (1, 2a, 2b) and
// pair through the CLI; in-process benches for the held work on the signalling adapter and for the value a
// DPC forwards when one read of the log finds several entries.
#include <string>

#include "xfence_runs.h"

using namespace tb;
using namespace sc_core;

namespace {
const std::string kOptimized = " --kmd.optimized_native_fence_signaled_interrupt=true";

// The scenario file's defaults: workload.signals = 20 pairs, each value i signalled once, on the one
// adapter other than the waiter's. Dxgkrnl forwards each new value once to every other adapter: 20 x 1.
constexpr uint64_t kForwardSignals = 20, kForwards = kForwardSignals * (2 - 1);
// What the optimized DPC leaves out before it forwards: the CPU's read of the fence's CV in system memory,
// which the non-optimized DPC makes for the fence its array names (a log entry carries the value): the root
// complex both ways (rc.latency_ns 30 each), DRAM (sysmem.read_latency_ns 90) and 8 bytes at
// sysmem.bandwidth_gbps 76.8. Every other step of the two DPCs is the same (one queue's logs, MV held at 0).
constexpr double kCvRead = 30 + 90 + 30 + 8 / 76.8;

// One form's four wait/signal pairs with the optimized interrupt: the verdict passes, every waiter
// unblocks, every value is forwarded once; a GPU signal interrupts the CPU once and reaches the other side
// through the interrupt path (the bounds derived in xfence_runs.h: the optimized DPC reads only the named
// queue's logs, a subset of what they allow for), a CPU signal interrupts nobody.
void check_form_optimized(const std::string& form, const std::string& extra = "") {
  for (const char* pair : {"gpu_gpu", "gpu_cpu", "cpu_gpu", "cpu_cpu"}) {
    const std::string args = xfence(form, pair) + kOptimized + extra;
    const auto j = run_json(args, "opt_" + form + "_" + pair);
    const auto& m = j["metrics"];
    INFO(args << "\n" << j["why_failed"].dump());
    CHECK(j["verdict"] == "pass");
    CHECK(m["unblocked"] == kForwardSignals);
    CHECK(m["forwards"] == kForwards);
    const bool gpu_signal = std::string(pair).substr(4) == "gpu";
    const bool cpu_waiter = std::string(pair).rfind("cpu_", 0) == 0;
    CHECK(m["cpu_interrupts"] == (gpu_signal ? kForwardSignals : 0));
    if (gpu_signal) {
      const double floor = kInterruptPath + (cpu_waiter ? kThreadWake : 0);
      CHECK(m["signal_to_unblock_ns"].get<double>() >= floor);
      CHECK(m["signal_to_unblock_ns"].get<double>() <= floor + kHardwareSlack);
    }
  }
}
}  // namespace

TEST_CASE(
    "F15/F19: scenario 1 with the optimized interrupt: the dGPU's logged signal is forwarded to the iGPU, every "
    "waiter unblocks",
    "[F15][F19]") {
  check_form_optimized("1");
  const auto m = run_json(xfence("1", "gpu_gpu") + kOptimized, "opt_1_detail")["metrics"];
  const auto plain = run_json(xfence("1", "gpu_gpu"), "opt_1_plain")["metrics"];
  CHECK(m["dgpu_fence_interrupts"] == kForwardSignals);
  CHECK(m["waiter_gpu_unblocks"] == kForwardSignals);  // the iGPU's CMP, after the forward's NotificationOnly
  // The value forwarded is the logged one, not a re-read of CV: exactly one CPU read sooner, every signal.
  CHECK(plain["signal_to_unblock_ns"].get<double>() - m["signal_to_unblock_ns"].get<double>() ==
        Approx(kCvRead).margin(0.01));
}

TEST_CASE(
    "F15/F19: scenario 2a with the optimized interrupt: the dGPU's logged signal reaches the iGPU's monitored "
    "fence, VidSch releases the work it holds",
    "[F15][F19]") {
  check_form_optimized("2a");
  const auto m = run_json(xfence("2a", "gpu_gpu") + kOptimized, "opt_2a_detail")["metrics"];
  const auto plain = run_json(xfence("2a", "gpu_gpu"), "opt_2a_plain")["metrics"];
  CHECK(m["waiter_gpu_unblocks"] == 0);  // no WAIT on the iGPU: the OS submitted the held work
  CHECK(plain["signal_to_unblock_ns"].get<double>() - m["signal_to_unblock_ns"].get<double>() ==
        Approx(kCvRead).margin(0.01));
}

TEST_CASE(
    "F15/F19: scenario 2b with the optimized interrupt: the iGPU's signals, written by VidSch, reach the dGPU's "
    "waiters",
    "[F15][F19]") {
  // The dGPU waits here; its KMD reports the optimized cap, but the signal comes from the CPU side (VidSch's
  // write at the head of the iGPU's software context) and is forwarded with NotificationOnly: no dGPU
  // interrupt is on the path, and the time is the same as without the cap.
  check_form_optimized("2b");
  const auto m = run_json(xfence("2b", "gpu_gpu") + kOptimized, "opt_2b_detail")["metrics"];
  const auto plain = run_json(xfence("2b", "gpu_gpu"), "opt_2b_plain")["metrics"];
  CHECK(m["software_signals"] == kForwardSignals);
  CHECK(m["signal_to_unblock_ns"].get<double>() == Approx(plain["signal_to_unblock_ns"].get<double>()).margin(0.01));
}

TEST_CASE(
    "F15/F19: scenario 2's kernel-mode queue variant with the optimized interrupt: the iGPU's held work is "
    "released once the dGPU's logged signal is forwarded",
    "[F15][F19]") {
  // Both GPUs native, the iGPU's queue kernel-mode: on 2a Dxgkrnl holds its wait on the CPU (no WAIT runs on
  // the iGPU) until the forward from the dGPU's DPC; on 2b it writes the iGPU's signals.
  const std::string kernel = " --igpu.kmd_native_gpu_fence=if_enabled --xfence.igpu_queue=kernel";
  const auto build = [&](const std::string& form, const std::string& pair) {
    return tb::scenario("cross_adapter_fence") + " --cpu.idle_governor=fixed --cpu.idle_state=C1" +
           " --xfence.scenario=" + form + " --xfence.pair=" + pair + kernel + kOptimized;
  };
  const auto held = run_json(build("2a", "gpu_gpu"), "opt_kq_2a");
  INFO(held["why_failed"].dump());
  CHECK(held["verdict"] == "pass");
  CHECK(held["metrics"]["igpu_native_fences"] == true);
  CHECK(held["metrics"]["unblocked"] == kForwardSignals);  // each probe write comes after the held work
  CHECK(held["metrics"]["waiter_gpu_unblocks"] == 0);
  CHECK(held["metrics"]["forwards"] == kForwards);
  CHECK(held["metrics"]["signal_to_unblock_ns"].get<double>() >= kInterruptPath);
  const auto sig = run_json(build("2b", "gpu_gpu"), "opt_kq_2b");
  CHECK(sig["verdict"] == "pass");
  CHECK(sig["metrics"]["unblocked"] == kForwardSignals);
  CHECK(sig["metrics"]["software_signals"] == kForwardSignals);
  CHECK(sig["metrics"]["forwards"] == kForwards);
}

TEST_CASE(
    "F15/F19: with the optimized interrupt, a kernel-mode queue's work held behind a cross-adapter fence is released "
    "by the DPC that reads the signal from the log, after the signal",
    "[F15][F19]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}, {"kmd.optimized_native_fence_signaled_interrupt", "true"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  uint64_t marker = 0;
  sc_time cv_written = SC_ZERO_TIME, marked = SC_ZERO_TIME;
  p.cpu.spawn_thread("app", [&] {
    x = start_both_and_share(p);
    p.sysmem.watch(x->cv_addr, 8, [&](uint64_t, unsigned) {
      if (cv_written == SC_ZERO_TIME) cv_written = sc_time_stamp();
    });
    marker = p.vidmm.allocate(Segment::System, 64, 64);
    p.sysmem.watch(marker, 8, [&](uint64_t, unsigned) { marked = sc_time_stamp(); });
    // The dGPU: a kernel-mode queue whose work waits for 1 (VidSch holds it: CV is 0), and a user-mode
    // queue whose logged SIGNAL of 1 interrupts (MV = 0), naming that queue only.
    KmdHwQueue* kq = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    kq->kernel_mode = true;
    KmdHwQueue* uq = p.vidsch.CreateHwQueue(1, 0, 0, 1);
    PacketWriter after, work;
    after.write64(marker, 1);
    p.vidsch.SubmitAfterWait(kq, x->instances[0], 1, after);
    work.compute(20000);
    p.vidsch.SubmitSignal(uq, x->instances[0], 1, work);
  });
  sc_start(sc_time(5, SC_MS));
  REQUIRE(x);
  CHECK(p.kmd.DxgkDdiQueryAdapterInfoVidSchCaps().optimized_native_fence_signaled_interrupt);
  // The OS heard of the signal only as a named queue: no fence array, no NULL scan.
  const auto named = [](const DxgkInterruptData& d) {
    return d.type == DxgkInterruptData::NativeFenceSignaled && !d.hw_queues.empty() && d.signaled.empty() &&
           !d.signaled_array_null;
  };
  const auto other = [](const DxgkInterruptData& d) {
    return d.type == DxgkInterruptData::NativeFenceSignaled && d.hw_queues.empty();
  };
  CHECK(b.count_notified(named) >= 1);
  CHECK(b.count_notified(other) == 0);
  CHECK(p.vidsch.held_released() == 1);
  CHECK(p.sysmem.peek64(marker) == 1);
  REQUIRE(cv_written != SC_ZERO_TIME);
  // Released from the DPC: after the CV write and at least the CPU's interrupt path (kInterruptPath).
  CHECK(marked >= cv_written + sc_time(kInterruptPath, SC_NS));
  CHECK(x->forwards == 1);  // and the value went to the iGPU
}

TEST_CASE(
    "F15/F19: with the optimized interrupt, one DPC that reads several entries of a cross-adapter fence forwards "
    "it once, at the highest logged value",
    "[F15][F19]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}, {"kmd.optimized_native_fence_signaled_interrupt", "true"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  bool woke = false;
  p.cpu.spawn_thread("app", [&] {
    x = start_both_and_share(p);
    KmdHwQueue* q = p.vidsch.CreateHwQueue(0, 0, 0, 1);
    while (p.igpu_driver->vidsch.waiter_count() == 0) p.cpu.sleep(us(1));
    // Two logged SIGNALs back to back (1, then 2): the second's entry is in the log long before the first
    // interrupt's DPC reads it (the interrupt path alone is kInterruptPath).
    PacketWriter w;
    VidSch::gpu_signal(w, *x->instances[0], 1, 1);
    VidSch::gpu_signal(w, *x->instances[0], 2, 1);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(q, w);
  });
  p.cpu.spawn_thread("igpu_waiter", [&] {
    while (!x || !x->instances[1]) p.cpu.sleep(us(1));
    woke = p.igpu_driver->vidsch.WaitFromCpu(x->instances[1], 2, us(500));
  });
  sc_start(sc_time(5, SC_MS));
  REQUIRE(x);
  CHECK(woke);
  CHECK(p.vidsch.log_entries_read() == 2);  // both entries, in one read
  // One forward of 2. A forward of 1 would send the iGPU's VidSch to read CV (2) and forward that back: two.
  CHECK(x->forwards == 1);
  CHECK(x->forwarded == 2);
}
