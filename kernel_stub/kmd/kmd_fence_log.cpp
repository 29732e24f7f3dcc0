// Native fence logs on the driver side (Native GPU fence object 'Native fence log buffer design'): where the
// OS's logs go (DxgkDdiSetNativeFenceLogBuffer), the barrier the OS asks for before it reads them
// (DxgkDdiUpdateNativeFenceLogs), and the UMD's part of a user-mode submission: the log instruction after
// every native fence signal and wait.
#include "kernel_stub/kmd/kmd.h"

namespace gpumodel {

void Kmd::log_fence_ops(KmdHwQueue* q, const PacketWriter& in, PacketWriter& out) {
  // "Immediately after UMD inserts a native fence wait or signal instruction in the command list, it also
  // inserts a command instructing the GPU to write a payload at a particular entry into the log buffer":
  // the UMD that writes this queue's ring gives every plain SIGNAL and WAIT its log payload: the queue's
  // next entry in its signal or wait log and the fence's D3DKMT handle in the queue's process. Logging is
  // mandatory; a queue the OS gave no logs (vidsch.native_fence_logs = false) runs them unlogged. A
  // packet that already carries a payload keeps it, and the UMD's count moves past it.
  const auto& dw = in.dwords();
  if (!q->log_set[0] && !q->log_set[1]) {
    out.append(in);
    return;
  }
  for (size_t i = 0; i < dw.size();) {
    const DecodedPacket d = decode_packet(dw.data() + i, dw.size() - i);
    if (!d.ok()) {  // malformed (a test's or the fuzzer's stream): the rest as it is, for the engine to fault on
      for (; i < dw.size(); ++i) out.raw(dw[i]);
      break;
    }
    const bool fence_op = d.op == Op::Signal || d.op == Op::Wait;
    const int type = d.op == Op::Wait ? 0 : 1;  // the log: waits, signals
    if (!fence_op || !q->log_set[type]) {
      for (uint32_t k = 0; k < d.dwords; ++k) out.raw(dw[i + k]);
    } else if (d.logged) {
      for (uint32_t k = 0; k < d.dwords; ++k) out.raw(dw[i + k]);
      q->log_seq[type] = std::max<uint64_t>(q->log_seq[type], uint32_t(d.log) + 1ull);
    } else {
      const FenceVa f{uint32_t(d.arg[0]), d.arg[2], d.arg[3]};
      uint32_t handle = 0;
      auto it = local_of_.find({f.slot, q->process});
      if (it != local_of_.end()) handle = opened_.at(it->second).d3dkmt;
      const uint32_t seq = uint32_t(q->log_seq[type]++);
      if (d.op == Op::Signal)
        out.signal_logged(f, d.arg[1], seq, handle);
      else
        out.wait_logged(f, d.arg[1], seq, handle);
      // FENCE_SIGNAL_QUEUED / FENCE_WAIT_QUEUED: the runtime's native fence-queued event, with its CPU time.
      sch_.FenceQueued(q->id, d.op == Op::Signal ? fence_log::kSignals : fence_log::kWaits, handle, d.arg[1]);
    }
    i += d.dwords;
  }
}

void Kmd::DxgkDdiSetNativeFenceLogBuffer(const DxgkSetNativeFenceLogBufferArgs& a) {
  using namespace regs;
  if (!a.hw_queue) return;
  const int q = a.hw_queue->id;
  // This hardware's engine writes signal entries in the process's space; its CMP writes wait entries
  // (it unblocks the queue) in the system process's.
  a.hw_queue->log_set[a.log_type == fence_log::kWaits ? 0 : 1] = a.number_of_entries != 0;
  if (a.log_type == fence_log::kSignals)
    cpu_.mmio_write64(queue_reg(q, kQSignalLog), a.log_buffer_gpu_va);
  else
    cpu_.mmio_write64(queue_reg(q, kQWaitLog), a.log_buffer_system_process_gpu_va);
  cpu_.mmio_write32(queue_reg(q, kQLogEntries), a.number_of_entries);
}

void Kmd::DxgkDdiUpdateNativeFenceLogs(const std::vector<KmdHwQueue*>& queues) {
  if (!log_barrier_) return;
  for (KmdHwQueue* q : queues)  // a read-to-flush per queue: it completes once the log writes are visible
    cpu_.mmio_read32(queue_reg(q->id, regs::kQLogFlush));
}

}  // namespace gpumodel
