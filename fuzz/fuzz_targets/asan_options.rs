//! AddressSanitizer defaults for every target, read by the ASan runtime at
//! start-up (an `ASAN_OPTIONS` in the environment still overrides them).
//!
//! What they drop costs time on every allocation and finds nothing in these
//! targets: allocation stack traces in reports (`malloc_context_size=0`),
//! fake stack frames for use-after-return (`detect_stack_use_after_return=0`,
//! the code under test hands out no stack pointers), filling fresh
//! allocations with a pattern (`max_malloc_fill_size=0`), and a 256 MB
//! quarantine that keeps the working set cold (`quarantine_size_mb=8`, still
//! enough to catch a use-after-free within one input). Out-of-bounds access,
//! use-after-free and leak detection stay on.

#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const std::os::raw::c_char {
    c"malloc_context_size=0:detect_stack_use_after_return=0:max_malloc_fill_size=0:quarantine_size_mb=8"
        .as_ptr()
}
