// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the hash the results record for
// the scenario file that ran, the same `sha256sum` prints.
#pragma once
#include <string>

namespace gpumodel {

std::string sha256_hex(const std::string& bytes);

}  // namespace gpumodel
