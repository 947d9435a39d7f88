//! `hookd-relay-lite` (`lite/`, a package of its own), built once per test run, and a folder where hookd
//! is installed as `cargo install` puts it with the lite relay beside it: `hookd`, `hookd-relay` and
//! `hookd-relay-lite`. `--print-settings` run from there writes the lite relay, as it does for a user who
//! installed it, and the lite relay hands what it does not carry to the `hookd-relay` beside it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::{BIN, RELAY_BIN, run_with_deadline, text, the_users_toolchain};

/// The folder: `target/lite/installed`, made anew on first use in each test run.
pub fn hookd_installed_with_lite() -> &'static Path {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = Path::new(BIN)
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("lite");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(root.join("lite/Cargo.toml"))
            .arg("--target-dir")
            .arg(&target);
        the_users_toolchain(&mut build);
        let built = run_with_deadline(build, None, Duration::from_secs(300));
        assert!(
            built.status.success(),
            "building hookd-relay-lite: {}",
            text(&built.stderr)
        );
        // A folder of its own per test process: tests of several processes may run at once.
        let folder = target.join(format!("installed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).unwrap();
        for (from, name) in [
            (target.join("release/hookd-relay-lite"), "hookd-relay-lite"),
            (PathBuf::from(BIN), "hookd"),
            (PathBuf::from(RELAY_BIN), "hookd-relay"),
        ] {
            // Linked, not copied (the debug builds are large); copied where a link cannot be made.
            let to = folder.join(name);
            if std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to).unwrap();
            }
        }
        folder
    })
}

/// The lite relay, in [`hookd_installed_with_lite`].
pub fn lite_relay() -> &'static str {
    static LITE: OnceLock<String> = OnceLock::new();
    LITE.get_or_init(|| {
        hookd_installed_with_lite()
            .join("hookd-relay-lite")
            .to_str()
            .unwrap()
            .to_string()
    })
}
