//! hookd's integration tests: one test binary (so that the helpers in `common` are compiled once, and
//! every test links against one copy of the crate), a module per area. Every test starts the real
//! `hookd` binary in a fresh temp dir; see `common` for the sandbox, the daemon guard and the client.
//!
//! Run them all with `cargo test`; one area with `cargo test --test it workers::`. Data files stay where
//! they were: `tests/fixtures/` (the agents' captured hook inputs) and `tests/e2e/` (the scripted model
//! server), found through `CARGO_MANIFEST_DIR`.

// ---- shared helpers ---------------------------------------------------------------------------------

/// The sandbox, the daemon guard, the line client, processes and prerequisites: what every area uses.
mod common;
/// What the real-agent suites (`e2e_*`) share: the pinned agents, the scripted model server.
mod e2e_common;

// ---- the command line --------------------------------------------------------------------------------

/// `hookd import` and `hookd setup` over the settings files people committed (the shared corpus).
mod agent_corpus;
/// `hookd import` and `hookd relay --print-settings`: setting an agent up.
mod agents_setup;
/// `hookd check`: listings, errors with file:line:col, the file's owner and mode.
mod cli_check;
/// `hookd fire`, `status`, `reload` against a daemon and against none.
mod cli_client;
/// Every command with a reader that left early (`| head`): quiet, its own status, its work done.
mod cli_closed_pipe;
/// `status`, `reload` and `check` for people on a terminal, and for scripts.
mod cli_for_people;
/// `hookd import` appended to an existing file, its warnings, the timeouts it keeps.
mod cli_import;
/// `hookd install` over units that are there: edits kept unless --force; a --bin that cannot run.
mod cli_install;
/// `hookd completions` and `hookd man`: what a packaged command has.
mod cli_packaging;
/// `hookd setup AGENT`: hookd's hooks merged into each agent's own settings file, backed up, undone.
mod cli_setup;
mod cli_setup_managed;
/// `hookd test`: one event decided without a daemon, and policy tests (`--cases`); `fire` on a terminal.
mod cli_test;
/// `hookd doctor`: the whole chain checked against a real daemon, drift in each agent's file.
mod doctor;
/// The Python client of live hooks (clients/python/): its own tests, against this daemon.
mod python_client;
/// `hookd log`, `hookd watch`, `hookd why`: the record read back.
mod record_cli;
/// `examples/sdk_client.py` against a real daemon.
mod sdk_example;
/// `hookd setup` against a real concurrent writer: an edit saved while it merges is never lost.
mod setup_race;

// ---- the example hooks ---------------------------------------------------------------------------------

/// The example guard of config/ (deny-destructive), a worker of the example settings, run for real.
mod examples_guard;
/// The Python example hooks of config/ (approve-read-only, rm-to-trash, redact-secrets), run for real.
mod examples_hooks;

// ---- the daemon --------------------------------------------------------------------------------------

/// Attacks on allow, ask and rewrites: findings, ignored until fixed.
mod attack_decisions;
/// Attacks on setup, test and the text for people: findings, each fixed.
mod attack_everyday;
/// Attacks on the settings in layers: a repository's hooks hidden, shadowed, replayed; the managed layer.
mod attack_layers;
/// Attacks on live hooks: an agent that hangs its own, a buggy client, a connection paused by its fires.
mod attack_live;
/// The managed hooks' second look at a rewritten call the verdict so far asks about.
mod attack_managed_again;
/// Attacks on hookd-relay, the relay's command line, what setup writes and the reaper.
mod attack_relay;
/// `status` asked to hold every fire back: a trust store swapped for a FIFO, large scripts asked again.
mod attack_status;
/// The project layer's answers remembered between fires, attacked with links, a store put back, edits.
mod attack_trust_cache;
/// Reading one hook's answer, folding the outcomes, picking the hooks that run.
mod daemon_answers;
/// The socket's folder and modes, a second daemon, a stale socket, clean shutdowns.
mod daemon_lifecycle;
/// Hook processes: parallelism, process groups, limits, environment, descriptors.
mod daemon_processes;
/// The socket protocol: errors, ids, pipelining, hello, status, reload, peer credentials.
mod daemon_protocol;
/// Allow, ask, rewritten inputs and outputs, and sequential chains, through the real daemon.
mod daemon_rewrites;
/// `background = true`: answered at once, the outcome journaled after; reloads and shutdown.
mod hook_background;
/// A hook's `if`: not started for a call its rule does not fit, for every agent; empty fields.
mod hook_conditions;
/// The HTTP listener for agents' http hooks.
mod http_hooks;
/// The managed layer: first, out of the user's reach, its policy; a hook two layers hold run once.
mod layers_managed;
/// A repository's trusted hooks run the very bytes digested; a repository whose hooks cannot be read is said.
mod layers_pinned;
/// A repository's own hooks: pending until trusted, pinned to content, only tightening, only inside.
mod layers_project;
/// Hooks hung live over the socket: attach, call, answer, detach; refused where they can never run.
mod live_hooks;
/// hookd's guard of itself: every agent's call that would switch the guard off refused, reads not.
mod protect;
mod protect_attack;
/// Live reload of the settings file, edited the ways editors and tools edit it.
mod reload_live;
/// A reload that weakens the guard: journaled with what changed, shown by `status`; one that strengthens it is not.
mod reload_weakened;
/// Stop loops: refused Stops counted per session, and the cap.
mod stop_loops;
/// Socket activation, sd_notify and the units `hookd install` writes.
mod systemd;
/// Worker hooks: kept running, one event per line.
mod workers;

// ---- the relay ---------------------------------------------------------------------------------------

/// `hookd relay` end to end with the agents' captured hook inputs.
mod relay;
/// `hookd-relay-lite`, the relay with no libc: the same answers as `hookd relay`, whatever happens.
mod relay_lite;
/// `hookd-relay`, the relay as a program of its own: the same answers, and what setup writes.
mod relay_program;
/// Where every relay and client finds the daemon, waiting for one that restarts, and kill -9 under
/// socket activation.
mod relay_reach;
/// A refusal kept: a misspelt --fail-closed refuses, an answer stdout cannot carry is refused on stderr.
mod relay_refusal_kept;
/// The socket's `relay` request: an agent's raw hook input answered as `hookd relay` answers it.
mod relay_request;

// ---- faults, security, load ------------------------------------------------------------------------

/// Bad clients: garbage, half lines, floods, clients that never read or leave early.
mod fault_clients;
/// Bad hooks: hanging, ignoring SIGTERM, forking, flooding, dying by a signal.
mod fault_hooks;
/// The daemon under load: bad edits while many clients fire, pipelined floods, SIGTERM mid-run.
mod load;
/// What other users and hostile settings or event data cannot do.
mod security;

// ---- the record ----------------------------------------------------------------------------------------

/// Asks followed to their end: what came of each (ran, denied, unknown), and `hookd log --asks`.
mod ask_outcomes;
/// A hook fire's record handed over after its answer, attacked: hang-ups, unread answers, stops, watchers.
mod attack_answer_after;
/// Fires' lines written on their own threads, attacked: many moments, huge fields, reloads, a stop.
mod attack_record_lines;
/// The journal exported to an OpenTelemetry collector: a collector on loopback decoding OTLP/HTTP.
#[cfg(feature = "otlp")]
mod export_otlp;
/// The record through the real daemon: the journal, watch, the relay's spool, rotation; and attacked.
mod record_daemon;
mod record_recycled;

// ---- pure logic and saved inputs ---------------------------------------------------------------------

/// The README's agent table, held to the moment and agent tables.
mod docs_truth;
/// Properties of the verdict fold, with proptest; the order property against an in-process engine.
mod fold_properties;
/// Every saved fuzz input replayed through the fuzz targets' checks.
mod fuzz_regressions;
mod guard_corpus;
mod guard_daemon;
/// `cargo test` never touches the user's own hookd: every program a test starts has the test's places.
mod isolation;
/// The floors of `src/lib.rs`, held: nothing imports from a floor above its own.
mod layering;

// ---- real agents, offline ----------------------------------------------------------------------------

/// The real Claude Code with the scripted model server.
mod e2e_claude_code;
/// The real Codex CLI with the scripted model server.
mod e2e_codex;
/// The real GitHub Copilot CLI with the scripted model server.
mod e2e_copilot_cli;
/// The real Gemini CLI with the scripted model server.
mod e2e_gemini_cli;
/// The real Qwen Code with the scripted model server.
mod e2e_qwen_code;
/// The scenarios the real agents share, as one table: one test per agent and scenario.
mod e2e_scenarios;
