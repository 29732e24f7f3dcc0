// The gpumodel command line. Exit codes: 0 pass; 1 a scenario check, a monitor or a bug check failed
// (or the model faulted); 2 bad input, with one message on stderr naming the key or file.
#pragma once

namespace gpumodel {
int cli_main(int argc, char** argv);
}
