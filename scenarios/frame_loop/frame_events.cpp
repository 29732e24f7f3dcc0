// The frame loop's key events for the waveform (frame_loop and presentmon_replay): see frame_loop.h.
#include <algorithm>
#include <cmath>

#include "scenarios/frame_loop/frame_loop.h"

namespace gpumodel {

void frame_events(Results& r, const std::vector<FrameTimes>& ft) {
  // The second frame: early in the run, but not the one that starts the loop (or the only frame).
  const size_t n = std::min<size_t>(2, ft.empty() ? 0 : ft.size() - 1);
  if (n == 0 || ft[n].present <= 0 || !ft[n].displayed) return;  // never presented or never on screen
  const FrameTimes& f = ft[n];
  auto ps = [](double ns) { return uint64_t(std::llround(ns * 1000)); };
  r.event("present", ps(f.present));  // the app's Present() call
  // Its GPU work done: the last TIMESTAMP of its queues (none if they were not read: a run cut short).
  if (f.gpu_end) r.event("render done", ps(*f.gpu_end));
  if (f.flip_programmed > 0) r.event("flip", ps(f.flip_programmed));  // the present thread programs the flip
  r.event("on screen", ps(*f.displayed));  // the vblank its flip latched at (an immediate flip: the tear)
}

}  // namespace gpumodel
