// libsystemc.so refers to sc_main (its own main calls it); a fuzz target's main is libFuzzer's, so
// this is never called.
extern "C" int sc_main(int, char**) { return 0; }
