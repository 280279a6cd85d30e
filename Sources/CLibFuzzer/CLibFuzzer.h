// Declaration-only shim: libFuzzer's driver entry (compiler-rt, linked by -sanitize=fuzzer). No logic lives here.
// capture-fuzz calls it from its own main, because SwiftPM links executables with main aliased to the module's
// entry point, so libFuzzer's main is never used.
#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
