// Implied keys: a value of one key that only makes sense with a value of another sets that other key,
// unless the user set it (in the scenario file or on the command line). A user who set it to a value
// that contradicts is refused by the check the implication follows (validate_scenario), as before.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "hw_model/core/params.h"

namespace gpumodel {

struct Implication {
  // Every `key = value` that must hold (the effective values); value "*" means "set by the user".
  std::vector<std::pair<std::string, std::string>> when;
  std::string key, value;  // what they imply
  std::string check;       // the refusal it spares the user (where the constraint is checked)
};

// The table, from the constraint checks of the scenarios and the platform.
const std::vector<Implication>& implications();

struct Implied {
  std::string key, value;
  std::string because;  // "xfence.scenario = 2a, xfence.igpu_queue = user"
};

// Sets, for `scenario`, each implied key the user did not set (ParamSet::set: was_set is true from then
// on) and returns them in
// the order set. An implication whose keys `scenario` does not have is skipped; one implied key can
// imply another. Call after the scenario file and the overrides, before validate_scenario.
std::vector<Implied> apply_implications(ParamSet& ps, const std::string& scenario);

// A key's effective value as a scenario file writes it (C6, true, 4, 2.5).
std::string value_text(const ParamSet& ps, const std::string& key);

}  // namespace gpumodel
