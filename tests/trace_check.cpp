#include "tests/trace_check.h"

#include <map>
#include <set>
#include <tuple>

namespace gpumodel {

std::vector<std::string> check_trace_events(const nlohmann::json& doc) {
  std::vector<std::string> bad;
  const nlohmann::json* events = &doc;
  if (doc.is_object()) {
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array()) return {"no traceEvents array"};
    events = &doc["traceEvents"];
  } else if (!doc.is_array()) {
    return {"neither an object nor an array"};
  }
  static const std::set<std::string> kPhases = {"B", "E", "X", "C", "M", "s", "f", "i", "I"};
  using Track = std::pair<int64_t, int64_t>;
  std::map<Track, std::vector<std::pair<std::string, size_t>>> open;  // track -> open B's (name, index)
  std::map<Track, double> last_ts;
  struct FlowEnd {
    bool seen_s = false, seen_f = false;
    double s_ts = 0;
  };
  std::map<std::string, FlowEnd> flows;
  auto at = [](size_t i) { return "event " + std::to_string(i) + ": "; };
  for (size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object()) {
      bad.push_back(at(i) + "not an object");
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string() || !kPhases.count(e["ph"].get<std::string>())) {
      bad.push_back(at(i) + "no known phase (ph)");
      continue;
    }
    const std::string ph = e["ph"];
    if (!e.contains("pid") || !e["pid"].is_number_integer()) {
      bad.push_back(at(i) + "no integer pid");
      continue;
    }
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    if (ph == "M") {
      if ((name == "thread_name" || name == "process_name") &&
          !(e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string()))
        bad.push_back(at(i) + name + " without args.name");
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) {
      bad.push_back(at(i) + "no timestamp (ts >= 0)");
      continue;
    }
    const double ts = e["ts"].get<double>();
    const int64_t tid = e.contains("tid") && e["tid"].is_number_integer() ? e["tid"].get<int64_t>() : 0;
    const Track tr{e["pid"].get<int64_t>(), tid};
    auto lt = last_ts.find(tr);
    if (lt != last_ts.end() && ts < lt->second)
      bad.push_back(at(i) + "out of order: ts " + std::to_string(ts) + " after " + std::to_string(lt->second) +
                    " on its track");
    last_ts[tr] = ts;
    if (ph != "E" && name.empty()) bad.push_back(at(i) + "no name");
    if (ph == "B") {
      open[tr].push_back({name, i});
    } else if (ph == "E") {
      auto& st = open[tr];
      if (st.empty()) {
        bad.push_back(at(i) + "unbalanced: E with no open B on its track");
      } else {
        if (!name.empty() && name != st.back().first)
          bad.push_back(at(i) + "E '" + name + "' closes B '" + st.back().first + "' (event " +
                        std::to_string(st.back().second) + ")");
        st.pop_back();
      }
    } else if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)
        bad.push_back(at(i) + "X without dur >= 0");
    } else if (ph == "C") {
      bool ok = e.contains("args") && e["args"].is_object() && !e["args"].empty();
      if (ok)
        for (auto& [k, v] : e["args"].items()) ok = ok && v.is_number();
      if (!ok) bad.push_back(at(i) + "counter without numeric args");
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id")) {
        bad.push_back(at(i) + "flow without id");
        continue;
      }
      const std::string id = e["id"].dump() + "/" + (e.contains("cat") ? e["cat"].dump() : "");
      FlowEnd& fl = flows[id];
      if (ph == "s") {
        if (fl.seen_s) bad.push_back(at(i) + "flow " + id + " starts twice");
        fl.seen_s = true;
        fl.s_ts = ts;
      } else {
        if (!fl.seen_s)
          bad.push_back(at(i) + "flow " + id + " ends before it starts");
        else if (ts < fl.s_ts)
          bad.push_back(at(i) + "flow " + id + " ends earlier than it starts");
        if (fl.seen_f) bad.push_back(at(i) + "flow " + id + " ends twice");
        fl.seen_f = true;
      }
    }
  }
  for (auto& [tr, st] : open)
    for (auto& [name, i] : st) bad.push_back(at(i) + "unbalanced: B '" + name + "' never ends");
  for (auto& [id, fl] : flows)
    if (fl.seen_s && !fl.seen_f) bad.push_back("flow " + id + " never ends");
  return bad;
}

}  // namespace gpumodel
