//! Every saved fuzz input, replayed through the fuzz targets' own checks on each `cargo test`, without
//! cargo fuzz: the seed corpus (`fuzz/corpus/<target>/`) and every input that once crashed a target
//! (`fuzz/regressions/<target>/`, each named after what it broke). A crash, once found and fixed, stays
//! fixed.
//!
//! The checks themselves (the invariants beyond "does not panic") are in fuzz/checks.rs, included here as
//! a module so that the fuzzers and this test can never disagree about them.

#[path = "../../fuzz/checks.rs"]
mod checks;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Every file under `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/`, sorted.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for folder in ["corpus", "regressions"] {
        let dir = root.join(folder).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
                .path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Runs `check` on every input of `target`, and fails naming each input that broke it (each panic's
/// message is printed above by the panic hook).
fn replay(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(
        !files.is_empty(),
        "no inputs for {target}: the seed corpus fuzz/corpus/{target}/ is missing"
    );
    let failed: Vec<String> = files
        .iter()
        .filter(|path| {
            let data =
                std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} {target} inputs broke a check:\n  {}",
        failed.len(),
        files.len(),
        failed.join("\n  ")
    );
}

#[test]
fn request_inputs_hold() {
    replay("request", checks::request);
}

#[test]
fn settings_inputs_hold() {
    replay("settings", checks::settings);
}

#[test]
fn answer_inputs_hold() {
    replay("answer", checks::answer);
}

#[test]
fn guard_inputs_hold() {
    replay("guard", checks::guard);
}
