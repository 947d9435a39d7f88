//! Links the program with nothing: no C runtime, no libc, not position-independent (nothing to relocate
//! at start), static. Its `_start` is its own (src/main.rs).
fn main() {
    for arg in [
        "-nostartfiles",
        "-nostdlib",
        "-static",
        "-no-pie",
        "-Wl,--gc-sections",
        "-Wl,--build-id=none",
    ] {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
}
