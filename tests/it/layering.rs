//! The layout's rule, held: a module of `src/` imports only from its own floor or the floors below it
//! (the floors as `src/lib.rs` gives them). Read from the source text: every `crate::NAME` a file
//! names, outside comments, is an import of the module `NAME`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and its floor, from the ground up, as in `src/lib.rs`.
const FLOORS: &[(&str, u8)] = &[
    ("agent", 1),
    ("head", 1),
    ("limits", 1),
    ("lines", 1),
    ("logging", 1),
    ("moment", 1),
    ("paths", 1),
    ("shell", 1),
    ("sync", 1),
    ("time", 1),
    ("guard", 2),
    ("protocol", 2),
    ("record", 2),
    ("settings", 2),
    ("agents", 3),
    ("engine", 3),
    ("export", 3),
    ("daemon", 4),
    ("commands", 5),
];

/// The files of `src/`, each with the top-level module it belongs to.
fn sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut folders = vec![src.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(&src).unwrap();
                let first = relative.components().next().unwrap().as_os_str();
                let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
                found.push((path, module));
            }
        }
    }
    found
}

/// The top-level modules a file names as `crate::NAME`, outside `//` comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                named.insert(name);
            }
        }
    }
    named
}

fn floor(module: &str) -> Option<u8> {
    FLOORS
        .iter()
        .find(|(name, _)| *name == module)
        .map(|(_, floor)| *floor)
}

#[test]
fn nothing_imports_from_a_floor_above_its_own() {
    let mut upward = Vec::new();
    let sources = sources();
    assert!(
        sources.len() > 30,
        "the sources were not found: {sources:?}"
    );
    for (path, module) in &sources {
        // The binaries (main.rs, bin/*.rs) stand above every floor: they use the library as `hookd::`.
        if module == "lib" || module == "main" || module == "bin" {
            continue;
        }
        let Some(own) = floor(module) else {
            panic!(
                "{}: module {module} has no floor in FLOORS (and src/lib.rs)",
                path.display()
            );
        };
        let text = std::fs::read_to_string(path).unwrap();
        for named in imports(&text) {
            // VERSION and the like: items of lib.rs itself.
            let Some(theirs) = floor(&named) else {
                continue;
            };
            if theirs > own {
                upward.push(format!(
                    "{} (floor {own}) imports {named} (floor {theirs})",
                    path.display()
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a floor above:\n{}",
        upward.join("\n")
    );
}

#[test]
fn every_module_of_lib_rs_has_its_floor() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    assert!(!modules.is_empty());
    for module in modules {
        assert!(
            floor(module).is_some(),
            "module {module} has no floor in FLOORS"
        );
    }
}

#[test]
fn the_reader_sees_imports_and_not_comments() {
    let text = "use crate::engine::Engine;\n// crate::daemon is named in a comment\nlet x = crate::limits::MAX_ID; // crate::commands\n";
    let named: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(named, ["engine", "limits"]);
}
