// The GTKWave save file a run with --vcd writes beside its waveform (FILE's extension replaced by .gtkw): the signals
// in groups with short titles, the view on the run's key events (Results::events) and a marker at each.
//  * markers: the primary marker at the first event the view must show; named markers A..Z at the
//    events in time order, each with its name ([markername]); at most 26 (GTKWave 3.3's named markers).
//  * view: the events the view must show, with a margin, at the zoom that fits them in kWaveWidthPx
//    pixels (GTKWave: 200 pixels show zoombase^-zoom time units, zoombase 2); [timestart] is clamped to
//    where GTKWave honours it (the view inside the dump). No event: the whole run.
//  * signals: the traced fences an event names (a lost interrupt's), else the first four; then TDR,
//    nodes, CMP, display, VidMm, link, interrupts, CPU, OS, as the VCD declares them.
// Deterministic: a function of the run's results and the VCD's declarations only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw_model/core/vcd.h"
#include "monitors/results.h"

namespace gpumodel {

// The wave pane's width the zoom is chosen for, in pixels: GTKWave 3.3.118's (GTK 3) at the file's
// [size] 1400 800, the signal pane kSignalsWidthPx wide and the tree pane closed ([sst_expanded] 0),
// measured under Xvfb (1336 less the signal pane; tests/gtkw/check_gtkwave.py asks GTKWave). A
// narrower window shows less of the view.
constexpr int kSignalsWidthPx = 236;
constexpr int kWaveWidthPx = 1100;

// Where the save file of the waveform `vcd_path` goes: the path with its extension replaced by .gtkw.
std::string gtkw_path_for(const std::string& vcd_path);

// Whether a run writes a save file beside `vcd_path`: only beside a regular file (not /dev/null).
bool writes_gtkw(const std::string& vcd_path);

// The save file's text for the run.
std::string make_gtkw(const std::string& vcd_path, const std::string& gtkw_path, const Vcd& vcd, const Results& r);

// Writes it whole or not at all; "" or why it could not be written. (Its path is checked with the
// run's other outputs before the run: app/cli_files.cpp.)
std::string write_gtkw(const std::string& gtkw_path, const std::string& vcd_path, const Vcd& vcd, const Results& r);

}  // namespace gpumodel
