//! `hookd install` run again over units that are there: a unit the user edited is left as it
//! is, with the difference shown, unless `--force`; hookd's own units (the same, or for another binary)
//! are written; a `--bin` that cannot run is warned of. (systemd.rs verifies the units themselves.)

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common::*;

/// A safety net for one command (never a speed assertion).
const T: Duration = Duration::from_secs(20);

/// `hookd install --dir DIR --bin BIN [extra...]`.
fn install(dir: &Path, bin: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "install",
        "--dir",
        dir.to_str().unwrap(),
        "--bin",
        bin.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_hookd(&args, None, T)
}

/// An executable file standing in for a hookd binary.
fn binary(sb: &Sandbox, name: &str) -> std::path::PathBuf {
    let path = sb.p(name);
    fs::write(&path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn an_edited_unit_is_kept_and_its_difference_shown_unless_forced() {
    let sb = Sandbox::new();
    let units = sb.p("units");
    let bin = binary(&sb, "hookd");
    let out = install(&units, &bin, &[]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let service = units.join("hookd.service");
    let edited = fs::read_to_string(&service)
        .unwrap()
        .replace("RestartSec=500ms", "RestartSec=5s");
    fs::write(&service, &edited).unwrap();
    fs::remove_file(units.join("hookd.socket")).unwrap();

    let out = install(&units, &bin, &[]);
    assert_eq!(code(&out.status), 1, "an edited unit was overwritten");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("--- {} (as it is)", service.display())),
        "{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.contains(&"-RestartSec=5s") && lines.contains(&"+RestartSec=500ms"),
        "{stderr}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("WantedBy")),
        "only the change and around it: {stderr}"
    );
    let error = lines.last().unwrap();
    assert!(
        error.contains(&format!("not overwritten: {} differs", service.display()))
            && error.contains("--force"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&service).unwrap(), edited);
    assert!(
        !units.join("hookd.socket").exists(),
        "nothing is written when a unit is refused"
    );

    let out = install(&units, &bin, &["--force"]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        fs::read_to_string(&service)
            .unwrap()
            .contains("\nRestartSec=500ms\n")
    );
    assert!(units.join("hookd.socket").is_file());
    assert!(
        text(&out.stdout).contains("replaced"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn hookds_own_units_are_rewritten_for_the_same_or_another_binary() {
    let sb = Sandbox::new();
    let units = sb.p("units");
    let (first, second) = (binary(&sb, "hookd-1"), binary(&sb, "hookd-2"));
    assert_eq!(code(&install(&units, &first, &[]).status), 0);
    let out = install(&units, &first, &[]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("unchanged"),
        "{}",
        text(&out.stdout)
    );
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    let out = install(&units, &second, &[]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    let service = fs::read_to_string(units.join("hookd.service")).unwrap();
    assert!(
        service.contains(&format!("\nExecStart={} serve\n", second.display())),
        "{service}"
    );
}

#[test]
fn a_bin_that_cannot_run_is_warned_of() {
    let sb = Sandbox::new();
    let units = sb.p("units");
    let missing = sb.p("nowhere/hookd");
    let out = install(&units, &missing, &[]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "warning: --bin {}: no such file; hookd.service will fail to start until it is\n",
            missing.display()
        )
    );
    let plain = sb.p("plain");
    fs::write(&plain, "").unwrap();
    let out = install(&units, &plain, &[]);
    assert!(
        text(&out.stderr).contains("not executable"),
        "{}",
        text(&out.stderr)
    );
    let out = install(&units, sb.path(), &[]);
    assert!(
        text(&out.stderr).contains("not a file"),
        "{}",
        text(&out.stderr)
    );
    let out = install(&units, &binary(&sb, "hookd"), &[]);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// A unit is written whole, as a file of its own: a symlink at its place is replaced, and what it
/// pointed to is left as it was (a plain write would have followed it and written there).
#[test]
fn a_symlink_at_a_units_place_is_replaced_not_written_through() {
    let sb = Sandbox::new();
    let units = sb.p("units");
    fs::create_dir_all(&units).unwrap();
    let elsewhere = sb.p("elsewhere.txt");
    fs::write(&elsewhere, "not a unit\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, units.join("hookd.socket")).unwrap();
    let bin = binary(&sb, "hookd");
    let out = install(&units, &bin, &["--force"]);
    assert_eq!(code(&out.status), 0, "{}", text(&out.stderr));
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "not a unit\n");
    let socket = units.join("hookd.socket");
    assert!(!fs::symlink_metadata(&socket).unwrap().is_symlink());
    assert!(fs::read_to_string(&socket).unwrap().contains("[Socket]"));
    let mode = fs::metadata(units.join("hookd.service"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "{mode:o}");
}
