// The pairwise sweep (extremes_sweep --pairwise): for each scenario file, a covering array over the enum
// and bool keys the file sweeps, so every value of every such key meets every value of every other in
// at least one run; each row a run of the file's reduced workload, judged as the extremes sweep judges
// one key's. A combination the model refuses (exit 2 before elaborating), or with which its OS fails an
// adapter's start, is kept out of the rows and counted, by reason; one run per reason confirms what the
// binary does with it. A row that is a finding is reduced to the keys it needs (usually two), reported
// with the command that reproduces it. --interactions also runs each value alone and reduces each row
// fail that no value gives alone, listed for review.
#pragma once
#include "tests/sweep/sweep_options.h"

namespace sweep {

// Builds, runs and reports the pairwise sweep of the files `o` selects; returns the exit code: 0 iff
// no finding.
int pairwise_sweep(const Options& o);

}  // namespace sweep
