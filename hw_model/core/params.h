// Parameter registry: every tunable number of the model, with unit, allowed range and source.
// Values come from the scenario file and `--section.key=value` overrides; anything unknown or out of
// range is a ConfigError (the CLI turns it into exit code 2).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

namespace gpumodel {

// Input as a message shows it: cut after 200 characters, with the whole length, so a 20 MB line does
// not come back as a 20 MB message.
std::string echo_input(const std::string& text);
// The one grammar of numbers (parameters, --seed): an integer is decimal without a leading zero, or
// 0x.. hexadecimal, with a '-' where negatives are allowed; a real is decimal: an optional '-', digits
// without a leading zero, an optional fraction and exponent (12, 0.5, 2.5e-3), no hexadecimal, no
// infinity or NaN, no negative zero. Returns "" when `text` follows it, else what is wrong.
std::string integer_grammar(const std::string& text);
std::string real_grammar(const std::string& text);

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// NamedOrForm: one of `choices` or a text of a form (a display mode: a named mode or WxH@R).
enum class ParamKind { Int, Real, Bool, Enum, Path, Text, NamedOrForm };

// A number as messages and --list-params print it (12 significant digits, no trailing zeros).
std::string format_number(double v);

struct ParamSpec {
  std::string name;  // "section.key"
  ParamKind kind = ParamKind::Int;
  std::string default_value;         // as written in a scenario file
  std::string unit;                  // "ns", "bytes", "" ...
  double min = 0, max = 0;           // inclusive range for Int and Real
  std::vector<std::string> choices;  // Enum values, or the only allowed Int values when non-empty
  std::string source;                // where the default comes from (docs/calibration.md row, standard, derivation)
  // NamedOrForm: what the form is (for `allowed`), a check of a text that is not a choice ("" when it is
  // of the form, else what is wrong with it), and legal values of the form a sweep tries beside the choices.
  std::string form;
  std::function<std::string(const std::string&)> accept;
  std::vector<std::string> form_samples;
  std::vector<std::string> owners;  // empty for the platform, else the scenarios that declare it
  // A scenario sharing the key with its own default, source or range: scenario -> what it declared.
  struct Variant {
    std::string default_value, source;
    double min = 0, max = 0;
    std::vector<std::string> choices;
  };
  std::map<std::string, Variant> variants;

  std::string allowed() const;  // human-readable description of what is allowed
  // The key as `scenario` declared it: its default, source and range where it declared its own.
  ParamSpec as_seen_by(const std::string& scenario) const;
};

class ParamSet {
 public:
  // Declaration (done once, by every module's declare_params and by the scenario drivers).
  void declare(ParamSpec spec);
  void declare_int(const std::string& name, int64_t def, const std::string& unit, int64_t min, int64_t max,
                   const std::string& source, const std::string& owner = "");
  void declare_int_choices(const std::string& name, int64_t def, const std::string& unit,
                           const std::vector<int64_t>& choices, const std::string& source,
                           const std::string& owner = "");
  void declare_real(const std::string& name, double def, const std::string& unit, double min, double max,
                    const std::string& source, const std::string& owner = "");
  void declare_bool(const std::string& name, bool def, const std::string& source, const std::string& owner = "");
  // A file's path. Set in a scenario file, a relative path is taken from that file's folder; on the
  // command line, from the working directory. Its file is read by whoever uses it (exit 2 if it cannot be).
  void declare_path(const std::string& name, const std::string& def, const std::string& source,
                    const std::string& owner = "");
  const std::string& get_path(const std::string& name) const;
  // Free text (a name), any printable characters; "" allowed.
  void declare_text(const std::string& name, const std::string& def, const std::string& source,
                    const std::string& owner = "");
  const std::string& get_text(const std::string& name) const;
  void declare_enum(const std::string& name, const std::string& def, const std::vector<std::string>& choices,
                    const std::string& source, const std::string& owner = "");
  // A named value (`choices`) or a text of a form that `accept` checks; read with get_enum.
  void declare_named_or_form(const std::string& name, const std::string& def, const std::vector<std::string>& choices,
                             const std::string& form, std::function<std::string(const std::string&)> accept,
                             const std::vector<std::string>& form_samples, const std::string& source,
                             const std::string& owner = "");

  // Gives every key the default of `scenario` where that scenario declared its own; from then on,
  // values are checked against that scenario's ranges.
  void apply_scenario_defaults(const std::string& scenario);

  // Per-instance keys: `<adapter>.<class><N>.<key>` (gpu.node1.reset_ns) gives one instance its own
  // value of the class key `<class>.<key>` (node.reset_ns), with the class key's kind, unit and range;
  // `parent_keys` are the adapter's keys an instance may override as well (gpu.node1.engine_clock_mhz
  // before gpu.engine_clock_mhz). Which instances exist is the platform's to say (check_instances).
  void declare_instances(const std::string& cls, const std::vector<std::string>& parent_keys = {});
  // The class key an instance key stands for ("" when `name` is not an instance key).
  std::string class_key_of(const std::string& name) const;
  // How instance keys are formed, for --list-params.
  std::string instance_help() const;
  // Refuses a set instance key whose instance is not among `existing` ("gpu.node0", ...).
  void check_instances(const std::vector<std::string>& existing) const;

  // A setting's name in the documents (`documented`: "TdrDelay", as the registry spells it, and where:
  // "the registry's TdrDelay") stands for `key`, for the messages that suggest keys.
  void declare_documented_name(const std::string& name, const std::string& where, const std::string& key);
  // The documented name a word is (case aside; a section before it, "vidsch.tdrdelay", or leading dashes
  // do not matter): {where, key}, or {"", ""}.
  std::pair<std::string, std::string> documented_as(const std::string& word) const;

  bool known(const std::string& name) const { return specs_.count(name) != 0 || !class_key_of(name).empty(); }
  // An instance key's spec is its class key's.
  const ParamSpec& spec(const std::string& name) const;
  const std::map<std::string, ParamSpec>& specs() const { return specs_; }

  // Set a value from text; `origin` names where it came from for the error message.
  void set(const std::string& name, const std::string& text, const std::string& origin);
  // A platform file's value (platforms/NAME.ini): checked as `set` checks one, it replaces the built-in
  // default but is no value the user set (was_set stays false), so an implied key and a check that
  // names what the user set treat it as the platform's default. A platform key only (no instance key).
  void set_platform_default(const std::string& name, const std::string& text, const std::string& origin);
  // Whether the user gave the key a value (scenario file, command line), not only its default.
  bool was_set(const std::string& name) const { return set_keys_.count(name) != 0; }
  const std::set<std::string>& set_keys() const { return set_keys_; }

  int64_t get_int(const std::string& name) const;
  double get_real(const std::string& name) const;  // Int parameters convert
  bool get_bool(const std::string& name) const;
  const std::string& get_enum(const std::string& name) const;
  sc_core::sc_time get_ns(const std::string& name) const { return sc_core::sc_time(get_real(name), sc_core::SC_NS); }
  // The value for one instance ("gpu.node1"): its own key where the user set one, else `name`, the
  // class key (node.reset_ns) or the adapter's (gpu.engine_clock_mhz).
  int64_t get_int(const std::string& instance, const std::string& name) const;
  double get_real(const std::string& instance, const std::string& name) const;
  bool get_bool(const std::string& instance, const std::string& name) const;
  const std::string& get_enum(const std::string& instance, const std::string& name) const;
  sc_core::sc_time get_ns(const std::string& instance, const std::string& name) const {
    return sc_core::sc_time(get_real(instance, name), sc_core::SC_NS);
  }

  // Every parameter visible to `scenario` (platform ones and that scenario's own), as typed JSON.
  nlohmann::json effective(const std::string& scenario) const;
  bool visible_to(const ParamSpec& s, const std::string& scenario) const {
    if (s.owners.empty()) return true;
    for (auto& o : s.owners)
      if (o == scenario) return true;
    return false;
  }

 private:
  struct Value {
    int64_t i = 0;
    double r = 0;
    bool b = false;
    std::string e;
  };
  Value parse(const ParamSpec& s, const std::string& text, const std::string& origin) const;
  const Value& value(const std::string& name, ParamKind want) const;
  const Value& value(const std::string& instance, const std::string& name, ParamKind want) const;

  std::map<std::string, std::vector<std::string>> instance_classes_;  // class -> adapter keys it may override

  std::map<std::string, ParamSpec> specs_;
  std::map<std::string, std::pair<std::string, std::string>> documented_;  // normalised name -> {where, key}
  std::map<std::string, Value> values_;
  std::string scenario_;  // whose ranges apply (empty: the first declaration's)
  std::set<std::string> set_keys_;
};

}  // namespace gpumodel
