#include "hw_model/core/params.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "hw_model/core/printable.h"

namespace gpumodel {

std::string format_number(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}
namespace {
std::string fmt_num(double v) { return format_number(v); }
}  // namespace

std::string ParamSpec::allowed() const {
  std::ostringstream os;
  switch (kind) {
    case ParamKind::Int:
      if (!choices.empty()) {
        os << "one of the integers {";
        for (size_t i = 0; i < choices.size(); ++i) os << (i ? ", " : "") << choices[i];
        os << "}";
      } else {
        os << "an integer in [" << int64_t(min) << ", " << int64_t(max) << "]";
      }
      break;
    case ParamKind::Real: os << "a number in [" << fmt_num(min) << ", " << fmt_num(max) << "]"; break;
    case ParamKind::Bool: os << "true or false"; break;
    case ParamKind::Path: os << "a file's path"; break;
    case ParamKind::Text: os << "text"; break;
    case ParamKind::Enum:
    case ParamKind::NamedOrForm:
      os << "one of {";
      for (size_t i = 0; i < choices.size(); ++i) os << (i ? ", " : "") << choices[i];
      os << "}";
      if (kind == ParamKind::NamedOrForm) os << " or " << form;
      break;
  }
  if (!unit.empty() && kind != ParamKind::Bool && kind != ParamKind::Enum && kind != ParamKind::Path &&
      kind != ParamKind::Text && kind != ParamKind::NamedOrForm)
    os << " " << unit;
  return os.str();
}

void ParamSet::declare(ParamSpec spec) {
  auto it = specs_.find(spec.name);
  if (it != specs_.end()) {
    // Declared again (another module of the same kind, or another scenario sharing the key): the
    // first declaration's default and source stand; a scenario's key gains the new owner.
    ParamSpec& first = it->second;
    if (spec.kind != first.kind) throw ConfigError("parameter " + spec.name + " declared with two types");
    for (auto& o : spec.owners) {
      first.owners.push_back(o);
      if (spec.default_value != first.default_value || spec.source != first.source || spec.min != first.min ||
          spec.max != first.max || spec.choices != first.choices) {
        parse(spec, spec.default_value, "default of " + spec.name + " for " + o);  // validates
        first.variants[o] = {spec.default_value, spec.source, spec.min, spec.max, spec.choices};
      }
    }
    return;
  }
  Value v = parse(spec, spec.default_value, "default of " + spec.name);
  values_[spec.name] = v;
  specs_[spec.name] = std::move(spec);
}

void ParamSet::declare_int(const std::string& name, int64_t def, const std::string& unit, int64_t min, int64_t max,
                           const std::string& source, const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = ParamKind::Int;
  s.default_value = std::to_string(def);
  s.unit = unit;
  s.min = double(min);
  s.max = double(max);
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  declare(std::move(s));
}

void ParamSet::declare_int_choices(const std::string& name, int64_t def, const std::string& unit,
                                   const std::vector<int64_t>& choices, const std::string& source,
                                   const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = ParamKind::Int;
  s.default_value = std::to_string(def);
  s.unit = unit;
  for (auto c : choices) s.choices.push_back(std::to_string(c));
  s.min = double(choices.front());
  s.max = double(choices.back());
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  declare(std::move(s));
}

void ParamSet::declare_real(const std::string& name, double def, const std::string& unit, double min, double max,
                            const std::string& source, const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = ParamKind::Real;
  s.default_value = fmt_num(def);
  s.unit = unit;
  s.min = min;
  s.max = max;
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  declare(std::move(s));
}

void ParamSet::declare_bool(const std::string& name, bool def, const std::string& source, const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = ParamKind::Bool;
  s.default_value = def ? "true" : "false";
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  declare(std::move(s));
}

namespace {
ParamSpec string_spec(const std::string& name, ParamKind kind, const std::string& def, const std::string& source,
                      const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = kind;
  s.default_value = def;
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  return s;
}
}  // namespace

void ParamSet::declare_path(const std::string& name, const std::string& def, const std::string& source,
                            const std::string& owner) {
  declare(string_spec(name, ParamKind::Path, def, source, owner));
}

void ParamSet::declare_text(const std::string& name, const std::string& def, const std::string& source,
                            const std::string& owner) {
  declare(string_spec(name, ParamKind::Text, def, source, owner));
}

const std::string& ParamSet::get_path(const std::string& name) const { return value(name, ParamKind::Path).e; }
const std::string& ParamSet::get_text(const std::string& name) const { return value(name, ParamKind::Text).e; }

void ParamSet::declare_enum(const std::string& name, const std::string& def, const std::vector<std::string>& choices,
                            const std::string& source, const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = ParamKind::Enum;
  s.default_value = def;
  s.choices = choices;
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  declare(std::move(s));
}

void ParamSet::declare_named_or_form(const std::string& name, const std::string& def,
                                     const std::vector<std::string>& choices, const std::string& form,
                                     std::function<std::string(const std::string&)> accept,
                                     const std::vector<std::string>& form_samples, const std::string& source,
                                     const std::string& owner) {
  ParamSpec s;
  s.name = name;
  s.kind = ParamKind::NamedOrForm;
  s.default_value = def;
  s.choices = choices;
  s.form = form;
  s.accept = std::move(accept);
  s.form_samples = form_samples;
  s.source = source;
  if (!owner.empty()) s.owners.push_back(owner);
  declare(std::move(s));
}

ParamSpec ParamSpec::as_seen_by(const std::string& scenario) const {
  ParamSpec s = *this;
  auto it = variants.find(scenario);
  if (it == variants.end()) return s;
  s.default_value = it->second.default_value;
  s.source = it->second.source;
  s.min = it->second.min;
  s.max = it->second.max;
  s.choices = it->second.choices;
  return s;
}

const ParamSpec& ParamSet::spec(const std::string& name) const {
  auto it = specs_.find(name);
  if (it == specs_.end()) it = specs_.find(class_key_of(name));
  if (it == specs_.end()) throw ConfigError("unknown parameter '" + name + "'");
  return it->second;
}

void ParamSet::declare_instances(const std::string& cls, const std::vector<std::string>& parent_keys) {
  instance_classes_[cls] = parent_keys;
}

std::string ParamSet::class_key_of(const std::string& name) const {
  // <parent>.<class><N>.<leaf>: N decimal without a leading zero.
  const size_t leaf_dot = name.rfind('.');
  if (leaf_dot == std::string::npos || leaf_dot == 0) return "";
  const size_t inst_dot = name.rfind('.', leaf_dot - 1);
  if (inst_dot == std::string::npos || inst_dot == 0) return "";
  const std::string parent = name.substr(0, inst_dot), inst = name.substr(inst_dot + 1, leaf_dot - inst_dot - 1);
  const std::string leaf = name.substr(leaf_dot + 1);
  for (auto& [cls, parent_keys] : instance_classes_) {
    if (inst.size() <= cls.size() || inst.compare(0, cls.size(), cls) != 0) continue;
    const std::string n = inst.substr(cls.size());
    if (n.find_first_not_of("0123456789") != std::string::npos || (n.size() > 1 && n[0] == '0')) continue;
    if (specs_.count(cls + "." + leaf) && specs_.at(cls + "." + leaf).owners.empty()) return cls + "." + leaf;
    for (auto& k : parent_keys)
      if (k == leaf && specs_.count(parent + "." + leaf)) return parent + "." + leaf;
  }
  return "";
}

std::string ParamSet::instance_help() const {
  std::ostringstream os;
  os << "Per-instance keys: <adapter>.<instance>.<key> gives one instance its own value; an instance without "
        "one takes the class key. Ranges and units are the class key's; an instance the platform does not "
        "have is refused.\n";
  for (auto& [cls, parent_keys] : instance_classes_) {
    os << "  " << cls << ": instances gpu." << cls << "0 .. gpu." << cls << "<N-1> (N = gpu.nodes), igpu." << cls
       << "0 .. igpu." << cls << "<N-1> (N = igpu.nodes, platform.topology = hybrid); keys: every platform " << cls
       << ".<key>";
    for (auto& k : parent_keys) os << ", <adapter>." << k;
    os << "\n  e.g. gpu." << cls << "1.reset_ns before " << cls << ".reset_ns, igpu." << cls
       << "0.engine_clock_mhz before igpu.engine_clock_mhz; in a file: [gpu." << cls << "1] reset_ns = ...\n";
  }
  return os.str();
}

void ParamSet::check_instances(const std::vector<std::string>& existing) const {
  for (auto& k : set_keys_) {
    if (specs_.count(k)) continue;
    const std::string inst = k.substr(0, k.rfind('.'));
    if (std::find(existing.begin(), existing.end(), inst) != existing.end()) continue;
    std::string list;
    for (auto& e : existing) list += (list.empty() ? "" : ", ") + e;
    // "gpu.node1" is counted by "gpu.nodes": name that key too, where it is one.
    const size_t dot = inst.find('.');
    std::string count_key;
    if (dot != std::string::npos) {
      std::string cls = inst.substr(dot + 1);
      while (!cls.empty() && std::isdigit(static_cast<unsigned char>(cls.back()))) cls.pop_back();
      count_key = inst.substr(0, dot + 1) + cls + "s";
    }
    const std::string count =
        specs_.count(count_key) ? " (" + count_key + " = " + std::to_string(get_int(count_key)) + ")" : "";
    throw ConfigError(k + " names " + inst + ", which this platform does not have" + count +
                      "; allowed: the instances " + list);
  }
}

std::string echo_input(const std::string& text) {
  constexpr size_t kShown = 200;
  if (text.size() <= kShown) return text;
  return text.substr(0, kShown) + "... (" + std::to_string(text.size()) + " characters)";
}

namespace {
bool digits_at(const std::string& t, size_t& i) {  // one or more digits from i; i moves past them
  const size_t b = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  return i > b;
}
}  // namespace

std::string integer_grammar(const std::string& text) {
  if (text.empty()) return "is empty";
  const size_t b = text[0] == '-' ? 1 : 0;
  if (text.size() > b + 2 && text[b] == '0' && (text[b + 1] == 'x' || text[b + 1] == 'X')) {
    for (size_t i = b + 2; i < text.size(); ++i)
      if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return "is not an integer";
    return "";
  }
  size_t i = b;
  if (!digits_at(text, i) || i != text.size()) return "is not an integer";
  if (i - b > 1 && text[b] == '0')
    return "has a leading zero (octal is not read: write it in decimal, or as 0x.. hexadecimal)";
  return "";
}

std::string real_grammar(const std::string& text) {
  if (text.empty()) return "is empty";
  const std::string form = "is not a decimal number (digits, an optional fraction and exponent: 12, 0.5, 2.5e-3)";
  const size_t b = text[0] == '-' ? 1 : 0;
  size_t i = b;
  if (!digits_at(text, i)) return form;
  if (i - b > 1 && text[b] == '0') return "has a leading zero (write 5, 0.5 or 2.5e-3, not 05)";
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits_at(text, i)) return form;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits_at(text, i)) return form;
  }
  if (i != text.size()) return form;
  if (b && std::strtod(text.c_str(), nullptr) == 0) return "is a negative zero: write 0";
  return "";
}

ParamSet::Value ParamSet::parse(const ParamSpec& s, const std::string& text, const std::string& origin) const {
  auto bad = [&](const std::string& why) {
    return ConfigError(origin + ": " + s.name + " = '" + echo_input(text) + "' " + why + "; allowed: " + s.allowed());
  };
  Value v;
  switch (s.kind) {
    case ParamKind::Int: {
      // Decimal, or 0x.. hexadecimal (integer_grammar). A leading zero is refused rather than read as
      // octal (strtoll's base 0 would make 010 eight); so are '+', spaces and anything after the digits.
      if (const std::string why = integer_grammar(text); !why.empty()) throw bad(why);
      const bool neg = text[0] == '-';
      const std::string digits = text.substr(neg ? 1 : 0);
      const bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
      errno = 0;
      char* end = nullptr;
      long long x = std::strtoll(text.c_str(), &end, hex ? 16 : 10);
      if (*end != '\0' || end == text.c_str()) throw bad("is not an integer");
      if (errno == ERANGE) throw bad("is out of range");
      if (!s.choices.empty()) {
        bool ok = false;
        for (auto& c : s.choices) ok = ok || std::stoll(c) == x;
        if (!ok) throw bad("is not allowed");
      } else if (double(x) < s.min || double(x) > s.max) {
        throw bad("is out of range");
      }
      v.i = x;
      v.r = double(x);
      break;
    }
    case ParamKind::Real: {
      // Decimal only (real_grammar): strtod alone would take 0x1p4, inf, nan, +5, .5 and -0.
      if (const std::string why = real_grammar(text); !why.empty()) throw bad(why);
      errno = 0;
      char* end = nullptr;
      double x = std::strtod(text.c_str(), &end);
      // ERANGE on overflow (±HUGE_VAL) only: an underflow such as 1e-310 is a tiny in-range number.
      if (!std::isfinite(x) || (errno == ERANGE && std::fabs(x) == HUGE_VAL)) throw bad("is out of range");
      if (x < s.min || x > s.max) throw bad("is out of range");
      v.r = x;
      break;
    }
    case ParamKind::Bool:
      if (text == "true" || text == "1")
        v.b = true;
      else if (text == "false" || text == "0")
        v.b = false;
      else
        throw bad("is not a boolean");
      break;
    case ParamKind::Text:
      for (unsigned char c : text)
        if (c < 0x20) throw bad("holds a control character");
      v.e = text;
      break;
    case ParamKind::Path:
      if (text.empty()) throw bad("is empty");
      for (unsigned char c : text)
        if (c < 0x20) throw bad("holds a control character");
      v.e = text;
      break;
    case ParamKind::Enum: {
      bool ok = false;
      for (auto& c : s.choices) ok = ok || c == text;
      if (!ok) throw bad("is not allowed");
      v.e = text;
      break;
    }
    case ParamKind::NamedOrForm: {
      bool named = false;
      for (auto& c : s.choices) named = named || c == text;
      if (!named) {
        for (unsigned char c : text)
          if (c < 0x20) throw bad("holds a control character");
        if (const std::string why = s.accept(text); !why.empty()) throw bad(why);
      }
      v.e = text;
      break;
    }
  }
  return v;
}

void ParamSet::apply_scenario_defaults(const std::string& scenario) {
  scenario_ = scenario;
  for (auto& [name, s] : specs_) {
    if (!s.variants.count(scenario)) continue;
    const ParamSpec own = s.as_seen_by(scenario);
    values_[name] = parse(own, own.default_value, "default of " + name);
  }
}

void ParamSet::set(const std::string& name, const std::string& text, const std::string& origin) {
  auto it = specs_.find(name);
  if (it == specs_.end()) it = specs_.find(class_key_of(name));  // an instance key: its class key's range
  if (it == specs_.end()) throw ConfigError(origin + ": unknown key '" + echo_input(name) + "'");
  ParamSpec s = it->second.variants.empty() ? it->second : it->second.as_seen_by(scenario_);
  s.name = name;
  values_[name] = parse(s, text, origin);
  set_keys_.insert(name);
}

void ParamSet::set_platform_default(const std::string& name, const std::string& text, const std::string& origin) {
  auto it = specs_.find(name);
  if (it == specs_.end() || !it->second.owners.empty())
    throw ConfigError(origin + ": '" + echo_input(name) + "' is not a platform key");
  ParamSpec s = it->second;
  values_[name] = parse(s, text, origin);
}

const ParamSet::Value& ParamSet::value(const std::string& name, ParamKind want) const {
  auto it = specs_.find(name);
  if (it == specs_.end()) {
    SC_REPORT_FATAL("gpumodel/params", ("parameter read but never declared: " + name).c_str());
  }
  bool ok = it->second.kind == want || (want == ParamKind::Real && it->second.kind == ParamKind::Int) ||
            (want == ParamKind::Enum && it->second.kind == ParamKind::NamedOrForm);
  if (!ok) SC_REPORT_FATAL("gpumodel/params", ("parameter read with the wrong type: " + name).c_str());
  return values_.at(name);
}

const ParamSet::Value& ParamSet::value(const std::string& instance, const std::string& name, ParamKind want) const {
  const Value& shared = value(name, want);  // declared, and of this type
  auto it = values_.find(instance + name.substr(name.find('.')));
  return it == values_.end() ? shared : it->second;
}

int64_t ParamSet::get_int(const std::string& name) const { return value(name, ParamKind::Int).i; }
double ParamSet::get_real(const std::string& name) const { return value(name, ParamKind::Real).r; }
bool ParamSet::get_bool(const std::string& name) const { return value(name, ParamKind::Bool).b; }
const std::string& ParamSet::get_enum(const std::string& name) const { return value(name, ParamKind::Enum).e; }
int64_t ParamSet::get_int(const std::string& instance, const std::string& name) const {
  return value(instance, name, ParamKind::Int).i;
}
double ParamSet::get_real(const std::string& instance, const std::string& name) const {
  return value(instance, name, ParamKind::Real).r;
}
bool ParamSet::get_bool(const std::string& instance, const std::string& name) const {
  return value(instance, name, ParamKind::Bool).b;
}
const std::string& ParamSet::get_enum(const std::string& instance, const std::string& name) const {
  return value(instance, name, ParamKind::Enum).e;
}

nlohmann::json ParamSet::effective(const std::string& scenario) const {
  nlohmann::json j = nlohmann::json::object();
  std::vector<std::pair<std::string, const ParamSpec*>> keys;
  for (auto& [name, s] : specs_)
    if (visible_to(s, scenario)) keys.emplace_back(name, &s);
  for (auto& k : set_keys_)  // the instance keys the user set
    if (!specs_.count(k)) keys.emplace_back(k, &spec(k));
  for (auto& [name, sp] : keys) {
    const ParamSpec& s = *sp;
    const Value& v = values_.at(name);
    switch (s.kind) {
      case ParamKind::Int: j[name] = v.i; break;
      case ParamKind::Real: j[name] = v.r; break;
      case ParamKind::Bool: j[name] = v.b; break;
      case ParamKind::Enum:
      case ParamKind::NamedOrForm:
      case ParamKind::Path:  // a path is bytes: escaped so the results stay UTF-8
      case ParamKind::Text: j[name] = printable(v.e); break;
    }
  }
  return j;
}

namespace {
// A documented name as the messages compare it: lower case, without leading dashes or a section.
std::string documented_key(const std::string& word) {
  std::string w = word.substr(word.find_first_not_of('-') == std::string::npos ? 0 : word.find_first_not_of('-'));
  if (const size_t dot = w.rfind('.'); dot != std::string::npos) w = w.substr(dot + 1);
  for (char& c : w) c = char(std::tolower(static_cast<unsigned char>(c)));
  return w;
}
}  // namespace

void ParamSet::declare_documented_name(const std::string& name, const std::string& where, const std::string& key) {
  documented_[documented_key(name)] = {where, key};
}

std::pair<std::string, std::string> ParamSet::documented_as(const std::string& word) const {
  const auto it = documented_.find(documented_key(word));
  if (it == documented_.end()) return {"", ""};
  return it->second;
}

}  // namespace gpumodel
