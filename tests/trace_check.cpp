#include "tests/trace_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace gpumodel {

namespace {

using Track = std::pair<int64_t, int64_t>;  // (pid, tid)

// A slice as one viewer sees it: its begin and end in that viewer's arithmetic.
template <class T>
struct Span {
  T begin, end;
  size_t index;
};

// Sorted by begin, the longer first (as DevTools and Perfetto order them), a slice that starts at or
// after the end of the innermost one open closes it; one that starts inside it must end inside it.
template <class T>
void check_nesting(std::vector<Span<T>> v, const char* arithmetic, std::vector<std::string>& bad) {
  std::sort(v.begin(), v.end(), [](const Span<T>& a, const Span<T>& b) {
    return std::tie(a.begin, b.end, a.index) < std::tie(b.begin, a.end, b.index);
  });
  std::vector<Span<T>> open;
  for (const Span<T>& s : v) {
    while (!open.empty() && s.begin >= open.back().end) open.pop_back();
    if (!open.empty() && s.end > open.back().end) {
      bad.push_back("event " + std::to_string(s.index) + ": X overlaps event " + std::to_string(open.back().index) +
                    " on its track without nesting in it (" + arithmetic + ")");
      continue;
    }
    open.push_back(s);
  }
}

// Perfetto's reading of a number of microseconds: whole nanoseconds, an integer times 1000 or a
// double times 1000 truncated.
int64_t perfetto_ns(const nlohmann::json& v) {
  return v.is_number_integer() ? v.get<int64_t>() * 1000 : static_cast<int64_t>(v.get<double>() * 1000.0);
}

}  // namespace

std::vector<std::string> check_trace_events(const nlohmann::json& doc) {
  std::vector<std::string> bad;
  const nlohmann::json* events = &doc;
  if (doc.is_object()) {
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array()) return {"no traceEvents array"};
    events = &doc["traceEvents"];
  } else if (!doc.is_array()) {
    return {"neither an object nor an array"};
  }
  static const std::set<std::string> kPhases = {"X", "I", "C", "M", "s", "f"};
  std::map<Track, double> last_ts;
  std::map<Track, std::vector<Span<double>>> spans;
  std::map<Track, std::vector<Span<int64_t>>> spans_ns;
  std::map<Track, std::vector<std::tuple<double, double, size_t>>> ts_dur;  // each X's ts, dur, index
  std::set<std::tuple<int64_t, int64_t, double, std::string>> slice_at;     // (pid, tid, ts, cat) of each X and i
  std::set<Track> named_threads, used_threads;
  std::set<int64_t> named_processes;
  std::map<int64_t, int64_t> pid_of_tid;
  struct Flow {
    size_t s = 0, f = 0, starts = 0, ends = 0;
    double s_ts = 0, f_ts = 0;
    Track s_track, f_track;
    std::string cat;
  };
  std::map<std::string, Flow> flows;  // by category, name and id
  std::set<std::string> start_ids;
  auto at = [](size_t i) { return "event " + std::to_string(i) + ": "; };
  for (size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object()) {
      bad.push_back(at(i) + "not an object");
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string()) {
      bad.push_back(at(i) + "no phase (ph)");
      continue;
    }
    const std::string ph = e["ph"];
    if (ph == "B" || ph == "E") {
      bad.push_back(at(i) + "a B/E slice: write a complete event (X) instead");
      continue;
    }
    if (!kPhases.count(ph)) {
      bad.push_back(at(i) + "phase '" + ph + "' is none of X I C M s f");
      continue;
    }
    // Chrome DevTools' older trace parser (the TracingModel of devtools-timeline-model) fails on an event
    // of no category, metadata and counters included, and reports a complete, instant or flow event
    // without args.
    if (!e.contains("cat") || !e["cat"].is_string() || e["cat"].get<std::string>().empty())
      bad.push_back(at(i) + "no category (cat)");
    if ((ph == "X" || ph == "I" || ph == "s" || ph == "f") && (!e.contains("args") || !e["args"].is_object()))
      bad.push_back(at(i) + ph + " without args");
    if (!e.contains("pid") || !e["pid"].is_number_integer()) {
      bad.push_back(at(i) + "no integer pid");
      continue;
    }
    if (!e.contains("name") || !e["name"].is_string() || e["name"].get<std::string>().empty()) {
      bad.push_back(at(i) + "no name");
      continue;
    }
    const std::string name = e["name"];
    const int64_t pid = e["pid"];
    if (ph == "M" && name.rfind("process_", 0) == 0) {  // process metadata: no tid
      if (name == "process_name") {
        if (!(e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string()))
          bad.push_back(at(i) + name + " without args.name");
        named_processes.insert(pid);
      }
      continue;
    }
    if (!e.contains("tid") || !e["tid"].is_number_integer()) {
      bad.push_back(at(i) + "no integer tid");
      continue;
    }
    const int64_t tid = e["tid"];
    const Track tr{pid, tid};
    const auto [owner, fresh] = pid_of_tid.emplace(tid, pid);
    if (!fresh && owner->second != pid)
      bad.push_back(at(i) + "tid " + std::to_string(tid) + " in processes " + std::to_string(owner->second) + " and " +
                    std::to_string(pid));
    if (ph == "M") {
      if (name == "thread_name") {
        if (!(e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string()))
          bad.push_back(at(i) + name + " without args.name");
        named_threads.insert(tr);
      }
      continue;
    }
    used_threads.insert(tr);
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) {
      bad.push_back(at(i) + "no timestamp (ts >= 0)");
      continue;
    }
    const double ts = e["ts"].get<double>();
    auto lt = last_ts.find(tr);
    if (lt != last_ts.end() && ts < lt->second)
      bad.push_back(at(i) + "out of order: ts " + std::to_string(ts) + " after " + std::to_string(lt->second) +
                    " on its track");
    last_ts[tr] = ts;
    const std::string cat = e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
        bad.push_back(at(i) + "X without dur >= 0");
        continue;
      }
      if (cat.empty()) bad.push_back(at(i) + "X without a category (cat)");
      // speedscope cannot order a zero-length complete event against the slices at its time.
      if (e["dur"].get<double>() == 0) bad.push_back(at(i) + "an X of no length: write an instant event (I)");
      spans[tr].push_back({ts, ts + e["dur"].get<double>(), i});
      ts_dur[tr].emplace_back(ts, e["dur"].get<double>(), i);
      const int64_t ts_ns = perfetto_ns(e["ts"]);
      spans_ns[tr].push_back({ts_ns, ts_ns + perfetto_ns(e["dur"]), i});
      slice_at.insert({pid, tid, ts, cat});
    } else if (ph == "I") {
      if (!(e.contains("s") && e["s"] == "t"))
        bad.push_back(at(i) + "an instant event not of its thread (\"s\":\"t\")");
      slice_at.insert({pid, tid, ts, cat});
    } else if (ph == "C") {
      bool ok = e.contains("args") && e["args"].is_object() && !e["args"].empty();
      if (ok)
        for (auto& [k, v] : e["args"].items()) ok = ok && v.is_number();
      if (!ok) bad.push_back(at(i) + "counter without numeric args");
    } else {  // s, f
      if (!e.contains("id") || !e["id"].is_number_integer()) {
        bad.push_back(at(i) + "flow without an integer id");
        continue;
      }
      const std::string id = e["id"].dump(), key = cat + "/" + name + "/" + id;
      Flow& fl = flows[key];
      if (ph == "s") {
        if (!start_ids.insert(id).second) bad.push_back(at(i) + "flow id " + id + " starts twice");
        if (fl.starts++ == 0) fl.s = i, fl.s_ts = ts, fl.s_track = tr, fl.cat = cat;
      } else {
        if (!fl.starts)
          bad.push_back(at(i) + "flow " + key + " ends before it starts in the file");
        else if (ts <= fl.s_ts)
          bad.push_back(at(i) + "flow " + key + " ends no later than it starts");
        if (!(e.contains("bp") && e["bp"] == "e")) bad.push_back(at(i) + "flow end without \"bp\":\"e\"");
        if (fl.ends++ == 0) fl.f = i, fl.f_ts = ts, fl.f_track = tr;
      }
    }
  }
  for (auto& [tr, v] : spans) check_nesting(std::move(v), "ts + dur in doubles, as DevTools", bad);
  for (auto& [tr, v] : spans_ns) check_nesting(std::move(v), "whole nanoseconds, as Perfetto", bad);
  // speedscope's arithmetic: each track's times less its first slice's, then ts + dur, in doubles.
  for (auto& [tr, v] : ts_dur) {
    double first = std::get<0>(v.front());
    for (auto& [ts, dur, i] : v) first = std::min(first, ts);
    std::vector<Span<double>> rebased;
    for (auto& [ts, dur, i] : v) rebased.push_back({ts - first, (ts - first) + dur, i});
    check_nesting(std::move(rebased), "rebased on the track's first slice, then ts + dur in doubles, as speedscope",
                  bad);
  }
  auto bound = [&](const Track& tr, double ts, const std::string& cat) {
    return slice_at.count({tr.first, tr.second, ts, cat}) > 0;
  };
  for (auto& [key, fl] : flows) {
    if (fl.starts && !fl.ends) bad.push_back("flow " + key + " never ends");
    if (fl.ends > 1) bad.push_back("flow " + key + " ends twice");
    if (fl.starts && !bound(fl.s_track, fl.s_ts, fl.cat))
      bad.push_back(at(fl.s) + "flow " + key + " starts on no slice or instant of its track, time and category");
    if (fl.ends && !bound(fl.f_track, fl.f_ts, fl.cat))
      bad.push_back(at(fl.f) + "flow " + key + " ends on no slice or instant of its track, time and category");
  }
  std::set<int64_t> pids;
  for (auto& [tid, pid] : pid_of_tid) pids.insert(pid);
  for (const Track& tr : used_threads)
    if (!named_threads.count(tr))
      bad.push_back("track pid " + std::to_string(tr.first) + " tid " + std::to_string(tr.second) +
                    " has no thread_name");
  for (int64_t pid : pids)
    if (!named_processes.count(pid)) bad.push_back("process " + std::to_string(pid) + " has no process_name");
  for (auto& [tid, pid] : pid_of_tid)
    if (pids.count(tid)) bad.push_back("tid " + std::to_string(tid) + " is also a pid");
  return bad;
}

}  // namespace gpumodel
