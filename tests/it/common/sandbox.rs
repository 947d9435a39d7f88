//! The sandbox: a fresh temp dir per test, holding the settings file, the hook scripts and the socket.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{RESPONSE, wait_until};

/// A script body that prints `json` (as a here-document, so that no quoting gets in the way) and exits 0.
pub fn prints(json: &str) -> String {
    format!("cat <<'EOF'\n{json}\nEOF")
}

/// A fresh temp dir holding everything one test needs. `@DIR@` in settings and scripts is replaced by
/// its path.
pub struct Sandbox {
    pub dir: TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("hookd-test-")
            .tempdir()
            .expect("creating a temp dir");
        fs::create_dir(dir.path().join("conf")).expect("creating the settings folder");
        Sandbox { dir }
    }

    /// A sandbox whose settings folder holds a copy of the repository's `config/`: the example settings
    /// and their scripts, with the modes hookd demands (a checkout made under umask 002 has
    /// group-writable files). Folders in it (a `__pycache__` of a local run) are left out.
    pub fn with_example_config() -> Sandbox {
        let sb = Sandbox::new();
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
        for entry in fs::read_dir(&config).expect("reading config/") {
            let path = entry.unwrap().path();
            if path.is_dir() {
                continue;
            }
            let to = sb.config_dir().join(path.file_name().unwrap());
            fs::copy(&path, &to).unwrap();
            let mode = if path.extension().is_some_and(|e| e == "toml") {
                0o644
            } else {
                0o755
            };
            fs::set_permissions(&to, fs::Permissions::from_mode(mode)).unwrap();
        }
        sb
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the sandbox.
    pub fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `@DIR@` replaced by the sandbox's path.
    pub fn expand(&self, text: &str) -> String {
        text.replace("@DIR@", self.path().to_str().expect("utf-8 temp path"))
    }

    /// The settings file. It has a folder of its own, `conf/`: the daemon watches the settings file's
    /// folder (contract section 10), and the scripts, logs and files hooks write stay out of it, so that
    /// only the tests' own edits of the settings file are changes there.
    pub fn config(&self) -> PathBuf {
        self.p("conf/hooks.toml")
    }

    /// The settings file's folder.
    pub fn config_dir(&self) -> PathBuf {
        self.p("conf")
    }

    /// The socket path; its folder `run/` does not exist until the daemon creates it.
    pub fn socket(&self) -> PathBuf {
        self.p("run/hookd.sock")
    }

    /// Writes an executable shell script `name` (a `#!/bin/sh` line is prepended) and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.p(name);
        fs::write(&path, format!("#!/bin/sh\n{}\n", self.expand(body))).expect("writing a script");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod 0755");
        path
    }

    /// Writes the settings file (mode 0644, as the daemon demands), as editors do: a new file renamed
    /// over the old one, so that a watching daemon never reads it half-written.
    pub fn settings(&self, toml: &str) {
        let tmp = self.p("hooks.toml.new");
        fs::write(&tmp, self.expand(toml)).expect("writing the settings file");
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o644)).expect("chmod 0644");
        fs::rename(&tmp, self.config()).expect("renaming the settings file into place");
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.p(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    /// Reads a pid a hook wrote into `rel`, waiting until the file is complete.
    pub fn wait_pid(&self, rel: &str) -> i32 {
        let mut pid = None;
        wait_until(RESPONSE, &format!("a pid in {rel}"), || {
            let text = fs::read_to_string(self.p(rel)).unwrap_or_default();
            if text.ends_with('\n') {
                pid = text.trim().parse().ok();
            }
            pid.is_some()
        });
        pid.unwrap()
    }
}
