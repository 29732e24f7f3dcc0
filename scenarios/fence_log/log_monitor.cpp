#include "scenarios/fence_log/log_monitor.h"

#include <cstring>

namespace gpumodel {

FenceLogMonitor::FenceLogMonitor(Platform& p) : kept_(2 * size_t(p.vidsch.log_entries_per_log())), p_(p) {
  if (!p.vidsch.native_fence_logs()) return;
  auto w = [this](int q, uint32_t t, uint64_t seq, const void* e) { written(q, t, seq, e); };
  for (auto& n : p.gpu.nodes) n->on_log_entry = w;
  p.gpu.cmp.on_log_entry = w;
  p.vidsch.observer.log_entry_read = [this](int q, uint32_t t, uint64_t pos, const fence_log::Entry& e) {
    read(q, t, pos, e);
  };
}

void FenceLogMonitor::written(int queue, uint32_t type, uint64_t seq, const void* entry) {
  Log& l = logs_[{queue, type}];
  if (l.written.empty()) l.written.resize(kept_);
  Slot& s = l.written[seq % kept_];
  s.seq = seq;
  std::memcpy(&s.e, entry, sizeof(fence_log::Entry));
}

void FenceLogMonitor::read(int queue, uint32_t type, uint64_t pos, const fence_log::Entry& e) {
  Log& l = logs_[{queue, type}];
  auto note = [this, queue, type, pos](const std::string& what) {
    if (messages_.size() < 8)
      messages_.push_back("queue " + std::to_string(queue) + (type == fence_log::kWaits ? " wait" : " signal") +
                          " log, entry " + std::to_string(pos) + ": " + what);
  };
  const Slot* s = l.written.empty() ? nullptr : &l.written[pos % kept_];
  const bool kept = s && s->seq == pos;
  if (!kept || std::memcmp(&s->e, &e, sizeof e) != 0) {
    ++stale_;
    note(!kept ? "read, never written" : "read before the GPU's write of it was visible");
  }
  if (e.fence_end_gpu_timestamp == 0) return;  // a skipped write (the document: zero is allowed)
  if (e.fence_end_gpu_timestamp < l.last_end) {
    ++backwards_;
    note("FenceEndGpuTimestamp " + std::to_string(e.fence_end_gpu_timestamp) + " after " + std::to_string(l.last_end));
  }
  l.last_end = e.fence_end_gpu_timestamp;
}

void FenceLogMonitor::finish(Results& r) {
  if (!p_.vidsch.native_fence_logs()) return;
  r.monitors["log_timestamps"] = backwards_;
  r.monitors["log_entry_stale"] = stale_;
  if (!messages_.empty()) r.metric("log_monitor_first_violations", messages_);
}

namespace {
const MonitorRegistration kRegistered{"fence_log", attach_monitor<FenceLogMonitor>};
}  // namespace

}  // namespace gpumodel
