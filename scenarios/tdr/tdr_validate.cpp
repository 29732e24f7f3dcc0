// The TDR scenarios' checks before elaboration (exit 2 with one message naming the key).
#include "scenarios/tdr/tdr_validate.h"

#include <sstream>

#include "kernel_stub/kmd/kmd.h"
#include "platform/platform.h"
#include "scenarios/common/fence_common.h"

namespace gpumodel {

void validate_tdr(const ParamSet& ps, const char* name) {
  Platform::validate_linked_engines(ps);
  // Regular paging alternates an eviction (workload.paging_bytes from VRAM to system memory,
  // across the link) and a zero fill in VRAM: every 2 x workload.paging_every_us the link must
  // carry one eviction's bytes, which takes at least their time at its line rate (an upper bound
  // of its payload rate; the fill may overlap, so it is not counted). Below that the paging
  // queue grows without end.
  if (const double every = ps.get_real("workload.paging_every_us"); every > 0) {
    // Every other regular paging operation is a zero fill of workload.paging_bytes: one DMA packet
    // of a COPY from the KMD's zero page per 64 KiB, which must fit in the paging node's ring.
    const uint64_t fill = Kmd::fill_packet_bytes(uint64_t(ps.get_int("workload.paging_bytes")));
    if (fill > uint64_t(ps.get_int("kmd.ring_bytes")))
      throw ConfigError(
          "workload.paging_bytes = " + std::to_string(ps.get_int("workload.paging_bytes")) +
          ": a zero fill of that size is a " + std::to_string(fill) +
          " B DMA packet, larger than the ring (kmd.ring_bytes = " + std::to_string(ps.get_int("kmd.ring_bytes")) +
          "); allowed: a larger kmd.ring_bytes, "
          "a smaller workload.paging_bytes, or workload.paging_every_us = 0 (no paging)");
    const int gen = int(ps.get_int("link.gen"));
    const double gts = gen == 3 ? 8.0 : gen == 4 ? 16.0 : 32.0;
    const double line = gts * double(ps.get_int("link.lanes")) * (128.0 / 130.0) / 8.0;  // B/ns
    const double bytes = double(ps.get_int("workload.paging_bytes"));
    const double least_us = bytes / line / 1000.0 / 2.0;
    if (every < least_us) {
      std::ostringstream m;
      m << "workload.paging_every_us = " << every << " offers more paging than the engine can do: "
        << "every other operation moves workload.paging_bytes = " << bytes << " B across the link (line "
        << "rate " << line << " B/ns), at least " << least_us << " us an operation; allowed: "
        << "workload.paging_every_us = 0 (no paging) or >= " << least_us;
      throw ConfigError(m.str());
    }
  }
  // The apps submit until workload.after_ms after the last TDR sequence ends: a run whose limit
  // comes first can only be cut.
  if (ps.get_real("workload.after_ms") >= ps.get_real("sim.limit_ms")) {
    std::ostringstream m;
    m << "workload.after_ms = " << ps.get_real("workload.after_ms")
      << " ms is not below sim.limit_ms = " << ps.get_real("sim.limit_ms")
      << " ms: the apps keep submitting that long after the TDR sequence "
      << "ends; allowed: workload.after_ms < sim.limit_ms";
    throw ConfigError(m.str());
  }
  const int64_t engines = ps.get_int("gpu.linked_engines"), per = ps.get_int("gpu.nodes") / engines;
  if (ps.get_int("workload.render_nodes") > per)
    throw ConfigError("workload.render_nodes = " + std::to_string(ps.get_int("workload.render_nodes")) +
                      " is more than the " + std::to_string(per) +
                      " nodes per engine; allowed: workload.render_nodes <= " + std::to_string(per) +
                      " (gpu.nodes / gpu.linked_engines)");
  if (ps.get_int("workload.hang_node") >= ps.get_int("workload.render_nodes"))
    throw ConfigError("workload.hang_node = " + std::to_string(ps.get_int("workload.hang_node")) +
                      " has no render context; allowed: workload.hang_node < workload.render_nodes = " +
                      std::to_string(ps.get_int("workload.render_nodes")));
  if (ps.get_enum("workload.hang") == "vidmm" &&
      (ps.get_int("workload.hang_node") != 0 || ps.get_int("workload.hang_engine") != 0))
    throw ConfigError(
        "workload.hang = vidmm hangs VidMm's own paging, which runs on node 0 of engine 0; allowed: "
        "workload.hang_node = 0 and workload.hang_engine = 0");
  if (ps.get_int("workload.hang_engine") >= engines)
    throw ConfigError("workload.hang_engine = " + std::to_string(ps.get_int("workload.hang_engine")) +
                      " names an engine the adapter lacks; allowed: workload.hang_engine < gpu.linked_engines = " +
                      std::to_string(engines));
  for (int64_t e = 0; e < engines; ++e)
    for (int64_t n = 0; n < ps.get_int("workload.render_nodes"); ++n)
      require_engine_runs(ps, name, "gpu", int(e * per + n), Op::Compute, "COMPUTE",
                          "the render work of workload.render_nodes");
  require_engine_runs(ps, name, "gpu", int(ps.get_int("workload.hang_node")), Op::Copy, "COPY",
                      "VidMm's paging operations on workload.hang_node");
  require_platform(ps, name, ps.get_int("workload.render_nodes") * engines,
                   ps.get_int("workload.render_nodes") * engines,
                   "a render context on each of workload.render_nodes nodes of every engine, each node a ring");
}

}  // namespace gpumodel
