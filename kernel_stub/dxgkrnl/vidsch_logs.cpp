// Dxgkrnl's side of the native fence logs (Native GPU fence object 'Native fence log buffer design', F16-F19): each
// HW queue's two logs, which queues' logs an interrupt's DPC reads, the KMD's barrier before the entries,
// overrun detection and the fallback that reads every fence of the device.
#include <algorithm>

#include "kernel_stub/dxgkrnl/vidsch.h"
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

void VidSch::RecreateNativeFenceLog(KmdHwQueue* q, uint32_t type) {
  auto& pair = logs_of_[q->id];
  LogState& st = pair[type == fence_log::kWaits ? 0 : 1];
  const bool first = st.cpu_va == 0;
  // The buffer: a 4 KiB allocation, larger while tracing (a global, mapped at its address in every
  // process's space: the engine's GPU VA) with its alias in the system process for the CMP (F10's mapping).
  st.cpu_va = mm_.allocate(log_segment_, log_bytes_, fence_log::kBufferBytes);
  st.sys_va = mm_.map_system_alias(st.cpu_va, false, log_bytes_);
  st.entries = fence_log::entries_in(log_bytes_);
  fence_log::Header h{};
  h.type = type;
  h.number_of_entries = st.entries;
  cpu_.mem_write(st.cpu_va, &h, sizeof h);
  st.cached = 0;
  st.resync = !first;
  DxgkSetNativeFenceLogBufferArgs a;
  a.hw_queue = q;
  a.log_type = type;
  a.log_buffer_cpu_va = st.cpu_va;
  a.log_buffer_gpu_va = st.cpu_va;
  a.log_buffer_system_process_gpu_va = st.sys_va;
  a.number_of_entries = st.entries;
  kmd_->DxgkDdiSetNativeFenceLogBuffer(a);
}

const VidSch::LogState* VidSch::log_state(int queue, uint32_t type) const {
  auto it = logs_of_.find(queue);
  return it == logs_of_.end() ? nullptr : &it->second[type == fence_log::kWaits ? 0 : 1];
}

std::vector<int> VidSch::log_scope(const DxgkInterruptData& d) const {
  // F19: the queues the interrupt names, and every queue on a node it names with a NULL queue ("rescan the
  // log buffer of all HWQueues on this engine"). F12 with logs: a NULL array, every queue (the device is
  // unknown); an array, the queues of each named fence's parent device ("for the parent device of this
  // fence, the OS scans the log buffers of all its HWQueues").
  std::vector<int> qs = d.hw_queues;
  const bool f19 = !d.hw_queues.empty() || !d.null_queue_nodes.empty();
  if (f19 && d.null_queue_nodes.empty()) return qs;  // named queues alone walk no list
  std::set<int> devices;
  if (!f19 && !d.signaled_array_null)
    for (uint32_t h : d.signaled) {
      auto it = by_handle_.find(h);
      if (it != by_handle_.end()) devices.insert(it->second->device);
    }
  for (const auto& [id, st] : logs_of_) {
    const KmdHwQueue* q = kmd_->queue(id);
    if (f19) {
      for (int n : d.null_queue_nodes)
        if (n < 0 || q->node == n) qs.push_back(id);
    } else if (d.signaled_array_null || devices.count(q->process)) {
      qs.push_back(id);
    }
  }
  std::sort(qs.begin(), qs.end());
  qs.erase(std::unique(qs.begin(), qs.end()), qs.end());
  return qs;
}

void VidSch::read_logs(const std::vector<int>& queues, std::vector<Logged>& touched, std::set<int>& lost) {
  struct Moved {
    int q;
    uint32_t type;
    LogState* st;
    uint64_t pos;
  };
  std::vector<Moved> moved;
  std::vector<KmdHwQueue*> barrier;
  for (int id : queues) {
    auto it = logs_of_.find(id);
    if (it == logs_of_.end()) continue;
    bool any = false;
    for (uint32_t type : {uint32_t(fence_log::kSignals), uint32_t(fence_log::kWaits)}) {
      LogState& st = it->second[type == fence_log::kWaits ? 0 : 1];
      // FirstFreeEntryIndex and WraparoundCount: one 64-bit read (AtomicWraparoundAndEntryIndex).
      const uint64_t pos = fence_log::position(cpu_.mem_read64(st.cpu_va), st.entries);
      ++log_headers_read_;
      if (pos == st.cached) continue;
      moved.push_back({id, type, &st, pos});
      any = true;
    }
    if (any) barrier.push_back(kmd_->queue(id));
    ++log_queues_scanned_;
  }
  // F17: before reading entries, the KMD's barrier on every queue whose index moved.
  if (!barrier.empty()) {
    log_barriers_ += barrier.size();
    kmd_->DxgkDdiUpdateNativeFenceLogs(barrier);
  }
  for (const Moved& m : moved) {
    LogState& st = *m.st;
    if (st.resync) {  // a recreated log: what is new in it is unknown
      lost.insert(kmd_->queue(m.q)->process);
      st.resync = false;
      st.cached = m.pos;
      continue;
    }
    if (m.pos < st.cached || m.pos - st.cached > st.entries) {
      // F18: the GPU overwrote entries not yet read (WraparoundCount moved past the cached one).
      ++log_overruns_;
      if (tracing_) {
        // "The OS can emit a flag in the trace to notify a user that events were lost": on the timeline.
        ++trace_lost_flags_;
        vcd_.slice("os.fence_trace", "events lost (log overrun)", sc_core::sc_time_stamp(), sc_core::sc_time_stamp());
      }
      if (observer.log_overrun) observer.log_overrun(m.q, m.type);
      lost.insert(kmd_->queue(m.q)->process);
      st.cached = m.pos;
      continue;
    }
    read_entries(m.q, m.type, st, m.pos, touched);
  }
}

void VidSch::read_entries(int queue, uint32_t type, LogState& st, uint64_t pos, std::vector<Logged>& touched) {
  const uint32_t n = st.entries;
  const uint64_t from = st.cached, count = pos - from;
  entry_buf_.resize(count);
  // One load per entry (48 B, under a cache line; log memory is not cached): in local memory each is a
  // read across the link.
  for (uint64_t i = 0; i < count; ++i)
    cpu_.mem_read(st.cpu_va + fence_log::entry_offset(uint32_t((from + i) % n)), &entry_buf_[i],
                  sizeof(fence_log::Entry));
  log_entries_read_ += count;
  st.cached = pos;
  const KmdHwQueue* q = kmd_->queue(queue);
  for (uint64_t i = 0; i < count; ++i) {
    const fence_log::Entry& e = entry_buf_[i];
    if (observer.log_entry_read) observer.log_entry_read(queue, type, from + i, e);
    if (type != fence_log::kSignals || e.operation_type != fence_log::kSignalExecuted) continue;
    auto it = by_local_.find({q->process, e.h_native_fence});
    if (it == by_local_.end() || it->second->destroyed) continue;
    NativeFence* f = it->second;
    // The logged value is one the fence reached: what it satisfies is satisfied (CV only grows).
    wake_satisfied(*f, e.fence_value);
    auto seen = std::find_if(touched.begin(), touched.end(), [f](const Logged& l) { return l.f == f; });
    if (seen == touched.end())
      touched.push_back({f, e.fence_value});
    else
      seen->value = std::max(seen->value, e.fence_value);
  }
}

}  // namespace gpumodel
