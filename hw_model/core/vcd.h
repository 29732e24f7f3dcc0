// VCD waveform writer. Modules register signals ("gpu.node0.state") and record value changes with the
// simulated time they take effect, which may lie in the future (a link reserves its serialisation
// interval when a transfer is issued) or the past (a monitor marks when a lost waiter's value was
// reached). Changes are sorted stably by time and written when the run ends, so the file is
// deterministic; they wait on disk, not in memory (spill.h: an external merge sort), so a run of any
// length records in the same few tens of MB. When disabled, every call is a cheap no-op.
//
// The same record makes the timeline (--timeline, write_timeline): a Trace Event Format JSON file that
// the offline viewers open: the Chrome DevTools Performance panel ("Load profile"), Perfetto's UI and
// speedscope. Every text signal is a track of slices (a state while it holds), every 1-bit signal a
// track of slices while it is 1, every other signal a counter. Models add what a waveform cannot hold:
// labelled slices on tracks of their own (an engine's packets, "SIGNAL fence 3 value 7"), and fence
// flows, an arrow from a fence signal to the wake or unblock it caused. Those are recorded only when
// the timeline is on (timeline()). The timeline's events wait on disk too; only a fence's flow begins
// that a later wait could still take stay in memory (24 bytes a signal that raised its fence's highest
// value yet).
//
// The file's form is the one those viewers read without loss: every slice a complete event ("X", its
// duration known when it ends), never a begin/end pair (DevTools matches those with one stack for the
// whole file, so tracks that interleave in time mismatch), or an instant event ("I") when it has no
// length; slices of one track nested or apart, never overlapping, in the arithmetic the viewers use
// (timestamps on a 2^-20 us grid, where their doubles are exact; see us() in vcd.cpp); each flow's two
// ends ("s", and "f" with "bp":"e") at a "fence" instant of their own track and time, the event DevTools
// binds a flow event to (same track, timestamp and category) and the enclosing slice Perfetto binds it
// to. Events come in time order (DevTools ignores a flow's end that comes before its start).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw_model/core/spill.h"

#include <systemc>

namespace gpumodel {

// The key of a fence's flows on the timeline: its adapter and CMP slot.
inline std::string fence_flow_key(const std::string& adapter, uint32_t slot) {
  return adapter + " fence " + std::to_string(slot);
}

class Vcd {
 public:
  using Id = int;
  static constexpr Id kNone = -1;
  // The record's memory: its changes and its timeline events each wait on disk past this many bytes.
  static constexpr size_t kSpillBytes = size_t(32) << 20;

  explicit Vcd(size_t spill_bytes = kSpillBytes) : changes_(spill_bytes), events_(spill_bytes) {}
  // What the record holds in memory now, in bytes (the buffers waiting to spill and the flow begins).
  size_t held_bytes() const;

  bool enabled() const { return enabled_; }
  void enable() { enabled_ = true; }
  bool timeline() const { return timeline_; }
  void enable_timeline() { enabled_ = timeline_ = true; }

  // A vector of `width` bits (1..64). `ascii` marks a signal that holds up to width/8 characters,
  // shown as text by the committed GTKWave save files.
  Id add(const std::string& name, int width, uint64_t initial = 0);
  Id add_ascii(const std::string& name, const std::string& initial);
  // A level that changes too often to read as numbers at a frame's zoom (the display's scan line, its
  // FIFO): save files draw it as an analog step.
  Id add_analog(const std::string& name, int width, uint64_t initial = 0);

  void set(Id id, uint64_t value, const sc_core::sc_time& at) {
    if (id != kNone) changes_.push({at.value(), next_change_++, id, value});
  }
  void set(Id id, uint64_t value) { set(id, value, sc_core::sc_time_stamp()); }
  void set_ascii(Id id, const char* text, const sc_core::sc_time& at) {
    if (id != kNone) set(id, pack(text), at);
  }
  void set_ascii(Id id, const char* text) { set_ascii(id, text, sc_core::sc_time_stamp()); }

  // Timeline only (no-ops unless timeline()): a slice labelled `label` on track `track` (a name like a
  // signal's; slices of one track must not overlap), and the two ends of fence flows. A flow end (a CPU
  // waiter woken, a queue unblocked on `key` reaching `value`) is drawn from the earliest flow begin of
  // the same key with a value >= `value` (the signal that satisfied it), if it came earlier (DevTools
  // cannot draw a flow whose ends are at one time: it keys a flow's ends by their time).
  void slice(const std::string& track, const std::string& label, const sc_core::sc_time& begin,
             const sc_core::sc_time& end) {
    if (timeline_) add_slice(kSliceEvents, "model", track, label, begin.value(), end.value());
  }
  void flow_begin(const std::string& key, uint64_t value, const std::string& track, const sc_core::sc_time& at) {
    if (timeline_) add_flow_begin(key, value, track, at.value());
  }
  void flow_end(const std::string& key, uint64_t value, const std::string& track, const sc_core::sc_time& at) {
    if (timeline_) add_flow_end(key, value, track, at.value());
  }

  // Writes the file whole or not at all (hw_model/core/output_file.h); returns "" or why it could not be
  // written (a file that was there stays as it was). `end_ps`: when the run ended; a run that went on
  // after its last change ends the dump with that time (a timestamp with no change), so the dump spans
  // the run and GTKWave shows the signals holding their values to its end.
  std::string write(const std::string& path, const std::string& date, uint64_t end_ps = 0);
  // Writes the timeline, every slice closed at `end`, the same way; "" or why not.
  // Once per recording: the signals' events join the models' on disk.
  std::string write_timeline(const std::string& path, const sc_core::sc_time& end);

  static uint64_t pack(const char* text);  // up to 8 characters, big-endian, NUL-padded

  // The signals registered, in order: full name ("gpu.node0.state"), width, whether it holds text or is
  // best drawn as an analog step.
  struct SignalInfo {
    std::string name;
    int width;
    bool ascii;
    bool analog;
  };
  std::vector<SignalInfo> signal_list() const;
  // The last timestamp write() wrote (GTKWave's end of the dump); 0 before it.
  uint64_t last_time_ps() const { return last_time_ps_; }

 private:
  // write_timeline's steps: the signals' slices and counters, the fences' flows (once per recording),
  // then the tracks numbered and the file written.
  struct TrackLayout {
    std::vector<uint32_t> order;         // the used tracks, in the order they are numbered
    std::vector<int> tid, pid_of_track;  // per track; tids follow the pids (no tid is a pid)
    std::vector<std::string> pids;       // process names, pid - 1
  };
  void timeline_signals(uint64_t end);
  void timeline_flows();
  TrackLayout layout_tracks() const;
  void write_trace_events(std::ostream& os, const TrackLayout& l);

  struct Signal {
    std::string name;
    int width;
    uint64_t initial;
    bool ascii = false;
    bool analog = false;
  };
  struct Change {  // ordered by time, then by the order they were recorded
    uint64_t time_ps, seq;
    Id id;
    uint64_t value;
    bool operator<(const Change& o) const { return time_ps != o.time_ps ? time_ps < o.time_ps : seq < o.seq; }
    size_t memory() const { return sizeof(Change); }
    void encode(std::string& out) const { put(out, *this); }
    bool decode(RunReader& in) { return in.get(*this); }
  };
  // A timeline event: ordered by time; at one time the slices, the longer first (a parent before what
  // it holds), then counters, then flows; then the signals' events before the models' slices before the
  // flows (their `source`), each in the order made. Its pid and tid are known only at the end: it names
  // its track by number.
  enum Source : uint8_t { kSignalEvents, kSliceEvents, kFlowEvents };
  enum Rank : uint8_t { kSlice, kCounter, kFlow };
  struct Event {
    uint64_t ts = 0, dur = 0, seq = 0;  // dur: a slice's, in picoseconds
    uint32_t track = 0;
    uint8_t rank = 0, source = 0;
    char ph = 0;
    std::string name, tail;  // name JSON-quoted; tail: what follows the timestamp (and a slice's duration)
    bool operator<(const Event& o) const {
      if (ts != o.ts) return ts < o.ts;
      if (rank != o.rank) return rank < o.rank;
      if (dur != o.dur) return dur > o.dur;
      if (source != o.source) return source < o.source;
      return seq < o.seq;
    }
    size_t memory() const { return sizeof(Event) + name.capacity() + tail.capacity(); }
    void encode(std::string& out) const;
    bool decode(RunReader& in);
  };
  // A track, numbered at the end in the order of its first use: signals (registration order), then the
  // models' slices, then flows.
  struct Track {
    std::string name;
    uint8_t source;
    uint64_t first;
  };
  struct FlowBegin {
    uint64_t at, value;
    uint32_t track;
    bool marked;  // its instant event written (once, for the first flow drawn from it)
  };
  struct FlowEnd {
    uint32_t key, track;
    uint64_t value, at;
  };

  uint32_t track(const std::string& name, Source source, uint64_t seq);
  void add_event(Source source, uint64_t ts, Rank rank, char ph, const std::string& name, uint32_t track,
                 std::string tail, uint64_t dur = 0);
  // A complete event of category `cat` on a track (an instant event when it has no length).
  void add_slice(Source source, const char* cat, uint32_t track, const std::string& label, uint64_t b, uint64_t e);
  void add_slice(Source source, const char* cat, const std::string& track, const std::string& label, uint64_t b,
                 uint64_t e);
  void add_flow_begin(const std::string& key, uint64_t value, const std::string& track, uint64_t at);
  void add_flow_end(const std::string& key, uint64_t value, const std::string& track, uint64_t at);
  template <class F>
  void for_each_time(F f);  // the changes, a timestamp at a time, only the last value of a signal counting

  bool enabled_ = false, timeline_ = false, timeline_written_ = false;
  std::vector<Signal> signals_;
  std::vector<uint32_t> signal_track_;
  SpillSorter<Change> changes_;
  uint64_t next_change_ = 0, last_time_ps_ = 0;
  SpillSorter<Event> events_;
  uint64_t next_event_[3] = {0, 0, 0};
  std::vector<Track> tracks_;
  std::unordered_map<std::string, uint32_t> track_of_;
  // Flows: per key, the begins a later end could take (the earliest with a value at least the end's):
  // sorted by time, values strictly rising. The ends wait on disk, in the order they came.
  std::unordered_map<std::string, uint32_t> key_of_;
  std::vector<std::string> keys_;
  std::vector<std::vector<FlowBegin>> begins_;
  std::unique_ptr<TempFile> ends_;
  uint64_t end_count_ = 0;
};

}  // namespace gpumodel
