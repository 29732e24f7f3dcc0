// VCD waveform writer. Modules register signals ("gpu.node0.state") and record value changes with the
// simulated time they take effect, which may lie in the future (a link reserves its serialisation
// interval when a transfer is issued). Changes are kept in memory, sorted stably by time and written
// when the run ends, so the file is deterministic. When disabled, every call is a cheap no-op.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

namespace gpumodel {

class Vcd {
 public:
  using Id = int;
  static constexpr Id kNone = -1;

  bool enabled() const { return enabled_; }
  void enable() { enabled_ = true; }

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

  // Writes the file; returns false (with errno set) when it cannot be written.
  bool write(const std::string& path, const std::string& date) const;

  static uint64_t pack(const char* text);  // up to 8 characters, big-endian, NUL-padded

 private:
  struct Signal {
    std::string name;
    int width;
    uint64_t initial;
  };
  struct Change {
    uint64_t time_ps;
    Id id;
    uint64_t value;
  };
  bool enabled_ = false;
  std::vector<Signal> signals_;
  std::vector<Change> changes_;
};

}  // namespace gpumodel
