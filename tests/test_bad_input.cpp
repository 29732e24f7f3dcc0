// The bad-input corpus (tests/bad_input/cases.tsv): every case runs the gpumodel binary with an exact
// argv (no shell) and must end as the corpus says, by exit code and message, never by a signal.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "tb.h"

using namespace tb;

namespace {

struct Case {
  int line = 0;
  std::string kind, fragment;
  std::vector<std::string> args;
};

// Replaces the scratch directory's placeholders: @T@ its path, @N@ its name.
std::string scratch_names(std::string s, const std::string& scratch) {
  const std::string name = std::filesystem::path(scratch).filename().string();
  for (auto [key, val] : {std::pair<std::string, std::string>{"@T@", scratch}, {"@N@", name}})
    for (size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), val);
  return s;
}

// Replaces the corpus' placeholders and \xNN escapes.
std::string expand(std::string s, const std::string& scratch) {
  const std::string data = std::string(GPUMODEL_SOURCE_DIR) + "/tests/bad_input/files";
  const std::string scen = std::string(GPUMODEL_SOURCE_DIR) + "/scenarios";
  for (auto [key, val] : {std::pair<std::string, std::string>{"@F@", data}, {"@S@", scen}})
    for (size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), val);
  s = scratch_names(s, scratch);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && s[i + 1] == 'x' &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2])) && std::isxdigit(static_cast<unsigned char>(s[i + 3]))) {
      out += char(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<Case> load_cases(const std::string& scratch) {
  std::ifstream in(std::string(GPUMODEL_SOURCE_DIR) + "/tests/bad_input/cases.tsv");
  std::vector<Case> cases;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    Case c;
    c.line = n;
    c.kind = line.substr(0, a);
    // Matched literally, escapes and all (as printed): only the scratch directory's placeholders expanded.
    c.fragment = scratch_names(line.substr(a + 1, b - a - 1), scratch);
    std::istringstream words(line.substr(b + 1));
    for (std::string w; words >> w;) c.args.push_back(expand(w, scratch));
    cases.push_back(c);
  }
  return cases;
}

struct Outcome {
  bool signalled = false;
  int code = -1, sig = 0;
  std::string out, err;
};

// fork + execv with the exact argv; stdout and stderr to files.
Outcome run_argv(const std::vector<std::string>& args, const std::string& dir) {
  // Beside the scratch directory, named after it: the corpus' parts run side by side.
  const std::string out_path = dir + ".stdout", err_path = dir + ".stderr";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::string bin = GPUMODEL_BIN;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  Outcome r;
  r.signalled = WIFSIGNALED(st);
  r.sig = r.signalled ? WTERMSIG(st) : 0;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

bool printable_text(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
  return true;
}

}  // namespace

namespace {

// Runs every `parts`-th case of the corpus from the `part`-th (each part a test of its own, so ctest runs
// the parts side by side: the corpus is about 290 runs of the binary), in a scratch directory of its own.
// Returns how many of them were refusals.
size_t run_corpus(size_t part, size_t parts) {
  namespace fs = std::filesystem;
  const std::string scratch = fs::absolute("bad_input_scratch_" + std::to_string(part)).string();
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const std::vector<Case> cases = load_cases(scratch);
  CHECK(cases.size() >= 40);
  size_t refused = 0;
  const std::string original = slurp(std::string(GPUMODEL_SOURCE_DIR) + "/scenarios/mmio_roundtrip.ini");
  for (size_t i = part; i < cases.size(); i += parts) {
    const Case& c = cases[i];
    fs::remove_all(scratch);
    fs::create_directories(scratch);
    // Cases that name the scenario file as an output use this copy, so a regression overwrites a
    // scratch file, never the checkout.
    std::ofstream(scratch + "/copy.ini") << original;
    const Outcome r = run_argv(c.args, scratch);
    INFO("cases.tsv line " << c.line << " (" << c.kind << "): gpumodel " <<
         [&] {
           std::string s;
           for (auto& a : c.args) s += a + " ";
           return s;
         }() << "\nstderr: "
                           << r.err << "stdout tail: " << r.out.substr(r.out.size() > 400 ? r.out.size() - 400 : 0));
    REQUIRE_FALSE(r.signalled);
    CHECK(printable_text(r.err));
    const int want = c.kind == "pass" ? 0 : c.kind == "fail" ? 1 : 2;
    CHECK(r.code == want);
    if (c.kind == "refused" || c.kind == "after") {
      CHECK(r.err.find(c.fragment) != std::string::npos);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one message
    } else {
      CHECK(r.out.find(c.fragment) != std::string::npos);
    }
    if (c.kind == "refused") {
      ++refused;
      CHECK(r.out.empty());  // nothing ran
      // Nothing written: the scratch directory holds only the copy, unchanged.
      CHECK(std::distance(fs::directory_iterator(scratch), fs::directory_iterator()) == 1);
      CHECK(slurp(scratch + "/copy.ini") == original);
    }
  }
  fs::remove_all(scratch);
  fs::remove(scratch + ".stdout");
  fs::remove(scratch + ".stderr");
  return refused;
}

}  // namespace

// Four parts, each with at least 10 of the corpus's refusals (the corpus lists over 40).
TEST_CASE("Bad-input corpus part 1 of 4: every case exits as listed", "[H4]") { CHECK(run_corpus(0, 4) >= 10); }
TEST_CASE("Bad-input corpus part 2 of 4: every case exits as listed", "[H4]") { CHECK(run_corpus(1, 4) >= 10); }
TEST_CASE("Bad-input corpus part 3 of 4: every case exits as listed", "[H4]") { CHECK(run_corpus(2, 4) >= 10); }
TEST_CASE("Bad-input corpus part 4 of 4: every case exits as listed", "[H4]") { CHECK(run_corpus(3, 4) >= 10); }
