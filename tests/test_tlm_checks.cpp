// TLM-2.0 base-protocol checks (hw_model/core/tlm_check.h): each rule broken on purpose through the
// check functions (always compiled, so these run in every build), the targets' answers to what they do
// not implement, and the wiring into hops and the scenario verdict (on in Debug builds).
#include <cstring>
#include <functional>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>

#include "hw_model/core/tlm_check.h"
#include "hw_model/display/display_engine.h"
#include "hw_model/gpu/regs.h"
#include "hw_model/interconnect/interrupt_controller.h"
#include "hw_model/interconnect/router.h"
#include "hw_model/memory/memory.h"
#include "tb.h"

using namespace tb;
using namespace sc_core;
using Catch::Matchers::Contains;
namespace tc = gpumodel::tlm_check;

namespace {

// A transaction set up as the model's initiators set theirs (bus.h), with buffers it owns.
struct Txn {
  std::vector<unsigned char> data, be;
  tlm::tlm_generic_payload t;
  Txn(tlm::tlm_command cmd, uint64_t addr, unsigned len, unsigned char fill = 0) : data(len, fill) {
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data.data());
    t.set_data_length(len);
    t.set_streaming_width(len);
    t.set_byte_enable_ptr(nullptr);
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  Txn& enables(std::vector<unsigned char> b) {
    be = std::move(b);
    t.set_byte_enable_ptr(be.data());
    t.set_byte_enable_length(unsigned(be.size()));
    return *this;
  }
};

// Runs `f`, which must break exactly `n` rules, `rule` among them, and report them; returns the report.
std::string broken(const std::function<void()>& f, const std::string& rule, uint64_t n = 1) {
  const uint64_t before = tc::violations();
  std::string what;
  try {
    f();
  } catch (const sc_report& e) {
    what = e.what();
  }
  CHECK(tc::violations() - before == n);
  CHECK_THAT(what, Contains("[" + rule + "]"));
  CHECK_THAT(what, Contains("gpumodel/tlm"));
  return what;
}
void clean(const std::function<void()>& f) {
  const uint64_t before = tc::violations();
  CHECK_NOTHROW(f());
  CHECK(tc::violations() == before);
}

// A hop's whole call, the callee played by `callee`.
void hop(tlm::tlm_generic_payload& t, sc_time delay,
         const std::function<void(tlm::tlm_generic_payload&, sc_time&)>& callee) {
  const tc::Snapshot s = tc::before_call(t, delay, "tb.hop");
  callee(t, delay);
  tc::after_call(s, t, delay);
}
void answers_ok(tlm::tlm_generic_payload& t, sc_time& d) {
  t.set_response_status(tlm::TLM_OK_RESPONSE);
  d += sc_time(10, SC_NS);
}

// An initiator for tests: sends through the same hop wrapper the model's initiators use, or straight
// into the socket for what the model's hops refuse to send (streaming), to see the target refuse it.
struct Initiator : sc_module {
  tlm_utils::simple_initiator_socket<Initiator> sock;
  std::function<void()> body;
  explicit Initiator(sc_module_name n) : sc_module(n), sock("sock") {
    SC_HAS_PROCESS(Initiator);
    SC_THREAD(run);
  }
  void run() {
    if (body) body();
  }
  tlm::tlm_response_status send(tlm::tlm_generic_payload& t) {
    sc_time d = SC_ZERO_TIME;
    checked_b_transport(sock, t, d, sock.name());
    return t.get_response_status();
  }
  tlm::tlm_response_status send_unchecked(tlm::tlm_generic_payload& t) {
    sc_time d = SC_ZERO_TIME;
    sock->b_transport(t, d);
    return t.get_response_status();
  }
};

// A target that never sets the response status, with no checks of its own.
struct Silent : sc_module {
  tlm_utils::simple_target_socket<Silent> tsock;
  explicit Silent(sc_module_name n) : sc_module(n), tsock("tsock") {
    tsock.register_b_transport(this, &Silent::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload&, sc_time& d) { d += sc_time(1, SC_NS); }
};

// A process of either kind that runs `body` once at the start of the simulation.
struct Caller : sc_module {
  std::function<void()> body;
  Caller(sc_module_name n, bool method) : sc_module(n) {
    SC_HAS_PROCESS(Caller);
    if (method) {
      SC_METHOD(run);
    } else {
      SC_THREAD(run);
    }
  }
  void run() {
    if (body) body();
  }
};

// An ordinary loosely-timed target: it synchronises in b_transport (waits out the annotated delay, as
// a memory model without a quantum keeper does) and records what arrived when. Legal TLM-2.0, and it
// faults any initiator that calls it from a method process.
struct WaitingTarget : sc_module {
  tlm_utils::simple_target_socket<WaitingTarget> tsock;
  std::vector<std::pair<uint32_t, sc_time>> writes;  // first 4 data bytes, arrival
  explicit WaitingTarget(sc_module_name n) : sc_module(n), tsock("tsock") {
    tsock.register_b_transport(this, &WaitingTarget::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_time& d) {
    checked_target(t, d, name(), tc::TargetCaps{}, [this](tlm::tlm_generic_payload& tt, sc_time& dd) {
      wait(dd);
      dd = SC_ZERO_TIME;
      uint32_t v = 0;
      if (tt.is_write()) std::memcpy(&v, tt.get_data_ptr(), std::min(4u, tt.get_data_length()));
      writes.emplace_back(v, sc_time_stamp());
      tt.set_response_status(tlm::TLM_OK_RESPONSE);
    });
  }
};

}  // namespace

TEST_CASE("TLM entry: well-formed reads and writes pass every hop and target check", "[tlm][H1]") {
  Txn w(tlm::TLM_WRITE_COMMAND, 0x1000, 8, 0x5a), r(tlm::TLM_READ_COMMAND, 0x1000, 8);
  clean([&] { hop(w.t, SC_ZERO_TIME, answers_ok); });
  clean([&] { hop(r.t, sc_time(3, SC_NS), answers_ok); });
  Txn be(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
  be.enables({0xff, 0x00});  // legal at a hop: the model's memory implements them
  clean([&] { hop(be.t, SC_ZERO_TIME, answers_ok); });
  Txn tgt(tlm::TLM_READ_COMMAND, 0x1000, 4);
  clean([&] {
    sc_time d = SC_ZERO_TIME;
    const tc::Snapshot s = tc::target_entry(tgt.t, d, "tb.target");
    answers_ok(tgt.t, d);
    tc::target_exit(s, tgt.t, d, tc::TargetCaps{});
  });
}

TEST_CASE("TLM entry: a hop sends only READ and WRITE, a target accepts IGNORE", "[tlm][H1]") {
  Txn t(tlm::TLM_IGNORE_COMMAND, 0x1000, 4);
  broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "command");
  clean([&] { tc::target_entry(t.t, SC_ZERO_TIME, "tb.target"); });
}

TEST_CASE("TLM entry: a null data pointer is refused", "[tlm][H1]") {
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 4);
  t.t.set_data_ptr(nullptr);
  broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "data_ptr");
  broken([&] { tc::target_entry(t.t, SC_ZERO_TIME, "tb.target"); }, "data_ptr");
}

TEST_CASE("TLM entry: a zero data length is refused", "[tlm][H1]") {
  Txn t(tlm::TLM_READ_COMMAND, 0x1000, 4);
  t.t.set_data_length(0);
  t.t.set_streaming_width(0);  // and a zero streaming width: two rules broken
  const std::string m = broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "data_length", 2);
  CHECK_THAT(m, Contains("[streaming_width]"));
}

TEST_CASE("TLM entry: streaming width zero, or below the length at a hop", "[tlm][H1]") {
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
  t.t.set_streaming_width(0);
  broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "streaming_width");
  broken([&] { tc::target_entry(t.t, SC_ZERO_TIME, "tb.target"); }, "streaming_width");
  t.t.set_streaming_width(4);  // streaming: the model never issues it, a target may be sent it
  const std::string m = broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "streaming_width");
  CHECK_THAT(m, Contains("never streams"));
  clean([&] { tc::target_entry(t.t, SC_ZERO_TIME, "tb.target"); });
}

TEST_CASE("TLM entry: byte enables need a length and 0x00/0xff values", "[tlm][H1]") {
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
  t.enables({0xff});
  t.t.set_byte_enable_length(0);
  broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "byte_enable_length");
  t.enables({0xff, 0x0f});
  const std::string m = broken([&] { tc::target_entry(t.t, SC_ZERO_TIME, "tb.target"); }, "byte_enable_value");
  CHECK_THAT(m, Contains("byte enable 1"));
}

TEST_CASE("TLM entry: DMI hint, gp option and response status as an initiator leaves them", "[tlm][H1]") {
  Txn t(tlm::TLM_READ_COMMAND, 0x1000, 8);
  t.t.set_dmi_allowed(true);
  broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "dmi_allowed");
  t.t.set_dmi_allowed(false);
  t.t.set_gp_option(tlm::TLM_FULL_PAYLOAD);
  broken([&] { tc::before_call(t.t, SC_ZERO_TIME, "tb.hop"); }, "gp_option");
  t.t.set_gp_option(tlm::TLM_MIN_PAYLOAD);
  t.t.set_response_status(tlm::TLM_OK_RESPONSE);  // a reused payload not reset
  broken([&] { tc::target_entry(t.t, SC_ZERO_TIME, "tb.target"); }, "response_status");
}

TEST_CASE("TLM return: the target must set the response status", "[tlm][H1]") {
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
  const std::string m =
      broken([&] { hop(t.t, SC_ZERO_TIME, [](tlm::tlm_generic_payload&, sc_time&) {}); }, "response_status");
  CHECK_THAT(m, Contains("did not set it"));
  Txn u(tlm::TLM_READ_COMMAND, 0x1000, 8);
  broken(
      [&] {
        const tc::Snapshot s = tc::target_entry(u.t, SC_ZERO_TIME, "tb.target");
        tc::target_exit(s, u.t, SC_ZERO_TIME, tc::TargetCaps{});
      },
      "response_status");
}

TEST_CASE("TLM return: a refused posted write comes back INCOMPLETE", "[tlm][H1]") {
  // bus.h: a link whose posted buffer is full refuses a flow-controlled write, leaving it INCOMPLETE
  // with `refused` set: legal at a hop (it was not delivered), never at a target.
  PostedFlowControl fc;
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
  t.t.set_extension(&fc);
  auto refuse = [&fc](tlm::tlm_generic_payload&, sc_time&) { fc.refused = true; };
  clean([&] { hop(t.t, SC_ZERO_TIME, refuse); });
  fc.refused = false;
  broken(
      [&] {
        sc_time d = SC_ZERO_TIME;
        const tc::Snapshot s = tc::target_entry(t.t, d, "tb.target");
        refuse(t.t, d);
        tc::target_exit(s, t.t, d, tc::TargetCaps{});
      },
      "response_status");
  fc.refused = false;
  auto refuse_and_take = [&fc](tlm::tlm_generic_payload& p, sc_time& d) {
    fc.refused = true;
    answers_ok(p, d);
  };
  broken([&] { hop(t.t, SC_ZERO_TIME, refuse_and_take); }, "refused_write");
  t.t.clear_extension(&fc);
}

TEST_CASE("TLM return: attributes the callee may not change", "[tlm][H1]") {
  using Change = std::function<void(tlm::tlm_generic_payload&)>;
  unsigned char other[8] = {}, enables[1] = {0xff};
  const std::vector<std::pair<Change, const char*>> changes = {
      {[](tlm::tlm_generic_payload& p) { p.set_command(tlm::TLM_READ_COMMAND); }, "command"},
      {[](tlm::tlm_generic_payload& p) { p.set_address(p.get_address() + 8); }, "address"},
      {[&](tlm::tlm_generic_payload& p) { p.set_data_ptr(other); }, "data pointer"},
      {[](tlm::tlm_generic_payload& p) { p.set_data_length(4); }, "data length"},
      {[](tlm::tlm_generic_payload& p) { p.set_streaming_width(4); }, "streaming width"},
      {[&](tlm::tlm_generic_payload& p) { p.set_byte_enable_ptr(enables); }, "byte-enable pointer"},
      {[](tlm::tlm_generic_payload& p) { p.set_byte_enable_length(1); }, "byte-enable length"},
      {[](tlm::tlm_generic_payload& p) { p.get_data_ptr()[3] ^= 1; }, "write data"},
  };
  for (auto& entry : changes) {  // not a structured binding: clang 14 cannot capture one
    auto& change = entry.first;
    const auto& what = entry.second;
    INFO(what);
    Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8, 0x11);
    const std::string m = broken(
        [&] {
          hop(t.t, SC_ZERO_TIME, [&](tlm::tlm_generic_payload& p, sc_time& d) {
            change(p);
            answers_ok(p, d);
          });
        },
        "unchanged");
    CHECK_THAT(m, Contains(what));
  }
  // A read's data is the target's to fill.
  Txn r(tlm::TLM_READ_COMMAND, 0x1000, 8);
  clean([&] {
    hop(r.t, SC_ZERO_TIME, [](tlm::tlm_generic_payload& p, sc_time& d) {
      p.get_data_ptr()[0] = 0x77;
      answers_ok(p, d);
    });
  });
}

TEST_CASE("TLM return: a target sets the DMI hint none offers", "[tlm][H1]") {
  Txn t(tlm::TLM_READ_COMMAND, 0x1000, 8);
  broken(
      [&] {
        hop(t.t, SC_ZERO_TIME, [](tlm::tlm_generic_payload& p, sc_time& d) {
          p.set_dmi_allowed(true);
          answers_ok(p, d);
        });
      },
      "dmi_allowed");
}

TEST_CASE("TLM return: annotated time never goes backwards", "[tlm][H1]") {
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
  const std::string m = broken(
      [&] {
        hop(t.t, sc_time(10, SC_NS), [](tlm::tlm_generic_payload& p, sc_time& d) {
          p.set_response_status(tlm::TLM_OK_RESPONSE);
          d = sc_time(5, SC_NS);  // no time passed, yet the delay shrank
        });
      },
      "time");
  CHECK_THAT(m, Contains("backwards"));
  // In simulation: a read sampled at its arrival may hand back a smaller delay (bus.h's contract), as
  // long as the wait covered it; one that waited too little went backwards.
  Initiator init("init");
  Silent unused("unused");  // the socket must be bound; the hops below play their callees
  init.sock.bind(unused.tsock);
  uint64_t after_sampled = 0, after_short = 0;
  std::string short_report;
  init.body = [&] {
    Txn r(tlm::TLM_READ_COMMAND, 0x1000, 8);
    const uint64_t v0 = tc::violations();
    hop(r.t, sc_time(10, SC_NS), [](tlm::tlm_generic_payload& p, sc_time& d) {
      wait(d + sc_time(20, SC_NS));
      d = SC_ZERO_TIME;
      p.set_response_status(tlm::TLM_OK_RESPONSE);
    });
    after_sampled = tc::violations() - v0;
    Txn s(tlm::TLM_READ_COMMAND, 0x1000, 8);
    try {
      hop(s.t, sc_time(10, SC_NS), [](tlm::tlm_generic_payload& p, sc_time& d) {
        wait(5, SC_NS);
        d = SC_ZERO_TIME;
        p.set_response_status(tlm::TLM_OK_RESPONSE);
      });
    } catch (const sc_report& e) {
      short_report = e.what();
    }
    after_short = tc::violations() - v0;
  };
  sc_start();
  CHECK(after_sampled == 0);
  CHECK(after_short == 1);
  CHECK_THAT(short_report, Contains("[time]"));
}

TEST_CASE("TLM target: byte enables or streaming it lacks must not answer OK", "[tlm][H1]") {
  auto serve = [](tlm::tlm_generic_payload& t, tc::TargetCaps caps, tlm::tlm_response_status answer) {
    sc_time d = SC_ZERO_TIME;
    const tc::Snapshot s = tc::target_entry(t, d, "tb.target");
    t.set_response_status(answer);
    tc::target_exit(s, t, d, caps);
  };
  tc::TargetCaps none, with_enables;
  with_enables.byte_enables = true;
  {
    Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
    t.enables({0xff, 0x00});
    broken([&] { serve(t.t, none, tlm::TLM_OK_RESPONSE); }, "byte_enables_unsupported");
  }
  {
    Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
    t.enables({0xff, 0x00});
    clean([&] { serve(t.t, none, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE); });
  }
  {
    Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 8);
    t.enables({0xff, 0x00});
    clean([&] { serve(t.t, with_enables, tlm::TLM_OK_RESPONSE); });
  }
  {
    Txn t(tlm::TLM_READ_COMMAND, 0x1000, 8);
    t.t.set_streaming_width(4);
    broken([&] { serve(t.t, none, tlm::TLM_OK_RESPONSE); }, "streaming_unsupported");
  }
  {
    Txn t(tlm::TLM_READ_COMMAND, 0x1000, 8);
    t.t.set_streaming_width(4);
    clean([&] { serve(t.t, none, tlm::TLM_BURST_ERROR_RESPONSE); });
  }
}

TEST_CASE("TLM report: names the hop, its port, the rule and the transaction", "[tlm][H1]") {
  Txn t(tlm::TLM_WRITE_COMMAND, 0x1234, 8);
  t.t.set_data_length(0);
  t.t.set_streaming_width(0);
  t.t.set_data_ptr(nullptr);
  std::string what;
  try {
    tc::before_call(t.t, sc_time(7, SC_NS), "platform.rc.isock", 2);
  } catch (const sc_report& e) {
    what = e.what();
  }
  CHECK_THAT(what, Contains("platform.rc.isock[port 2] (hop, entry)"));
  CHECK_THAT(what, Contains("[data_ptr] null; [data_length] zero; [streaming_width] zero"));
  CHECK_THAT(what, Contains("WRITE address 0x1234 data_length 0"));
  CHECK_THAT(what, Contains("delay 7 ns"));
  CHECK(tc::last_report() == what.substr(what.find("platform.rc.isock"), tc::last_report().size()));
}

TEST_CASE("TLM memory: honours byte enables on writes and reads", "[tlm][H1]") {
  auto ps = params();
  Memory mem("mem", ps, "sysmem.", regs::kSysmemBase);
  Initiator init("init");
  init.sock.bind(mem.tsock);
  const uint64_t a = regs::kSysmemBase + 0x40;
  std::vector<unsigned char> before(8, 0x11);
  mem.poke(a, before.data(), 8);
  tlm::tlm_response_status wrote = tlm::TLM_INCOMPLETE_RESPONSE, read = wrote, streamed = wrote;
  std::vector<unsigned char> got;
  init.body = [&] {
    Txn w(tlm::TLM_WRITE_COMMAND, a, 8, 0xaa);
    w.enables({0xff, 0x00});  // repeats: even bytes written, odd ones kept
    wrote = init.send(w.t);
    wait(sc_time(1, SC_US));
    Txn r(tlm::TLM_READ_COMMAND, a, 8, 0xee);
    r.enables({0x00, 0x00, 0xff, 0xff});
    read = init.send(r.t);
    got = r.data;
    Txn s(tlm::TLM_READ_COMMAND, a, 8);
    s.t.set_streaming_width(4);  // what no hop of the model sends: straight into the socket
    streamed = init.send_unchecked(s.t);
  };
  sc_start();
  CHECK(wrote == tlm::TLM_OK_RESPONSE);
  CHECK(mem.peek64(a) == 0x11aa11aa11aa11aaull);
  CHECK(read == tlm::TLM_OK_RESPONSE);
  CHECK(got == std::vector<unsigned char>{0xee, 0xee, 0xaa, 0x11, 0xee, 0xee, 0xaa, 0x11});
  CHECK(streamed == tlm::TLM_BURST_ERROR_RESPONSE);
  CHECK(tc::violations() == 0);
}

TEST_CASE("TLM interrupt controller: refuses byte enables and streaming", "[tlm][H1]") {
  Vcd vcd;
  InterruptController intc("intc", vcd);
  Initiator init("init");
  init.sock.bind(intc.tsock);
  tlm::tlm_response_status with_enables = tlm::TLM_INCOMPLETE_RESPONSE, streamed = with_enables, plain = with_enables;
  init.body = [&] {
    Txn be(tlm::TLM_WRITE_COMMAND, InterruptController::kMsiBase, 4, 0x41);
    be.enables({0xff});
    with_enables = init.send(be.t);
    Txn s(tlm::TLM_WRITE_COMMAND, InterruptController::kMsiBase, 4, 0x41);
    s.t.set_streaming_width(2);
    streamed = init.send_unchecked(s.t);
    Txn ok(tlm::TLM_WRITE_COMMAND, InterruptController::kMsiBase, 4, 0x41);
    plain = init.send(ok.t);
  };
  sc_start();
  CHECK(with_enables == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  CHECK(streamed == tlm::TLM_BURST_ERROR_RESPONSE);
  CHECK(plain == tlm::TLM_OK_RESPONSE);
  CHECK(intc.msi_count() == 1);  // only the well-formed MSI was taken
  CHECK(tc::violations() == 0);
}

TEST_CASE("TLM BAR0: byte enables refused across the whole path", "[tlm][H1]") {
  // From the root complex down the link to the adapter's registers: every hop passes the error back.
  auto ps = params();
  Vcd vcd;
  Platform p(ps, vcd, 1);
  Initiator host("host");
  host.sock.bind(p.rc.tsock);
  tlm::tlm_response_status wrote = tlm::TLM_INCOMPLETE_RESPONSE, read = wrote, plain = wrote;
  uint64_t id = 0;
  host.body = [&] {
    Txn w(tlm::TLM_WRITE_COMMAND, regs::kBar0Base + regs::kFenceSelect, 4);
    w.enables({0xff, 0xff, 0x00, 0x00});
    wrote = host.send(w.t);
    Txn r(tlm::TLM_READ_COMMAND, regs::kBar0Base + regs::kId, 8);
    r.enables({0xff});
    read = host.send(r.t);
    Txn ok(tlm::TLM_READ_COMMAND, regs::kBar0Base + regs::kId, 8);
    plain = host.send(ok.t);
    std::memcpy(&id, ok.data.data(), 8);
  };
  sc_start(sc_time(1, SC_MS));
  CHECK(wrote == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  CHECK(read == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  CHECK(plain == tlm::TLM_OK_RESPONSE);
  CHECK(id == regs::kIdValue);
  CHECK(tc::violations() == 0);
}

TEST_CASE("TLM wiring: a hop catches a target leaving the status unset", "[tlm][H1]") {
  // A target with no checks of its own: only the calling hop's checks can see it. They are wired
  // in when GPUMODEL_TLM_CHECKS is on (Debug); otherwise the call is plain and nothing is counted.
  Silent target("silent");
  Initiator init("init");
  init.sock.bind(target.tsock);
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  std::string report;
  init.body = [&] {
    Txn t(tlm::TLM_WRITE_COMMAND, 0x1000, 4);
    try {
      status = init.send(t.t);
    } catch (const sc_report& e) {
      report = e.what();
    }
  };
  sc_start();
  if (kTlmChecks) {
    CHECK(tc::violations() == 1);
    CHECK_THAT(report, Contains("init.sock (hop, return): [response_status]"));
  } else {
    CHECK(tc::violations() == 0);
    CHECK(status == tlm::TLM_INCOMPLETE_RESPONSE);
  }
}

TEST_CASE("TLM monitor: a scenario's verdict counts protocol violations", "[tlm][H1][H4]") {
  const std::string out = "tlm_monitor_test.json";
  const Run r = run_cli(scenario("mmio_roundtrip") + " --results " + out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(slurp(out));
  std::remove(out.c_str());
  if (kTlmChecks) {
    REQUIRE(j["monitors"].contains("tlm_base_protocol"));
    CHECK(j["monitors"]["tlm_base_protocol"]["violations"] == 0);
  } else {
    CHECK_FALSE(j["monitors"].contains("tlm_base_protocol"));  // compiled out: not checked, not claimed
  }
  CHECK(j["verdict"] == "pass");
}

TEST_CASE("TLM entry: b_transport from a method process is refused", "[tlm][H1]") {
  // IEEE 1666-2011, 11.1.1.4 b: b_transport may call wait, so it is called from a thread. The rule is
  // judged from the kernel's current process, at a hop and at a target; a thread's call is clean.
  Caller m("m", true), th("th", false);
  std::string hop_report, target_report;
  uint64_t method_violations = 0, thread_violations = 0;
  Txn a(tlm::TLM_WRITE_COMMAND, 0x1000, 4), b(tlm::TLM_WRITE_COMMAND, 0x1000, 4), c(tlm::TLM_WRITE_COMMAND, 0x1000, 4);
  m.body = [&] {
    const uint64_t before = tc::violations();
    try {
      tc::before_call(a.t, SC_ZERO_TIME, "tb.hop");
    } catch (const sc_report& e) {
      hop_report = e.what();
    }
    try {
      tc::target_entry(b.t, SC_ZERO_TIME, "tb.target");
    } catch (const sc_report& e) {
      target_report = e.what();
    }
    method_violations = tc::violations() - before;
  };
  th.body = [&] {
    const uint64_t before = tc::violations();
    tc::before_call(c.t, SC_ZERO_TIME, "tb.hop");
    thread_violations = tc::violations() - before;
  };
  sc_start();
  CHECK(method_violations == 2);
  CHECK_THAT(hop_report, Contains("tb.hop (hop, entry): [process] called from the method process m.run"));
  CHECK_THAT(hop_report, Contains("11.1.1.4 b"));
  CHECK_THAT(target_report, Contains("tb.target (target, entry): [process]"));
  CHECK(thread_violations == 0);
}

TEST_CASE("TLM wiring: a method's call through a socket is reported at the hop", "[tlm][H1]") {
  // A target that never waits: the call could complete, but with GPUMODEL_TLM_CHECKS on the calling
  // hop reports the process kind first.
  struct MethodInitiator : sc_module {
    tlm_utils::simple_initiator_socket<MethodInitiator> sock;
    std::vector<std::string> reports;
    Txn t{tlm::TLM_WRITE_COMMAND, 0x1000, 4};
    explicit MethodInitiator(sc_module_name n) : sc_module(n), sock("sock") {
      SC_HAS_PROCESS(MethodInitiator);
      SC_METHOD(run);
    }
    void run() {
      sc_time d = SC_ZERO_TIME;
      try {
        checked_b_transport(sock, t.t, d, sock.name());
      } catch (const sc_report& e) {
        reports.push_back(e.what());
      }
    }
  } m("m");
  struct Ok : sc_module {
    tlm_utils::simple_target_socket<Ok> tsock;
    explicit Ok(sc_module_name n) : sc_module(n), tsock("tsock") { tsock.register_b_transport(this, &Ok::bt); }
    void bt(tlm::tlm_generic_payload& t, sc_time& d) {
      checked_target(t, d, name(), tc::TargetCaps{},
                     [](tlm::tlm_generic_payload& tt, sc_time&) { tt.set_response_status(tlm::TLM_OK_RESPONSE); });
    }
  } target("target");
  m.sock.bind(target.tsock);
  sc_start();
  if (kTlmChecks) {
    REQUIRE(m.reports.size() == 1);  // the hop's report ends the call
    CHECK_THAT(m.reports[0], Contains("m.sock (hop, entry): [process]"));
    CHECK(tc::violations() == 1);
  } else {
    CHECK(m.reports.empty());
    CHECK(tc::violations() == 0);
  }
}

TEST_CASE("TLM wiring: the display engine's MSIs reach a target that waits in b_transport", "[tlm][H1][C6]") {
  // The vblank MSI is posted when a vblank starts, from the engine's own process (or from a register
  // write landing at that instant). A target behind the fabric that synchronises in b_transport must
  // work: each MSI arrives at its vblank start, and nothing is reported.
  constexpr uint64_t kMem = 0x1'0000'0000ull, kRegs = 0x2'0000'0000ull;
  ParamSet ps;
  Memory::declare_params(ps, "sysmem.", false);
  DisplayEngine::declare_params(ps);
  Vcd vcd;
  Memory mem("sysmem", ps, "sysmem.", kMem);
  WaitingTarget msi("msi");
  Router fabric("fabric", SC_ZERO_TIME);
  DisplayEngine disp("display", ps, vcd, kRegs);
  Probe cpu("cpu");
  disp.isock.bind(fabric.tsock);
  fabric.isock.bind(mem.tsock);
  fabric.isock.bind(msi.tsock);
  fabric.map(kMem, mem.size(), 0, "sysmem");
  fabric.map(InterruptController::kMsiBase, InterruptController::kMsiSize, 1, "msi");
  cpu.sock.bind(disp.regs);
  namespace dr = gpumodel::display_regs;
  cpu.body = [&] {
    cpu.bus.post64(kRegs + dr::kMsiAddr, InterruptController::kMsiBase);
    cpu.bus.post32(kRegs + dr::kMsiData, 0x40);
    cpu.bus.post64(kRegs + dr::kSurfaceAddr, kMem);
    cpu.bus.post32(kRegs + dr::kControl, dr::kCtrlEnable | dr::kCtrlVblankIrq);
    wait(sc_time(55, SC_MS));  // vblanks 0, 1 and 2 end frames 0-2 (16.7 ms apart at 60 Hz)
    sc_stop();
  };
  sc_start();
  REQUIRE(msi.writes.size() == 3);
  for (uint64_t n = 0; n < 3; ++n) {
    CHECK(msi.writes[n].first == 0x40 + dr::kVblankVector);
    CHECK(msi.writes[n].second == disp.timing().vblank_start(n));
  }
  CHECK(tc::violations() == 0);
}
