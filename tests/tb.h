// Test bench helpers: a probe initiator that runs a test body as an SC_THREAD, parameter sets with
// overrides, and running the gpumodel binary as a user would.
#pragma once
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <systemc>

#include "app/run.h"
#include "hw_model/core/bus.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/memory/memory.h"

namespace tb {

// Parameter overrides for a bench (key -> value as a string), as params() takes them.
using Overrides = std::map<std::string, std::string>;

using namespace gpumodel;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::sc_time;

inline sc_time ps(double v) { return sc_time(v, SC_PS); }
inline sc_time us(double v) { return sc_time(v, sc_core::SC_US); }
inline sc_time ns_(double v) { return sc_time(v, SC_NS); }
inline double ms(const sc_time& t) { return t.to_seconds() * 1e3; }
inline double gib(uint64_t bytes) { return double(bytes) / double(uint64_t(1) << 30); }
// A bench's memory base below regs::kVramBase (system scope), and an address in system memory.
constexpr uint64_t kMem = 0x1'0000'0000ull;
const uint64_t kA = regs::kSysmemBase + 0x100000;

// Every declared parameter at its default, then the given overrides.
inline ParamSet params(const std::map<std::string, std::string>& overrides = {}) {
  ParamSet p;
  declare_all_params(p);
  for (auto& [k, v] : overrides) p.set(k, v, "test");
  return p;
}

// System memory's parameters alone (a part's bench against memory), then the given overrides.
inline ParamSet sysmem_params(const std::map<std::string, std::string>& overrides = {}) {
  ParamSet p;
  Memory::declare_params(p, "sysmem.", false);
  for (auto& [k, v] : overrides) p.set(k, v, "test");
  return p;
}

// An extra initiator: bind `sock` into any multi-target socket (a router) during elaboration.
struct Probe : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Probe> sock;
  BusMaster<Probe> bus;
  std::function<void()> body;
  explicit Probe(sc_core::sc_module_name n) : sc_module(n), sock("sock"), bus(sock) {
    SC_HAS_PROCESS(Probe);
    SC_THREAD(run);
  }
  void run() {
    if (body) body();
  }
};

// Payload time of `bytes` on a link at `bytes_per_ns`, rounded to the kernel's 1 ps resolution the
// same way sc_time does.
inline sc_time ser(double bytes, double bytes_per_ns) { return sc_time(bytes / bytes_per_ns * 1000.0, SC_PS); }

// The default platform's timing, derived independently of the model's code (tests compare the two).
namespace dflt {
// Payload bytes per ns of a PCIe link: GT/s x lanes x 128/130 / 8, less one 8-byte ACK and one 8-byte
// UpdateFC DLLP every `ackfc` symbols (PCIe Base Spec 5.0 tables 3-7..3-9, 2-46..2-48) and a 4-symbol
// SKP ordered set every 1538.
inline double pcie_rate(double gts, int lanes, int ackfc) {
  return gts * lanes * 128 / 130 / 8 * (1 - 16.0 / ackfc - 4.0 / 1538);
}
const double kRate = pcie_rate(16, 16, 168);  // Gen4 x16, MPS 256
const sc_time kHop(200, SC_NS), kRc(30, SC_NS), kDram(90, SC_NS);
const sc_time kDecode(4, SC_NS);                                                   // 8 engine cycles at 2 GHz
const sc_time kWb(100, SC_NS);                                                     // node.write_buffer_ns
const sc_time kBarWrite(20, SC_NS);                                                // gpu.bar0_write_latency_ns
inline sc_time dram_xfer(double bytes) { return sc_time(bytes / 0.0768, SC_PS); }  // 76.8 GB/s port
inline sc_time vram_xfer(double bytes) { return sc_time(bytes / 1.008, SC_PS); }   // 1008 GB/s port
// The KMD stores `bytes` of packets into the ring (20 GB/s) and posts the doorbell: root complex, one
// 32-byte TLP down, hop, BAR0 write latency; the CMP spends 64 cycles at 1 GHz before it kicks the node.
inline sc_time submit_to_kick(double bytes) {
  return sc_time(bytes / 20.0, SC_NS) + kRc + ser(8 + 24, kRate) + kHop + kBarWrite + sc_time(64, SC_NS);
}
// A node's read of `bytes` from system memory: a request TLP up, hop, root complex, DRAM, and a
// completion with the data back down.
inline sc_time sysmem_read(double bytes) {
  return ser(24, kRate) + kHop + kRc + dram_xfer(bytes) + kDram + kRc + ser(bytes + 20, kRate) + kHop;
}
const sc_time kVram(250, SC_NS);         // vram.read_latency_ns
const sc_time kCmpBarrier(200, SC_NS);   // cmp.barrier_ns (system scope)
const sc_time kCmpInterrupt(32, SC_NS);  // cmp.interrupt_cycles at the CMP's 1 GHz
const sc_time kCmpDecision(20, SC_NS);   // cmp.decision_cycles at the CMP's 1 GHz
// An engine's conditional check: its read of the shadow MV in VRAM (250 ns + 8 B at 1008 GB/s).
const sc_time kShadowCheck = kVram + vram_xfer(8);
// A GPU posted write of `bytes` to system memory on an idle link: one TLP up, hop, root complex, the
// DRAM port transfer and write latency.
inline sc_time up_write(double bytes) { return ser(bytes + 24, kRate) + kHop + kRc + dram_xfer(bytes) + kDram; }
// A CPU load from system memory: root complex, DRAM transfer and latency, root complex back.
inline sc_time cpu_read(double bytes) { return kRc + dram_xfer(bytes) + kDram + kRc; }
// From the CMP issuing a fence interrupt to the MSI at the interrupt controller: the 16-byte event
// entry, the 8-byte write index and the 4-byte MSI leave back to back on the idle up direction; then
// hop and root complex.
inline sc_time msi_delivery() { return ser(16 + 24, kRate) + ser(8 + 24, kRate) + ser(4 + 24, kRate) + kHop + kRc; }
// The CPU's costs (cpu.*): leaving C1, interrupt entry, ISR, DPC.
const sc_time kC1Exit(2000, SC_NS), kIntEntry(500, SC_NS), kIsr(2000, SC_NS), kDpc(1000, SC_NS);
// A node's 8-byte posted write to system memory, from entering its write buffer to visible: the write
// buffer, a 32-byte TLP up the link, the hop, the root complex, the DRAM port and write latency.
inline sc_time node_sysmem_write8() { return kWb + up_write(8); }
// GPU MMU (hw_model/gpu/mmu.h): an engine or the CMP reaches memory by GPU VA through its TLB
// (mmu.tlb_entries 512, 8 ways). A hit adds no time. A miss (the first touch of a page since the TLB
// was last invalidated) walks the page tables in VRAM, one read after another over the GPU fabric
// (gpu.fabric_latency_ns, 0): the L3 and L2 PDEs (8 bytes each), the L1 dual PDE (16 bytes) and the
// PTE (8 bytes), each a VRAM read (250 ns + its transfer at 1008 GB/s). The accessing process waits.
inline sc_time walk() { return 4.0 * kVram + 3.0 * vram_xfer(8) + vram_xfer(16); }
// Page-walk cache (mmu.pwc_entries 32 dual PDEs per MMU, LRU, by (root, VA / 2 MiB)): each node and
// the CMP have their own MMU and so their own PWC. A miss in a 2 MiB region whose dual PDE that MMU
// has cached (since its last invalidation) reads only the PTE: one 8-byte VRAM read. A miss in an
// uncached region is a full walk() and caches the region's PDE.
// The KMD's small system-memory allocations share one 2 MiB region: VidMm's system heap is bumped up
// from system memory's base 0x1'0000'0000 in allocation order (4 KiB aligned unless asked otherwise),
// and DxgkDdiStartDevice allocates the scratch page (+0), the acknowledgement word (+0x1000), the
// 16 KiB event ring (+0x2000) and its write index (+0x6000); each DxgkDdiCreateHwQueue then a 64 KiB
// ring and its read pointer (the first queue's at +0x7000 and +0x17000, a second's at +0x18000 and
// +0x28000), each on pages of its own. So after an MMU's first walk of any of them, its misses on the
// others read only their PTE.
inline sc_time pte_read() { return kVram + vram_xfer(8); }
// One MMU's page-walk cache as a test derives it from the addresses the driver returned (not from the
// order it allocates in): feed miss() each page the MMU misses on, in order; it gives the miss's cost
// (a PTE read in a 2 MiB region walked before, else a full walk) and counts what the MMU should count.
struct PwcTrace {
  std::set<uint64_t> regions;
  uint64_t hits = 0, walks = 0;
  sc_time miss(uint64_t va) {
    if (regions.insert(va >> 21).second) return ++walks, walk();
    return ++hits, pte_read();
  }
  uint64_t misses() const { return hits + walks; }
  uint64_t walk_reads() const { return 4 * walks + hits; }
};
// F5, a native GPU wait, on engine A's first SIGNAL (A's TLB cold): from A's SIGNAL (decoded; its CV
// write and MV check issued) to node B's next packet starting (before its decode). The CV write and
// the read of the shadow MV are each A's first touch of their page: a walk apiece holds A's executor,
// before the write enters the buffer and before the read (VRAM read + 8 B at 1008 GB/s). Full walks:
// the CV's mapping in A's process (at 0x5000'0000'0000 up) and the shadow MV table in VRAM are
// 2 MiB regions A's node never walked (its walks so far were of the KMD's system-memory region). The CMP
// spends 20 cycles on the notification, then barriers: the CV write has been visible since before
// (it left the buffer a walk, a shadow check and the decision earlier, more than its
// node_sysmem_write8), and A's read-pointer write-back, as its queue drains with the SIGNAL, is not
// in the buffer yet (it waits for a translation of its own, the node's first write to that page: a
// PTE read, 250 ns, as the node walked the KMD's region for its ring), so the
// barrier costs its system-scope handshake alone. B, blocked on the GPU with its packets already
// fetched, resumes at once.
inline sc_time gpu_wait_unblock() { return walk() + walk() + kShadowCheck + kCmpDecision + kCmpBarrier; }
// ... on A's second SIGNAL (every page warm): A's shadow check returns, its queue drains, and its
// read-pointer write-back, now translated at once, enters the write buffer then; the CMP's 20 cycles end
// long before its barrier can: 200 ns after that write is visible (write buffer, up the link to DRAM).
inline sc_time gpu_wait_unblock_warm() { return kShadowCheck + kWb + up_write(8) + kCmpBarrier; }
// The CMP's first fence interrupt of a run (its TLB cold for the event ring's page and for its write
// index's; the fence's creation warmed only the shadow MV, CV and acknowledgement pages): the 32 cycles
// of interrupt firmware, then a translation before the event entry's write and one before the write
// index's. Both pages lie in the KMD's 2 MiB region of system memory, whose dual PDE the CMP's
// page-walk cache holds since the CMP walked for the acknowledgement word (+0x1000; the creation's
// MV update posts it): one PTE read each.
inline sc_time cmp_first_fence_interrupt() { return kCmpInterrupt + pte_read() + pte_read(); }
// ... the same with cmp.mv_source = memory: the CMP keeps no shadow and the KMD programs no MV update,
// so nothing acknowledged and the CMP never touched that region before: the event entry's page is a
// full walk (which caches the region's PDE), the write index's one PTE read.
inline sc_time cmp_first_fence_interrupt_no_shadow() { return kCmpInterrupt + walk() + pte_read(); }
// ... and its MSI's delivery: the event entry left a PTE read (or a walk) earlier, far longer than its
// 40-byte TLP takes, so only the write index's 8-byte TLP is still ahead of the 4-byte MSI on the idle
// up direction; then hop and root complex.
inline sc_time first_msi_delivery() { return ser(8 + 24, kRate) + ser(4 + 24, kRate) + kHop + kRc; }
}  // namespace dflt

struct Run {
  int code = -1;
  std::string out, err;
};
// Runs the gpumodel binary with `args` (shell-quoted by the caller).
inline Run run_cli(const std::string& args) {
  static int n = 0;
  const std::string err_path = "gpumodel_test_stderr_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  const std::string cmd = std::string(GPUMODEL_BIN) + " " + args + " 2>" + err_path;
  Run r;
  FILE* f = ::popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, k);
  const int st = ::pclose(f);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_path);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}
inline std::string scenario(const std::string& name) {
  return std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/" + name + ".ini";
}
inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
// A fresh, empty directory `PREFIX_NAME_PID` under the working directory (ctest runs a file's test
// cases side by side).
inline std::filesystem::path scratch(const std::string& prefix, const std::string& name) {
  const std::filesystem::path d = std::filesystem::absolute(prefix + "_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}
inline void put(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
// Runs gpumodel in `dir` with `args` (shell-quoted by the caller); stdout, stderr and the exit code,
// captured in files beside `dir` so that nothing is written into it.
inline Run run_in(const std::filesystem::path& dir, const std::string& args) {
  const std::string base = (dir / ".." / (dir.filename().string() + "_run")).string();
  const std::string cmd = "cd '" + dir.string() + "' && " + GPUMODEL_BIN + " " + args + " >'" + base + "_out' 2>'" +
                          base + "_err'; echo $? >'" + base + "_rc'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  Run r;
  r.code = std::stoi(slurp(base + "_rc"));
  r.out = slurp(base + "_out");
  r.err = slurp(base + "_err");
  for (const char* s : {"_out", "_err", "_rc"}) std::filesystem::remove(base + s);
  return r;
}
// The PresentMon 1.x header a capture test starts from.
const std::string k1x =
    "Application,ProcessID,SwapChainAddress,SyncInterval,PresentMode,Dropped,TimeInSeconds,MsBetweenPresents,"
    "MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n";
// A results file without its `host` section (wall-clock figures): what identical runs share.
inline nlohmann::json results_without_host(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("host");
  return j;
}

// Runs gpumodel with `args` and `--results`, requires `expect_code`, returns the results (the file is
// removed). `tag` names the file (with the process id: tests run in parallel).
inline nlohmann::json run_json(const std::string& args, const std::string& tag, int expect_code = 0) {
  const std::string out = "results_" + tag + "_" + std::to_string(::getpid()) + ".json";
  const Run r = run_cli(args + " --results " + out);
  INFO("gpumodel " << args << "\n" << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0));
  REQUIRE(r.code == expect_code);
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  std::remove(out.c_str());
  return j;
}

// `args` refused as bad input: exit 2, one line on stderr naming `must_name`, nothing run.
inline void expect_bad_input(const std::string& args, const std::string& must_name) {
  const Run r = run_cli(args);
  INFO("gpumodel " << args << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(must_name) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one message
  CHECK(r.out.empty());                                      // nothing ran
}

}  // namespace tb
