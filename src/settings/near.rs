//! The settings file a missing one was surely meant to be: `hookd serve --config config/hoks.toml`
//! serves with no hooks (a service may start before its settings are written), so `serve`, `status` and
//! `doctor` name the file beside it whose name is a typo away (`config/hooks.toml`).

use std::path::{Path, PathBuf};

/// How many entries of the folder are looked at, at most: a settings file's folder is small, and a
/// suggestion is not worth reading a huge one.
const LOOKED_AT: usize = 1000;

/// Edits (an insertion, a deletion, a change, a swap of neighbours) a name may be from the missing one.
const NEAR: usize = 2;

/// The file in `missing`'s folder whose name is nearest to its own, when it is within `NEAR` edits
/// (and a third of its length) and ends as a settings file does, `.toml`; none when `missing` is there.
pub fn near_name(missing: &Path) -> Option<PathBuf> {
    if missing.exists() {
        return None;
    }
    let name = missing.file_name()?.to_str()?.to_lowercase();
    let folder = match missing.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let mut best: Option<(usize, PathBuf)> = None;
    for entry in std::fs::read_dir(folder).ok()?.take(LOOKED_AT).flatten() {
        let Ok(candidate) = entry.file_name().into_string() else {
            continue;
        };
        if !candidate.to_lowercase().ends_with(".toml") || !entry.path().is_file() {
            continue;
        }
        let distance = strsim::osa_distance(&name, &candidate.to_lowercase());
        if distance <= NEAR
            && distance <= (candidate.len() / 3).max(1)
            && best.as_ref().is_none_or(|(d, _)| distance < *d)
        {
            best = Some((distance, folder.join(candidate)));
        }
    }
    best.map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_told_the_file_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["hooks.toml", "cases.toml", "hooks.json"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("hoks.tom")).unwrap();
        let near = |name: &str| near_name(&dir.path().join(name));
        assert_eq!(near("hoks.toml"), Some(dir.path().join("hooks.toml")));
        assert_eq!(near("hooks.tmol"), Some(dir.path().join("hooks.toml")));
        assert_eq!(near("Hooks.toml"), Some(dir.path().join("hooks.toml")));
        assert_eq!(near("case.toml"), Some(dir.path().join("cases.toml")));
        // Too far from every name, or there already: nothing to suggest.
        assert_eq!(near("settings.toml"), None);
        assert_eq!(near("hooks.toml"), None);
        assert_eq!(near_name(&dir.path().join("nowhere/hoks.toml")), None);
    }
}
