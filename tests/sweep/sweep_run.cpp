#include "tests/sweep/sweep_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace sweep {

namespace {

// Metrics that may legitimately be negative (a difference, a signed offset). None so far: every metric
// is a count, a duration, a rate or a ratio of durations. A name added here needs a comment saying why.
const std::set<std::string> kSignedMetrics = {};

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
    if (c.set.empty()) return {Outcome::Finding, "the reduced baseline is refused (exit 2): " + one_line(err)};
    std::string keys;
    bool named = false;
    for (auto& [k, v] : c.set) {
      named = named || err.find(k) != std::string::npos;
      keys += (keys.empty() ? "" : " or ") + k;
    }
    if (one && named) return {Outcome::Refused, one_line(err)};
    return {Outcome::Finding, std::string("exit 2 ") + (one ? "without naming " + keys : "not with one line") +
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
  if (c.set.empty()) return {Outcome::Finding, "the reduced baseline fails: " + why};
  return {Outcome::FailWithReason, why};
}
}  // namespace

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

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:+-,") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string one_line(std::string s, size_t max) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  for (auto& c : s)
    if (c == '\n') c = '|';
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

std::string describe(const Case& c) {
  if (c.set.empty()) return "baseline";
  if (c.set.size() == 1) return c.set[0].first + "=" + c.set[0].second + " (" + c.label + ")";
  std::string s = c.label + ":";
  for (auto& [k, v] : c.set) s += " " + k + "=" + v;
  return s;
}

std::string command_line(const Options& o, const Case& c) {
  std::string s = shell_quote(o.gpumodel);
  for (auto& a : c.args) s += " " + shell_quote(a);
  return s + " --results /tmp/r.json";
}

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

std::vector<Verdict> run_cases(const Options& o, const std::vector<Case>& cases, bool print) {
  std::string tmpl = (fs::temp_directory_path() / "extremes_sweep.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::perror("extremes_sweep: mkdtemp");
    std::exit(3);
  }
  const fs::path tmp = tmpl;
  auto results_of = [&](size_t i) { return (tmp / ("r" + std::to_string(i) + ".json")).string(); };
  auto out_of = [&](size_t i) { return (tmp / ("o" + std::to_string(i) + ".txt")).string(); };
  auto err_of = [&](size_t i) { return (tmp / ("e" + std::to_string(i) + ".txt")).string(); };
  std::vector<Verdict> verdicts(cases.size());
  std::vector<Running> running;
  size_t next = 0, done = 0;
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
      const std::string what = fs::path(c.file).filename().string() + " " + describe(c);
      if (print && v.outcome == Outcome::Finding)
        std::cout << "FINDING " << what << ": " << v.detail << "\n  reproduce: " << command_line(o, c) << "\n";
      else if (print && (o.verbose || (c.set.empty() && v.outcome != Outcome::Pass)))
        std::cout << (v.outcome == Outcome::Pass      ? "pass    "
                      : v.outcome == Outcome::Refused ? "refused "
                                                      : "fail    ")
                  << what << (v.detail.empty() ? "" : ": " + v.detail) << "\n";
      std::cout << std::flush;
      v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
      verdicts[r.index] = std::move(v);
      running.erase(running.begin() + long(k));
      ++done;
      reaped = true;
    }
    // A reduced run takes about 50 ms: a longer poll would leave a job's slot idle for a tenth of a run.
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return verdicts;
}

std::string slowest(const std::vector<Case>& cases, const std::vector<Verdict>& verdicts, size_t n) {
  std::vector<size_t> order(verdicts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  n = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + long(n), order.end(),
                    [&](size_t a, size_t b) { return verdicts[a].seconds > verdicts[b].seconds; });
  std::string out;
  char buf[32];
  for (size_t k = 0; k < n; ++k) {
    const size_t i = order[k];
    std::snprintf(buf, sizeof buf, "%6.1f s  ", verdicts[i].seconds);
    out += std::string("  ") + buf + fs::path(cases[i].file).filename().string() + " " + describe(cases[i]) + "\n";
  }
  return out;
}

}  // namespace sweep
