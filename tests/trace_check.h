// A schema check of the Trace Event Format document --timeline writes: the rules the offline viewers
// (the Chrome DevTools Performance panel's trace engine, Perfetto's UI, speedscope, DevTools' older
// TracingModel) rely on to show every track, slice and flow, so a file they would open as a silently
// wrong picture fails a test instead.
//  * the document is {"traceEvents": [...]} (or the bare array); every event an object with a phase
//    of X, I, C, M, s or f (never B/E: DevTools matches those with one stack for the whole file, so
//    tracks that interleave in time mismatch), a name, integer pid and tid, and, but for metadata, a
//    number ts >= 0; per (pid, tid) timestamps never go backwards in file order;
//  * every event has a category (cat; metadata "__metadata"), and X, I, s and f have args (an object,
//    empty or not), as DevTools' older parser requires;
//  * X has a dur > 0 (a zero-length slice is an instant, I with "s":"t": speedscope cannot place a
//    zero-length X among the slices at its time); the X slices of one track are nested or apart, never
//    overlapping, in DevTools' arithmetic (end = ts + dur in doubles; a slice that starts inside
//    another and ends after it is dropped), in Perfetto's (ts and dur each truncated to whole
//    nanoseconds) and in speedscope's (each time less the track's first slice's, then ts + dur);
//  * C carries numeric args;
//  * flows: every s has an id no other s has, and exactly one f of its category, name and id, later
//    in the file and later in time (DevTools ignores an f before its s, and keys a flow's ends by
//    time: two ends at one time draw nothing); the f binds to its enclosing slice ("bp":"e"); each
//    end lies on an X or I of its track, timestamp and category (DevTools binds a flow event to that
//    event; Perfetto to the slice enclosing it);
//  * thread_name/process_name metadata name every track and process; no tid is a pid and a tid
//    belongs to one process (Perfetto takes thread ids as system-wide and a tid equal to a pid for
//    that process's main thread).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumodel {

// The problems found, each naming the event's index; empty: the document is valid.
std::vector<std::string> check_trace_events(const nlohmann::json& doc);

}  // namespace gpumodel
