#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hw_model/core/params.h"
#include "scenarios/presentmon/presentmon.h"

namespace gpumodel {
namespace {

// One CSV line's fields (RFC 4180 quotes; a quoted field may hold commas, "" is a quote).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        cur += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      f.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  f.push_back(cur);
  return f;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<double> number(const std::string& s) {
  if (s.empty() || s == "NA") return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

Capture read_presentmon(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec))
    throw ConfigError(key + " = '" + path + "' cannot be read" +
                      (std::filesystem::is_directory(path, ec) ? std::string(" (a directory)") : std::string()) +
                      "; allowed: a readable PresentMon CSV file");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError(key + " = '" + path + "' is empty; allowed: a PresentMon CSV file");
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
  const std::vector<std::string> header = split_csv(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[lower(header[i])] = i;
  auto has = [&](const char* n) { return col.count(n) != 0; };
  auto need = [&](std::initializer_list<const char*> names, const char* what) {
    for (const char* n : names)
      if (has(n)) return;
    throw ConfigError(key + " = '" + path + "' has no column for " + what + " (" + *names.begin() +
                      "); allowed: a PresentMon 1.x or 2.x CSV");
  };
  Capture c;
  const bool v2 = has("cpustartqpc") || has("cpustarttime") || has("mscpubusy") || has("cpubusy");
  c.format = v2 ? "PresentMon 2.x" : "PresentMon 1.x";
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
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line == "\r") continue;
    std::vector<std::string> f = split_csv(line);
    if (f.size() < 4) continue;                   // a truncated last line
    f.resize(std::max(f.size(), header.size()));  // OCAT writes its system columns on the first row only
    rows.push_back(std::move(f));
  }
  auto get = [&](const std::vector<std::string>& f, std::initializer_list<const char*> names) -> std::optional<double> {
    for (const char* n : names) {
      auto it = col.find(n);
      if (it != col.end()) return number(f[it->second]);
    }
    return std::nullopt;
  };
  auto text = [&](const std::vector<std::string>& f, const char* n) {
    auto it = col.find(n);
    return it == col.end() ? std::string() : f[it->second];
  };
  // 2.x: CPUStartQPC is in performance-counter ticks of an unknown frequency: ticks per ms from the
  // deltas. MsBetweenAppStart (2.0: FrameTime) is the time from this frame's start to the next frame's on
  // the same swap chain, so the median of (next start - this start) / this delta; 10 MHz if none.
  double ticks_per_ms = 1.0;
  const bool qpc = v2 && has("cpustartqpc");
  if (qpc) {
    std::vector<double> ratio;
    std::map<std::string, std::pair<double, std::optional<double>>> last;  // per swap chain: start, delta
    for (auto& f : rows) {
      const std::string chain = text(f, "application") + "/" + text(f, "processid") + "/" + text(f, "swapchainaddress");
      const auto start = get(f, {"cpustartqpc"});
      const auto delta = get(f, {"msbetweenappstart", "frametime"});
      auto it = last.find(chain);
      if (start && it != last.end() && it->second.second && *it->second.second > 0.5)
        ratio.push_back((*start - it->second.first) / *it->second.second);
      if (start) last[chain] = {*start, delta};
    }
    ticks_per_ms = 10000.0;
    if (!ratio.empty()) {
      std::nth_element(ratio.begin(), ratio.begin() + long(ratio.size() / 2), ratio.end());
      ticks_per_ms = ratio[ratio.size() / 2];
    }
    if (!(ticks_per_ms > 0)) ticks_per_ms = 10000.0;
  }
  double origin = NAN;
  for (auto& f : rows) {
    CapturedPresent p;
    p.application = text(f, "application");
    p.process_id = uint32_t(get(f, {"processid"}).value_or(0));
    p.swap_chain = text(f, "swapchainaddress");
    p.present_mode = text(f, "presentmode");
    p.sync_interval = int(get(f, {"syncinterval"}).value_or(1));
    if (v2) {
      const auto start = qpc ? get(f, {"cpustartqpc"}) : get(f, {"cpustarttime"});
      const auto busy = get(f, {"mscpubusy", "cpubusy"});
      if (!start || !busy) continue;
      const double start_ms = qpc ? *start / ticks_per_ms : *start;
      if (std::isnan(origin)) origin = start_ms;
      p.cpu_busy_ms = *busy;
      p.present_ms = start_ms - origin + *busy;
      p.gpu_busy_ms = get(f, {"msgpubusy", "gpubusy"});
      if (auto u = get(f, {"msuntildisplayed"}))
        p.until_displayed_ms = *u;
      else if (auto l = get(f, {"displaylatency", "msdisplaylatency"}))
        p.until_displayed_ms = *l - *busy;
    } else {
      const auto t = get(f, {"timeinseconds"});
      const auto between = get(f, {"msbetweenpresents"});
      if (!t) continue;
      if (std::isnan(origin)) origin = *t * 1000.0;
      p.present_ms = *t * 1000.0 - origin;
      // 1.x has no CPU busy: the time from the previous Present() returning to this call.
      p.cpu_busy_ms = std::max(0.0, between.value_or(0) - get(f, {"msinpresentapi"}).value_or(0));
      p.gpu_busy_ms = get(f, {"msgpuactive"});
      p.render_done_ms = get(f, {"msuntilrendercomplete"});
      p.until_displayed_ms = get(f, {"msuntildisplayed"});
    }
    p.dropped = get(f, {"dropped"}).value_or(0) != 0 || !p.until_displayed_ms;
    if (p.dropped) p.until_displayed_ms.reset();
    c.presents.push_back(std::move(p));
  }
  if (c.presents.empty())
    throw ConfigError(key + " = '" + path + "' holds no presents; allowed: a PresentMon CSV with at least one row");
  return c;
}

}  // namespace gpumodel
