#include "scenarios/frame_loop/workload.h"

#include <memory>
#include <set>
#include <sstream>

#include "hw_model/core/input_file.h"
#include "hw_model/core/params.h"

namespace gpumodel {
namespace {

using Json = nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ConfigError("workload.file '" + echo_input(file_) + "': " + path + ": " + what);
  }
  // Refuses a key of `o` not in `allowed`, and a missing one of `required`.
  void keys(const Json& o, const std::string& path, const std::set<std::string>& allowed,
            const std::set<std::string>& required = {}) const {
    if (!o.is_object()) fail(path, "must be an object");
    for (auto it = o.begin(); it != o.end(); ++it)
      if (!allowed.count(it.key())) {
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(path + "." + it.key(), "unknown key; allowed: " + list);
      }
    for (const std::string& r : required)
      if (!o.contains(r)) fail(path + "." + r, "missing");
  }
  double number(const Json& o, const std::string& key, const std::string& path, double lo, double hi,
                double def) const {
    if (!o.contains(key)) return def;
    const Json& v = o[key];
    if (!v.is_number()) fail(path + "." + key, "must be a number");
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi)) fail(path + "." + key, "out of range; allowed: " + fmt(lo) + " to " + fmt(hi));
    return d;
  }
  uint64_t integer(const Json& o, const std::string& key, const std::string& path, uint64_t lo, uint64_t hi,
                   uint64_t def) const {
    if (!o.contains(key)) return def;
    const Json& v = o[key];
    if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
      fail(path + "." + key, "must be a non-negative integer");
    const uint64_t d = v.get<uint64_t>();
    if (d < lo || d > hi)
      fail(path + "." + key, "out of range; allowed: " + fmt(double(lo)) + " to " + fmt(double(hi)));
    return d;
  }
  std::string text(const Json& o, const std::string& key, const std::string& path, const std::string& def,
                   const std::set<std::string>& allowed = {}) const {
    if (!o.contains(key)) return def;
    if (!o[key].is_string()) fail(path + "." + key, "must be a string");
    const std::string s = o[key].get<std::string>();
    if (!allowed.empty() && !allowed.count(s)) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(path + "." + key, "'" + s + "' is not allowed; allowed: " + list);
    }
    return s;
  }
  static std::string fmt(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
  }

 private:
  std::string file_;
};

EngineKind parse_engine(const std::string& s) {
  if (s == "compute") return EngineKind::Compute;
  if (s == "copy") return EngineKind::Copy;
  if (s == "video") return EngineKind::Video;
  return EngineKind::Graphics;
}

struct Parser {
  const Reader& rd;
  Workload& w;
  std::map<std::string, int> queue_of, fence_of;
  std::vector<bool> signalled;  // per fence: signalled by some step so far (in program order)
  int depth = 0;

  int lookup(const std::map<std::string, int>& m, const Json& o, const char* key, const std::string& path,
             const char* what) {
    const std::string name = rd.text(o, key, path, "");
    auto it = m.find(name);
    if (it == m.end()) {
      std::string list;
      for (auto& [n, i] : m) list += (list.empty() ? "" : ", ") + n;
      rd.fail(path + "." + key, "'" + name + "' is no " + what + " of the workload; allowed: " + list);
    }
    return it->second;
  }

  void steps(const Json& arr, const std::string& path) {
    if (!arr.is_array()) rd.fail(path, "must be an array of steps");
    for (size_t i = 0; i < arr.size(); ++i) step(arr[i], path + "[" + std::to_string(i) + "]");
  }

  void step(const Json& s, const std::string& path) {
    if (!s.is_object() || s.empty()) rd.fail(path, "a step is an object with one key");
    if (s.contains("repeat")) {
      rd.keys(s, path, {"repeat", "steps"}, {"repeat", "steps"});
      const uint64_t n = rd.integer(s, "repeat", path, 1, 10000, 1);
      if (++depth > 4) rd.fail(path, "repeats nest at most 4 deep");
      for (uint64_t k = 0; k < n; ++k) steps(s["steps"], path + ".steps");
      --depth;
      return;
    }
    if (s.size() != 1) rd.fail(path, "a step has one key (cpu, gpu, signal, wait, cpu_wait, present or repeat)");
    const std::string kind = s.begin().key();
    const Json& a = s.begin().value();
    const std::string p = path + "." + kind;
    WorkloadStep st;
    st.where = path;
    if (kind == "cpu") {
      rd.keys(a, p, {"us", "jitter_us", "threads"}, {"us"});
      st.kind = WorkloadStep::Kind::Cpu;
      st.us = rd.number(a, "us", p, 0, 1e7, 0);
      st.jitter_us = rd.number(a, "jitter_us", p, 0, 1e7, 0);
      st.threads = unsigned(rd.integer(a, "threads", p, 1, 63, 1));  // cpu.cores <= 64
    } else if (kind == "gpu") {
      rd.keys(a, p, {"queue", "us", "jitter_us", "cycles", "bytes"}, {"queue"});
      st.kind = WorkloadStep::Kind::Gpu;
      st.queue = lookup(queue_of, a, "queue", p, "queue");
      const int given = int(a.contains("us")) + int(a.contains("cycles")) + int(a.contains("bytes"));
      if (given != 1) rd.fail(p, "give exactly one of us, cycles or bytes");
      st.us = rd.number(a, "us", p, 0, 1e7, 0);
      st.jitter_us = rd.number(a, "jitter_us", p, 0, 1e7, 0);
      st.cycles = rd.integer(a, "cycles", p, 0, uint64_t(1) << 40, 0);
      st.bytes = rd.integer(a, "bytes", p, 0, uint64_t(1) << 30, 0);
      const EngineKind k = w.queues[size_t(st.queue)].engine;
      if (a.contains("bytes") && !engine_runs(k, Op::Copy))
        rd.fail(p + ".bytes",
                std::string("queue '") + w.queues[size_t(st.queue)].name + "' is on a " + to_string(k) +
                    " engine, which runs no COPY; allowed: a queue on a graphics, compute or copy engine");
      if (!a.contains("bytes") && !engine_runs(k, Op::Compute))
        rd.fail(p, std::string("queue '") + w.queues[size_t(st.queue)].name + "' is on a " + to_string(k) +
                       " engine, which runs no COMPUTE; allowed: bytes (a COPY)");
    } else if (kind == "signal") {
      rd.keys(a, p, {"queue", "fence"}, {"queue", "fence"});
      st.kind = WorkloadStep::Kind::Signal;
      st.queue = lookup(queue_of, a, "queue", p, "queue");
      st.fence = lookup(fence_of, a, "fence", p, "fence");
      signalled[size_t(st.fence)] = true;
      ++w.fences[size_t(st.fence)].signals_per_frame;
      ++w.signals;
    } else if (kind == "wait") {
      rd.keys(a, p, {"queue", "fence"}, {"queue", "fence"});
      st.kind = WorkloadStep::Kind::Wait;
      st.queue = lookup(queue_of, a, "queue", p, "queue");
      st.fence = lookup(fence_of, a, "fence", p, "fence");
      if (!signalled[size_t(st.fence)])
        rd.fail(p + ".fence",
                "'" + w.fences[size_t(st.fence)].name +
                    "' is waited on before any step signals it; allowed: a fence signalled earlier in the "
                    "frame (a wait on an earlier frame's value is a cpu_wait's frames_back)");
      ++w.gpu_waits;
    } else if (kind == "cpu_wait") {
      rd.keys(a, p, {"fence", "frames_back", "timeout_ms"}, {"fence"});
      st.kind = WorkloadStep::Kind::CpuWait;
      st.fence = lookup(fence_of, a, "fence", p, "fence");
      st.frames_back = int(rd.integer(a, "frames_back", p, 0, 16, 0));
      st.timeout_ms = rd.number(a, "timeout_ms", p, 0, 1e6, 0);
      if (!signalled[size_t(st.fence)] && st.frames_back == 0)
        rd.fail(p + ".fence", "'" + w.fences[size_t(st.fence)].name +
                                  "' is waited on before any step of the frame signals it; allowed: frames_back >= 1");
      ++w.cpu_waits;
    } else if (kind == "present") {
      rd.keys(a, p, {"queue", "sync_interval"}, {"queue"});
      st.kind = WorkloadStep::Kind::Present;
      st.queue = lookup(queue_of, a, "queue", p, "queue");
      st.sync_interval = int(rd.integer(a, "sync_interval", p, 1, 1, 1));
      if (w.present_queue >= 0) rd.fail(p, "a frame presents once");
      w.present_queue = st.queue;
    } else {
      rd.fail(p, "unknown step; allowed: cpu, gpu, signal, wait, cpu_wait, present, repeat");
    }
    if (w.present_queue >= 0 && st.kind != WorkloadStep::Kind::Present)
      rd.fail(path, "the present is the frame's last step");
    w.frame.push_back(st);
    if (w.frame.size() > 100000) rd.fail(path, "a frame has at most 100,000 steps");
  }
};

// The parser's callback: JSON leaves a repeated key to the reader (nlohmann keeps the last), and a
// strict file refuses it, naming its path; it also bounds the nesting (a workload nests a few levels:
// a file 10^6 brackets deep is not one).
Json::parser_callback_t strict_keys(const Reader& rd) {
  struct Level {
    bool array = false;
    size_t next = 0;  // an array's next element
    std::set<std::string> keys;
    std::string path;
  };
  auto levels = std::make_shared<std::vector<Level>>();
  auto key = std::make_shared<std::string>();
  return [&rd, levels, key](int, Json::parse_event_t ev, Json& parsed) {
    using E = Json::parse_event_t;
    std::vector<Level>& st = *levels;
    switch (ev) {
      case E::object_start:
      case E::array_start: {
        const std::string path = st.empty()        ? std::string("$")
                                 : st.back().array ? st.back().path + "[" + std::to_string(st.back().next++) + "]"
                                                   : st.back().path + "." + *key;
        if (st.size() >= kWorkloadMaxDepth)
          rd.fail(path, "nests deeper than " + std::to_string(kWorkloadMaxDepth) + " levels; allowed: at most " +
                            std::to_string(kWorkloadMaxDepth));
        st.push_back({ev == E::array_start, 0, {}, path});
        break;
      }
      case E::object_end:
      case E::array_end: st.pop_back(); break;
      case E::key:
        *key = parsed.get<std::string>();
        if (!st.back().keys.insert(*key).second)
          rd.fail(st.back().path + "." + echo_input(*key), "key given twice; allowed: each key once in an object");
        break;
      case E::value:
        if (!st.empty() && st.back().array) ++st.back().next;
        break;
    }
    return true;
  };
}

}  // namespace

Workload parse_workload(const std::string& text, const std::string& file) {
  Reader rd(file);
  Json j;
  try {
    j = Json::parse(text, strict_keys(rd));
  } catch (const Json::parse_error& e) {
    rd.fail("(file)", std::string("not valid JSON: ") + e.what());
  }
  rd.keys(j, "$", {"name", "description", "frames", "fps", "max_frame_latency", "buffers", "queues", "fences", "frame"},
          {"name", "frames", "queues", "frame"});
  Workload w;
  w.file = file;
  w.name = rd.text(j, "name", "$", "");
  w.description = rd.text(j, "description", "$", "");
  w.frames = rd.integer(j, "frames", "$", 1, 1000000, 1);  // workload.frames' bound
  w.fps = rd.number(j, "fps", "$", 0, 1000, 0);
  w.max_frame_latency = int(rd.integer(j, "max_frame_latency", "$", 1, 16, 1));
  w.buffers = int(rd.integer(j, "buffers", "$", 2, 8, 3));
  Parser ps{rd, w, {}, {}, {}, 0};
  const Json& qs = j["queues"];
  if (!qs.is_object() || qs.empty()) rd.fail("$.queues", "must be an object naming at least one queue");
  for (auto it = qs.begin(); it != qs.end(); ++it) {
    const std::string p = "$.queues." + it.key();
    rd.keys(it.value(), p, {"engine"}, {"engine"});
    WorkloadQueue q;
    q.name = it.key();
    q.engine = parse_engine(rd.text(it.value(), "engine", p, "", {"graphics", "compute", "copy", "video"}));
    ps.queue_of[q.name] = int(w.queues.size());
    w.queues.push_back(q);
  }
  if (j.contains("fences")) {
    const Json& fs = j["fences"];
    if (!fs.is_object()) rd.fail("$.fences", "must be an object");
    for (auto it = fs.begin(); it != fs.end(); ++it) {
      const std::string p = "$.fences." + it.key();
      rd.keys(it.value(), p, {"storage", "kind"});
      WorkloadFence f;
      f.name = it.key();
      f.storage = rd.text(it.value(), "storage", p, "system", {"system", "local"});
      f.kind = rd.text(it.value(), "kind", p, "", {"native", "legacy"});
      ps.fence_of[f.name] = int(w.fences.size());
      w.fences.push_back(f);
    }
  }
  ps.signalled.assign(w.fences.size(), false);
  ps.steps(j["frame"], "$.frame");
  if (w.present_queue < 0) rd.fail("$.frame", "no present step: every frame ends with one");
  for (const WorkloadFence& f : w.fences)
    if (f.signals_per_frame == 0) rd.fail("$.fences." + f.name, "no step signals it");
  return w;
}

Workload load_workload(const std::string& path) {
  InputFile in(path, "workload.file", kWorkloadFileMaxBytes, "a workload JSON file");
  return parse_workload(in.read_all(), path);
}

}  // namespace gpumodel
