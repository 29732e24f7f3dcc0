// extremes_sweep: every numeric parameter of every scenario file at its minimum and at its maximum, one
// at a time, on a reduced workload, run through the real gpumodel binary. A legal
// value may fail a scenario's checks, and may be refused (exit 2) when the scenario cannot run the
// combination; it must never crash, hang, blow up memory, or report a negative or NaN figure, and a
// fail must say why. Enum and bool parameters get each of their values once (cheap, same rules).
//
//   extremes_sweep [--gpumodel PATH] [--scenarios DIR] [--jobs N] [--timeout S] [--mem-gib G]
//                  [--only SCENARIO|FILE.ini] [--key KEY] [--numeric-only] [--baselines-only] [--verbose]
//                  [--dry-run]
//
// --baselines-only runs each file's reduced run alone: what every swept key is told from, so a model
// change that makes a reduced run fail is found in the test suite, not first in the full sweep.
// Prints one line per finding with the command that reproduces it, then a summary. Exit code 0 iff
// no finding. Parameters and ranges come from the model's own registry (declare_all_params,
// ParamSpec::as_seen_by), so a new parameter is swept without editing this file.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "app/cli.h"
#include "scenarios/common/scenario.h"

namespace fs = std::filesystem;
using gpumodel::ParamKind;
using gpumodel::ParamSet;
using gpumodel::ParamSpec;

namespace {

// SystemC prints its banner when its library starts the program unless this is set.
const int kQuietBanner = setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);

// The reduced workload: overrides that shrink each scenario's run so a whole sweep takes minutes, by
// scenario name or scenario file stem ("*": every file; a later entry replaces an earlier one's key).
// sim.limit_ms bounds every run in simulated time (a run still busy there fails with "still busy",
// a verdict with a reason); 20 ms is about 3x the longest reduced run (fence_race, 7 ms). An override
// is dropped when its key is the one being swept.
const std::map<std::string, std::vector<std::pair<std::string, std::string>>> kReduced = {
    {"*", {{"sim.limit_ms", "20"}}},
    {"copy_bandwidth", {{"copy.bytes", "65536"}}},            // 16 MiB -> 64 KiB
    {"conditional_interrupt", {{"workload.signals", "20"}}},  // 100 -> 20: still two waiters
    {"fence_race", {{"workload.signals", "2000"}}},           // 100,000 -> 2,000; the bulk copy stays on
    // Without the barrier the file expects lost interrupts, and its verdict fails a run that loses none:
    // at seed 1, 5,000 signals lose none, 10,000 lose 1 and 15,000 lose 4 (48.3 ms simulated), so its
    // baseline passes with a margin.
    {"fence_race_no_barrier", {{"workload.signals", "15000"}, {"sim.limit_ms", "80"}}},
    {"fence_stress", {{"workload.signals", "10000"}, {"bench.switches", "2000"}}},  // 1 M -> 10 k; 2 M switches -> 2 k
    // 120 -> 4 frames; hybrid_present refuses a limit shorter than 4 x (interval + jitter + 2 refreshes)
    // + 100 ms = 367 ms at 60 Hz.
    {"hybrid_present", {{"workload.frames", "4"}, {"sim.limit_ms", "400"}}},
    // 3 -> 2 refreshes measured, after the first frame's start: 34.0 ms simulated at 60 Hz.
    {"scanout_underflow", {{"workload.frames", "2"}, {"sim.limit_ms", "100"}}},
    // 20 -> 3 wait/signal pairs, 1 ms apart: 4 ms simulated.
    {"cross_adapter_fence", {{"workload.signals", "3"}}},
    // TdrDelay 20 ms -> 2 ms and 1 ms of load after the sequence: about 5 ms of sequence per hang; the
    // limit leaves room for an adapter reset at its longest (cmp.adapter_reset_ms = 4 s), which the
    // adapter-reset files shorten to its shortest, 1 s.
    {"tdr_engine_reset", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    {"tdr_paging_hit",
     {{"vidsch.tdr_delay_ms", "2"},
      {"workload.after_ms", "1"},
      {"cmp.adapter_reset_ms", "1000"},
      {"sim.limit_ms", "5000"}}},
    {"tdr_reset_fails",
     {{"vidsch.tdr_delay_ms", "2"},
      {"workload.after_ms", "1"},
      {"cmp.adapter_reset_ms", "1000"},
      {"sim.limit_ms", "5000"}}},
    {"tdr_race_window", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    {"tdr_bad_fence_id", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    {"tdr_limit", {{"vidsch.tdr_delay_ms", "2"}, {"workload.after_ms", "1"}, {"sim.limit_ms", "5000"}}},
    // Allocation notifications scenarios: 4 MiB allocations (the budget holds two), 1 MiB of paging VA: still four
    // chunks.
    {"eviction_notify",
     {{"workload.alloc_mb", "4"},
      {"vidmm.system_budget_mb", "8"},
      {"kmd.paging_va_answer", "override"},
      {"kmd.paging_va_mb", "1"},
      {"sim.limit_ms", "5000"}}},
    {"iommu_unmap_notify", {{"workload.alloc_mb", "4"}, {"vidmm.system_budget_mb", "8"}, {"sim.limit_ms", "5000"}}},
    {"paging_va_size",
     {{"workload.alloc_mb", "16"},
      {"kmd.paging_va_answer", "override"},
      {"kmd.paging_va_mb", "4"},
      {"sim.limit_ms", "5000"}}},
    // 32 -> 4 rounds; creating 60,000 fences (the maximum) takes about 0.4 s simulated.
    {"fence_log_scan", {{"workload.rounds", "4"}, {"sim.limit_ms", "2000"}}},
    // The frame loops (frame_loop, video_playback, hybrid_game): 3 frames; 200 ms holds three at the
    // slowest shipped rate (video_playback's 24 fps: 125 ms) with the display's latch after them.
    {"frame_loop", {{"workload.frames", "3"}, {"sim.limit_ms", "200"}}},
    // The capture's first 6 presents (about 50 ms of dwm's frames at 119.84 Hz).
    {"presentmon_replay", {{"workload.frames", "6"}, {"sim.limit_ms", "200"}}},
};

// Files that run the same scenario driver as another file (the TDR scenarios share one; tdr_engine_reset
// sweeps every key): each sweeps only its scenario's own keys and those of the TDR machinery (the packet
// scheduler, the KMD, the nodes, the adapter reset, the sim limit), not the whole platform again.
const std::map<std::string, std::vector<std::string>> kFocus = {
    {"tdr_paging_hit", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_reset_fails", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_race_window", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_bad_fence_id", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    {"tdr_limit", {"vidsch.", "kmd.", "node.", "cmp.adapter_reset_ms", "gpu.", "sim."}},
    // The Allocation notifications scenarios' files: the platform's other keys are swept by the scenarios before them.
    {"eviction_notify",
     {"iommu.", "vidmm.", "kmd.notify_", "kmd.paging_va_", "kmd.largest_allocation_mb", "mmu.",
      "node.translate_ahead_bytes", "vidsch.quantum_ms", "vidsch.hw_queue_depth", "workload.", "sim."}},
    {"iommu_unmap_notify", {"iommu.", "vidmm.", "kmd.notify_iommu_unmap", "workload.", "sim."}},
    {"paging_va_size",
     {"vidmm.", "kmd.paging_va_", "kmd.largest_allocation_mb", "kmd.notify_", "mmu.", "workload.", "sim."}},
    // The log machinery's keys; the fence path's others are swept by the fence scenarios.
    {"fence_log_scan",
     {"vidsch.native_fence_logs", "vidsch.log_segment", "kmd.optimized_native_fence", "kmd.native_fence_log_barrier",
      "node.log_", "cmp.fence_irq_queue", "cmp.report_fence_set", "gpu.hw_queues", "workload.", "sim."}},
};
// Keys only the packet-scheduling path reads (the TDR machinery): a scenario that never submits a DMA
// packet cannot be moved by them, so only the TDR files sweep them.
const std::vector<std::string> kPacketPathOnly = {"vidsch.hw_queue_depth",
                                                  "vidsch.quantum_ms",
                                                  "vidsch.tdr_",
                                                  "vidsch.validate_aborted_fence_id",
                                                  "node.preempt_",
                                                  "node.reset_",
                                                  "cmp.adapter_reset_ms",
                                                  "kmd.support_per_engine_tdr",
                                                  "kmd.reset_poll_us",
                                                  "kmd.adapter_reset_poll_ms",
                                                  "kmd.tdr_report_aborted",
                                                  "gpu.linked_engines"};
bool in_focus(const std::string& scenario, const ParamSpec& s) {
  // The TDR scenarios and the allocation notifications document's (VidMm's paging packets) run the packet path.
  const bool packets = scenario.rfind("tdr_", 0) == 0 || scenario == "eviction_notify" ||
                       scenario == "iommu_unmap_notify" || scenario == "paging_va_size";
  if (!packets)
    for (auto& k : kPacketPathOnly)
      if (s.name.rfind(k, 0) == 0) return false;
  const auto it = kFocus.find(scenario);
  if (it == kFocus.end() || !s.owners.empty()) return true;  // every key, or the scenario's own
  for (auto& prefix : it->second)
    if (s.name.rfind(prefix, 0) == 0) return true;
  return false;
}

// Metrics that may legitimately be negative (a difference, a signed offset). None so far: every metric
// is a count, a duration, a rate or a ratio of durations. A name added here needs a comment saying why.
const std::set<std::string> kSignedMetrics = {};

struct Case {
  std::string file;      // scenario file
  std::string scenario;  // its scenario
  std::string key;       // swept key; empty: the reduced baseline of the file
  std::string value;
  std::string label;              // "min", "max", "value"
  std::vector<std::string> args;  // after the binary, without --results
};

enum class Outcome { Pass, FailWithReason, Refused, Finding };

struct Verdict {
  Outcome outcome = Outcome::Finding;
  std::string detail;  // the finding's symptom, a fail's reason, a refusal's message
};

struct Options {
  std::string gpumodel = GPUMODEL_BIN;
  std::string scenarios = std::string(GPUMODEL_SOURCE_DIR) + "/scenarios";
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  double timeout_s = 30;
  double mem_gib = 4;
  std::string only, key;
  bool numeric_only = false, baselines_only = false, verbose = false, dry_run = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "extremes_sweep: " << why
            << "\nusage: extremes_sweep [--gpumodel PATH] [--scenarios DIR] [--jobs N] [--timeout S] "
               "[--mem-gib G] [--only SCENARIO|FILE.ini] [--key KEY] [--numeric-only] [--baselines-only] [--verbose] "
               "[--dry-run]\n";
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    auto number = [&](double lo) {
      const std::string v = value();
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(d >= lo)) usage(a + " = '" + v + "' is not a number >= " + std::to_string(lo));
      return d;
    };
    if (a == "--gpumodel")
      o.gpumodel = value();
    else if (a == "--scenarios")
      o.scenarios = value();
    else if (a == "--jobs")
      o.jobs = unsigned(number(1));
    else if (a == "--timeout")
      o.timeout_s = number(0.1);
    else if (a == "--mem-gib")
      o.mem_gib = number(0.1);
    else if (a == "--only")
      o.only = value();
    else if (a == "--key")
      o.key = value();
    else if (a == "--numeric-only")
      o.numeric_only = true;
    else if (a == "--baselines-only")
      o.baselines_only = true;
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--dry-run")
      o.dry_run = true;
    else
      usage("unknown option '" + a + "'");
  }
  return o;
}

// The shortest decimal text that reads back as exactly `v` (the model's range check is exact); whole
// numbers without an exponent, as a user would type them.
std::string real_text(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string int_text(double v) { return std::to_string(static_cast<long long>(v)); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:+-,") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string one_line(std::string s, size_t max = 300) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  for (auto& c : s)
    if (c == '\n') c = '|';
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

// The values a parameter is swept through, as `scenario` sees its range.
std::vector<std::pair<std::string, std::string>> sweep_values(const ParamSpec& s, bool numeric_only) {
  std::vector<std::pair<std::string, std::string>> v;
  switch (s.kind) {
    case ParamKind::Int:
      if (!s.choices.empty()) {
        v.push_back({"min", s.choices.front()});
        if (s.choices.size() > 1) v.push_back({"max", s.choices.back()});
      } else {
        v.push_back({"min", int_text(s.min)});
        if (s.max != s.min) v.push_back({"max", int_text(s.max)});
      }
      break;
    case ParamKind::Real:
      v.push_back({"min", real_text(s.min)});
      if (s.max != s.min) v.push_back({"max", real_text(s.max)});
      break;
    case ParamKind::Bool:
      if (!numeric_only) v = {{"value", "false"}, {"value", "true"}};
      break;
    case ParamKind::Enum:
      if (!numeric_only)
        for (auto& c : s.choices) v.push_back({"value", c});
      break;
    case ParamKind::NamedOrForm:  // every named value, and the form's samples (its extremes)
      if (!numeric_only) {
        for (auto& c : s.choices) v.push_back({"value", c});
        for (auto& c : s.form_samples) v.push_back({"form", c});
      }
      break;
    case ParamKind::Path:  // a file that is not there, and a directory where a file is wanted
      if (!numeric_only) v = {{"missing", "/nonexistent/gpumodel-sweep"}, {"directory", "/"}};
      break;
    case ParamKind::Text:  // names (a process, a swap chain): one nothing matches
      if (!numeric_only) v = {{"value", "gpumodel-sweep-no-such-name"}};
      break;
  }
  return v;
}

std::vector<std::string> reduced_args(const std::string& file, const std::string& scenario, const std::string& swept) {
  std::vector<std::pair<std::string, std::string>> merged;
  const std::string stem = fs::path(file).stem().string();
  for (const std::string& who : {std::string("*"), scenario, stem == scenario ? std::string() : stem}) {
    auto it = kReduced.find(who);
    if (it == kReduced.end()) continue;
    for (auto& kv_new : it->second) {  // not a structured binding: clang 14 cannot capture one
      const auto& k = kv_new.first;
      auto old = std::find_if(merged.begin(), merged.end(), [&](auto& kv) { return kv.first == k; });
      if (old != merged.end())
        old->second = kv_new.second;
      else
        merged.push_back(kv_new);
    }
  }
  std::vector<std::string> args;
  for (auto& [k, v] : merged)
    if (k != swept) args.push_back("--" + k + "=" + v);
  return args;
}

// Every scenario file with its scenario; each registered scenario must have at least one.
std::vector<std::pair<std::string, std::string>> scenario_files(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".ini") files.push_back({e.path().string(), ""});
  if (ec) usage("cannot list scenario directory '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  std::set<std::string> covered;
  for (auto& [path, scenario] : files) {
    ParamSet ps;
    gpumodel::declare_all_params(ps);
    try {
      scenario = gpumodel::load_scenario_text(read_text(path), path, ps);
    } catch (const gpumodel::ConfigError& e) {
      std::cerr << "extremes_sweep: " << e.what() << "\n";
      std::exit(2);
    }
    covered.insert(scenario);
  }
  bool missing = false;
  for (auto& s : gpumodel::scenario_registry())
    if (!covered.count(s.name)) {
      std::cerr << "extremes_sweep: scenario '" << s.name << "' has no .ini file in " << dir << "\n";
      missing = true;
    }
  if (missing) std::exit(2);
  return files;
}

std::vector<Case> make_cases(const Options& o) {
  ParamSet ps;
  gpumodel::declare_all_params(ps);
  std::vector<Case> cases;
  bool key_known = o.key.empty();
  for (auto& [file, scenario] : scenario_files(o.scenarios)) {
    if (!o.only.empty() && o.only != scenario && o.only != fs::path(file).filename().string() && o.only != file)
      continue;
    const std::vector<std::string> base = {fs::absolute(file).string()};
    if (o.key.empty()) {  // the reduced run itself, so a key's failure is told from the file's
      Case c{file, scenario, "", "", "baseline", base};
      for (auto& a : reduced_args(file, scenario, "")) c.args.push_back(a);
      cases.push_back(c);
    }
    if (o.baselines_only) continue;
    for (auto& [name, shared] : ps.specs()) {
      if (!ps.visible_to(shared, scenario) || (!o.key.empty() && name != o.key)) continue;
      if (o.key.empty() && !in_focus(scenario, shared)) continue;
      key_known = true;
      const ParamSpec s = shared.as_seen_by(scenario);
      for (auto& [label, value] : sweep_values(s, o.numeric_only)) {
        Case c{file, scenario, name, value, label, base};
        c.args.push_back("--" + name + "=" + value);
        for (auto& a : reduced_args(file, scenario, name)) c.args.push_back(a);
        cases.push_back(c);
      }
    }
  }
  if (o.baselines_only && !o.key.empty()) usage("--baselines-only sweeps no key: drop --key '" + o.key + "'");
  if (!key_known) usage("--key '" + o.key + "' is no parameter of the selected scenarios");
  if (cases.empty()) usage("--only '" + o.only + "' selects no scenario file");
  return cases;
}

std::string command_line(const Options& o, const Case& c) {
  std::string s = shell_quote(o.gpumodel);
  for (auto& a : c.args) s += " " + shell_quote(a);
  return s + " --results /tmp/r.json";
}

// ---- running ----

struct Running {
  size_t index;
  pid_t pid;
  std::chrono::steady_clock::time_point start;
  bool killed = false;
};

pid_t spawn(const Options& o, const Case& c, const std::string& results, const std::string& out,
            const std::string& err) {
  std::vector<std::string> argv = {o.gpumodel};
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  argv.push_back("--results");
  argv.push_back(results);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("extremes_sweep: fork");
    std::exit(3);
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: a timeout kills whatever it started too
    const rlim_t as = rlim_t(o.mem_gib * double(1ull << 30));
    const rlimit mem{as, as}, core{0, 0};
    setrlimit(RLIMIT_AS, &mem);  // a memory blowup fails this run, not the machine
    setrlimit(RLIMIT_CORE, &core);
    const int null = open("/dev/null", O_RDWR);
    const int so = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null < 0 || so < 0 || e < 0) _exit(127);
    dup2(null, 0);
    dup2(so, 1);
    dup2(e, 2);
    execv(cargv[0], cargv.data());
    std::fprintf(stderr, "exec %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also from here, so a kill never races the child's own call
  return pid;
}

// Every number in `j` must be finite and >= 0 unless its name is a signed metric. nlohmann writes a
// NaN or an infinity as null, so a null where a number belongs is reported too.
void check_numbers(const nlohmann::json& j, const std::string& path, const std::string& name,
                   std::vector<std::string>& bad) {
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) check_numbers(v, path + "." + k, k, bad);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_numbers(j[i], path + "[" + std::to_string(i) + "]", name, bad);
  } else if (j.is_null()) {
    bad.push_back(path + " = null (NaN or infinity)");
  } else if (j.is_number()) {
    const double v = j.get<double>();
    if (!std::isfinite(v))
      bad.push_back(path + " = " + real_text(v));
    else if (v < 0 && !kSignedMetrics.count(name))
      bad.push_back(path + " = " + real_text(v) + " (negative)");
  }
}

// Why a fail verdict failed, from what the results say; empty if they say nothing.
std::string fail_reason(const nlohmann::json& r) {
  if (r.contains("checks_failed") && r["checks_failed"].is_array() && !r["checks_failed"].empty())
    return r["checks_failed"][0].get<std::string>();
  const bool bugchecked = r.contains("bugcheck") && !r["bugcheck"].is_null();
  const uint64_t expected = r.contains("bugcheck_expected") ? r["bugcheck_expected"].get<uint64_t>() : 0;
  if (bugchecked && (!expected || r["bugcheck"].value("code", uint64_t(0)) != expected))
    return "bug check " + r["bugcheck"].dump();
  if (!bugchecked && expected) return "expected bug check " + std::to_string(expected) + ", none came";
  if (r.contains("monitors") && r["monitors"].is_object())
    for (auto& [name, m] : r["monitors"].items()) {
      const uint64_t n = m.value("violations", uint64_t(0));
      const bool expected = m.value("expected", false);
      if (expected ? n == 0 : n != 0)
        return "monitor " + name + ": " + std::to_string(n) + " violation(s)" + (expected ? ", expected some" : "");
    }
  return "";
}

// What the model said last on stdout: SystemC prints an error report there (SC_REPORT_ERROR during
// elaboration ends the process with exit 1 and no results file).
std::string last_words(const std::string& out) {
  std::istringstream in(out);
  std::string line, error, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.rfind("Error:", 0) == 0 || line.rfind("Fatal:", 0) == 0) error = line;
    last = line;
  }
  return one_line(error.empty() ? last : error);
}

Verdict judge(const Case& c, int status, bool timed_out, double timeout_s, double mem_gib, const std::string& results,
              const std::string& out_path, const std::string& err_path) {
  const std::string err = read_text(err_path), out = read_text(out_path), text = read_text(results);
  const std::string said = last_words(out);
  const std::string err_line = one_line(err) + (said.empty() ? "" : (err.empty() ? "stdout: " : "; stdout: ") + said);
  if (timed_out) return {Outcome::Finding, "timeout: still running after " + real_text(timeout_s) + " s wall (hang?)"};
  // Under the address-space limit a blowup is a std::bad_alloc, uncaught or caught as a model fault.
  for (const std::string* where : {&err, &out, &text})
    if (where->find("bad_alloc") != std::string::npos)
      return {Outcome::Finding, "out of memory (std::bad_alloc under the " + real_text(mem_gib) + " GiB limit)"};
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string what = std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (sig == SIGKILL) what += ", likely out of memory";
    return {Outcome::Finding, what + (err_line.empty() ? "" : "; " + err_line)};
  }
  const int code = WEXITSTATUS(status);
  if (code == 2) {
    const bool one = std::count(err.begin(), err.end(), '\n') == 1 && err.back() == '\n';
    if (c.key.empty()) return {Outcome::Finding, "the reduced baseline is refused (exit 2): " + one_line(err)};
    if (one && err.find(c.key) != std::string::npos) return {Outcome::Refused, one_line(err)};
    return {Outcome::Finding, std::string("exit 2 ") + (one ? "without naming " + c.key : "not with one line") +
                                  " on stderr: " + one_line(err)};
  }
  if (code != 0 && code != 1)
    return {Outcome::Finding, "exit code " + std::to_string(code) + (err_line.empty() ? "" : "; " + err_line)};
  if (text.empty())
    return {Outcome::Finding,
            "exit " + std::to_string(code) + " with no results file" + (err_line.empty() ? "" : "; " + err_line)};
  nlohmann::json r;
  try {
    r = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return {Outcome::Finding, std::string("results file is not JSON: ") + e.what()};
  }
  std::vector<std::string> bad;
  for (const char* part : {"metrics", "monitors", "sim_time_ns", "host"})
    if (r.contains(part)) check_numbers(r[part], part, part, bad);
  if (!r.contains("metrics")) bad.push_back("no metrics object");
  const std::string verdict = r.value("verdict", "");
  const std::string why = fail_reason(r);
  if ((code == 0) != (verdict == "pass") || (verdict != "pass" && verdict != "fail"))
    bad.push_back("exit " + std::to_string(code) + " with verdict '" + verdict + "'");
  if (verdict == "fail" && why.empty()) bad.push_back("fail verdict with no reason (no check, monitor or bug check)");
  if (!bad.empty()) {
    std::string s;
    for (auto& b : bad) s += (s.empty() ? "" : "; ") + b;
    return {Outcome::Finding, s};
  }
  if (verdict == "pass") return {Outcome::Pass, ""};
  // A key's fail is told from the file's reduced run, so that run must pass: a failing baseline makes
  // every fail of its file unexplained.
  if (c.key.empty()) return {Outcome::Finding, "the reduced baseline fails: " + why};
  return {Outcome::FailWithReason, why};
}

// A fail reason with its numbers blanked, so the summary groups alike reasons.
std::string reason_class(const std::string& why) {
  std::string s;
  for (size_t i = 0; i < why.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(why[i]))) {
      while (i + 1 < why.size() && (std::isdigit(static_cast<unsigned char>(why[i + 1])) || why[i + 1] == '.')) ++i;
      s += "N";
    } else {
      s += why[i];
    }
  }
  return one_line(s, 120);
}

}  // namespace

// SystemC's library owns main(); the sweep never elaborates anything.
int sc_main(int argc, char** argv) {
  (void)kQuietBanner;
  const Options o = parse_options(argc, argv);
  const std::vector<Case> cases = make_cases(o);
  if (o.dry_run) {
    for (auto& c : cases) std::cout << command_line(o, c) << "\n";
    return 0;
  }
  if (::access(o.gpumodel.c_str(), X_OK) != 0) usage("cannot run gpumodel '" + o.gpumodel + "'");
  std::string tmpl = (fs::temp_directory_path() / "extremes_sweep.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::perror("extremes_sweep: mkdtemp");
    return 3;
  }
  const fs::path tmp = tmpl;
  auto results_of = [&](size_t i) { return (tmp / ("r" + std::to_string(i) + ".json")).string(); };
  auto out_of = [&](size_t i) { return (tmp / ("o" + std::to_string(i) + ".txt")).string(); };
  auto err_of = [&](size_t i) { return (tmp / ("e" + std::to_string(i) + ".txt")).string(); };

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Verdict> verdicts(cases.size());
  std::vector<Running> running;
  size_t next = 0, done = 0;
  size_t counts[4] = {0, 0, 0, 0};
  std::map<std::string, size_t> fail_classes;
  std::cout << "extremes_sweep: " << cases.size() << " runs, " << o.jobs << " at a time, " << o.timeout_s << " s and "
            << o.mem_gib << " GiB each; gpumodel " << o.gpumodel << "\n"
            << std::flush;
  while (done < cases.size()) {
    while (running.size() < o.jobs && next < cases.size()) {
      running.push_back({next, spawn(o, cases[next], results_of(next), out_of(next), err_of(next)),
                         std::chrono::steady_clock::now()});
      ++next;
    }
    bool reaped = false;
    for (size_t k = 0; k < running.size();) {
      Running& r = running[k];
      int status = 0;
      const pid_t w = waitpid(r.pid, &status, WNOHANG);
      if (w == 0) {
        if (!r.killed &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count() > o.timeout_s) {
          kill(-r.pid, SIGKILL);
          r.killed = true;
        }
        ++k;
        continue;
      }
      const Case& c = cases[r.index];
      Verdict v =
          judge(c, status, r.killed, o.timeout_s, o.mem_gib, results_of(r.index), out_of(r.index), err_of(r.index));
      std::error_code ec;
      fs::remove(results_of(r.index), ec);
      fs::remove(out_of(r.index), ec);
      fs::remove(err_of(r.index), ec);
      ++counts[int(v.outcome)];
      const std::string what = fs::path(c.file).filename().string() + " " +
                               (c.key.empty() ? std::string("baseline") : c.key + "=" + c.value + " (" + c.label + ")");
      if (v.outcome == Outcome::Finding)
        std::cout << "FINDING " << what << ": " << v.detail << "\n  reproduce: " << command_line(o, c) << "\n";
      else if (o.verbose || (c.key.empty() && v.outcome != Outcome::Pass))
        std::cout << (v.outcome == Outcome::Pass      ? "pass    "
                      : v.outcome == Outcome::Refused ? "refused "
                                                      : "fail    ")
                  << what << (v.detail.empty() ? "" : ": " + v.detail) << "\n";
      if (v.outcome == Outcome::FailWithReason) ++fail_classes[reason_class(v.detail)];
      std::cout << std::flush;
      verdicts[r.index] = std::move(v);
      running.erase(running.begin() + long(k));
      ++done;
      reaped = true;
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (!fail_classes.empty()) {
    std::cout << "\nfail reasons (numbers as N):\n";
    for (auto& [why, n] : fail_classes) std::cout << "  " << n << "x " << why << "\n";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", wall);
  std::cout << "\nsummary: " << cases.size() << " runs, " << counts[int(Outcome::Pass)] << " pass, "
            << counts[int(Outcome::FailWithReason)] << " fail with a reason, " << counts[int(Outcome::Refused)]
            << " refused (exit 2, naming the key), " << counts[int(Outcome::Finding)] << " findings; " << buf
            << " s wall\n";
  return counts[int(Outcome::Finding)] == 0 ? 0 : 1;
}
