#include "app/suggest.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>
#include <tuple>

namespace gpumodel {

size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

namespace {

// Case and '-' against '_' do not matter.
std::string norm(const std::string& s) {
  std::string o = s;
  for (char& c : o) c = c == '-' ? '_' : char(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

// Units, and words that stand for one (size for bytes), name no thing: sharing "ns" says nothing
// about two keys.
const std::set<std::string> kStopWords = {"ns",   "us",  "ms",    "ps",   "s",   "mw", "mb",  "mib", "gib",  "kb",
                                          "gbps", "mhz", "bytes", "size", "pct", "pj", "per", "bit", "count"};

std::vector<std::string> words(const std::string& normed) {
  std::vector<std::string> w;
  std::string cur;
  for (char c : normed + ".") {
    if (c == '.' || c == '_' || c == '=' || c == ' ') {
      if (!cur.empty()) w.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return w;
}

std::string section(const std::string& normed) {
  const size_t dot = normed.find('.');
  return dot == std::string::npos ? "" : normed.substr(0, dot);
}

size_t max_edits(size_t n) { return n <= 2 ? 0 : n <= 5 ? 1 : n <= 10 ? 2 : 3; }

// One word or another form of it: the same, or the shorter (three letters or more) with an English
// ending: lane and lanes, gate and gated, gate and gating, copy and copies, entry and entries. Sharing a
// start is not enough: state is not static, scan not scale, hang not handles, time not timestamp.
bool same_word(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& s = a.size() <= b.size() ? a : b;
  const std::string& l = a.size() <= b.size() ? b : a;
  if (s.size() < 3) return false;
  auto ends = [&](const std::string& stem, std::initializer_list<const char*> endings) {
    if (l.compare(0, stem.size(), stem) != 0) return false;
    for (const char* e : endings)
      if (l.size() == stem.size() + std::char_traits<char>::length(e) &&
          l.compare(stem.size(), std::string::npos, e) == 0)
        return true;
    return false;
  };
  const std::string cut = s.substr(0, s.size() - 1);
  return ends(s, {"s", "es", "d", "ed", "ing"}) || (s.back() == 'e' && ends(cut, {"ing", "ed", "es"})) ||
         (s.back() == 'y' && ends(cut, {"ies", "ied"}));
}

}  // namespace

std::vector<std::string> suggest(const std::string& word, const std::vector<Candidate>& candidates, size_t max) {
  const std::string w = norm(word), sec = section(w);
  // The word's own words, without its section and units.
  std::vector<std::string> mine;
  const std::vector<std::string> all = words(w);
  for (size_t i = sec.empty() ? 0 : 1; i < all.size(); ++i)
    if (std::none_of(kStopWords.begin(), kStopWords.end(), [&](const std::string& x) { return same_word(all[i], x); }))
      mine.push_back(all[i]);
  struct Scored {
    int group;          // 0 same but for case, 1 edits or prefix, 2 shared words
    int tier;           // within group 1: 0 edits, 1 prefix
    long score;         // lower is better
    int other_section;  // 0 the word's section
    size_t length;
    std::string name;
  };
  std::vector<Scored> found;
  std::set<std::string> seen;
  for (const Candidate& c : candidates) {
    if (!seen.insert(c.name).second) continue;
    const std::string n = norm(c.name);
    const int other = section(n) == sec ? 0 : 1;
    if (n == w) {
      found.push_back({0, 0, 0, other, c.name.size(), c.name});
      continue;
    }
    if (!c.words_only) {
      // The distance is at least the difference in length: a 100 kB word costs no table.
      const size_t gap = w.size() > n.size() ? w.size() - n.size() : n.size() - w.size();
      const size_t d = gap > max_edits(w.size()) ? gap : edit_distance(w, n);
      if (d <= max_edits(w.size())) {
        found.push_back({1, 0, long(d), other, c.name.size(), c.name});
        continue;
      }
      // A prefix that goes past the candidate's section: vidsch.tdr_delay of vidsch.tdr_delay_ms.
      const size_t past = n.find('.') == std::string::npos ? 0 : n.find('.') + 1;
      const bool prefix = (n.compare(0, w.size(), w) == 0 && w.size() >= 3 && w.size() > past) ||
                          (w.compare(0, n.size(), n) == 0 && n.size() >= 3 && n.size() > past);
      if (prefix) {
        found.push_back({1, 1, long(w.size() > n.size() ? w.size() - n.size() : n.size() - w.size()), other,
                         c.name.size(), c.name});
        continue;
      }
    }
    if (mine.empty()) continue;
    const std::vector<std::string> theirs = words(n);
    size_t shared = 0;
    for (const std::string& x : mine)
      shared +=
          std::any_of(theirs.begin(), theirs.end(), [&](const std::string& y) { return same_word(x, y); }) ? 1 : 0;
    // Every word, or (in the word's own section) at least half of them.
    const bool partial_ok = !sec.empty() && other == 0 && 2 * shared >= mine.size();
    if (shared >= 1 && (shared == mine.size() || partial_ok))
      found.push_back({2, 0, -long(shared), other, c.name.size(), c.name});
  }
  if (found.empty()) return {};
  std::sort(found.begin(), found.end(), [](const Scored& a, const Scored& b) {
    return std::tie(a.group, a.tier, a.score, a.other_section, a.length, a.name) <
           std::tie(b.group, b.tier, b.score, b.other_section, b.length, b.name);
  });
  std::vector<std::string> out;
  const Scored& best = found.front();
  for (const Scored& s : found) {
    if (out.size() == max || s.group != best.group) break;
    // Among edits, two more than the best is a worse guess, not another good one; among shared words,
    // fewer than the best.
    if (s.group == 1 && s.tier == 0 && best.tier == 0 && s.score > best.score + 1) continue;
    if (s.group == 2 && s.score > best.score) continue;
    // A key = value pair says nothing more than its key, when the key is offered.
    if (const size_t eq = s.name.find('=');
        eq != std::string::npos && std::count(out.begin(), out.end(), s.name.substr(0, eq)))
      continue;
    out.push_back(s.name);
  }
  return out;
}

std::vector<std::string> suggest(const std::string& word, const std::vector<std::string>& candidates, size_t max) {
  std::vector<Candidate> c;
  for (const std::string& n : candidates) c.push_back({n, false});
  return suggest(word, c, max);
}

std::string did_you_mean(const std::vector<std::string>& names, const std::vector<std::string>& annotate) {
  if (names.empty()) return "";
  std::string s = "; did you mean ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += i + 1 == names.size() ? " or " : ", ";
    s += "'" + names[i] + "'" + (i < annotate.size() ? annotate[i] : "");
  }
  return s + "?";
}

namespace {
// A mode's or a value's numbers: 0 where it names none (or names 0, which compares with nothing).
struct ModeNumbers {
  double w = 0, h = 0, r = 0;
};
ModeNumbers mode_numbers(const std::string& text) {
  std::string t = text;
  for (char& c : t) c = char(std::tolower(static_cast<unsigned char>(c)));
  ModeNumbers n;
  std::smatch m;
  if (std::regex_search(t, m, std::regex(R"((\d{3,5})\s*x\s*(\d{3,5}))"))) {
    n.w = std::stod(m[1]);
    n.h = std::stod(m[2]);
  } else if (std::regex_search(t, m, std::regex(R"((\d{3,4})\s*[pi])"))) {
    n.h = std::stod(m[1]);
  } else if (std::regex_search(t, m, std::regex(R"(([248])\s*k)"))) {
    n.h = m[1] == "4" ? 2160 : m[1] == "8" ? 4320 : 1440;  // 4K UHD, 8K UHD; "2K" as it is sold: 1440 lines
  }
  if (std::regex_search(t, m, std::regex(R"(@\s*(\d{2,3}))")) ||
      std::regex_search(t, m, std::regex(R"((\d{2,3})\s*hz)")) ||
      std::regex_search(t, m, std::regex(R"(\d{3,4}\s*[pi]\s*(\d{2,3}))")))
    n.r = std::stod(m[1]);
  return n;
}
}  // namespace

std::vector<std::string> nearest_modes(const std::string& value, const std::vector<std::string>& modes, size_t max) {
  const ModeNumbers v = mode_numbers(value);
  if (v.h == 0 && v.r == 0) return {};
  std::vector<std::pair<double, std::string>> d;
  for (const std::string& name : modes) {
    const ModeNumbers m = mode_numbers(name);
    if (m.h == 0 || m.r == 0) continue;  // not a WxH@R name
    double x = 0;
    if (v.w > 0 && v.h > 0)
      x += std::fabs(std::log((m.w * m.h) / (v.w * v.h)));
    else if (v.h > 0)
      x += std::fabs(std::log(m.h / v.h));
    if (v.r > 0) x += std::fabs(std::log(m.r / v.r));
    d.push_back({x, name});
  }
  std::vector<std::string> out;
  if (d.empty()) return out;
  const double best = std::min_element(d.begin(), d.end())->first;
  for (auto& [x, name] : d)
    if (x <= best + 1e-9 && out.size() < max) out.push_back(name);
  return out;
}

}  // namespace gpumodel
