// Text from outside (a message echoing input, a name read from a capture) made safe to print and to
// store in JSON: nlohmann::json refuses to dump a string that is not UTF-8, and a terminal acts on
// control bytes. Below the command line so a scenario can escape a name before it reaches the results.
#pragma once
#include <string>

namespace gpumodel {

// Valid UTF-8 passes; control bytes, invalid bytes and invisible characters (a byte-order mark) are
// shown as \xNN or \u{FEFF}.
std::string printable(const std::string& s);

}  // namespace gpumodel
