// The inputs frame_loop and presentmon_replay read, held to what their keys document: a regular file of
// at most a stated size (never a device or a FIFO), a workload file that is strict JSON (a key given
// twice refused), a capture that is RFC 4180 CSV whose every value the replay uses is a finite number
// in order, and a capture's names carried into the results as bytes, escaped where they are not UTF-8.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "scenarios/frame_loop/workload.h"
#include "scenarios/presentmon/csv_reader.h"
#include "scenarios/presentmon/presentmon.h"
#include "tb.h"

using namespace tb;
using namespace gpumodel;

namespace {

// A 1.x capture: the columns the replay reads, then rows (one per line, no header).
// A 2.x capture's header (CPUStartTime in ms).
const std::string k2x =
    "Application,ProcessID,SwapChainAddress,SyncInterval,PresentMode,CPUStartTime,MsBetweenAppStart,"
    "MsCPUBusy,MsGPUBusy,MsUntilDisplayed\n";
std::string row1(const std::string& app, double t, const std::string& until = "10.0") {
  return app + ",10,0x1,1,Hardware: Legacy Flip,0," + std::to_string(t) + ",16.7,0.1,2.0," + until + "\n";
}
Capture parse_csv(const std::string& text) { return parse_presentmon(text, "t.csv", "workload.presentmon"); }

// Seconds of wall time `f` takes.
template <typename F>
double wall_s(F f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("CSV reader: RFC 4180 quoting, a quoted field holds commas, quotes and line breaks", "[H4][presentmon]") {
  // A name with a comma, a doubled quote and a line break: one field, and the row is kept (a reader
  // that splits lines first drops it).
  const std::string name = "\"Game, \"\"The\"\"\r\nOne\"\".exe\"";
  const Capture c = parse_csv(k1x + row1("a.exe", 0.01) + row1(name, 0.02) + row1("a.exe", 0.03));
  REQUIRE(c.presents.size() == 3);
  CHECK(c.name(c.presents[1].application) == "Game, \"The\"\r\nOne\".exe");
  CHECK(c.name(c.presents[2].application) == "a.exe");
  CHECK(c.presents[2].present_ms == Approx(20.0));
  // CRLF line ends, as Windows tools write them, end records; the last line may lack one.
  const Capture crlf = parse_csv(
      "Application,PresentMode,TimeInSeconds,MsBetweenPresents,MsUntilDisplayed\r\n"
      "a.exe,Hardware: Legacy Flip,0.5,16.7,10\r\na.exe,Hardware: Legacy Flip,0.6,16.7,10");
  CHECK(crlf.presents.size() == 2);
}

TEST_CASE("CSV reader: what RFC 4180 does not allow is refused with its line, not guessed at", "[H4][presentmon]") {
  CHECK_THROWS_WITH(parse_csv(k1x + row1("a.exe", 0.01) + row1("\"never closed", 0.02)),
                    Catch::Contains("line 3: a quoted field opened here is never closed"));
  CHECK_THROWS_WITH(parse_csv(k1x + row1("\"a\"b.exe", 0.01)),
                    Catch::Contains("line 2: a character after a quoted field's closing quote"));
  CHECK_THROWS_WITH(parse_csv(k1x + row1("a\"b.exe", 0.01)),
                    Catch::Contains("line 2: a quote inside an unquoted field"));
}

TEST_CASE("PresentMon capture: a value that is not a finite number >= 0 is refused with its row and column",
          "[H4][presentmon]") {
  // 2.x rows: CPU start, then MsBetweenAppStart, MsCPUBusy, MsGPUBusy, MsUntilDisplayed.
  auto v2 = [&](const std::string& gpu_busy) {
    return k2x + "a.exe,10,0x1,1,Hardware: Legacy Flip,0.0,16.7,4.0,5.0,12.0\n" +
           "a.exe,10,0x1,1,Hardware: Legacy Flip,16.7,16.7,4.0," + gpu_busy + ",12.0\n";
  };
  CHECK(parse_csv(v2("NA")).presents.size() == 2);  // NA: PresentMon knew nothing
  CHECK_FALSE(parse_csv(v2("NA")).presents[1].gpu_busy_ms.has_value());
  const std::string at = "workload.presentmon = 't.csv': row 2 (line 3), column MsGPUBusy: ";
  CHECK_THROWS_WITH(parse_csv(v2("-1.5")),
                    Catch::Contains(at + "'-1.5' is negative; allowed: a finite number >= 0 or NA"));
  CHECK_THROWS_WITH(parse_csv(v2("inf")), Catch::Contains(at + "'inf' is not a number"));
  CHECK_THROWS_WITH(parse_csv(v2("nan")), Catch::Contains(at + "'nan' is not a number"));
  CHECK_THROWS_WITH(parse_csv(v2("1e999")), Catch::Contains(at + "'1e999' is not finite"));
  CHECK_THROWS_WITH(parse_csv(v2("0x10")), Catch::Contains(at + "'0x10' is not a number"));
  CHECK_THROWS_WITH(parse_csv(v2("")), Catch::Contains(at + "empty"));
  CHECK_THROWS_WITH(parse_csv(v2("5 ms")), Catch::Contains(at + "'5 ms' is not a number"));
  // 1.x: a negative present time, a sync interval D3D does not have, a Dropped that is not 0 or 1.
  CHECK_THROWS_WITH(parse_csv(k1x + row1("a.exe", -0.5)),
                    Catch::Contains("row 1 (line 2), column TimeInSeconds: '-0.500000' is negative"));
  CHECK_THROWS_WITH(parse_csv(k1x + "a.exe,10,0x1,7,Hardware: Legacy Flip,0,0.1,16.7,0.1,2.0,10\n"),
                    Catch::Contains("column SyncInterval: '7' is out of range; allowed: -1 to 4"));
  CHECK_THROWS_WITH(parse_csv(k1x + "a.exe,10,0x1,1,Hardware: Legacy Flip,2,0.1,16.7,0.1,2.0,10\n"),
                    Catch::Contains("column Dropped: '2' is neither 0 nor 1"));
  // A row short of a column the replay reads (a truncated last line), or longer than the header.
  CHECK_THROWS_WITH(parse_csv(k1x + row1("a.exe", 0.1) + "a.exe,10,0x1,1,Hardware: Legacy Flip,0,0.2\n"),
                    Catch::Contains("row 2 (line 3), column MsUntilDisplayed: missing (the row has 7 fields)"));
  CHECK_THROWS_WITH(parse_csv(k1x + "a.exe,10,0x1,1,Hardware: Legacy Flip,0,0.1,16.7,0.1,2.0,10,extra\n"),
                    Catch::Contains("the row has 12 fields, the header 11"));
}

TEST_CASE("PresentMon capture: a swap chain's rows out of time order are refused, processes interleave freely",
          "[H4][presentmon]") {
  // PresentMon writes a row when a present completes, so different processes' rows interleave out of
  // time order (the shipped 1.x capture does); one swap chain's never go back.
  const Capture ok = parse_csv(k1x + row1("dwm.exe", 0.014) + row1("game.exe", 0.009) + row1("dwm.exe", 0.022));
  CHECK(ok.presents.size() == 3);
  CHECK_THROWS_WITH(parse_csv(k1x + row1("dwm.exe", 0.014) + row1("game.exe", 0.009) + row1("dwm.exe", 0.010)),
                    Catch::Contains("row 3 (line 4), column TimeInSeconds: '0.010000' is earlier than row 1's of the "
                                    "same swap chain; allowed: each swap chain's rows in time order"));
}

TEST_CASE("Inputs: a device, a FIFO, a directory or a file over its documented size is refused at once",
          "[H4][presentmon][frame_loop]") {
  namespace fs = std::filesystem;
  const std::string dir = "inputs_" + std::to_string(::getpid());
  fs::create_directories(dir);
  // A FIFO with no writer: opening it to read would wait forever.
  const std::string fifo = dir + "/capture.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Sparse files one byte over each limit (no disk used).
  const std::string big_json = dir + "/big.json", big_csv = dir + "/big.csv";
  for (auto [path, size] :
       {std::pair<std::string, uint64_t>{big_json, kWorkloadFileMaxBytes + 1}, {big_csv, kCaptureMaxBytes + 1}}) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t(size)) == 0);
    ::close(fd);
  }
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {scenario("frame_loop") + " --workload.file=/dev/zero",
       "workload.file = '/dev/zero' is a character device, not a regular file; allowed: a workload JSON file of at "
       "most 8388608 bytes (8 MiB)"},
      {scenario("presentmon_replay") + " --workload.presentmon=/dev/zero",
       "workload.presentmon = '/dev/zero' is a character device, not a regular file; allowed: a PresentMon 1.x or "
       "2.x CSV file of at most 536870912 bytes (512 MiB)"},
      {scenario("presentmon_replay") + " --workload.presentmon=" + fifo, "' is a FIFO, not a regular file"},
      {scenario("frame_loop") + " --workload.file=" + fifo, "' is a FIFO, not a regular file"},
      {scenario("frame_loop") + " --workload.file=" + dir, "' is a directory, not a regular file"},
      {scenario("frame_loop") + " --workload.file=" + big_json,
       "big.json' is 8388609 bytes, over the limit; allowed: a workload JSON file of at most 8388608 bytes (8 MiB)"},
      {scenario("presentmon_replay") + " --workload.presentmon=" + big_csv,
       "big.csv' is 536870913 bytes, over the limit"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    // Refused before anything is read: well under a second (reading /dev/zero ran for minutes).
    CHECK(wall_s([&] { expect_bad_input(c.args, c.message); }) < 5.0);
  }
  fs::remove_all(dir);
}

TEST_CASE("Workload file: strict JSON, a key given twice in one object is refused naming its path",
          "[H4][frame_loop][bad_input]") {
  const std::string frame = R"("frame": [{"cpu": {"us": 5}}, {"present": {"queue": "gfx"}}])";
  auto w = [&](const std::string& head) {
    return "{" + head + R"("name": "t", "frames": 2, "queues": {"gfx": {"engine": "graphics"}}, )" + frame + "}";
  };
  CHECK(parse_workload(w(R"("fps": 60, )"), "t.json").fps == 60);
  CHECK_THROWS_WITH(parse_workload(w(R"("fps": 60, "fps": 30, )"), "t.json"),
                    Catch::Contains("workload.file 't.json': $.fps: key given twice; allowed: each key once"));
  // Inside a step, with the step's place in the path.
  CHECK_THROWS_WITH(
      parse_workload(
          R"({"name": "t", "frames": 2, "queues": {"gfx": {"engine": "graphics"}}, "frame": [{"cpu": {"us": 5}},
                         {"cpu": {"us": 5, "us": 6}}, {"present": {"queue": "gfx"}}]})",
          "t.json"),
      Catch::Contains("$.frame[1].cpu.us: key given twice"));
  // The same key in two objects is two keys.
  CHECK_NOTHROW(parse_workload(R"({"name": "t", "frames": 2, "queues": {"gfx": {"engine": "graphics"}}, "frame": [
                                   {"cpu": {"us": 5}}, {"cpu": {"us": 6}}, {"present": {"queue": "gfx"}}]})",
                               "t.json"));
  // Nesting is bounded: no workload nests 64 deep, and a file of a million brackets is not one.
  CHECK_THROWS_WITH(
      parse_workload(w(R"("description": )" + std::string(100, '[') + std::string(100, ']') + ", "), "t.json"),
      Catch::Contains("nests deeper than 64 levels"));
}

TEST_CASE("presentmon_replay: a capture's names are bytes, escaped in the results where they are not UTF-8",
          "[H4][presentmon]") {
  // The model's own capture with its Application renamed to Latin-1 bytes (\xE9 is 'e acute' there, and
  // no UTF-8 character), chosen by the same bytes on the command line.
  const std::string dir = "names_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string own = dir + "/own.csv", renamed = dir + "/renamed.csv";
  run_json(scenario("frame_loop") + " --workload.frames=20 --presentmon " + own, "names_own");
  {
    std::string text = slurp(own);
    for (size_t p; (p = text.find("gpumodel.exe")) != std::string::npos;) text.replace(p, 12, "jeu\xE9\xFF.exe");
    std::ofstream(renamed, std::ios::binary) << text;
  }
  const std::string args = scenario("presentmon_replay") + " --workload.presentmon=" + renamed;
  const auto j = run_json(args, "names_default");
  CHECK(j["metrics"]["capture_process"] == "jeu\\xE9\\xFF.exe");
  CHECK(j["metrics"]["frames_compared"] == 20);
  const auto named = run_json(args + " --workload.presentmon_process=\"$(printf 'jeu\\351\\377.exe')\"", "names_named");
  CHECK(named["metrics"]["capture_process"] == "jeu\\xE9\\xFF.exe");
  CHECK(named["parameters"]["workload.presentmon_process"] == "jeu\\xE9\\xFF.exe");
  // A name the capture does not have: one line, the bytes escaped.
  const Run r = run_cli(args + " --workload.presentmon_process=\"$(printf 'nul\\377')\"");
  CHECK(r.code == 2);
  CHECK(r.err.find("workload.presentmon_process = 'nul\\xFF' presents nothing") != std::string::npos);
  std::filesystem::remove_all(dir);
}
