//! The languages whose code is read, each known by its interpreter's name, and the word that stands
//! for an expression that is no literal.

/// A language whose code is read for the commands it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    Python,
    Js,
    Perl,
    Ruby,
    Php,
    Lua,
    Awk,
}

/// The language `program` runs, by its name (`python3.12`, `nodejs`, `gawk`).
pub(super) fn language(program: &str) -> Option<Lang> {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match base {
        "python" | "pypy" => Lang::Python,
        "node" | "nodejs" | "deno" | "bun" => Lang::Js,
        "perl" => Lang::Perl,
        "ruby" => Lang::Ruby,
        "php" => Lang::Php,
        "lua" | "luajit" => Lang::Lua,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        _ => return None,
    })
}

/// A placeholder for an expression that is no literal, inside a line read as shell: it reads as an
/// unknown variable, and every word holding it is marked unknown.
pub(super) const PLACEHOLDER: &str = "__hookd_expression";
