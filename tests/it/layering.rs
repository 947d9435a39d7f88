//! The layout's rule, held: a module of `src/` imports only from its own floor or the floors below it
//! (the floors as `FLOORS` gives them, and the map in `docs/development.md` shows them). Read from the
//! source text: every `crate::NAME` a file names, outside comments, is an import of the module `NAME`.
//! And file by file: no circle, and no file imports one that stands above it (below, "the import
//! graph"; docs/development.md, "Drawing the import graph").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and its floor, from the ground up, as the map in `docs/development.md` lists them.
const FLOORS: &[(&str, u8)] = &[
    ("decision", 1),
    ("limits", 1),
    ("lines", 1),
    ("logging", 1),
    ("tables", 1),
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

// ---- the import graph of src/'s files ----------------------------------------------------------------
//
// The second rule, file by file: no two files import each other (nor does any longer circle run through
// the files), and no file imports one that stands above it. A file's module stands above the modules it
// declares: `lib.rs` above the top-level modules, a folder's `mod.rs` (or `x.rs` beside `x/`) above the
// files of its folder. A child reaches its siblings and their children (`crate::commands::client`,
// `super::client`), never what its own parent defines (`super::printable`, `crate::commands::EXIT`): what
// children share is a sibling of theirs. The one exception: a test module in a file of its own
// (`#[cfg(test)] mod tests;`) is its parent's own tests and reads its parent's items.
//
// Drawn with `HOOKD_IMPORT_GRAPH=graph.dot cargo test --test it layering::the_files_import`, which writes
// the graph in Graphviz's dot (`dot -Tsvg graph.dot -o graph.svg`).

/// One file of the library: its path under `src/`, the module path it is, its text.
struct SourceFile {
    path: String,
    module: Vec<String>,
    text: String,
}

/// The library's files (the binaries, `main.rs` and `bin/`, are crates of their own), by path.
fn library_files() -> Vec<SourceFile> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<SourceFile> = sources()
        .into_iter()
        .filter(|(_, module)| module != "main" && module != "bin")
        .map(|(path, _)| {
            let path_in_src = path
                .strip_prefix(&src)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            SourceFile {
                module: module_path(&path_in_src),
                path: path_in_src,
                text,
            }
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// `commands/mod.rs` is `commands`, `commands/cli.rs` `commands::cli`, `lib.rs` the crate itself.
fn module_path(path_in_src: &str) -> Vec<String> {
    let mut module: Vec<String> = path_in_src
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if module
        .last()
        .is_some_and(|last| last == "mod" || last == "lib")
    {
        module.pop();
    }
    module
}

/// A file's code without its `//` comments (doc comments included), a line each.
fn code_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect()
}

/// The module each line of a file is in: the file's own, or an inline module of it (`mod tests {` to
/// its closing `}` at the same indent, as rustfmt writes them); `None` inside a unit test module
/// (`#[cfg(test)]` over `mod NAME {`), whose test code may reach wherever a test needs to.
fn line_modules(file: &SourceFile) -> Vec<Option<Vec<String>>> {
    let mut open: Vec<(usize, String, bool)> = Vec::new();
    let mut modules = Vec::new();
    let lines = code_lines(&file.text);
    for (at, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let words: Vec<&str> = line.split_whitespace().collect();
        let name = match words.as_slice() {
            ["mod", name, "{"] | ["pub", "mod", name, "{"] | ["pub(crate)", "mod", name, "{"] => {
                Some(name.to_string())
            }
            _ => None,
        };
        let in_test = open.iter().any(|(_, _, test)| *test);
        let mut module = file.module.clone();
        module.extend(open.iter().map(|(_, name, _)| name.clone()));
        if let Some(name) = name {
            let test = at > 0 && lines[at - 1].trim() == "#[cfg(test)]";
            open.push((indent, name, test));
        } else if line.trim() == "}" && open.last().is_some_and(|(at, _, _)| *at == indent) {
            open.pop();
        }
        modules.push((!in_test).then_some(module));
    }
    modules
}

/// The paths a `use` tree or a path names from `text`, which starts at its first segment: `a::b::{c,
/// d::{self, e}}` is `a::b::c`, `a::b::d` and `a::b::d::e`. Stops at what is no path (`(`, `;`, `<`).
fn path_tree(text: &str) -> Vec<Vec<String>> {
    fn ident(rest: &mut &str) -> Option<String> {
        *rest = rest.trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        *rest = &rest[name.len()..];
        (!name.is_empty()).then_some(name)
    }
    fn tree(rest: &mut &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        loop {
            *rest = rest.trim_start();
            if let Some(after) = rest.strip_prefix('{') {
                *rest = after;
                loop {
                    *rest = rest.trim_start();
                    if let Some(after) = rest.strip_prefix('}') {
                        *rest = after;
                        return;
                    }
                    if let Some(after) = rest.strip_prefix(',') {
                        *rest = after;
                        continue;
                    }
                    let before = rest.len();
                    tree(rest, path.clone(), out);
                    if rest.len() == before {
                        return;
                    }
                }
            }
            if let Some(after) = rest.strip_prefix('*') {
                *rest = after;
                out.push(path);
                return;
            }
            match ident(rest) {
                Some(name) => path.push(name),
                None => {
                    out.push(path);
                    return;
                }
            }
            let trimmed = rest.trim_start();
            if let Some(after) = trimmed.strip_prefix("::") {
                *rest = after;
            } else {
                if let Some(after) = trimmed.strip_prefix("as ") {
                    *rest = after;
                    ident(rest);
                }
                out.push(path);
                return;
            }
        }
    }
    let mut out = Vec::new();
    let mut rest = text;
    tree(&mut rest, Vec::new(), &mut out);
    out
}

/// The modules a file names, each as an absolute module path: every path that begins `crate::`
/// (`$crate::` too), `super::` or `self::`, resolved from the module of the line it is on; its unit
/// tests apart.
fn named_modules(file: &SourceFile) -> BTreeSet<Vec<String>> {
    let lines = code_lines(&file.text);
    let modules = line_modules(file);
    let code = lines.join("\n");
    let mut line_starts = vec![0];
    line_starts.extend(code.match_indices('\n').map(|(at, _)| at + 1));
    let mut named = BTreeSet::new();
    for root in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(root) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let line = line_starts.partition_point(|start| *start <= at) - 1;
            let Some(module) = &modules[line] else {
                continue;
            };
            for path in path_tree(&code[at..]) {
                let mut absolute = match path[0].as_str() {
                    "crate" => Vec::new(),
                    _ => module.clone(),
                };
                for segment in path.iter().skip(usize::from(path[0] == "crate")) {
                    match segment.as_str() {
                        "super" => {
                            absolute.pop();
                        }
                        "self" => {}
                        _ => absolute.push(segment.clone()),
                    }
                }
                named.insert(absolute);
            }
        }
    }
    named
}

/// The modules a file declares as test modules in files of their own (`#[cfg(test)]` over `mod tests;`).
fn test_children(file: &SourceFile) -> Vec<Vec<String>> {
    let lines = code_lines(&file.text);
    lines
        .windows(2)
        .filter(|pair| pair[0].trim() == "#[cfg(test)]")
        .filter_map(|pair| {
            let words: Vec<&str> = pair[1].split_whitespace().collect();
            match words.as_slice() {
                ["mod", name] | ["pub", "mod", name] => name.strip_suffix(';'),
                _ => None,
            }
        })
        .map(|name| {
            let mut module = file.module.clone();
            module.push(name.to_string());
            module
        })
        .collect()
}

/// The import graph: for each file (by its index in `files`), the files it imports. A path names the
/// file of its longest leading module (`crate::commands::client::request` is `commands/client.rs`,
/// `crate::commands::EXIT` is `commands/mod.rs`).
fn import_graph(files: &[SourceFile]) -> Vec<BTreeSet<usize>> {
    files
        .iter()
        .enumerate()
        .map(|(own, file)| {
            named_modules(file)
                .iter()
                .filter_map(|named| {
                    (0..=named.len())
                        .rev()
                        .find_map(|len| files.iter().position(|f| f.module == named[..len]))
                })
                .filter(|target| *target != own)
                .collect()
        })
        .collect()
}

/// The circles of the graph: each set of files that reach one another (Tarjan's strongly connected
/// components, those of more than one file).
fn circles(graph: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'a> {
        graph: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(walk: &mut Walk, node: usize) {
        walk.index[node] = Some(walk.next);
        walk.low[node] = walk.next;
        walk.next += 1;
        walk.stack.push(node);
        walk.on_stack[node] = true;
        for &to in walk.graph[node].iter() {
            match walk.index[to] {
                None => {
                    visit(walk, to);
                    walk.low[node] = walk.low[node].min(walk.low[to]);
                }
                Some(index) if walk.on_stack[to] => walk.low[node] = walk.low[node].min(index),
                Some(_) => {}
            }
        }
        if Some(walk.low[node]) == walk.index[node] {
            let mut component = Vec::new();
            while let Some(top) = walk.stack.pop() {
                walk.on_stack[top] = false;
                component.push(top);
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                walk.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: vec![None; graph.len()],
        low: vec![0; graph.len()],
        stack: Vec::new(),
        on_stack: vec![false; graph.len()],
        next: 0,
        found: Vec::new(),
    };
    for node in 0..graph.len() {
        if walk.index[node].is_none() {
            visit(&mut walk, node);
        }
    }
    walk.found
}

/// The graph in Graphviz's dot: a box per file, an arrow per import.
fn dot(files: &[SourceFile], graph: &[BTreeSet<usize>]) -> String {
    let mut out =
        String::from("digraph hookd {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
    for (from, targets) in graph.iter().enumerate() {
        for to in targets {
            out.push_str(&format!(
                "  \"{}\" -> \"{}\";\n",
                files[from].path, files[*to].path
            ));
        }
    }
    out.push_str("}\n");
    out
}

#[test]
fn the_files_import_no_circle_and_nothing_above_them() {
    let files = library_files();
    assert!(files.len() > 30, "the sources were not found");
    let graph = import_graph(&files);
    if let Some(place) = std::env::var_os("HOOKD_IMPORT_GRAPH") {
        std::fs::write(&place, dot(&files, &graph)).unwrap();
    }
    let tests_of: Vec<Vec<Vec<String>>> = files.iter().map(test_children).collect();
    let mut wrong = Vec::new();
    for (from, targets) in graph.iter().enumerate() {
        let own = &files[from].module;
        for &to in targets {
            let theirs = &files[to].module;
            let above = theirs.len() < own.len() && own[..theirs.len()] == theirs[..];
            let its_tests = tests_of[to].contains(own);
            if above && !its_tests {
                wrong.push(format!(
                    "{} imports {}, which stands above it",
                    files[from].path, files[to].path
                ));
            }
        }
    }
    for circle in circles(&graph) {
        let names: Vec<&str> = circle.iter().map(|&i| files[i].path.as_str()).collect();
        wrong.push(format!(
            "these files import one another: {}",
            names.join(", ")
        ));
    }
    assert!(
        wrong.is_empty(),
        "the import graph (a child that needs what its parent defines: move it into a file of the \
         folder; two files that need each other: what both need into a third):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_graph_reads_use_trees_super_self_and_inline_modules() {
    let file = SourceFile {
        path: "commands/fire.rs".into(),
        module: module_path("commands/fire.rs"),
        text: "use crate::commands::{client, shared::{EXIT, misspelt as m}};\n\
               use super::style::{self, Style};\n\
               // use crate::daemon::server;\n\
               fn f() { $crate::commands::output::print(); self::g(); }\n\
               mod imp {\n    use super::super::client;\n}\n\
               #[cfg(test)]\n\
               mod tests {\n    use crate::daemon::server;\n}\n"
            .into(),
    };
    let named: Vec<String> = named_modules(&file)
        .into_iter()
        .map(|path| path.join("::"))
        .collect();
    assert_eq!(
        named,
        [
            "commands::client",
            "commands::fire::g",
            "commands::output::print",
            "commands::shared::EXIT",
            "commands::shared::misspelt",
            "commands::style",
            "commands::style::Style",
        ]
    );
    assert_eq!(module_path("lib.rs"), Vec::<String>::new());
    assert_eq!(module_path("engine/protect/mod.rs"), ["engine", "protect"]);
}
