// What a run reports: metrics, scenario checks, monitor verdicts, bug check, host figures.
// Everything but `host` is a function of scenario, parameters and seed only.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumodel {

// A key event of the run, for the waveform's save file (markers, the view) and the results file's
// "events": when it happened, in the VCD's unit (ps), and whether the save file's view must show it.
// `trace`: a VCD scope the event concerns ("fences.f12"), whose signals the save file shows.
struct RunEvent {
  std::string name;
  uint64_t ps = 0;
  bool in_view = true;
  std::string trace;
};

struct Results {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  std::map<std::string, uint64_t> monitors;       // name -> violations
  std::map<std::string, bool> monitors_expected;  // a fault-injection scenario expects these
  std::vector<std::string> failures;              // scenario checks that failed, model faults
  nlohmann::json bugcheck = nullptr;              // {"code", "params"} when the OS would bug check
  uint32_t bugcheck_expected = 0;                 // a fault-injection scenario expects this bug check
  nlohmann::ordered_json host = nlohmann::ordered_json::object();
  // Metrics with no value, each with the reason: the event they time never happened (a reset that never
  // returned). Never reported as 0.
  nlohmann::ordered_json absent = nlohmann::ordered_json::object();
  // Why the run is incomplete (cut by sim.limit_ms with work left): its metrics are what was measured
  // until then. Empty: the run ended on its own.
  std::string incomplete;
  // An output file the run could not write (the CLI exits 2); not part of the verdict. Reported, not
  // thrown: an exception after sc_start unwinds across SystemC's coroutine stacks, which ASan flags.
  std::string output_error;
  // The run's key events, in the order they happened (scenarios and monitors add them; see RunEvent).
  std::vector<RunEvent> events;

  void event(const std::string& name, uint64_t ps, bool in_view = true, const std::string& trace = "") {
    events.push_back({name, ps, in_view, trace});
  }
  // The events as the results file holds them: [{"name", "ps", "in_view"[, "trace"]}], sorted by time.
  nlohmann::ordered_json events_json() const;

  template <typename T>
  void metric(const std::string& name, T v) {
    metrics[name] = v;
  }
  void metric_absent(const std::string& name, const std::string& why) {
    metrics.erase(name);
    absent[name] = why;
  }
  bool check(bool ok, const std::string& what) {
    if (!ok) failures.push_back(what);
    return ok;
  }
  void bug_check(uint32_t code, const std::vector<uint64_t>& params);
  bool pass() const { return why_failed().empty(); }
  // The run bug checked with the code the scenario expects (its finish still runs).
  bool expected_bugcheck() const {
    return bugcheck_expected != 0 && !bugcheck.is_null() && bugcheck["code"].get<uint32_t>() == bugcheck_expected;
  }
  // Every reason the verdict is fail: failed checks and faults, monitors that fired (or, expected to
  // fire, did not), a bug check. Empty: pass.
  std::vector<std::string> why_failed() const;
};

}  // namespace gpumodel
