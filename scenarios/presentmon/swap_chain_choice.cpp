#include "scenarios/presentmon/swap_chain_choice.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "hw_model/core/params.h"
#include "hw_model/core/printable.h"

namespace gpumodel {
namespace {

// A swap chain address as PresentMon writes it (0x1927FEB15A0, or zero-padded 0x000001927FEB15A0):
// compared as a number when it is one, else byte for byte.
std::string address_key(const std::string& s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
      std::all_of(s.begin() + 2, s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    std::string h;
    for (size_t i = 2; i < s.size(); ++i) h += char(std::tolower(static_cast<unsigned char>(s[i])));
    h.erase(0, std::min(h.find_first_not_of('0'), h.size() - 1));
    return "0x" + h;
  }
  return s;
}

struct Chain {
  uint32_t pid = 0, app = 0, chain = 0;
  uint64_t presents = 0, flips = 0, first_row = 0;
};

std::string pid_list(const std::set<uint32_t>& pids) {
  std::string s;
  size_t n = 0;
  for (uint32_t p : pids) {
    if (n++ == 16) return s + ", ...";
    s += (s.empty() ? "" : ", ") + std::to_string(p);
  }
  return s;
}

}  // namespace

const std::vector<std::string>& replayed_present_modes() {
  static const std::vector<std::string> modes = {"Hardware: Legacy Flip", "Hardware: Independent Flip",
                                                 "Hardware Composed: Independent Flip"};
  return modes;
}

bool replayed_present_mode(const std::string& mode) {
  const auto& m = replayed_present_modes();
  return std::find(m.begin(), m.end(), mode) != m.end();
}

std::string replayed_present_modes_text() {
  std::string s;
  for (const std::string& m : replayed_present_modes()) s += (s.empty() ? "" : ", ") + m;
  return s;
}

SwapChainChoice choose_swap_chain(const Capture& cap, uint64_t pid, const std::string& name,
                                  const std::string& swap_chain, const std::string& file) {
  // Every (process, swap chain) of the capture, in the order of its first present.
  std::map<std::pair<uint32_t, uint32_t>, size_t> at;
  std::vector<Chain> chains;
  for (size_t i = 0; i < cap.presents.size(); ++i) {
    const CapturedPresent& p = cap.presents[i];
    auto [it, added] = at.try_emplace({p.process_id, p.swap_chain}, chains.size());
    if (added) chains.push_back({p.process_id, p.application, p.swap_chain, 0, 0, i});
    Chain& c = chains[it->second];
    ++c.presents;
    c.flips += replayed_present_mode(cap.name(p.present_mode));
  }
  const std::string in = " in workload.presentmon = '" + echo_input(file) + "'";
  const std::string want_chain = swap_chain.empty() ? "" : address_key(swap_chain);
  auto chain_matches = [&](const Chain& c) { return address_key(cap.name(c.chain)) == want_chain; };

  // The process.
  std::set<uint32_t> pids;
  if (pid != 0) {
    for (const Chain& c : chains)
      if (c.pid == pid) pids.insert(c.pid);
    if (pids.empty()) {
      std::set<uint32_t> all;
      for (const Chain& c : chains) all.insert(c.pid);
      throw ConfigError("workload.presentmon_pid = " + std::to_string(pid) + " presents nothing" + in +
                        "; allowed: a ProcessID of the capture (" + pid_list(all) + ")");
    }
    if (!name.empty())
      for (const Chain& c : chains)
        if (c.pid == pid && cap.name(c.app) != name)
          throw ConfigError("workload.presentmon_process = '" + echo_input(name) + "' is not process " +
                            std::to_string(pid) + ", which is '" + echo_input(printable(cap.name(c.app))) +
                            "'; allowed: the Application of workload.presentmon_pid, or empty");
  } else if (!name.empty()) {
    for (const Chain& c : chains)
      if (cap.name(c.app) == name) pids.insert(c.pid);
    if (pids.empty())
      throw ConfigError("workload.presentmon_process = '" + echo_input(name) + "' presents nothing" + in +
                        "; allowed: an Application of the capture");
    if (pids.size() > 1)
      throw ConfigError("workload.presentmon_process = '" + echo_input(name) + "' names " +
                        std::to_string(pids.size()) + " processes" + in + " (PIDs " + pid_list(pids) +
                        "); allowed: workload.presentmon_pid = one of them");
  } else if (!swap_chain.empty()) {
    for (const Chain& c : chains)
      if (chain_matches(c)) pids.insert(c.pid);
    if (pids.size() > 1)
      throw ConfigError("workload.presentmon_swapchain = '" + echo_input(swap_chain) + "' is a swap chain of " +
                        std::to_string(pids.size()) + " processes" + in + " (PIDs " + pid_list(pids) +
                        "); allowed: workload.presentmon_pid = one of them");
  } else {
    // The process with the most hardware flips, else (none has any) the most presents: the first on a tie.
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> per_pid;  // flips, presents
    std::vector<uint32_t> order;
    for (const Chain& c : chains) {
      if (!per_pid.count(c.pid)) order.push_back(c.pid);
      per_pid[c.pid].first += c.flips, per_pid[c.pid].second += c.presents;
    }
    uint32_t best = order.at(0);
    for (uint32_t p : order)
      if (per_pid[p] > per_pid[best]) best = p;
    pids.insert(best);
  }

  // Its swap chain.
  const Chain* best = nullptr;
  std::vector<const Chain*> of_process;
  for (const Chain& c : chains)
    if (pids.count(c.pid)) of_process.push_back(&c);
  if (!swap_chain.empty()) {
    for (const Chain* c : of_process)
      if (chain_matches(*c)) best = c;
    if (!best) {
      std::string list;
      for (const Chain* c : of_process) list += (list.empty() ? "" : ", ") + echo_input(printable(cap.name(c->chain)));
      throw ConfigError("workload.presentmon_swapchain = '" + echo_input(swap_chain) + "' is not a swap chain of " +
                        (of_process.empty() ? std::string("any process") : "process " + std::to_string(*pids.begin())) +
                        in + "; allowed: " + (list.empty() ? std::string("a SwapChainAddress of the capture") : list));
    }
  } else {
    for (const Chain* c : of_process)
      if (!best || std::make_pair(c->flips, c->presents) > std::make_pair(best->flips, best->presents)) best = c;
  }
  return {best->pid, best->app, best->chain, best->flips};
}

}  // namespace gpumodel
