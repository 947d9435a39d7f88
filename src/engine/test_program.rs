//! Test only: a program file written for a test to start, with no descriptor of it ever open for
//! writing in the test process.
//!
//! A test binary runs many tests at once, and a child that another test's thread is starting holds a
//! copy of every descriptor of this process until it execs. A program written here would be "text file
//! busy" (ETXTBSY) to an exec made in that moment, and the test would fail now and then for nothing it
//! tests. `sh` writes the file instead: its descriptors are its own, and it has exited, closing them,
//! before the file is used.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `body` to `path`, mode 0755.
pub fn write_program(path: &Path, body: &[u8]) {
    let mut sh = Command::new("/bin/sh")
        .args(["-c", "exec cat > \"$0\""])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("starting sh to write a program");
    let mut stdin = sh.stdin.take().expect("sh's stdin");
    stdin.write_all(body).expect("giving sh the program");
    drop(stdin);
    let status = sh.wait().expect("waiting for sh");
    assert!(status.success(), "sh could not write {}", path.display());
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
