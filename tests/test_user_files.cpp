// Never lose a user's file: no output replaces an input (by path, symbolic link or hard link), outputs
// appear whole or not at all and their write errors fail the run, every input is a bounded regular
// file, and a bare scenario name runs the file the user is looking at, recorded with its hash.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "app/sha256.h"
#include "hw_model/core/output_file.h"

#include "tb.h"

using namespace tb;
namespace fs = std::filesystem;

namespace {

std::string sq(const fs::path& p) { return "'" + p.string() + "'"; }

// Refused before anything ran: exit 2, one line naming `fragment`, nothing on stdout.
void refused(const Run& r, const std::string& fragment) {
  INFO("stderr: " << r.err << "stdout: " << r.out.substr(0, 300));
  CHECK(r.code == 2);
  CHECK(r.err.find(fragment) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
}

const std::string kCapture = std::string(GPUMODEL_SOURCE_DIR) + "/workloads/captures/test_case_5.csv";
const std::string kWorkload = std::string(GPUMODEL_SOURCE_DIR) + "/workloads/game.json";

}  // namespace

TEST_CASE("An output never replaces an input: the capture, the workload, by symbolic and by hard link", "[H4]") {
  const fs::path d = scratch("user_files", "inputs");
  fs::copy_file(kCapture, d / "c.csv");
  fs::copy_file(kWorkload, d / "w.json");
  fs::create_symlink(d / "c.csv", d / "l.csv");
  fs::create_hard_link(d / "w.json", d / "h.json");
  const std::string capture = slurp((d / "c.csv").string()), workload = slurp((d / "w.json").string());
  const std::string replay = scenario("presentmon_replay"), loop = scenario("frame_loop");

  refused(run_in(d, replay + " --workload.presentmon=c.csv --presentmon=c.csv"),
          "--presentmon 'c.csv' is the input workload.presentmon = 'c.csv', which the run reads");
  refused(run_in(d, loop + " --workload.file=w.json --results=w.json"),
          "--results 'w.json' is the input workload.file = 'w.json', which the run reads");
  refused(run_in(d, replay + " --workload.presentmon=c.csv --timeline=l.csv"),
          "--timeline 'l.csv' is the input workload.presentmon = 'c.csv'");
  refused(run_in(d, loop + " --workload.file=w.json --vcd=./h.json"), "--vcd './h.json' is the input workload.file");
  // The waveform's save file beside it is an output too.
  fs::copy_file(kWorkload, d / "wave.gtkw");
  refused(run_in(d, loop + " --workload.file=wave.gtkw --vcd=wave.vcd"),
          "its GTKWave save file 'wave.gtkw' (written beside it) is the input workload.file = 'wave.gtkw'");
  // The scenario file itself, reached through a link.
  fs::copy_file(scenario("mmio_roundtrip"), d / "m.ini");
  fs::create_symlink(d / "m.ini", d / "m_link.json");
  refused(run_in(d, "m.ini --results=m_link.json"), "is the scenario file, which the run reads");
  // Two outputs that are one file, the PresentMon CSV among them.
  refused(run_in(d, loop + " --presentmon=p.csv --results=./p.csv"), "--results and --presentmon name the same file");

  CHECK(slurp((d / "c.csv").string()) == capture);
  CHECK(slurp((d / "w.json").string()) == workload);
  CHECK(fs::is_symlink(d / "l.csv"));
  CHECK(!fs::exists(d / "wave.vcd"));
  CHECK(!fs::exists(d / "p.csv"));
  fs::remove_all(d);
}

TEST_CASE("An output that cannot be written fails the run and says so, and none claims to be written", "[H4]") {
  const fs::path d = scratch("user_files", "write_errors");
  const std::string loop = scenario("frame_loop") + " --workload.frames=3";
  // /proc takes no new file, even from root (access(2) says it may): refused before the run.
  refused(run_in(d, loop + " --presentmon=/proc/p.csv"), "--presentmon: cannot write '/proc/p.csv'");
  // A full device: found when written, after the run; exit 2 and no "wrote" line for it.
  const Run full = run_in(d, loop + " --presentmon=/dev/full");
  INFO(full.err);
  CHECK(full.code == 2);
  CHECK(full.err == "gpumodel: --presentmon: cannot write '/dev/full': No space left on device\n");
  CHECK(full.out.find("wrote") == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("An output file appears whole or not at all, and a failed one leaves the file that was there", "[H4]") {
  const fs::path d = scratch("user_files", "atomic");
  put(d / "old.txt", "the user's data\n");
  ::chmod((d / "old.txt").c_str(), 0640);
  {  // written, then abandoned (a run that failed or threw): the old file stays, no temporary file
    OutputFile f((d / "old.txt").string());
    REQUIRE(f.ok());
    f.stream() << "half a file";
  }
  CHECK(slurp((d / "old.txt").string()) == "the user's data\n");
  CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 1);
  {  // committed: the new text, whole, with the file's mode kept
    OutputFile f((d / "old.txt").string());
    f.stream() << "new text\n";
    CHECK(slurp((d / "old.txt").string()) == "the user's data\n");  // not before commit
    REQUIRE(f.commit());
  }
  CHECK(slurp((d / "old.txt").string()) == "new text\n");
  struct stat st {};
  REQUIRE(::stat((d / "old.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 1);
  // Through a symbolic link: the link stays a link, its target gets the text.
  fs::create_symlink(d / "old.txt", d / "link.txt");
  {
    OutputFile f((d / "link.txt").string());
    f.stream() << "via the link\n";
    REQUIRE(f.commit());
  }
  CHECK(fs::is_symlink(d / "link.txt"));
  CHECK(slurp((d / "old.txt").string()) == "via the link\n");
  // A device is written in place and its error reported at commit.
  {
    OutputFile f("/dev/full");
    f.stream() << std::string(1 << 16, 'x');
    CHECK_FALSE(f.commit());
    CHECK(f.error() == "No space left on device");
  }
  {
    OutputFile f("/dev/null");
    f.stream() << "gone";
    CHECK(f.commit());
  }
  fs::remove_all(d);
}

TEST_CASE("A scenario file is a regular file of at most 1 MiB, and a long line is echoed cut", "[H4]") {
  const fs::path d = scratch("user_files", "scenario_input");
  // A FIFO with no writer would block a reader forever: refused without opening it.
  REQUIRE(::mkfifo((d / "fifo.ini").c_str(), 0600) == 0);
  refused(run_in(d, "fifo.ini"), "cannot read scenario file 'fifo.ini': not a regular file");
  refused(run_in(d, "/dev/zero"), "cannot read scenario file '/dev/zero': not a regular file");
  put(d / "big.ini", "scenario = mmio_roundtrip\n" + std::string((1 << 20) + 10, '#'));
  refused(run_in(d, "big.ini"), "it holds 1048612 bytes; allowed: a scenario file of at most 1048576 bytes (1 MiB)");
  // Exactly at the bound: read whole and run (a reader that never reaches the end of such a file hangs, and
  // ctest's timeout fails the test).
  const std::string head = "scenario = mmio_roundtrip\n";
  put(d / "bound.ini", head + std::string((1 << 20) - head.size() - 1, '#') + "\n");
  REQUIRE(fs::file_size(d / "bound.ini") == (1u << 20));
  const Run at_bound = run_in(d, "bound.ini --quiet");
  CHECK(at_bound.code == 0);
  CHECK(at_bound.out.find("verdict: pass") != std::string::npos);
  // A regular file that reports a size of 0 and holds more (a /proc file): the bound is kept while reading.
  if (fs::is_regular_file("/proc/kallsyms") && slurp("/proc/kallsyms").size() > (1u << 20)) {
    const Run proc = run_in(d, "mmio_roundtrip --platform=/proc/kallsyms");
    refused(proc, "cannot read platform file '/proc/kallsyms': it holds more than 1048576 bytes");
  } else {
    WARN("/proc/kallsyms is not a regular file over 1 MiB here: the bound while reading is not checked");
  }
  // A 300,000-character garbage line: the message shows 200 characters of it and its length.
  put(d / "garbage.ini", "scenario = mmio_roundtrip\n" + std::string(300000, 'g') + "\n");
  const Run r = run_in(d, "garbage.ini");
  refused(r, "line 2 '" + std::string(200, 'g') + "... (300000 characters)' is neither [section] nor key = value");
  CHECK(r.err.size() < 400);
  fs::remove_all(d);
}

TEST_CASE("A path that is not UTF-8 reaches the results escaped, not as an exception", "[H4]") {
  const fs::path d = scratch("user_files", "utf8");
  const std::string name = "w\xFF.json";
  fs::copy_file(kWorkload, d / name);
  const Run r =
      run_in(d, scenario("frame_loop") + " --workload.frames=3 '--workload.file=" + name + "' --results=r.json");
  INFO(r.err << r.out.substr(0, 400));
  CHECK(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(slurp((d / "r.json").string()));
  CHECK(j["parameters"]["workload.file"] == "w\\xFF.json");
  CHECK(r.out.find("\"w\\\\xFF.json\"") != std::string::npos);  // the configuration printed: a JSON string
  fs::remove_all(d);
}

TEST_CASE("A bare name runs ./scenarios/NAME.ini first and the results name the file and its SHA-256", "[H4]") {
  const fs::path d = scratch("user_files", "bare_name");
  fs::create_directories(d / "scenarios");
  // The user's edited copy: one key changed, which the run must show.
  std::string text = slurp(scenario("mmio_roundtrip"));
  REQUIRE(text.find("lanes = 16\n") != std::string::npos);
  text.replace(text.find("lanes = 16\n"), 11, "lanes = 16\nhop_ns = 77\n");
  put(d / "scenarios" / "mmio_roundtrip.ini", text);
  Run r = run_in(d, "mmio_roundtrip --results=r.json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(slurp((d / "r.json").string()));
  CHECK(j["scenario_file"]["path"] == "scenarios/mmio_roundtrip.ini");
  CHECK(j["parameters"]["link.hop_ns"] == 77);
  // The hash is the file's, as sha256sum (coreutils) computes it: an independent implementation.
  const std::string cmd = "sha256sum " + sq(d / "scenarios" / "mmio_roundtrip.ini") + " > " + sq(d / "sum.txt");
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(j["scenario_file"]["sha256"] == slurp((d / "sum.txt").string()).substr(0, 64));
  CHECK(r.out.find("scenario file scenarios/mmio_roundtrip.ini  sha256 " +
                   j["scenario_file"]["sha256"].get<std::string>()) != std::string::npos);
  // Without a scenarios/ folder here: the source tree's file.
  fs::remove_all(d / "scenarios");
  r = run_in(d, "mmio_roundtrip --results=r.json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(slurp((d / "r.json").string()));
  CHECK(j["scenario_file"]["path"] == scenario("mmio_roundtrip"));
  CHECK(j["scenario_file"]["sha256"] == sha256_hex(slurp(scenario("mmio_roundtrip"))));
  fs::remove_all(d);
}

TEST_CASE("SHA-256 matches the FIPS 180-4 examples", "[H4]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding needs a second block.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
