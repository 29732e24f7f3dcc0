// A schema check of a Trace Event Format document (what --timeline writes, what Perfetto's UI and
// chrome://tracing read): the rules those viewers rely on, so a broken file fails a test instead of
// opening as a silently wrong picture.
//  * the document is {"traceEvents": [...]} (or the bare array); every event an object with a known
//    phase (B E X C M s f i I), an integer pid, and, but for metadata, a number ts >= 0;
//  * B/E: per (pid, tid) a stack: an E closes the newest open B of its track (same name when named);
//    none left open at the end; X has a dur >= 0; C carries numeric args;
//  * per (pid, tid) timestamps never go backwards in file order (out-of-order events);
//  * flows: every s has an id and exactly one f with that id, no earlier than it, and every f an s;
//  * thread_name/process_name metadata name their track.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumodel {

// The problems found, each naming the event's index; empty: the document is valid.
std::vector<std::string> check_trace_events(const nlohmann::json& doc);

}  // namespace gpumodel
