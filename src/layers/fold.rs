//! The managed layer and the user's file folded into the one set of settings the engine runs: the
//! managed hooks first, each moment's in their files' order, then the user's. Nothing of the user's
//! disables, replaces or weakens a managed hook: a user's hook of the same name is another hook (named
//! `user:NAME` beside it), and the same hook in both runs once, the managed one.
//! (A repository's hooks come last, per fire, in `engine::projects`.)

use std::sync::Arc;

use crate::settings::{Layer, Settings};

/// What a user's hook is renamed to where a managed hook has its name: the layer says which is which.
pub fn qualified(layer: Layer, name: &str) -> String {
    format!("{}:{name}", layer.name())
}

/// The settings the engine runs: `user` alone when there is no managed layer; else the managed hooks
/// first, the user's after them (none under `allow_managed_hooks_only`), the managed layer's policy, its
/// tables where it gives them, and hookd's guard of itself as the managed layer has it.
pub fn fold(managed: Option<&Settings>, mut user: Settings) -> Settings {
    let Some(managed) = managed else {
        return user;
    };
    let mut notes = Vec::new();
    let mut hooks = managed.hooks.clone();
    let managed_names: Vec<&str> = managed
        .hooks
        .iter()
        .flat_map(|(_, hooks)| hooks.iter().map(|h| h.name.as_str()))
        .collect();
    let user_hooks = std::mem::take(&mut user.hooks);
    let user_count: usize = user_hooks.iter().map(|(_, hooks)| hooks.len()).sum();
    if managed.policy.allow_managed_hooks_only {
        if user_count > 0 {
            notes.push(format!(
                "the user's {user_count} hook(s) do not run: the managed layer sets allow_managed_hooks_only"
            ));
        }
    } else {
        for (moment, list) in user_hooks {
            let mut kept = Vec::with_capacity(list.len());
            for hook in list {
                if let Some(twin) = managed.hooks_for(&moment).iter().find(|m| m.runs_as(&hook)) {
                    notes.push(format!(
                        "{moment}: the user's hook \"{}\" is the managed hook \"{}\" (same program, words, moment and matcher, and run as it is): it runs once, as the managed one",
                        hook.name, twin.name
                    ));
                    continue;
                }
                let hook = if managed_names.contains(&hook.name.as_str()) {
                    let mut renamed = (*hook).clone();
                    renamed.name = qualified(Layer::User, &hook.name);
                    notes.push(format!(
                        "{moment}: the user's hook \"{}\" has a managed hook's name: it is another hook, \"{}\", and leaves the managed one as it is",
                        hook.name, renamed.name
                    ));
                    Arc::new(renamed)
                } else {
                    hook
                };
                kept.push(hook);
            }
            match hooks.iter_mut().find(|(m, _)| *m == moment) {
                Some((_, all)) => all.extend(kept),
                None => hooks.push((moment, kept)),
            }
        }
    }
    let mut extra = managed.extra_moments.clone();
    for moment in &user.extra_moments {
        if !extra.contains(moment) {
            extra.push(moment.clone());
        }
    }
    hooks.sort_by_key(|(name, _)| {
        (
            crate::tables::moment::order(name),
            extra.iter().position(|m| m == name),
        )
    });
    user.hooks = hooks;
    user.extra_moments = extra;
    for moment in &managed.sequential {
        if !user.sequential.contains(moment) {
            user.sequential.push(moment.clone());
        }
    }
    user.policy = managed.policy;
    let gives = |key: &str| managed.given.iter().any(|k| k == key);
    if gives("protect") {
        if !user.protect.enabled && managed.protect.enabled {
            notes.push(
                "the user's [protect] enabled = false does not hold: the managed layer keeps hookd's guard of itself on".into(),
            );
        }
        user.protect.enabled = managed.protect.enabled;
        // A team that says whether live hooks may allow says it for every user.
        user.protect.live_hooks_allow = managed.protect.live_hooks_allow;
    } else if !user.protect.enabled {
        notes.push(
            "the user's [protect] enabled = false does not hold: under a managed layer, only it may turn hookd's guard of itself off".into(),
        );
        user.protect.enabled = true;
    }
    for path in &managed.protect.paths {
        if !user.protect.paths.contains(path) {
            user.protect.paths.push(path.clone());
        }
    }
    if gives("record") {
        user.record = managed.record.clone();
    }
    if gives("http") {
        user.http = managed.http.clone();
    }
    if gives("export") {
        user.export = managed.export.clone();
    }
    if gives("defaults") {
        user.defaults.max_processes = managed.defaults.max_processes;
        user.defaults.stop_refusal_cap = managed.defaults.stop_refusal_cap;
    } else if user.defaults.stop_refusal_cap < managed.defaults.stop_refusal_cap {
        // The cap lets a refused Stop through: a lower one (0: no Stop is ever refused) would let the
        // managed Stop hooks' refusals through sooner than the managed layer does.
        notes.push(format!(
            "the user's [defaults] stop_refusal_cap = {} does not hold: it would let the managed Stop hooks' refusals through sooner; the managed layer's {} holds",
            user.defaults.stop_refusal_cap, managed.defaults.stop_refusal_cap
        ));
        user.defaults.stop_refusal_cap = managed.defaults.stop_refusal_cap;
    }
    user.digest =
        crate::layers::trust::short_digest(format!("{}{}", managed.digest, user.digest).as_bytes())
            .into();
    user.managed_files = managed.managed_files.clone();
    user.layer_notes = notes;
    user
}
