#include "hw_model/core/tlm_check.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "hw_model/core/bus.h"

namespace gpumodel::tlm_check {

using namespace sc_core;

namespace {

uint64_t g_violations = 0;
std::string& last() {
  static std::string s;
  return s;
}

// The rules one check found broken, reported together.
class Findings {
 public:
  void add(const char* rule, const std::string& detail) {
    ++g_violations;
    if (!text_.empty()) text_ += "; ";
    text_ += std::string("[") + rule + "] " + detail;
  }
  void report(const Snapshot& s, const char* when, const tlm::tlm_generic_payload& t, const sc_time& delay) const {
    if (text_.empty()) return;
    std::string m = s.who;
    if (s.port >= 0) m += "[port " + std::to_string(s.port) + "]";
    m += s.target ? " (target, " : " (hop, ";
    m += std::string(when) + "): " + text_ + " | " + describe(t, delay);
    last() = m;
    SC_REPORT_ERROR("gpumodel/tlm", m.c_str());
  }

 private:
  static std::string describe(const tlm::tlm_generic_payload& t, const sc_time& delay) {
    const char* cmd = t.is_read() ? "READ" : t.is_write() ? "WRITE" : "IGNORE";
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s address 0x%" PRIx64
                  " data_length %u streaming_width %u byte_enables %s/%u %s, "
                  "delay %s at %s",
                  cmd, uint64_t(t.get_address()), t.get_data_length(), t.get_streaming_width(),
                  t.get_byte_enable_ptr() ? "set" : "none", t.get_byte_enable_length(), t.get_response_string().c_str(),
                  delay.to_string().c_str(), sc_time_stamp().to_string().c_str());
    return buf;
  }
  std::string text_;
};

// A write's data, summarised to see it unchanged on return without keeping a copy. FNV-1a over 64-bit
// words (then the tail bytes): every hop of a 4 KiB DMA chunk pays this twice, so it goes by words.
uint64_t hash_write_data(const tlm::tlm_generic_payload& t) {
  if (!t.is_write() || !t.get_data_ptr()) return 0;
  const unsigned char* p = t.get_data_ptr();
  const unsigned n = t.get_data_length();
  uint64_t h = 1469598103934665603ull;
  unsigned i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

Snapshot entry(const tlm::tlm_generic_payload& t, const sc_time& delay, const char* who, int port, bool target) {
  Snapshot s{who,
             port,
             target,
             t.get_command(),
             t.get_address(),
             t.get_data_ptr(),
             t.get_data_length(),
             t.get_streaming_width(),
             t.get_byte_enable_ptr(),
             t.get_byte_enable_length(),
             hash_write_data(t),
             sc_time_stamp() + delay};
  Findings f;
  if (sc_get_curr_simcontext()->get_curr_proc_info()->kind == SC_METHOD_PROC_)
    f.add("process", std::string("called from the method process ") + sc_get_current_process_b()->name() +
                         ": b_transport may call wait, so it is called from a thread (IEEE 1666-2011, 11.1.1.4 b)");
  const tlm::tlm_command c = t.get_command();
  if (target ? c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND && c != tlm::TLM_IGNORE_COMMAND
             : c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND)
    f.add("command", target ? "not READ, WRITE or IGNORE" : "not READ or WRITE (the model issues no IGNORE)");
  if (!t.get_data_ptr()) f.add("data_ptr", "null");
  if (t.get_data_length() == 0) f.add("data_length", "zero");
  if (t.get_streaming_width() == 0)
    f.add("streaming_width", "zero");
  else if (!target && t.get_streaming_width() != t.get_data_length())
    f.add("streaming_width", "differs from the data length (the model never streams)");
  if (const unsigned char* be = t.get_byte_enable_ptr()) {
    if (t.get_byte_enable_length() == 0) {
      f.add("byte_enable_length", "zero with a byte-enable array");
    } else {
      for (unsigned i = 0; i < t.get_byte_enable_length(); ++i) {
        if (be[i] != TLM_BYTE_DISABLED && be[i] != TLM_BYTE_ENABLED) {
          f.add("byte_enable_value", "byte enable " + std::to_string(i) + " is neither 0x00 nor 0xff");
          break;
        }
      }
    }
  }
  if (t.is_dmi_allowed()) f.add("dmi_allowed", "set on entry");
  if (t.get_gp_option() != tlm::TLM_MIN_PAYLOAD) f.add("gp_option", "not TLM_MIN_PAYLOAD");
  if (t.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
    f.add("response_status", "not TLM_INCOMPLETE_RESPONSE on entry");
  f.report(s, "entry", t, delay);
  return s;
}

// The return rules every callee keeps; adds to `f`.
void returned(const Snapshot& s, const tlm::tlm_generic_payload& t, const sc_time& delay, Findings& f) {
  const auto* fc = t.get_extension<PostedFlowControl>();
  const bool refused = fc && fc->refused;
  if (t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE && !(refused && !s.target && t.is_write()))
    f.add("response_status", "still TLM_INCOMPLETE_RESPONSE: the target did not set it");
  if (refused && t.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
    f.add("refused_write", "marked refused but answered " + t.get_response_string());
  std::string changed;
  auto note = [&changed](bool differs, const char* what) {
    if (differs) changed += changed.empty() ? what : std::string(", ") + what;
  };
  note(t.get_command() != s.command, "command");
  note(t.get_address() != s.address, "address");
  note(t.get_data_ptr() != s.data, "data pointer");
  note(t.get_data_length() != s.length, "data length");
  note(t.get_streaming_width() != s.streaming_width, "streaming width");
  note(t.get_byte_enable_ptr() != s.byte_enables, "byte-enable pointer");
  note(t.get_byte_enable_length() != s.byte_enable_length, "byte-enable length");
  note(hash_write_data(t) != s.write_data_hash, "write data");
  if (!changed.empty()) f.add("unchanged", changed + " modified by the callee");
  if (t.is_dmi_allowed()) f.add("dmi_allowed", "set by a target, but none here offers DMI");
  const sc_time now_local = sc_time_stamp() + delay;
  if (now_local < s.local_time)
    f.add("time",
          "time went backwards: returned at " + now_local.to_string() + ", called at " + s.local_time.to_string());
}

}  // namespace

Snapshot before_call(const tlm::tlm_generic_payload& t, const sc_time& delay, const char* who, int port) {
  return entry(t, delay, who, port, false);
}

void after_call(const Snapshot& s, const tlm::tlm_generic_payload& t, const sc_time& delay) {
  Findings f;
  returned(s, t, delay, f);
  f.report(s, "return", t, delay);
}

Snapshot target_entry(const tlm::tlm_generic_payload& t, const sc_time& delay, const char* who) {
  return entry(t, delay, who, -1, true);
}

void target_exit(const Snapshot& s, const tlm::tlm_generic_payload& t, const sc_time& delay, TargetCaps caps) {
  Findings f;
  returned(s, t, delay, f);
  if (!caps.byte_enables && t.get_byte_enable_ptr() && t.is_response_ok())
    f.add("byte_enables_unsupported", "byte enables answered OK by a target that does not implement them");
  if (!caps.streaming && t.get_streaming_width() < t.get_data_length() && t.is_response_ok())
    f.add("streaming_unsupported", "a streaming transaction answered OK by a target that does not stream");
  f.report(s, "return", t, delay);
}

uint64_t violations() { return g_violations; }
const std::string& last_report() { return last(); }

}  // namespace gpumodel::tlm_check
