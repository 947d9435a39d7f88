//! The guarded paths, and how a path named in a call is told to be one of them: made absolute against
//! the call's folder, `.` and `..` taken out, and its links followed (as far as it exists), so that
//! `~/x/../.config/hookd`, a relative path and a link to the settings all name the same file.

use std::path::{Component, Path, PathBuf};

use crate::settings::Settings;

use super::Places;

/// One guarded path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    /// As named (made absolute), and with its links followed when that differs.
    pub path: PathBuf,
    pub real: Option<PathBuf>,
    /// A folder: everything below it is guarded too.
    pub folder: bool,
    /// What it is, in a refusal ("hookd's settings file").
    pub what: String,
    /// The texts a command may name it by: the absolute path, the real one, and `~/...` and
    /// `$HOME/...` forms under the home folder.
    pub(super) names: Vec<String>,
}

impl Guarded {
    fn new(path: PathBuf, folder: bool, what: impl Into<String>, home: &Path) -> Guarded {
        let path = lexical(&path);
        let real = real(&path).filter(|real| *real != path);
        let mut names = Vec::new();
        for form in std::iter::once(&path).chain(real.as_ref()) {
            if let Some(text) = form.to_str() {
                names.push(text.to_string());
            }
            if let Ok(rest) = form.strip_prefix(home)
                && !rest.as_os_str().is_empty()
                && let Some(rest) = rest.to_str()
            {
                for prefix in ["~/", "$HOME/", "${HOME}/"] {
                    names.push(format!("{prefix}{rest}"));
                }
                // `process.env.HOME + '/.config/hookd/hooks.toml'`: a path in a dot folder of home,
                // named from home in a script (found attacking the guard).
                if rest.starts_with('.') && rest.contains('/') {
                    names.push(format!("/{rest}"));
                    names.push(format!("'{rest}"));
                    names.push(format!("\"{rest}"));
                }
            }
        }
        names.dedup();
        Guarded {
            path,
            real,
            folder,
            what: what.into(),
            names,
        }
    }

    /// Whether `path` (absolute, lexical) is this one or, for a folder, below it.
    pub fn covers(&self, path: &Path) -> bool {
        let path = bytes(path);
        let within = |guarded: &Path| {
            let guarded = bytes(guarded);
            path == guarded || (self.folder && below(path, guarded))
        };
        within(&self.path) || self.real.as_deref().is_some_and(within)
    }

    /// Whether `path` is a folder above this one (deleting or moving it takes this one along).
    pub fn is_below(&self, path: &Path) -> bool {
        let path = bytes(path);
        let above = |guarded: &Path| below(bytes(guarded), path);
        above(&self.path) || self.real.as_deref().is_some_and(above)
    }
}

/// A path's bytes. Every path compared here is absolute and lexical (no `.`, `..`, `//` or trailing
/// `/`), so comparing bytes at a `/` is comparing names, and costs a `memcmp` where `Path::starts_with`
/// parsed both paths name by name (most of what a judged call cost, against some forty guarded paths).
fn bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

/// Whether `path` is strictly below the folder `folder`.
fn below(path: &[u8], folder: &[u8]) -> bool {
    path.len() > folder.len()
        && path.starts_with(folder)
        && (folder.ends_with(b"/") || path[folder.len()] == b'/')
}

/// Every guarded path for `settings` at `places` (docs/security.md, "What is guarded").
pub(super) fn guarded(settings: &Settings, places: &Places) -> Vec<Guarded> {
    let home = places.home.as_path();
    let mut out = Vec::new();
    let mut add = |path: PathBuf, folder: bool, what: &str| {
        if path.as_os_str().is_empty() || path == Path::new("/") {
            return;
        }
        let guarded = Guarded::new(path, folder, what, home);
        if !out.iter().any(|g: &Guarded| g.path == guarded.path) {
            out.push(guarded);
        }
    };
    add(settings.path.clone(), false, "hookd's settings file");
    add(
        settings.dir.clone(),
        true,
        "the folder of hookd's settings and the scripts beside them",
    );
    for program in settings.program_files() {
        if !is_system_program(&program) {
            add(program, false, "a program one of hookd's hooks runs");
        }
    }
    for path in &settings.protect.paths {
        add(path.clone(), true, "a path hookd's [protect] paths guards");
    }
    if let Some(dir) = &places.state_dir {
        add(dir.clone(), true, "hookd's state (its journal and spool)");
    }
    if let Some(socket) = &places.socket {
        // The socket's folder whole only where it is hookd's own (`$XDG_RUNTIME_DIR/hookd`,
        // `/tmp/hookd-UID`): a socket put in a folder of the user's (`--socket ./hookd.sock`) guards
        // only itself, not the work beside it.
        if let Some(dir) = socket.parent()
            && dir
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("hookd"))
        {
            add(dir.to_path_buf(), true, "hookd's runtime folder");
        }
        add(socket.clone(), false, "hookd's socket");
    }
    if let Some(units) = &places.units_dir {
        for unit in ["hookd.service", "hookd.socket"] {
            add(units.join(unit), false, "hookd's systemd unit");
            add(
                units.join(format!("{unit}.d")),
                true,
                "hookd's systemd unit's drop-ins",
            );
            for wants in ["default.target.wants", "sockets.target.wants"] {
                add(
                    units.join(wants).join(unit),
                    false,
                    "the link that starts hookd's systemd unit",
                );
            }
        }
    }
    if let Some(units) = &places.units_dir {
        // Drop-ins for every user service or socket (systemd 250 and later), hookd's among them.
        for all in ["service.d", "socket.d"] {
            add(
                units.join(all),
                true,
                "systemd's drop-ins for every user unit, hookd's among them",
            );
        }
    }
    for (agent, file) in &places.agent_files {
        add(
            file.clone(),
            false,
            &format!("{agent}'s settings, which hold hookd's relay"),
        );
        let mut backup = file.as_os_str().to_os_string();
        backup.push(".hookd-backup");
        add(
            PathBuf::from(backup),
            false,
            &format!("the backup hookd setup keeps of {agent}'s settings"),
        );
    }
    for file in &places.set_up_files {
        add(
            file.clone(),
            false,
            "an agent's settings that hookd setup wrote the relay into",
        );
    }
    if let Some(pid) = places.daemon_pid {
        // `echo 1000 > /proc/PID/oom_score_adj`, and what else of the daemon's process a file is.
        add(
            PathBuf::from(format!("/proc/{pid}")),
            true,
            "the hookd daemon's process",
        );
    }
    for program in &places.programs {
        add(
            program.clone(),
            false,
            "a hookd program (the daemon or a relay)",
        );
    }
    out
}

/// A program of the system's own (`/usr/bin/python3`), not one the user keeps beside the settings:
/// guarding it would refuse a package upgrade for nothing the agent could not do by other means.
fn is_system_program(path: &Path) -> bool {
    [
        "/usr/",
        "/bin/",
        "/sbin/",
        "/lib/",
        "/lib64/",
        "/opt/",
        "/nix/store/",
    ]
    .iter()
    .any(|prefix| path.starts_with(prefix))
}

/// `path` made absolute against `cwd`, with `.` and `..` taken out as written.
pub(super) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    lexical(&cwd.join(path))
}

/// `.` and `..` taken out as written (`..` of `/` is `/`).
pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// `path` with its links followed as far as it exists (the rest appended as written), or `None` when
/// nothing of it can be resolved.
pub(super) fn real(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    for _ in 0..64 {
        if let Ok(resolved) = std::fs::canonicalize(existing) {
            let mut out = resolved;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return Some(out);
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    }
    None
}

/// Whether a shell pattern (`*`, `?`, `[...]`, `[[:alpha:]]`, `**`, extglob's `@(...)`) over a whole
/// path matches `path`, component by component, as the shell matches file names: a `*` never crosses a
/// `/`, and a `**` component spans any number of them (bash's `globstar`). A name that starts with a dot
/// is matched by `*` too (bash's `dotglob`): the guard takes the shell's widest reading, since a command
/// line may switch those options on before it names the path.
///
/// At most the product of a name's and its pattern's lengths for each component (no backtracking that a
/// pattern of many `*` could make exponential: found attacking the guard), and quadratic at worst in the
/// number of components, which a path bounds.
pub(super) fn pattern_matches(pattern: &str, path: &Path) -> bool {
    let pattern = pattern.trim_end_matches('/');
    let parts: Vec<Vec<Token>> = pattern
        .split('/')
        .filter(|p| !p.is_empty())
        .map(tokens)
        .collect();
    let names: Vec<Vec<char>> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().chars().collect()),
            _ => None,
        })
        .collect();
    // reach[i][j]: the first i parts match the first j names.
    let mut reach = vec![vec![false; names.len() + 1]; parts.len() + 1];
    reach[0][0] = true;
    for (i, part) in parts.iter().enumerate() {
        let globstar = part.as_slice() == [Token::Star, Token::Star];
        for j in 0..=names.len() {
            if !reach[i][j] {
                continue;
            }
            if globstar {
                reach[i + 1][j..].iter_mut().for_each(|r| *r = true);
            } else if j < names.len() && name_matches(part, &names[j]) {
                reach[i + 1][j + 1] = true;
            }
        }
    }
    reach[parts.len()][names.len()]
}

/// One element of a name's pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`: any one character.
    Any,
    /// `*` (and an extglob group, `@(a|b)`, read as widely as a `*`).
    Star,
    /// `[...]`: one character in (or, negated, not in) the set.
    Set {
        negated: bool,
        items: Vec<SetItem>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum SetItem {
    One(char),
    Range(char, char),
    /// `[:alpha:]` and the other POSIX classes.
    Class(String),
}

impl Token {
    fn matches(&self, c: char) -> bool {
        match self {
            Token::Char(p) => *p == c,
            Token::Any => true,
            Token::Star => false,
            Token::Set { negated, items } => {
                let hit = items.iter().any(|item| match item {
                    SetItem::One(p) => *p == c,
                    SetItem::Range(a, b) => *a <= c && c <= *b,
                    SetItem::Class(class) => class_matches(class, c),
                });
                hit != *negated
            }
        }
    }
}

/// The agents' working folders with their links followed, kept a moment: an agent makes its calls from
/// one folder, which need not be resolved again on every call. An entry older than [`FOLDER_KEPT`] is
/// resolved again, so that a folder re-pointed (a link changed) is seen within that time.
#[derive(Debug, Default)]
pub struct Folders(std::sync::Mutex<Vec<(PathBuf, Option<PathBuf>, std::time::Instant)>>);

/// How long a resolved folder is kept.
pub const FOLDER_KEPT: std::time::Duration = std::time::Duration::from_secs(1);

/// How many folders are kept (agents' sessions at once).
const FOLDERS: usize = 16;

impl Folders {
    /// `folder` with its links followed (`None`: as it is, or not there).
    pub fn real(&self, folder: &Path) -> Option<PathBuf> {
        let now = std::time::Instant::now();
        let mut kept = crate::sync::lock(&self.0);
        if let Some((_, real, _)) = kept
            .iter()
            .find(|(known, _, at)| known == folder && now.duration_since(*at) < FOLDER_KEPT)
        {
            return real.clone();
        }
        let real = self::real(folder);
        kept.retain(|(known, _, at)| known != folder && now.duration_since(*at) < FOLDER_KEPT);
        if kept.len() >= FOLDERS {
            kept.remove(0);
        }
        kept.push((folder.to_path_buf(), real.clone(), now));
        real
    }
}

fn class_matches(class: &str, c: char) -> bool {
    match class {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        // A class the shell does not know matches nothing there; here, anything (the safe side).
        _ => true,
    }
}

/// A name's pattern read into tokens. An unclosed `[` is a `[`; extglob's `@(...)`, `!(...)`,
/// `+(...)`, `*(...)` and `?(...)` are each read as a `*`.
fn tokens(pattern: &str) -> Vec<Token> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if "@!+*?".contains(c) && chars.get(i + 1) == Some(&'(') {
            let mut level = 0usize;
            let mut j = i + 1;
            while j < chars.len() {
                match chars[j] {
                    '(' => level += 1,
                    ')' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            out.push(Token::Star);
            i = j + 1;
            continue;
        }
        match c {
            '*' => out.push(Token::Star),
            '?' => out.push(Token::Any),
            '[' => match set(&chars[i + 1..]) {
                Some((token, used)) => {
                    out.push(token);
                    i += used;
                }
                None => out.push(Token::Char('[')),
            },
            '\\' if i + 1 < chars.len() => {
                i += 1;
                out.push(Token::Char(chars[i]));
            }
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    out
}

/// A `[...]` set from just after its `[`: the token and how many characters it used (its `]` included).
fn set(chars: &[char]) -> Option<(Token, usize)> {
    let mut i = 0;
    let negated = matches!(chars.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    while i < chars.len() {
        let c = chars[i];
        if c == ']' && !first {
            return Some((Token::Set { negated, items }, i + 1));
        }
        first = false;
        if c == '['
            && chars.get(i + 1) == Some(&':')
            && let Some(end) = (i + 2..chars.len().saturating_sub(1))
                .find(|&k| chars[k] == ':' && chars[k + 1] == ']')
        {
            items.push(SetItem::Class(chars[i + 2..end].iter().collect()));
            i = end + 2;
            continue;
        }
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            items.push(SetItem::Range(c, chars[i + 2]));
            i += 3;
            continue;
        }
        items.push(SetItem::One(c));
        i += 1;
    }
    None
}

/// One name against one pattern's tokens: the two-pointer match with only the last `*` to go back to
/// (each `*` restarts the rest from one later place, never from all of them at once).
fn name_matches(pattern: &[Token], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(Token::Star) => {
                star = Some((p, n));
                p += 1;
            }
            Some(token) if token.matches(name[n]) => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((at, from)) => {
                    p = at + 1;
                    n = from + 1;
                    star = Some((at, from + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|t| *t == Token::Star)
}
