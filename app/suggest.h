// "Did you mean": the known names closest to a mistyped one, for the command line's messages (unknown
// keys, scenario names, enum values, options). Pure functions: nothing here knows gpumodel.
#pragma once
#include <string>
#include <vector>

namespace gpumodel {

// The edit distance of `a` and `b` in the optimal string alignment form of Damerau-Levenshtein:
// insertions, deletions, substitutions and swaps of two neighbouring characters, each costing 1.
size_t edit_distance(const std::string& a, const std::string& b);

struct Candidate {
  std::string name;         // compared with the word (section.key, a scenario name, an enum value)
  bool words_only = false;  // matched only by a shared word (a key=value pair: c6 -> cpu.idle_state=C6)
};

// At most `max` candidates close to `word`, best first; none when nothing is close, as no suggestion
// is better than a silly one. Close, from the best group down (only the best non-empty group is
// offered):
//   1. the same but for case and '-' / '_' (one-copy -> one_copy, c6 -> C6);
//   2. within a few edits (1 up to 5 characters, 2 up to 10, 3 beyond; none for 1 or 2 characters),
//      or one a prefix of the other (vidsch.tdr_delay -> vidsch.tdr_delay_ms);
//   3. sharing the word's words (split at '.', '_', '-', '='; units such as ns or bytes do not count,
//      nor the word's section): all of them (c6 -> cpu.c6_exit_ns, cpu.idle_state=C6), or half of them
//      in the word's own section (display.fifo_depth -> display.fifo_bytes); the most shared first.
// Ties go to the candidate sharing the word's section, then the shorter one.
std::vector<std::string> suggest(const std::string& word, const std::vector<Candidate>& candidates, size_t max = 3);
std::vector<std::string> suggest(const std::string& word, const std::vector<std::string>& candidates, size_t max = 3);

// The display modes (named "WxH@R") nearest to a value that is none of them and no valid form: the
// resolution it names ("2560x1440", "1440p", "4k") and its refresh ("@120", "120hz", the 60 of "1080p60"),
// each compared by ratio (pixels, lines or hertz), every mode at the least distance, at most `max`; none
// when the value names neither.
std::vector<std::string> nearest_modes(const std::string& value, const std::vector<std::string>& modes, size_t max = 4);

// "; did you mean 'a'?", "; did you mean 'a' or 'b'?", "; did you mean 'a', 'b' or 'c'?"; "" for none.
// `annotate` (optional) adds text after a name (" (scenario 'x')").
std::string did_you_mean(const std::vector<std::string>& names, const std::vector<std::string>& annotate = {});

}  // namespace gpumodel
