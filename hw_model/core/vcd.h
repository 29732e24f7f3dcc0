// VCD waveform writer. Modules register signals ("gpu.node0.state") and record value changes with the
// simulated time they take effect, which may lie in the future (a link reserves its serialisation
// interval when a transfer is issued). Changes are kept in memory, sorted stably by time and written
// when the run ends, so the file is deterministic. When disabled, every call is a cheap no-op.
//
// The same record makes the timeline (--timeline, write_timeline): a Trace Event Format JSON file that
// Perfetto's UI and chrome://tracing open. Every text signal is a track of slices (a state while it
// holds), every 1-bit signal a track of slices while it is 1, every other signal a counter. Models add
// what a waveform cannot hold: labelled slices on tracks of their own (an engine's packets, "SIGNAL
// fence 3 value 7"), and fence flows, an arrow from a fence signal to the wake or unblock it caused.
// Those are recorded only when the timeline is on (timeline()).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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

  bool enabled() const { return enabled_; }
  void enable() { enabled_ = true; }
  bool timeline() const { return timeline_; }
  void enable_timeline() { enabled_ = timeline_ = true; }

  // A vector of `width` bits (1..64). `ascii` marks a signal that holds up to width/8 characters,
  // shown as text by the committed GTKWave save files.
  Id add(const std::string& name, int width, uint64_t initial = 0);
  Id add_ascii(const std::string& name, const std::string& initial);

  void set(Id id, uint64_t value, const sc_core::sc_time& at) {
    if (id != kNone) changes_.push_back({at.value(), id, value});
  }
  void set(Id id, uint64_t value) { set(id, value, sc_core::sc_time_stamp()); }
  void set_ascii(Id id, const char* text, const sc_core::sc_time& at) {
    if (id != kNone) set(id, pack(text), at);
  }
  void set_ascii(Id id, const char* text) { set_ascii(id, text, sc_core::sc_time_stamp()); }

  // Timeline only (no-ops unless timeline()): a slice labelled `label` on track `track` (a name like a
  // signal's; slices of one track must not overlap), and the two ends of fence flows. A flow end (a CPU
  // waiter woken, a queue unblocked on `key` reaching `value`) is drawn from the earliest flow begin of
  // the same key with a value >= `value` (the signal that satisfied it), if one came no later.
  void slice(const std::string& track, const std::string& label, const sc_core::sc_time& begin,
             const sc_core::sc_time& end) {
    if (timeline_) slices_.push_back({track, label, begin.value(), end.value()});
  }
  void flow_begin(const std::string& key, uint64_t value, const std::string& track, const sc_core::sc_time& at) {
    if (timeline_) flows_.push_back({key, value, track, at.value(), true});
  }
  void flow_end(const std::string& key, uint64_t value, const std::string& track, const sc_core::sc_time& at) {
    if (timeline_) flows_.push_back({key, value, track, at.value(), false});
  }

  // Writes the file; returns false (with errno set) when it cannot be written.
  bool write(const std::string& path, const std::string& date) const;
  // Writes the timeline, every slice closed at `end`; false (with errno set) when it cannot be written.
  bool write_timeline(const std::string& path, const sc_core::sc_time& end) const;

  static uint64_t pack(const char* text);  // up to 8 characters, big-endian, NUL-padded

 private:
  struct Signal {
    std::string name;
    int width;
    uint64_t initial;
    bool ascii = false;
  };
  struct Slice {
    std::string track, label;
    uint64_t begin_ps, end_ps;
  };
  struct Flow {
    std::string key;
    uint64_t value;
    std::string track;
    uint64_t at_ps;
    bool begin;
  };
  struct Change {
    uint64_t time_ps;
    Id id;
    uint64_t value;
  };
  bool enabled_ = false, timeline_ = false;
  std::vector<Slice> slices_;
  std::vector<Flow> flows_;
  std::vector<Signal> signals_;
  std::vector<Change> changes_;
};

}  // namespace gpumodel
