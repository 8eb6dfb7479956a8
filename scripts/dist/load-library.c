/*
 * Loads mintid's native library with dlopen() and calls two of its exported uniffi symbols:
 * the contract version (a plain u32) and core_version() (a String in a RustBuffer). Built
 * for aarch64 with `zig cc` and run under qemu-aarch64 by scripts/dist/check-python.sh, it
 * proves the aarch64 wheel's library loads and answers in an aarch64 process.
 *
 *   load-library PATH/TO/libmintid_ffi.so   ->   prints "contract N core X.Y.Z"
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* uniffi's C ABI (uniffi 0.32): RustBuffer { u64 capacity; u64 len; u8 *data; }. */
typedef struct {
    uint64_t capacity;
    uint64_t len;
    uint8_t *data;
} RustBuffer;

typedef struct {
    int8_t code;
    RustBuffer error_buf;
} RustCallStatus;

typedef uint32_t (*contract_fn)(void);
typedef RustBuffer (*core_version_fn)(RustCallStatus *);
typedef void (*free_fn)(RustBuffer, RustCallStatus *);

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    contract_fn contract = (contract_fn)dlsym(library, "ffi_mintid_ffi_uniffi_contract_version");
    core_version_fn core_version = (core_version_fn)dlsym(library, "uniffi_mintid_ffi_fn_func_core_version");
    free_fn buffer_free = (free_fn)dlsym(library, "ffi_mintid_ffi_rustbuffer_free");
    if (!contract || !core_version || !buffer_free) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 1;
    }
    RustCallStatus status = {0};
    RustBuffer version = core_version(&status);
    if (status.code != 0) {
        fprintf(stderr, "core_version failed with status %d\n", status.code);
        return 1;
    }
    printf("contract %u core %.*s\n", contract(), (int)version.len, (const char *)version.data);
    buffer_free(version, &status);
    return status.code == 0 ? 0 : 1;
}
