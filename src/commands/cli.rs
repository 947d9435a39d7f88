//! The command line (docs/commands.md). Definitions only: each command is carried out in [`crate::commands`].

use std::path::PathBuf;

use crate::limits::RELAY_TIMEOUT_SECS;
use clap::{Parser, Subcommand};

/// One daemon for every coding agent's hooks: one settings file, live, for every agent.
#[derive(Debug, Parser)]
#[command(name = "hookd", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon in the foreground (systemd keeps it running)
    Serve {
        /// Settings file [default: $HOOKD_CONFIG, else $XDG_CONFIG_HOME/hookd/hooks.toml, else ~/.config/hookd/hooks.toml]
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Socket to listen on [default: $HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd/hookd.sock, else /tmp/hookd-$UID/hookd.sock]
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// Validate a settings file and print its hooks per moment (exit 1 and every error when invalid)
    Check {
        /// Settings file [default: as for serve]
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// One JSON object on stdout: the hooks per moment and the warnings, or every error
        #[arg(long)]
        json: bool,
    },
    /// Fire a moment with the event read on stdin (a JSON object); exit 0 not refused, 2 refused, 1 error
    ///
    /// Prints the verdict as text on a terminal, the daemon's response line when piped or with --json
    Fire {
        /// The moment, e.g. PreToolUse
        #[arg(value_parser = MOMENT_NAMES, hide_possible_values = true)]
        moment: String,
        /// The agent firing, e.g. claude-code (hooks with `agents` fire only for theirs)
        #[arg(long, value_name = "AGENT", value_parser = AGENT_NAMES, hide_possible_values = true)]
        agent: Option<String>,
        /// The daemon's socket [default: the first where yours listens: $HOOKD_SOCKET alone, else $XDG_RUNTIME_DIR/hookd/hookd.sock, /run/user/$UID/hookd/hookd.sock, /tmp/hookd-$UID/hookd.sock]
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// Print the daemon's response line as JSON, also on a terminal (as it is printed when piped)
        #[arg(long)]
        json: bool,
    },
    /// Run the hooks that fit one event as the daemon would, with no daemon; or policy tests (--cases)
    ///
    /// Prints each hook's outcome with its stdout and stderr, the verdict, and with --agent what the
    /// relay would answer; exit 0 not refused, 2 refused, 1 error. With --cases, runs a file of policy
    /// test cases and reports each: exit 0 when all pass, 1 otherwise
    Test {
        /// The moment of hookd's own event, e.g. PreToolUse; leave it out with --agent for the agent's
        /// raw hook input, translated as hookd relay translates it, whose moment it names
        #[arg(conflicts_with = "cases", value_parser = MOMENT_NAMES, hide_possible_values = true)]
        moment: Option<String>,
        /// The agent firing, e.g. claude-code (hooks with `agents` fire only for theirs); for a known
        /// agent, what hookd relay would answer it is shown too
        #[arg(long, value_name = "AGENT", value_parser = AGENT_NAMES, hide_possible_values = true, conflicts_with = "cases")]
        agent: Option<String>,
        /// Read the event from FILE instead of stdin
        #[arg(long, value_name = "FILE", conflicts_with = "cases")]
        event: Option<PathBuf>,
        /// The agent's name for the event of its raw hook input, for an agent whose input names none
        /// (copilot-cli), as hookd relay --event takes it
        #[arg(
            long,
            value_name = "EVENT",
            requires = "agent",
            conflicts_with = "cases"
        )]
        agent_event: Option<String>,
        /// Settings file [default: as for serve]
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Run the policy test cases of FILE (TOML, docs/commands.md) and report each, ok or FAILED
        #[arg(long, value_name = "FILE")]
        cases: Option<PathBuf>,
        /// JSON, also on a terminal (as printed when piped)
        #[arg(long)]
        json: bool,
    },
    /// Print the daemon's status: for people on a terminal, the status line as JSON when piped or with
    /// --json (exit 1 when it is not running)
    Status {
        /// The daemon's socket [default: the first where yours listens: $HOOKD_SOCKET alone, else $XDG_RUNTIME_DIR/hookd/hookd.sock, /run/user/$UID/hookd/hookd.sock, /tmp/hookd-$UID/hookd.sock]
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The status line as JSON, also on a terminal
        #[arg(long)]
        json: bool,
    },
    #[command(about = RELAY_ABOUT)]
    Relay(RelayArgs),

    /// Print an agent's existing hook settings (Claude Code's, Gemini CLI's or Qwen Code's settings.json,
    /// Codex's hooks.json, Copilot CLI's hooks) as hookd settings
    Import {
        /// The agent's settings file
        file: PathBuf,
        /// Whose file it is: claude-code, codex, gemini-cli, qwen-code or copilot-cli [default: guessed
        /// from the file]
        #[arg(long, value_name = "AGENT", value_parser = AGENT_NAMES, hide_possible_values = true)]
        agent: Option<String>,
    },
    /// Write hookd's relay hooks into an agent's own settings file, merged with what is there (a backup
    /// first; --dry-run shows the diff, --undo restores the backup)
    Setup(SetupArgs),
    /// Check the whole chain an agent's call goes through, a line each with what to fix: the daemon, the
    /// settings, protection, each agent's relay hooks (drift), the relay program, Codex's trust,
    /// fail-closed (exit 1 when a call could go through unguarded)
    Doctor {
        /// The daemon's socket [default: as for serve]
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The settings file to check when no daemon answers [default: as for serve]
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// One JSON object on stdout: {"ok":…,"socket":…,"version":…,"checks":[…]}
        #[arg(long)]
        json: bool,
    },
    /// Write the systemd user units (hookd.service, hookd.socket) for this binary, and enable the socket
    /// (systemctl --user enable --now hookd.socket) when they go where systemd reads them
    Install {
        /// The hookd binary the service runs [default: this one]
        #[arg(long, value_name = "PATH")]
        bin: Option<PathBuf>,
        /// Where to write the units [default: $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Replace units that differ from what this hookd writes (edited by hand), which are otherwise
        /// left as they are
        #[arg(long)]
        force: bool,
        /// Write the units only: do not run systemctl --user enable --now hookd.socket (never run with
        /// --dir, whose units systemd does not read)
        #[arg(long)]
        no_enable: bool,
    },
    /// Print the record: what the hooks decided, from the journal (rotated files too, oldest first); a
    /// table on a terminal, the records as JSON lines as stored when piped or with --json
    Log {
        #[command(flatten)]
        filter: Filter,
        /// Only records since then: 30s, 10m, 2h, 1d ago, or an RFC 3339 time (2026-12-01T09:30:00Z)
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Only the last N records that pass the filters [default: 20 in the table, all as JSON]
        #[arg(short = 'n', value_name = "N")]
        last: Option<usize>,
        /// Only asks: the fires that asked a person, and what came of each (ran, denied, unknown)
        #[arg(long)]
        asks: bool,
        /// JSON lines, as the journal holds them, also on a terminal
        #[arg(long)]
        json: bool,
        /// The journal to read [default: $XDG_STATE_HOME/hookd/journal.jsonl, else
        /// ~/.local/state/hookd/journal.jsonl]
        #[arg(long, value_name = "FILE")]
        journal: Option<PathBuf>,
    },
    /// Follow the record live: each record as the daemon writes it, until interrupted or the daemon stops
    /// (exit 1 when it is not running, or drops this watcher for reading too slowly)
    Watch {
        #[command(flatten)]
        filter: Filter,
        /// JSON lines, as the journal holds them, also on a terminal
        #[arg(long)]
        json: bool,
        /// The daemon's socket [default: the first where yours listens: $HOOKD_SOCKET alone, else $XDG_RUNTIME_DIR/hookd/hookd.sock, /run/user/$UID/hookd/hookd.sock, /tmp/hookd-$UID/hookd.sock]
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// Show the last refusal (or ask) in full: what was asked, the reason, which hook held it back and
    /// its stderr, every hook with its outcome and time (exit 1 when the journal has none)
    Why {
        /// Only the agent's refusals, e.g. claude-code
        #[arg(long, value_name = "AGENT", value_parser = AGENT_NAMES, hide_possible_values = true)]
        agent: Option<String>,
        /// Only the session's refusals (the event's session_id)
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Only refusals at the moment, e.g. PreToolUse
        #[arg(long, value_name = "MOMENT", value_parser = MOMENT_NAMES, hide_possible_values = true)]
        moment: Option<String>,
        /// The record as the journal holds it, one JSON line
        #[arg(long)]
        json: bool,
        /// The journal to read [default: as for log]
        #[arg(long, value_name = "FILE")]
        journal: Option<PathBuf>,
    },
    /// Ask the daemon to reload its settings now (exit 1 and the errors when the file is invalid); the
    /// answer as JSON when piped or with --json
    Reload {
        /// The daemon's socket [default: the first where yours listens: $HOOKD_SOCKET alone, else $XDG_RUNTIME_DIR/hookd/hookd.sock, /run/user/$UID/hookd/hookd.sock, /tmp/hookd-$UID/hookd.sock]
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The answer line as JSON, also on a terminal
        #[arg(long)]
        json: bool,
    },
    /// Print the completion script for a shell: `hookd completions bash > ~/.local/share/bash-completion/completions/hookd`
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Print the manual page hookd(1), made from the same definitions as --help; with --dir, write it and
    /// a page per command (hookd-fire(1), ...) into DIR instead
    Man {
        /// The folder to write hookd.1 and hookd-COMMAND.1 into, e.g. ~/.local/share/man/man1
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `hookd setup AGENT`.
#[derive(Debug, Clone, clap::Args)]
pub struct SetupArgs {
    /// The agent: claude-code, codex, gemini-cli, qwen-code or copilot-cli
    #[arg(value_parser = AGENT_NAMES, hide_possible_values = true)]
    pub agent: String,
    /// The agent's settings file [default: where the agent reads it: $CLAUDE_CONFIG_DIR/settings.json
    /// or ~/.claude/settings.json, $CODEX_HOME/config.toml or ~/.codex/config.toml,
    /// ~/.gemini/settings.json (under $GEMINI_CLI_HOME if set), $QWEN_HOME/settings.json or
    /// ~/.qwen/settings.json, $COPILOT_HOME/settings.json or ~/.copilot/settings.json]
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Print what would change, as a unified diff, and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Restore the file as it was before hookd setup, from its backup (FILE.hookd-backup)
    #[arg(long)]
    pub undo: bool,
    /// With --undo: restore the backup even though the file was changed since setup wrote it
    #[arg(long, requires = "undo")]
    pub force: bool,
    /// Take out exactly what hookd setup wrote (its relay hooks; for Codex their trust records) and keep
    /// everything else, edits made since included; removes the backup
    #[arg(long, conflicts_with = "undo")]
    pub remove: bool,
    /// The daemon's socket, written into the relay's command (needed when the daemon is not on the
    /// default socket)
    #[arg(long, value_name = "PATH", conflicts_with_all = ["undo", "remove"])]
    pub socket: Option<PathBuf>,
    /// Written into the relay's command: refuse when hookd cannot answer (hookd relay --fail-closed)
    #[arg(long, conflicts_with_all = ["undo", "remove"])]
    pub fail_closed: bool,
    /// Write into the agent's managed (system) settings, root's, which the user's own settings cannot
    /// take the relay out of (/etc/claude-code/managed-settings.json, /etc/codex/requirements.toml,
    /// /etc/gemini-cli/settings.json, /etc/qwen-code/settings.json,
    /// /etc/github-copilot/policy.d/hookd.json); as root only, unless --managed-root
    #[arg(long, conflicts_with = "file")]
    pub managed: bool,
    /// With --managed: DIR stands for /, the managed file is written below it (for tests and unusual
    /// installs), and hookd's managed layer read from DIR/etc/hookd
    #[arg(long, value_name = "DIR", requires = "managed")]
    pub managed_root: Option<PathBuf>,
}

/// A name of one kind (an agent, a moment), offered by the shell completions and `--help`'s
/// possible values but never checked here: hookd checks it itself, with its own did-you-mean (and the
/// relay refuses a wrong `--agent` when it fails closed), and a moment may be one the settings declare.
#[derive(Debug, Clone, Copy)]
pub struct Names(fn() -> Vec<&'static str>);

/// Every agent hookd speaks for, by its name on the command line (claude-code, ...).
pub const AGENT_NAMES: Names = Names(|| {
    crate::tables::agent::Agent::ALL
        .iter()
        .map(|a| a.name())
        .collect()
});

/// Every moment hookd knows, by its name (PreToolUse, ...).
pub const MOMENT_NAMES: Names = Names(|| {
    crate::tables::moment::KNOWN
        .iter()
        .map(|m| m.name)
        .collect()
});

impl clap::builder::TypedValueParser for Names {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.0)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `hookd relay`'s summary, in both places the relay is parsed.
const RELAY_ABOUT: &str = "The one command to put in an agent's own hook settings: reads the agent's hook input on stdin, fires it, and answers in the agent's dialect";

/// `hookd relay`'s options. Their doc comments are `--help`'s text, which names the settings' tables as
/// the file writes them (`[http]`): not links, whatever rustdoc would read in the brackets.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Clone, clap::Args)]
pub struct RelayArgs {
    /// The agent calling: claude-code, codex, gemini-cli, qwen-code or copilot-cli
    #[arg(long, value_name = "AGENT", default_value = "claude-code", value_parser = AGENT_NAMES, hide_possible_values = true)]
    pub agent: String,
    /// The daemon's socket [default: the first where yours listens: $HOOKD_SOCKET alone, else $XDG_RUNTIME_DIR/hookd/hookd.sock, /run/user/$UID/hookd/hookd.sock, /tmp/hookd-$UID/hookd.sock]
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Refuse (with the reason "hookd is not running") when the daemon cannot answer, instead of
    /// letting the agent go on; a Stop is still let through, since refusing it would keep the agent
    /// working with no cap
    #[arg(long)]
    pub fail_closed: bool,
    /// The agent's name for the event this relay serves, for an agent whose hook input names none
    /// (copilot-cli: --print-settings writes it into each hook's command); otherwise the input's
    /// own hook_event_name is used
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
    /// Seconds to wait for the verdict before giving up: above every hook's timeout (60 s by default),
    /// below the agent's own hook timeout (120 s in --print-settings)
    #[arg(long, value_name = "SECONDS", default_value_t = RELAY_TIMEOUT_SECS)]
    pub timeout: f64,
    /// Print the snippet for AGENT's own settings that routes each of its moments through hookd
    /// relay; --socket and --fail-closed, when given, are written into the command it prints
    #[arg(long, value_name = "AGENT", value_parser = AGENT_NAMES, hide_possible_values = true)]
    pub print_settings: Option<String>,
    /// With --print-settings claude-code: http hooks posting to the daemon's [http] listener, instead
    /// of a command per moment (how the token reaches Claude Code is said on stderr)
    #[arg(long, requires = "print_settings")]
    pub http: bool,
    /// With --http: the listener's port, on 127.0.0.1 [default: from the settings file's [http] listen]
    #[arg(long, value_name = "PORT", requires = "http")]
    pub port: Option<u16>,
    /// With --http: the settings file to read [http] listen from [default: as for serve]
    #[arg(long, value_name = "FILE", requires = "http")]
    pub config: Option<PathBuf>,
}

/// `hookd relay` parsed alone, without the other commands: a [`Cli`] builds every command's definition
/// before it parses anything (about 0.4 ms here), and agents start the relay for every tool call.
/// `main` takes this path when the first argument is `relay`; the options are [`RelayArgs`], the same.
#[derive(Debug, Parser)]
#[command(name = "hookd relay", bin_name = "hookd relay", about = RELAY_ABOUT, max_term_width = 100)]
pub struct RelayOnly {
    #[command(flatten)]
    pub args: RelayArgs,
}

/// Which records `log` and `watch` show: every filter given must match.
#[derive(Debug, Clone, clap::Args)]
pub struct Filter {
    /// Only what was held back: refused, or sent to a person (asked)
    #[arg(long)]
    pub refused: bool,
    /// Only the agent's records, e.g. claude-code
    #[arg(long, value_name = "AGENT", value_parser = AGENT_NAMES, hide_possible_values = true)]
    pub agent: Option<String>,
    /// Only the session's records (the event's session_id)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only records of the moment, e.g. PreToolUse
    #[arg(long, value_name = "MOMENT", value_parser = MOMENT_NAMES, hide_possible_values = true)]
    pub moment: Option<String>,
}

impl Filter {
    /// As the protocol's `watch` takes it, which `log` applies the same way.
    pub fn to_watch(&self) -> crate::protocol::WatchFilter {
        crate::protocol::WatchFilter {
            agent: self.agent.clone(),
            session: self.session.clone(),
            moment: self.moment.clone(),
            refused: self.refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `hookd relay` parsed alone takes what the relay of the whole command line takes, and reads it the
    /// same: the fast path can never drift from the definitions.
    #[test]
    fn the_relay_alone_is_the_relay_of_the_command_line() {
        let whole = Cli::command();
        let relay = whole.find_subcommand("relay").unwrap();
        let alone = RelayOnly::command();
        let options = |command: &clap::Command| {
            command
                .get_arguments()
                .map(|a| {
                    format!(
                        "{:?} {:?} {:?}",
                        a.get_id(),
                        a.get_long(),
                        a.get_default_values()
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(options(&alone), options(relay));
        assert_eq!(alone.get_about(), relay.get_about());
        let argv = [
            "relay",
            "--agent",
            "codex",
            "--fail-closed",
            "--timeout",
            "5",
            "--socket",
            "/s",
        ];
        let Command::Relay(whole) = Cli::try_parse_from(std::iter::once("hookd").chain(argv))
            .unwrap()
            .command
        else {
            panic!("not the relay");
        };
        let alone = RelayOnly::try_parse_from(argv).unwrap().args;
        assert_eq!(format!("{whole:?}"), format!("{alone:?}"));
        assert!(
            RelayOnly::try_parse_from(["relay", "--http"]).is_err(),
            "--http needs --print-settings"
        );
    }

    /// The help names every agent hookd speaks for, wherever it lists them: a new row in the agent
    /// table fails this until the help says it.
    #[test]
    fn the_help_names_every_agent() {
        let mut command = Cli::command();
        for sub in ["relay", "import", "setup"] {
            let help = command
                .find_subcommand_mut(sub)
                .unwrap()
                .render_long_help()
                .to_string();
            for agent in crate::agents::Agent::ALL {
                assert!(
                    help.contains(agent.name()),
                    "{sub}'s help lacks {}",
                    agent.name()
                );
            }
        }
    }
}
