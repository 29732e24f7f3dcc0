// Cross-adapter native fences on the hybrid platform (Native GPU fence object): enablement (F9), the cross-adapter
// fence itself (F15: type DEFAULT only, one CurrentValue page shared by both GPUs, MV held at 0, the OS's forwarding;
// scenarios 1, 2a, 2b with every wait/signal pair) and the GPU-to-GPU doorbell exploration (F20). In-process benches
// build one platform per TEST_CASE; the scenario runs go through the CLI.
#include <string>

#include "hw_model/gpu/regs.h"
#include "xfence_runs.h"

using namespace tb;
using namespace sc_core;

TEST_CASE(
    "F9: a driver that advertises NativeGpuFence while the OS did not enable DXGK_FEATURE_NATIVE_FENCE fails adapter "
    "start, with its reason in the results",
    "[F9]") {
  const auto j = run_json(tb::scenario("cross_adapter_fence") +
                              " --os.native_fence_feature=disabled --gpu.kmd_native_gpu_fence=always "
                              "--igpu.kmd_native_gpu_fence=always",
                          "f9", 1);
  CHECK(j["verdict"] == "fail");
  const auto why = j["why_failed"].dump();
  INFO(why);
  CHECK(why.find("dGPU: adapter start failed: the driver advertises DXGK_VIDSCHCAPS::NativeGpuFence but the OS did not "
                 "enable DXGK_FEATURE_NATIVE_FENCE") != std::string::npos);
  CHECK(why.find("iGPU: adapter start failed") != std::string::npos);
}

TEST_CASE("F9: a driver that asks the OS, with the feature disabled, starts without the cap and gets monitored fences",
          "[F9]") {
  FenceBench b(Overrides{{"os.native_fence_feature", "disabled"}});
  auto& p = b.p;
  AdapterStart s;
  NativeFence* f = nullptr;
  p.cpu.spawn_thread("app", [&] {
    s = DxgkrnlStartAdapter(p.kmd, "dGPU");
    f = p.vidsch.CreateNativeFence(1, Segment::System, false);
  });
  sc_start();
  CHECK(s.started);
  CHECK_FALSE(s.vidsch_caps.native_gpu_fence);  // if_enabled: it queried DXGK_FEATURE_NATIVE_FENCE
  CHECK_FALSE(p.vidsch.native_fences());
  REQUIRE(f);
  CHECK(f->legacy);  // the OS uses a monitored fence on this adapter
}

TEST_CASE(
    "F9: with the feature enabled, a driver that does not support native fences (the iGPU of 2a/2b) starts and gets "
    "monitored fences, the other adapter native ones",
    "[F9]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}, {"igpu.kmd_native_gpu_fence", "never"}});
  auto& p = b.p;
  AdapterStart ds, is;
  NativeFence *fd = nullptr, *fi = nullptr;
  p.cpu.spawn_thread("app", [&] {
    ds = DxgkrnlStartAdapter(p.kmd, "dGPU");
    is = DxgkrnlStartAdapter(p.igpu_driver->kmd, "iGPU");
    fd = p.vidsch.CreateNativeFence(1, Segment::System, false);
    fi = p.igpu_driver->vidsch.CreateNativeFence(1, Segment::System, false);
  });
  sc_start();
  CHECK(ds.started);
  CHECK(is.started);
  CHECK(ds.vidsch_caps.native_gpu_fence);
  CHECK_FALSE(is.vidsch_caps.native_gpu_fence);
  REQUIRE(fd);
  REQUIRE(fi);
  CHECK_FALSE(fd->legacy);
  CHECK(fi->legacy);
}

TEST_CASE("F15: a cross-adapter fence is created with type DEFAULT only, another type fails with a reason", "[F15]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}});
  auto& p = b.p;
  CrossAdapterFence *bad = nullptr, *good = nullptr;
  std::string err;
  p.cpu.spawn_thread("app", [&] {
    DxgkrnlStartAdapter(p.kmd, "dGPU");
    DxgkrnlStartAdapter(p.igpu_driver->kmd, "iGPU");
    bad = p.xfences.Create(1, 0, NativeFenceType::IntraGpu, &err);
    good = p.xfences.Create(1, 0, NativeFenceType::Default, nullptr);
  });
  sc_start();
  CHECK(bad == nullptr);
  CHECK(err.find("D3DDDI_NATIVEFENCE_TYPE_DEFAULT") != std::string::npos);
  REQUIRE(good);
  CHECK(good->instances[0] != nullptr);  // opened on the creating adapter
}

TEST_CASE("F15: one CurrentValue page in system memory for both GPUs: each GPU's signal is what the other's WAIT reads",
          "[F15]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  uint64_t marker = 0;
  p.cpu.spawn_thread("app", [&] {
    x = start_both_and_share(p);
    KmdHwQueue* qd = p.kmd.DxgkDdiCreateHwQueue(0);
    KmdHwQueue* qi = p.igpu_driver->kmd.DxgkDdiCreateHwQueue(0);
    marker = p.vidmm.allocate(Segment::System, 64, 64);
    // The dGPU signals 5; 20 us later the iGPU waits for 5 (its engine reads the page), then signals 9;
    // 20 us later the dGPU waits for 9 and writes the marker. No WAIT blocks: each is satisfied by the
    // value the other GPU wrote to the one page (20 us is far longer than any write's way to DRAM).
    PacketWriter d1, i1, d2;
    d1.signal(VidSch::va(*x->instances[0], 1), 5);
    i1.wait(VidSch::va(*x->instances[1], 1), 5).signal(VidSch::va(*x->instances[1], 1), 9);
    d2.wait(VidSch::va(*x->instances[0], 1), 9).write64(marker, 0xD06);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qd, d1);
    p.cpu.sleep(us(20));
    p.igpu_driver->kmd.DxgkDdiSubmitCommandToHwQueue(qi, i1);
    p.cpu.sleep(us(20));
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qd, d2);
  });
  sc_start(sc_time(5, SC_MS));
  REQUIRE(x);
  REQUIRE(x->instances[1]);
  // One physical page: both instances name the same CurrentValue, in system memory outside the iGPU's
  // stolen range.
  CHECK(x->instances[0]->cv_addr == x->instances[1]->cv_addr);
  CHECK(x->cv_addr >= regs::kSysmemBase);
  CHECK(x->cv_addr < p.igpu->local_base());
  // Each CMP holds its own GPU VA of it (its system process's alias, F10)...
  const uint64_t dva = p.gpu.cmp.fence(x->instances[0]->slot)->cv_addr;
  const uint64_t iva = p.igpu->cmp.fence(x->instances[1]->slot)->cv_addr;
  CHECK(dva != 0);
  CHECK(iva != 0);
  // ...and the values both GPUs wrote are in that one page: 9 (the iGPU's) after 5 (the dGPU's).
  CHECK(p.sysmem.peek64(x->cv_addr) == 9);
  CHECK(p.sysmem.peek64(marker) == 0xD06);
  CHECK(p.igpu->cmp.gpu_unblocks() == 0);  // no WAIT blocked: each read the other GPU's value
  CHECK(p.gpu.cmp.gpu_unblocks() == 0);
  CHECK(p.gpu.nodes[0]->faults() == 0);
  CHECK(p.igpu->nodes[0]->faults() == 0);
}

TEST_CASE(
    "F15: a fence created on a GPU without native fences is a monitored fence there and native where it is opened "
    "on a GPU that has them",
    "[F15]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}, {"igpu.kmd_native_gpu_fence", "never"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  bool woke = false;
  sc_time signalled, woken;
  p.cpu.spawn_thread("app", [&] {
    DxgkrnlStartAdapter(p.kmd, "dGPU");
    DxgkrnlStartAdapter(p.igpu_driver->kmd, "iGPU");
    x = p.xfences.Create(1, 1, NativeFenceType::Default, nullptr);  // on the iGPU
    p.xfences.Open(*x, 0, 1);                                       // opened on the dGPU
    woke = p.vidsch.WaitFromCpu(x->instances[0], 3, us(200));
    woken = sc_time_stamp();
  });
  p.cpu.spawn_thread("signaller", [&] {
    while (!x || !x->instances[0] || p.vidsch.waiter_count() == 0) p.cpu.sleep(us(1));
    signalled = sc_time_stamp();
    p.igpu_driver->vidsch.SignalFromCpu(x->instances[1], 3);  // the OS writes CV, then forwards it
  });
  sc_start();
  REQUIRE(x);
  CHECK(x->instances[1]->legacy);        // the creator without native fences: a monitored fence
  CHECK(x->instances[1]->handle == 0);   // the OS tracks it; no CMP slot
  CHECK_FALSE(x->instances[0]->legacy);  // native on the dGPU, its MV held at 0
  CHECK(p.sysmem.peek64(x->instances[0]->mv_addr) == 0);
  CHECK(woke);
  CHECK(x->forwards == 1);
  CHECK(woken > signalled);
}

TEST_CASE("F15: each native instance's MonitoredValue is 0 for the fence's lifetime, whatever CPU waiters come and go",
          "[F15]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  std::vector<uint64_t> seen;  // OS MV and shadow MV of both adapters, while a waiter waits and after
  auto sample = [&] {
    for (int a = 0; a < 2; ++a) {
      NativeFence* f = x->instances[size_t(a)];
      Cmp& cmp = a == 0 ? p.gpu.cmp : p.igpu->cmp;
      Memory& m = a == 0 ? p.gpu.vram : p.sysmem;
      seen.push_back(p.sysmem.peek64(f->mv_addr));
      seen.push_back(m.peek64(cmp.shadow_mv_addr(f->slot)));
    }
  };
  p.cpu.spawn_thread("app", [&] {
    x = start_both_and_share(p);
    p.igpu_driver->vidsch.WaitFromCpu(x->instances[1], 100, us(50));  // nobody signals: times out
    p.vidsch.WaitFromCpu(x->instances[0], 7, us(50));
    sample();
  });
  sc_spawn([&] {
    // While the iGPU's waiter on 100 waits (a plain fence's MV would be 99).
    while (!x || p.igpu_driver->vidsch.waiter_count() == 0) wait(us(1));
    wait(us(10));
    sample();
  });
  sc_start();
  REQUIRE(seen.size() == 8);
  for (uint64_t v : seen) CHECK(v == 0);
  // MV reached 0 once per instance (set at creation, F15) and never moved: one update each.
  CHECK(p.vidsch.mv_updates() == 1);
  CHECK(p.igpu_driver->vidsch.mv_updates() == 1);
}

TEST_CASE(
    "F15: scenario 1 (both native, the iGPU waits, the dGPU signals): every pair unblocks, one interrupt per GPU "
    "signal, within the derived bounds",
    "[F15]") {
  const auto gg = run_json(xfence("1", "gpu_gpu"), "s1gg")["metrics"];
  const auto gc = run_json(xfence("1", "gpu_cpu"), "s1gc")["metrics"];
  const auto cg = run_json(xfence("1", "cpu_gpu"), "s1cg")["metrics"];
  const auto cc = run_json(xfence("1", "cpu_cpu"), "s1cc")["metrics"];
  for (const auto* m : {&gg, &gc, &cg, &cc}) {
    CHECK((*m)["unblocked"] == 20);
    CHECK((*m)["mv_held_at_zero"] == true);
  }
  // The dGPU's signal interrupts (MV = 0) and Dxgkrnl forwards it to the iGPU: NotificationOnly, its
  // CMP unblocks the queue (gpu_gpu), or the iGPU's VidSch wakes the thread (cpu_gpu).
  CHECK(gg["cpu_interrupts"] == 20);
  CHECK(gg["dgpu_fence_interrupts"] == 20);
  CHECK(gg["waiter_gpu_unblocks"] == 20);
  CHECK(gg["forwards"] == 20);
  CHECK(gg["signal_to_unblock_ns"].get<double>() >= kInterruptPath);
  CHECK(gg["signal_to_unblock_ns"].get<double>() <= kInterruptPath + kHardwareSlack);
  CHECK(cg["cpu_interrupts"] == 20);
  CHECK(cg["signal_to_unblock_ns"].get<double>() >= kInterruptPath + kThreadWake);
  CHECK(cg["signal_to_unblock_ns"].get<double>() <= kInterruptPath + kThreadWake + kHardwareSlack);
  // A CPU signal interrupts nobody: the OS writes CV, then forwards; no CPU interrupt is on the path.
  CHECK(gc["cpu_interrupts"] == 0);
  CHECK(gc["signal_to_unblock_ns"].get<double>() < 2000 + 500);  // less than leaving C1 and an interrupt's entry
  CHECK(cc["cpu_interrupts"] == 0);
  CHECK(cc["signal_to_unblock_ns"].get<double>() >= kThreadWake);
  CHECK(cc["signal_to_unblock_ns"].get<double>() <= kThreadWake + 1500);  // the KMD's store and MMIO, two CV reads
}

TEST_CASE("F15: with the NULL signaled array (F12) the OS still scans and forwards the cross-adapter fence",
          "[F15][F12]") {
  // cmp.report_fence_set = false: the dGPU's interrupt names no fence; the OS scans every native fence
  // with a waiter — and every cross-adapter fence, which has its waiters on the other adapter.
  const auto m = run_json(xfence("1", "gpu_gpu") + " --cmp.report_fence_set=false", "nullarr")["metrics"];
  CHECK(m["unblocked"] == 20);
  CHECK(m["forwards"] == 20);
  CHECK(m["cpu_interrupts"] == 20);
}

TEST_CASE(
    "F15: scenario 2a (the iGPU opens the fence as a monitored fence and waits, the dGPU signals): VidSch holds "
    "and releases the iGPU's work",
    "[F15]") {
  const auto gg = run_json(xfence("2a", "gpu_gpu"), "2agg")["metrics"];
  const auto gc = run_json(xfence("2a", "gpu_cpu"), "2agc")["metrics"];
  const auto cg = run_json(xfence("2a", "cpu_gpu"), "2acg")["metrics"];
  const auto cc = run_json(xfence("2a", "cpu_cpu"), "2acc")["metrics"];
  for (const auto* m : {&gg, &gc, &cg, &cc}) {
    CHECK((*m)["unblocked"] == 20);
    CHECK((*m)["igpu_native_fences"] == false);
  }
  CHECK(gg["cpu_interrupts"] == 20);
  CHECK(gg["waiter_gpu_unblocks"] == 0);  // no GPU wait on the iGPU: the OS submitted the held work
  CHECK(gg["signal_to_unblock_ns"].get<double>() >= kInterruptPath);
  CHECK(gg["signal_to_unblock_ns"].get<double>() <= kInterruptPath + kHardwareSlack);
  CHECK(cg["cpu_interrupts"] == 20);
  CHECK(cg["signal_to_unblock_ns"].get<double>() >= kInterruptPath + kThreadWake);
  CHECK(cg["signal_to_unblock_ns"].get<double>() <= kInterruptPath + kThreadWake + kHardwareSlack);
  CHECK(gc["cpu_interrupts"] == 0);
  CHECK(gc["signal_to_unblock_ns"].get<double>() < 2000 + 500);
  CHECK(cc["cpu_interrupts"] == 0);
  CHECK(cc["signal_to_unblock_ns"].get<double>() >= kThreadWake);
  CHECK(cc["signal_to_unblock_ns"].get<double>() <= kThreadWake + 1500);
}

TEST_CASE(
    "F15: scenario 2b (the iGPU without native fences signals, the dGPU waits): VidSch writes CV at the head, "
    "forwards it, the dGPU's CMP unblocks its queue",
    "[F15]") {
  const auto gg = run_json(xfence("2b", "gpu_gpu"), "2bgg")["metrics"];
  const auto gc = run_json(xfence("2b", "gpu_cpu"), "2bgc")["metrics"];
  const auto cg = run_json(xfence("2b", "cpu_gpu"), "2bcg")["metrics"];
  const auto cc = run_json(xfence("2b", "cpu_cpu"), "2bcc")["metrics"];
  for (const auto* m : {&gg, &gc, &cg, &cc}) CHECK((*m)["unblocked"] == 20);
  // "When packet is at the head of the software context, VidSch updates fence value directly from CPU":
  // the iGPU's INTERRUPT after the work, then the DPC's store. One interrupt per signal.
  CHECK(gg["software_signals"] == 20);
  CHECK(gg["cpu_interrupts"] == 20);
  CHECK(gg["igpu_fence_interrupts"] == 0);  // a DMA interrupt, not a fence event
  CHECK(gg["waiter_gpu_unblocks"] == 20);   // the dGPU's CMP, after DxgkDdiUpdateCurrentValuesFromCpu(NotificationOnly)
  CHECK(gg["signal_to_unblock_ns"].get<double>() >= kInterruptPath);
  CHECK(gg["signal_to_unblock_ns"].get<double>() <= kInterruptPath + kHardwareSlack);
  CHECK(cg["cpu_interrupts"] == 20);
  CHECK(cg["signal_to_unblock_ns"].get<double>() >= kInterruptPath + kThreadWake);
  CHECK(cg["signal_to_unblock_ns"].get<double>() <= kInterruptPath + kThreadWake + kHardwareSlack);
  CHECK(gc["cpu_interrupts"] == 0);
  CHECK(gc["signal_to_unblock_ns"].get<double>() < 2000 + 500);
  CHECK(cc["cpu_interrupts"] == 0);
  CHECK(cc["signal_to_unblock_ns"].get<double>() >= kThreadWake);
  CHECK(cc["signal_to_unblock_ns"].get<double>() <= kThreadWake + 1500);
}

TEST_CASE(
    "F20: with the GPU doorbell a GPU-GPU pair without CPU waiters interrupts the CPU never (off: once per signal), "
    "and MV leaves 0",
    "[F20]") {
  const auto off = run_json(xfence("1", "gpu_gpu"), "dboff")["metrics"];
  const auto on = run_json(xfence("1", "gpu_gpu", true), "dbon")["metrics"];
  CHECK(off["cpu_interrupts"] == 20);
  CHECK(off["xdoorbells_sent"] == 0);
  CHECK(on["cpu_interrupts"] == 0);
  CHECK(on["dgpu_fence_interrupts"] == 0);
  CHECK(on["igpu_fence_interrupts"] == 0);
  CHECK(on["mv_held_at_zero"] == false);
  CHECK(on["xdoorbells_sent"] == 20);
  CHECK(on["xdoorbells_received"] == 20);
  CHECK(on["waiter_gpu_unblocks"] == 20);
  CHECK(on["unblocked"] == 20);
  // No CPU step on the path: the doorbell is a posted write from the dGPU's CMP up the link to the iGPU's
  // BAR0 (a link hop 200 ns + the root complex 30 ns), after the CMP's barrier (200 ns) behind the CV
  // write (write buffer 100 ns + link hop 200 ns): at least 730 ns; less than leaving C1 and an
  // interrupt's entry. With native fence logs the engine's log entry, index write and barrier come before
  // the CMP hears of the signal (each under the 1 us log slack): still less than leaving C1, an interrupt's
  // entry and the log slack.
  CHECK(on["signal_to_unblock_ns"].get<double>() >= 100 + 200 + 200 + 200 + 30);
  CHECK(on["signal_to_unblock_ns"].get<double>() < 2000 + 500 + 1000);
  CHECK(on["signal_to_unblock_ns"].get<double>() < off["signal_to_unblock_ns"].get<double>());
}

TEST_CASE(
    "F20: with the doorbell a CPU waiter on the other adapter still gets its interrupt, from its own CMP's "
    "conditional check",
    "[F20]") {
  const auto on = run_json(xfence("1", "cpu_gpu", true), "dbcpu")["metrics"];
  CHECK(on["unblocked"] == 20);
  CHECK(on["cpu_interrupts"] == 20);
  CHECK(on["igpu_fence_interrupts"] == 20);  // the waiter's adapter: CV > its MV (waited value - 1)
  CHECK(on["dgpu_fence_interrupts"] == 0);   // no CPU waiter on the dGPU: MV = UINT64_MAX there
  CHECK(on["signal_to_unblock_ns"].get<double>() >= kInterruptPath + kThreadWake);
}

TEST_CASE(
    "cross_adapter_fence refuses impossible combinations before elaboration, other scenarios F9 settings without "
    "native fences",
    "[F9][F15][F20]") {
  const auto dgpu = run_cli(tb::scenario("cross_adapter_fence") + " --platform.topology=dgpu");
  CHECK(dgpu.code == 2);
  CHECK(dgpu.err.find("platform.topology") != std::string::npos);
  const auto db = run_cli(tb::scenario("cross_adapter_fence") +
                          " --xfence.scenario=2a --igpu.kmd_native_gpu_fence=never --xfence.gpu_doorbell=true");
  CHECK(db.code == 2);
  CHECK(db.err.find("xfence.gpu_doorbell") != std::string::npos);
  // 2b alone implies igpu.kmd_native_gpu_fence = never (scenarios/common/implied.cpp); set otherwise, refused.
  const auto s2 =
      run_cli(tb::scenario("cross_adapter_fence") + " --xfence.scenario=2b --igpu.kmd_native_gpu_fence=if_enabled");
  CHECK(s2.code == 2);
  CHECK(s2.err.find("igpu.kmd_native_gpu_fence") != std::string::npos);
  CHECK(dgpu.out.empty());
  CHECK(db.out.empty());
  // F9's settings mean something only where the scenario reports what follows from them: a scenario that
  // uses native fences refuses an OS or a driver without them.
  const auto fs = run_cli(tb::scenario("fence_signal") + " --os.native_fence_feature=disabled");
  CHECK(fs.code == 2);
  CHECK(fs.err.find("os.native_fence_feature") != std::string::npos);
  const auto gw = run_cli(tb::scenario("gpu_wait") + " --gpu.kmd_native_gpu_fence=never");
  CHECK(gw.code == 2);
  CHECK(gw.err.find("gpu.kmd_native_gpu_fence") != std::string::npos);
  const auto hp = run_cli(tb::scenario("hybrid_present") + " --igpu.kmd_native_gpu_fence=never");
  CHECK(hp.code == 2);
  CHECK(hp.err.find("igpu.kmd_native_gpu_fence") != std::string::npos);
  // Refused before anything is printed: no configuration on stdout, as for every other refusal.
  CHECK(fs.out.empty());
  CHECK(gw.out.empty());
  CHECK(hp.out.empty());
}

TEST_CASE("F15: each GPU's own MonitoredValue of a cross-adapter fence may live in its local memory", "[F15]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  p.cpu.spawn_thread("app", [&] { x = start_both_and_share(p, Segment::Local); });
  sc_start(sc_time(5, SC_MS));
  REQUIRE(x);
  REQUIRE(x->instances[1]);
  // "Each GPU gets its own copy of MonitoredValue ... in system memory or local memory": the dGPU's in its
  // VRAM, the iGPU's in its stolen memory; the one CurrentValue stays in system memory.
  CHECK(x->instances[0]->mv_addr >= regs::kVramBase);
  CHECK(x->instances[1]->mv_addr >= p.igpu->local_base());
  CHECK(x->instances[1]->mv_addr < p.igpu->local_base() + p.igpu_driver->vidmm.local_size());
  CHECK(x->cv_addr < p.igpu->local_base());
  // Held at 0 for the fence's lifetime wherever it lives.
  CHECK(p.gpu.vram.peek64(x->instances[0]->mv_addr) == 0);
  CHECK(p.sysmem.peek64(x->instances[1]->mv_addr) == 0);
  // The scenario with both MVs local: every pair unblocks.
  const auto j = run_json(xfence("1", "gpu_gpu") + " --xfence.mv_segment=local", "mv_local")["metrics"];
  CHECK(j["unblocked"] == 20);
  CHECK(j["cpu_interrupts"] == 20);
}

TEST_CASE(
    "F15: a wait and a signal of a cross-adapter fence on the same GPU stay on that GPU: the WAIT unblocks before "
    "the CPU hears of the signal",
    "[F15]") {
  FenceBench b(Overrides{{"platform.topology", "hybrid"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  uint64_t marker = 0;
  sc_time marked = SC_ZERO_TIME;
  p.cpu.spawn_thread("app", [&] {
    x = start_both_and_share(p);
    marker = p.vidmm.allocate(Segment::System, 64, 64);
    p.sysmem.watch(marker, 8, [&](uint64_t, unsigned) { marked = sc_time_stamp(); });
    KmdHwQueue* qa = p.kmd.DxgkDdiCreateHwQueue(0);
    KmdHwQueue* qb = p.kmd.DxgkDdiCreateHwQueue(1);
    PacketWriter wa, wb;
    wa.wait(VidSch::va(*x->instances[0], 1), 1).write64(marker, 1);  // blocks: CV is 0
    wb.compute(40000).signal(VidSch::va(*x->instances[0], 1), 1);    // 20 us later, the same GPU signals
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qa, wa);
    p.kmd.DxgkDdiSubmitCommandToHwQueue(qb, wb);
  });
  sc_start(sc_time(5, SC_MS));
  REQUIRE(marked != SC_ZERO_TIME);
  // The dGPU's CMP unblocked its own queue: "wait and signals submitted on the same GPU still benefit from
  // faster on GPU synchronization". MV = 0, so the signal still interrupts ("the power benefit ... is
  // lost"), but the waiter did not wait for it: the marker landed before the OS was notified.
  CHECK(p.gpu.cmp.gpu_unblocks() == 1);
  const auto native = [](const DxgkInterruptData& d) { return d.type == DxgkInterruptData::NativeFenceSignaled; };
  REQUIRE(b.count_notified(native) >= 1);
  CHECK(marked < b.first_native_notification());
}

TEST_CASE(
    "F15: scenario 2's variant with both GPUs native and the iGPU's queue kernel-mode: Dxgkrnl writes the iGPU's "
    "signals and holds its waits on the CPU",
    "[F15]") {
  const std::string base =
      tb::scenario("cross_adapter_fence") + " --cpu.idle_governor=fixed --cpu.idle_state=C1 --xfence.igpu_queue=kernel";
  // 2b: the iGPU signals (a kernel-mode queue: an INTERRUPT after the work, then VidSch writes CV through
  // DxgkDdiUpdateCurrentValuesFromCpu), the dGPU's queue waits on its GPU.
  const auto sig = run_json(base + " --xfence.scenario=2b --xfence.pair=gpu_gpu", "kq_2b")["metrics"];
  CHECK(sig["igpu_native_fences"] == true);
  CHECK(sig["unblocked"] == 20);
  CHECK(sig["software_signals"] == 20);
  CHECK(sig["waiter_gpu_unblocks"] == 20);
  CHECK(sig["cpu_interrupts"] == 20);
  CHECK(sig["signal_to_unblock_ns"].get<double>() >= kInterruptPath);
  // 2a: the iGPU waits (held by VidSch, released when the dGPU's signal is forwarded): no WAIT runs on it.
  const auto wait = run_json(base + " --xfence.scenario=2a --xfence.pair=gpu_gpu", "kq_2a")["metrics"];
  CHECK(wait["unblocked"] == 20);
  CHECK(wait["waiter_gpu_unblocks"] == 0);
  CHECK(wait["cpu_interrupts"] == 20);
  CHECK(wait["signal_to_unblock_ns"].get<double>() >= kInterruptPath);
  // The variant needs both GPUs native, and is scenario 2's only.
  CHECK(run_cli(base + " --xfence.scenario=1").code == 2);
  CHECK(run_cli(base + " --xfence.scenario=2b --igpu.kmd_native_gpu_fence=never").code == 2);
}

TEST_CASE("F15: a kernel-mode queue's signal of a native fence reaches the CMP: a WAIT on the same GPU unblocks",
          "[F15]") {
  // The iGPU's kernel-mode queue signals the cross-adapter fence: VidSch writes CV after the work, through
  // DxgkDdiUpdateCurrentValuesFromCpu, so the iGPU's CMP rescans its queues waiting on it; a user-mode
  // queue of the same iGPU blocked on the value runs on.
  FenceBench b(Overrides{{"platform.topology", "hybrid"}});
  auto& p = b.p;
  CrossAdapterFence* x = nullptr;
  uint64_t marker = 0;
  p.cpu.spawn_thread("app", [&] {
    x = start_both_and_share(p);
    VidSch& is = p.igpu_driver->vidsch;
    KmdHwQueue* kq = is.CreateHwQueue(0, 0, 0, 1);
    kq->kernel_mode = true;
    KmdHwQueue* uq = is.CreateHwQueue(1, 0, 0, 1);
    marker = p.vidmm.allocate(Segment::System, 64, 64);
    PacketWriter wait, work;
    wait.write64(marker, 1);
    is.SubmitAfterWait(uq, x->instances[1], 1, wait);  // a WAIT packet on the user-mode queue
    work.compute(20000);
    is.SubmitSignal(kq, x->instances[1], 1, work);
  });
  sc_start(sc_time(5, SC_MS));
  REQUIRE(x);
  CHECK(p.igpu_driver->vidsch.software_signals() == 1);
  CHECK(p.igpu->cmp.gpu_unblocks() == 1);
  CHECK(p.sysmem.peek64(marker) == 1);
}
