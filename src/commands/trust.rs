//! `hookd trust [DIR]`: a repository's own hooks shown, each with what it runs, and pinned to their
//! content in hookd's state (docs/teams.md, "Trust"); `--revoke` forgets them. The only writer of the
//! trust store: the daemon reads it, and nothing over the socket writes it.

use std::path::Path;
use std::process::ExitCode;

use crate::commands::style::printable;
use crate::layers::project;
use crate::layers::trust::{Store, store_path};

pub fn trust(dir: Option<&Path>, revoke: bool) -> Result<ExitCode, String> {
    let here = match dir {
        Some(dir) => std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?,
        None => {
            std::env::current_dir().map_err(|e| format!("cannot tell the current folder: {e}"))?
        }
    };
    let root = if here.join(project::FOLDER).join(project::FILE).exists() {
        here.clone()
    } else {
        match project::find(&here, &crate::paths::home()) {
            Some(found) => found,
            // Its hooks file gone: the daemon says so at every fire until the user revokes the trust.
            None if revoke => here.clone(),
            None => {
                return Err(format!(
                    "{}: no repository's hooks here (a .hookd/hooks.toml in this folder or above it, within a git repository, below the home folder)",
                    here.display()
                ));
            }
        }
    };
    let path = store_path();
    let mut store = Store::read(&path).map_err(|why| {
        format!("{why}; not written over (it holds every repository's trust): fix or remove it")
    })?;
    let canonical = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    let key = canonical.to_string_lossy().into_owned();
    if revoke {
        let had = store.projects.remove(&key).is_some();
        store
            .save(&path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!(
            "{}: {}",
            printable(&key),
            if had {
                "trust revoked: its hooks are pending again"
            } else {
                "nothing was trusted"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let project = project::read(&root).map_err(|errors| format!("{errors}"))?;
    println!(
        "{}: {} hook(s) in {}",
        printable(&key),
        project.hooks.len(),
        printable(&project.file.display().to_string())
    );
    let mut trusted = std::collections::BTreeMap::new();
    for pinned in &project.hooks {
        println!();
        println!(
            "{}  (digest {})",
            printable(&pinned.key),
            &pinned.digest[..16]
        );
        for line in pinned.definition.lines() {
            println!("    {}", printable(line));
        }
        for file in &pinned.files {
            println!("    runs {}", printable(&file.display().to_string()));
        }
        trusted.insert(pinned.key.clone(), pinned.digest.clone());
    }
    store.projects.insert(key, trusted);
    store
        .save(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!();
    println!(
        "trusted, pinned to this content: a hook changed by one byte is pending again (revoke: hookd trust --revoke {})",
        printable(&root.display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}
