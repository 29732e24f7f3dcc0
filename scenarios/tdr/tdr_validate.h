// The TDR scenarios' parameter checks, before elaboration (ConfigError: exit 2).
#pragma once
#include "hw_model/core/params.h"

namespace gpumodel {

void validate_tdr(const ParamSet& ps, const char* name);

}  // namespace gpumodel
