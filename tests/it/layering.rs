//! The layout's rule, held: a module of `src/` imports only from its own floor or the floors below it
//! (the floors as `FLOORS` gives them, and the map in `docs/development.md` shows them). Read from the source text: every `crate::NAME` a file
//! names, outside comments, is an import of the module `NAME`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and its floor, from the ground up, as the map in `docs/development.md` lists them.
const FLOORS: &[(&str, u8)] = &[
    ("agent", 1),
    ("decision", 1),
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
                "{}: module {module} has no floor in FLOORS (and the map in docs/development.md)",
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

/// The map of the house in `docs/development.md`, read: each entry a line `├── NAME` or `└── NAME`
/// (a folder's name ends with `/`), its depth the width of the tree before it (four columns a level),
/// under the last `floor N` line above it (`None` above the first).
struct MapEntry {
    /// The path under `src/`, a folder's with its `/`.
    path: String,
    /// The floor it is listed under, for an entry at the top of `src/`.
    floor: Option<u8>,
    /// Its line in the page, for the messages.
    line: usize,
}

/// The page the map lives in, and the heading it is under.
const MAP_PAGE: &str = "docs/development.md";
const MAP_HEADING: &str = "## The map of the house";

/// The entries of the map: the first ```text block under [`MAP_HEADING`], after its `src/` line.
fn map_entries(page: &str) -> Result<Vec<MapEntry>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let heading = lines
        .iter()
        .position(|l| l.trim() == MAP_HEADING)
        .ok_or_else(|| format!("{MAP_PAGE} has no heading {MAP_HEADING:?}"))?;
    let open = (heading..lines.len())
        .find(|&i| lines[i].trim() == "```text")
        .ok_or_else(|| format!("{MAP_PAGE}: no ```text block under {MAP_HEADING:?}"))?;
    if lines.get(open + 1).map(|l| l.trim()) != Some("src/") {
        return Err(format!(
            "{MAP_PAGE}:{}: the map starts with `src/`",
            open + 2
        ));
    }
    let mut entries = Vec::new();
    let mut folders: Vec<String> = Vec::new();
    let mut floor = None;
    for (i, line) in lines.iter().enumerate().skip(open + 2) {
        if line.trim() == "```" {
            return Ok(entries);
        }
        let chars: Vec<char> = line.chars().collect();
        let marker = (0..chars.len()).find(|&at| {
            matches!(chars[at], '├' | '└') && chars[at + 1..].starts_with(&['─', '─', ' '])
        });
        let Some(at) = marker else {
            // A floor's line, or a line for people only.
            let words: String = chars
                .iter()
                .skip_while(|c| matches!(c, '│' | ' '))
                .collect();
            if let Some(rest) = words.strip_prefix("floor ") {
                floor = rest.split(':').next().and_then(|n| n.trim().parse().ok());
            }
            continue;
        };
        let depth = at / 4;
        if at % 4 != 0 || depth > folders.len() {
            return Err(format!(
                "{MAP_PAGE}:{}: an entry out of the tree (nested four columns a level, inside a folder): {line:?}",
                i + 1
            ));
        }
        folders.truncate(depth);
        let name: String = chars[at + 4..]
            .iter()
            .take_while(|c| !c.is_whitespace())
            .collect();
        let path = format!("{}{name}", folders.concat());
        if let Some(folder) = name.strip_suffix('/') {
            folders.push(format!("{folder}/"));
        }
        entries.push(MapEntry {
            path,
            floor: if depth == 0 { floor } else { None },
            line: i + 1,
        });
    }
    Err(format!("{MAP_PAGE}: the map's block does not end"))
}

/// Every folder (with its `/`) and file under `src/`, as paths under it.
fn tree_of_src() -> BTreeSet<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeSet::new();
    let mut folders = vec![src.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(&src)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            if path.is_dir() {
                found.insert(format!("{relative}/"));
                folders.push(path);
            } else {
                found.insert(relative);
            }
        }
    }
    found
}

/// What is wrong with `entries` as a map of `tree`: each line says what to add, take out or move, so
/// that a stale map is put right from the message alone.
fn map_problems(entries: &[MapEntry], tree: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut mapped = BTreeSet::new();
    for entry in entries {
        if !mapped.insert(entry.path.clone()) {
            problems.push(format!(
                "line {}: src/{} is in the map twice",
                entry.line, entry.path
            ));
        }
    }
    for path in tree.difference(&mapped) {
        problems.push(format!("missing: src/{path} is in src/ but not in the map"));
    }
    for path in mapped.difference(tree) {
        let line = entries
            .iter()
            .find(|e| &e.path == path)
            .map_or(0, |e| e.line);
        problems.push(format!(
            "gone: src/{path} is in the map (line {line}) but not in src/"
        ));
    }
    for entry in entries
        .iter()
        .filter(|e| !e.path.trim_end_matches('/').contains('/'))
    {
        let module = entry.path.trim_end_matches('/').trim_end_matches(".rs");
        let floor_of = floor(module);
        if entry.floor != floor_of {
            let said =
                |f: Option<u8>| f.map_or("above the floors".to_string(), |f| format!("floor {f}"));
            problems.push(format!(
                "line {}: src/{} is listed {}, but its floor is {} (FLOORS)",
                entry.line,
                entry.path,
                said(entry.floor),
                said(floor_of)
            ));
        }
    }
    problems
}

/// The one map of the house (`docs/development.md`) names every file and folder of `src/`, each once,
/// names nothing that is not there, and lists each top-level module under its floor. When files move,
/// this says which are missing from the map and which are gone from `src/`.
#[test]
fn the_map_names_every_file_of_src_and_only_those() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(MAP_PAGE)).unwrap();
    let entries = map_entries(&page).unwrap_or_else(|why| panic!("{why}"));
    let tree = tree_of_src();
    assert!(tree.len() > 30, "src/ was not found: {tree:?}");
    let problems = map_problems(&entries, &tree);
    assert!(
        problems.is_empty(),
        "the map of the house in {MAP_PAGE} is stale:\n  {}",
        problems.join("\n  ")
    );
}

/// The map's reader and its messages, on a small tree: a missing file, a gone one, a module under the
/// wrong floor, each named.
#[test]
fn a_stale_map_is_told_file_by_file() {
    let page = "## The map of the house\n\n```text\nsrc/\n├── main.rs   the program\n│\n│   floor 2: two\n├── settings/\n│   ├── mod.rs    the model\n│   └── gone.rs   moved away\n│\n│   floor 1: one\n├── protocol.rs   on the wrong floor\n└── limits.rs\n```\n";
    let entries = map_entries(page).unwrap();
    let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "main.rs",
            "settings/",
            "settings/mod.rs",
            "settings/gone.rs",
            "protocol.rs",
            "limits.rs"
        ]
    );
    let tree: BTreeSet<String> = [
        "main.rs",
        "settings/",
        "settings/mod.rs",
        "settings/parse.rs",
        "protocol.rs",
        "limits.rs",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(
        map_problems(&entries, &tree),
        [
            "missing: src/settings/parse.rs is in src/ but not in the map",
            "gone: src/settings/gone.rs is in the map (line 10) but not in src/",
            "line 13: src/protocol.rs is listed floor 1, but its floor is floor 2 (FLOORS)",
        ]
    );
}
