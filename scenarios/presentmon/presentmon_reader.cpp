// PresentMon captures in: the CSV read record by record (RFC 4180, csv_reader.h), every value the
// replay uses checked where it is read, and refused with its row and column when it is not one the
// replay can take.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "hw_model/core/input_file.h"
#include "hw_model/core/params.h"
#include "scenarios/presentmon/csv_reader.h"
#include "scenarios/presentmon/presentmon.h"

namespace gpumodel {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What a numeric column may hold. Signed: a time between two events either may come first (PresentMon
// writes a negative Present()-to-render-complete where the GPU finished the frame's work before the
// Present() call it records).
enum class Num { Time, Duration, Count, Signed };

class CaptureParser {
 public:
  CaptureParser(std::string label, std::string allowed) : label_(std::move(label)), allowed_(std::move(allowed)) {}

  Capture read(CsvReader& csv);

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(label_ + " " + what + "; allowed: " + allowed_);
  }
  [[noreturn]] void fail_at(size_t col, const std::string& what, const std::string& allowed) const {
    throw ConfigError(label_ + ": row " + std::to_string(row_) + " (line " + std::to_string(line_) + "), column " +
                      echo_input(header_[col]) + ": " + what + "; allowed: " + allowed);
  }
  bool has(const char* n) const { return col_.count(n) != 0; }
  // The column of the first of `names` the header has; -1 if none.
  long column(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (auto it = col_.find(n); it != col_.end()) return long(it->second);
    return -1;
  }
  void need(std::initializer_list<const char*> names, const char* what) {
    if (column(names) < 0)
      fail(std::string("has no column for ") + what + " (" + *names.begin() + "): not a PresentMon 1.x or 2.x CSV");
  }
  // A number of column `c` of the current row: NA is nullopt where `na` allows it; anything else must be
  // a finite decimal number (no hexadecimal, infinity or NaN) of the column's kind.
  std::optional<double> number(long c, Num kind, bool na = true) const;
  uint32_t intern(const std::string& s) {
    auto [it, added] = ids_.try_emplace(s, uint32_t(cap_.names.size()));
    if (added) cap_.names.push_back(s);
    return it->second;
  }

  std::string label_, allowed_;
  std::vector<std::string> header_, f_;
  std::map<std::string, size_t> col_;
  uint64_t row_ = 0, line_ = 0;
  Capture cap_;
  std::unordered_map<std::string, uint32_t> ids_;
};

std::optional<double> CaptureParser::number(long c, Num kind, bool na) const {
  if (c < 0) return std::nullopt;
  const std::string& s = f_[size_t(c)];
  const char* what = kind == Num::Count    ? "an integer"
                     : kind == Num::Time   ? "a finite time >= 0"
                     : kind == Num::Signed ? "a finite number"
                                           : "a finite number >= 0";
  const std::string allowed = std::string(what) + (na ? " or NA" : "");
  if (s == "NA" && na) return std::nullopt;
  if (s.empty()) fail_at(size_t(c), "empty", allowed);
  // Decimal only: strtod would also take "inf", "nan" and "0x1p3".
  const bool decimal = s.find_first_not_of("0123456789.eE+-") == std::string::npos;
  char* end = nullptr;
  const double v = decimal ? std::strtod(s.c_str(), &end) : 0.0;
  if (!decimal || end != s.c_str() + s.size()) fail_at(size_t(c), "'" + echo_input(s) + "' is not a number", allowed);
  if (!std::isfinite(v)) fail_at(size_t(c), "'" + echo_input(s) + "' is not finite", allowed);
  if (kind == Num::Count && v != std::floor(v)) fail_at(size_t(c), "'" + s + "' is not an integer", allowed);
  if (kind != Num::Count && kind != Num::Signed && v < 0) fail_at(size_t(c), "'" + s + "' is negative", allowed);
  return v;
}

Capture CaptureParser::read(CsvReader& csv) {
  if (!csv.next(header_) || (header_.size() == 1 && header_[0].empty())) fail("is empty");
  if (header_[0].compare(0, 3, "\xEF\xBB\xBF") == 0) header_[0].erase(0, 3);  // a UTF-8 byte-order mark
  for (size_t i = 0; i < header_.size(); ++i)
    if (!col_.emplace(lower(header_[i]), i).second)
      fail("names column " + echo_input(header_[i]) + " twice (line " + std::to_string(csv.line()) + ")");
  const bool v2 = has("cpustartqpc") || has("cpustarttime") || has("mscpubusy") || has("cpubusy");
  cap_.format = v2 ? "PresentMon 2.x" : "PresentMon 1.x";
  need({"application"}, "the application");
  need({"presentmode"}, "the present mode");
  if (v2) {
    need({"cpustartqpc", "cpustarttime"}, "the frame's CPU start");
    need({"mscpubusy", "cpubusy"}, "the CPU busy time");
  } else {
    need({"timeinseconds"}, "the present time");
    need({"msbetweenpresents"}, "the time between presents");
  }
  need({"msuntildisplayed", "displaylatency"}, "the display time");
  const bool qpc = v2 && has("cpustartqpc");
  const long c_app = column({"application"}), c_pid = column({"processid"}), c_chain = column({"swapchainaddress"}),
             c_mode = column({"presentmode"}), c_sync = column({"syncinterval"}), c_drop = column({"dropped"}),
             c_tear = column({"allowstearing"}), c_start = column({"cpustartqpc", "cpustarttime"}),
             c_busy = column({"mscpubusy", "cpubusy"}), c_delta = column({"msbetweenappstart", "frametime"}),
             c_gpu = column({"msgpubusy", "gpubusy"}), c_until = column({"msuntildisplayed"}),
             c_latency = column({"displaylatency", "msdisplaylatency"}), c_t = column({"timeinseconds"}),
             c_between = column({"msbetweenpresents"}), c_inpresent = column({"msinpresentapi"}),
             c_active = column({"msgpuactive"}), c_render = column({"msuntilrendercomplete", "msrenderpresentlatency"});
  // A row must reach every column the replay reads (OCAT writes its system columns on the first row only).
  long last_used = 0;
  for (long c : {c_app, c_pid, c_chain, c_mode, c_sync, c_drop, c_tear, c_start, c_busy, c_delta, c_gpu, c_until,
                 c_latency, c_t, c_between, c_inpresent, c_active, c_render})
    last_used = std::max(last_used, c);

  // Per swap chain (application, process, swap chain): its last present's time (rows of one swap chain
  // come in time order; different processes' rows interleave in completion order) and, for the QPC
  // frequency, its last CPU start and MsBetweenAppStart.
  struct Chain {
    double t = 0;
    uint64_t row = 0;
    std::optional<double> delta;
  };
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, Chain> chains;
  std::vector<double> ratio;  // QPC ticks per ms, from each swap chain's start deltas
  std::vector<double> start;  // per present: its raw start (QPC ticks, ms, or s)
  while (csv.next(f_)) {
    if (f_.size() == 1 && f_[0].empty()) continue;  // a blank line
    ++row_;
    line_ = csv.line();
    if (row_ > kCaptureMaxRows) fail("holds more than " + std::to_string(kCaptureMaxRows) + " rows, the limit");
    if (f_.size() > header_.size())
      fail_at(header_.size() - 1,
              "the row has " + std::to_string(f_.size()) + " fields, the header " + std::to_string(header_.size()),
              "at most one field per column");
    if (long(f_.size()) <= last_used)
      fail_at(size_t(last_used), "missing (the row has " + std::to_string(f_.size()) + " fields)",
              "every column the replay reads, on every row");
    f_.resize(header_.size());
    CapturedPresent p;
    p.application = intern(f_[size_t(c_app)]);
    p.present_mode = intern(f_[size_t(c_mode)]);
    p.swap_chain = intern(c_chain < 0 ? std::string() : f_[size_t(c_chain)]);
    if (auto pid = number(c_pid, Num::Count, false)) {
      if (*pid < 0 || *pid > 4294967295.0)
        fail_at(size_t(c_pid), "'" + f_[size_t(c_pid)] + "' is out of range", "0 to 4294967295");
      p.process_id = uint32_t(*pid);
    }
    if (auto si = number(c_sync, Num::Count, false)) {
      // PresentMon writes -1 where it did not see the sync interval.
      if (*si < -1 || *si > 4) fail_at(size_t(c_sync), "'" + f_[size_t(c_sync)] + "' is out of range", "-1 to 4");
      p.sync_interval = int(*si);
    }
    if (auto d = number(c_drop, Num::Count, false)) {
      if (*d != 0 && *d != 1) fail_at(size_t(c_drop), "'" + f_[size_t(c_drop)] + "' is neither 0 nor 1", "0 or 1");
      p.dropped = *d != 0;
    }
    if (auto a = number(c_tear, Num::Count, false)) {
      if (*a != 0 && *a != 1) fail_at(size_t(c_tear), "'" + f_[size_t(c_tear)] + "' is neither 0 nor 1", "0 or 1");
      p.allows_tearing = *a != 0;
    }
    const long c_time = v2 ? c_start : c_t;
    const double t = *number(c_time, Num::Time, false);
    Chain& ch = chains[{p.application, p.process_id, p.swap_chain}];
    if (ch.row && t < ch.t)
      fail_at(
          size_t(c_time),
          "'" + f_[size_t(c_time)] + "' is earlier than row " + std::to_string(ch.row) + "'s of the same swap chain",
          "each swap chain's rows in time order");
    if (v2) {
      p.cpu_busy_ms = *number(c_busy, Num::Duration, false);
      p.gpu_busy_ms = number(c_gpu, Num::Duration);
      const auto delta = number(c_delta, Num::Duration);
      p.render_done_ms = number(c_render, Num::Signed);
      if (qpc && ch.row && ch.delta && *ch.delta > 0.5) ratio.push_back((t - ch.t) / *ch.delta);
      ch.delta = delta;
      if (auto u = number(c_until, Num::Duration)) {
        p.until_displayed_ms = *u;
      } else if (auto l = number(c_latency, Num::Duration)) {
        if (*l < p.cpu_busy_ms)
          fail_at(size_t(c_latency), "'" + f_[size_t(c_latency)] + "' is less than the CPU busy time",
                  "a display latency (from the frame's CPU start) of at least its CPU busy time, or NA");
        p.until_displayed_ms = *l - p.cpu_busy_ms;
      }
    } else {
      const double between = number(c_between, Num::Duration).value_or(0);
      // 1.x has no CPU busy: the time from the previous Present() returning to this call.
      p.cpu_busy_ms = std::max(0.0, between - number(c_inpresent, Num::Duration).value_or(0));
      p.gpu_busy_ms = number(c_active, Num::Duration);
      p.render_done_ms = number(c_render, Num::Signed);
      p.until_displayed_ms = number(c_until, Num::Duration);
    }
    ch.t = t;
    ch.row = row_;
    p.dropped = p.dropped || !p.until_displayed_ms;
    if (p.dropped) p.until_displayed_ms.reset();
    start.push_back(t);
    cap_.presents.push_back(p);
  }
  if (cap_.presents.empty()) fail("holds no presents");
  // Present() times from the first row's. 2.x: CPUStartQPC is in performance-counter ticks of an
  // unknown frequency: ticks per ms from the deltas. MsBetweenAppStart (2.0: FrameTime) is the time from
  // this frame's start to the next frame's on the same swap chain, so the median of (next start - this
  // start) / this delta; 10 MHz if none.
  double ticks_per_ms = 10000.0;
  if (qpc && !ratio.empty()) {
    std::nth_element(ratio.begin(), ratio.begin() + long(ratio.size() / 2), ratio.end());
    ticks_per_ms = ratio[ratio.size() / 2];
    if (!(ticks_per_ms > 0)) ticks_per_ms = 10000.0;
  }
  // CPUStartTime is in ms, TimeInSeconds in s.
  auto ms = [&](double t) { return qpc ? t / ticks_per_ms : v2 ? t : t * 1000.0; };
  const double origin = ms(start[0]);
  for (size_t i = 0; i < cap_.presents.size(); ++i)
    cap_.presents[i].present_ms = ms(start[i]) - origin + (v2 ? cap_.presents[i].cpu_busy_ms : 0.0);
  return std::move(cap_);
}

const char* kAllowed = "a PresentMon 1.x or 2.x CSV";
// What RFC 4180 allows where a record broke it.
const std::string kCsvAllowed =
    "RFC 4180 fields: plain, or in quotes that may hold commas, line breaks and doubled quotes";

}  // namespace

Capture read_presentmon(const std::string& path, const std::string& key) {
  InputFile in(path, key, kCaptureMaxBytes, std::string(kAllowed) + " file");
  CsvReader csv([&in](char* b, size_t n) { return in.read(b, n); });
  CaptureParser rd(in.label(), kAllowed);
  try {
    return rd.read(csv);
  } catch (const CsvError& e) {
    throw ConfigError(in.label() + ": line " + std::to_string(e.line) + ": " + e.what() + "; allowed: " + kCsvAllowed +
                      " (" + kAllowed + ")");
  }
}

Capture parse_presentmon(const std::string& text, const std::string& label, const std::string& key) {
  size_t at = 0;
  CsvReader csv([&](char* b, size_t n) {
    const size_t k = std::min(n, text.size() - at);
    std::copy(text.begin() + long(at), text.begin() + long(at + k), b);
    at += k;
    return k;
  });
  const std::string lab = key + " = '" + echo_input(label) + "'";
  CaptureParser rd(lab, kAllowed);
  try {
    return rd.read(csv);
  } catch (const CsvError& e) {
    throw ConfigError(lab + ": line " + std::to_string(e.line) + ": " + e.what() + "; allowed: " + kCsvAllowed + " (" +
                      kAllowed + ")");
  }
}

}  // namespace gpumodel
