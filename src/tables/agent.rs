//! The agents hookd speaks for: one row of [`AGENTS`] each, with everything about the agent that is data
//! (its names, its tools' names, the dialect it reads answers in, the shape of its own hook settings and
//! what `hookd import` must know of them). Which moments it fires, and under which names, is in each
//! moment's row ([`crate::tables::moment::KNOWN`]), which also answers the questions about them
//! ([`Agent::moments`], [`Agent::moment_of`], ...). The code that differs per agent (`agents/`) dispatches on the
//! row's enums ([`Dialect`], [`SettingsFormat`]), never on the agent.
//!
//! Ground floor, below the moment table, so that the moment rows can name the agents that fire them.

/// An agent with hook settings of its own, that `hookd relay` speaks for. Each has its row in [`AGENTS`],
/// at the position of its discriminant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    QwenCode,
    CopilotCli,
}

/// How an agent reads hookd's answer: the dialect code (`agents/dialect/answer.rs`) has one arm per dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Claude Code's answers, which Codex reads too: the moment's [`Shape`](crate::tables::moment::Shape) as is.
    ClaudeCode,
    /// Gemini CLI's: every JSON refusal is `decision: "deny"` with a `reason`.
    GeminiCli,
    /// GitHub Copilot CLI's native hooks: flat JSON at the top level (`permissionDecision`, `decision`,
    /// `behavior`, `additionalContext`), and an input that names no event (the relay's `--event` does).
    CopilotCli,
}

/// What an agent does with the answers beyond refuse and add (docs/agents.md, "Allow, ask, rewrite"), as
/// seen on the real agents: where it cannot do what a verdict says, the dialect code picks the safe side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Powers {
    /// Before a tool runs, it reads an allow: the call runs without its own permission prompt. Where it
    /// does not, an allow is simply not sent.
    pub allow: bool,
    /// Before a tool runs, it reads an ask: it asks a person, or refuses when nobody can be asked. Where
    /// it does not, an ask is a refusal that says approval is needed, never a silent pass.
    pub ask: bool,
    /// How it takes a rewritten tool input.
    pub input: InputRewrite,
    /// How it takes a rewritten tool output.
    pub output: OutputRewrite,
}

/// How an agent takes a rewritten tool input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputRewrite {
    /// It cannot: the call is refused, the reason giving the call as rewritten, so that the model may
    /// make that call instead. Never run unchanged, which may be what a hook rewrote it away from.
    Refused,
    /// On its own, with no decision beside it (Claude Code's `updatedInput`, Gemini CLI's `tool_input`).
    Alone,
    /// Only beside an allow (Codex): sent with one, which the fold gives only when no hook asked for
    /// more caution (an ask or a refusal would have been answered instead).
    WithAllow,
}

/// How an agent takes a rewritten tool output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputRewrite {
    /// In the tool's own shape, replacing it (Claude Code's `updatedToolOutput`).
    Shaped,
    /// As the reason of a block, which is all the model sees of the result (Codex's PostToolUse
    /// `decision: "block"`, Gemini CLI's AfterTool `decision: "deny"`): the rewritten output as text.
    AsReason,
    /// As Copilot CLI's `modifiedResult` (`textResultForLlm`).
    CopilotResult,
    /// As Qwen Code's `continue: false` with the output as text in `stopReason`: the model gets that
    /// text as the tool's result, and the turn goes on (Qwen warns the user, in its words, that the tool
    /// was not run).
    ContinueFalse,
}

/// The shape of the agent's own hook settings, that `hookd relay --print-settings` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsFormat {
    /// A settings.json: `{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", ...}]}]}}`.
    Json,
    /// Codex's config.toml: `[[hooks.EVENT]]` groups, and the trust records without which Codex skips
    /// a hook without a word.
    CodexToml,
    /// GitHub Copilot CLI's `{"version": 1, "hooks": {event: [{"type": "command", "bash": ..., "timeoutSec":
    /// N}]}}` (`.github/hooks/*.json`, or the `hooks` of `~/.copilot/settings.json`): a flat list of hooks
    /// per event, each hook's command naming the event, since Copilot's hook input does not.
    CopilotJson,
}

/// Everything about one agent that is data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentRow {
    pub agent: Agent,
    /// Its name in `--agent`, in a hook's `agents`, and in the http path `/hooks/NAME`.
    pub name: &'static str,
    /// Its name in messages.
    pub display_name: &'static str,
    /// How it reads an answer.
    pub dialect: Dialect,
    /// Its events with no counterpart among hookd's moments: real events of its own, that keep their
    /// names and have no hooks unless the settings declare them.
    pub own_events: &'static [&'static str],
    /// Its tool names and Claude Code's, which hooks see (docs/agents.md, tool names), so that one matcher
    /// serves every agent; empty when it uses Claude Code's.
    pub tools: &'static [(&'static str, &'static str)],
    /// Its tool that edits files by a patch (Codex's `apply_patch`, the patch text in
    /// `tool_input.command`), which hooks see as Claude Code's edit tools: `Write` when the patch only
    /// adds files, `Edit` otherwise, with the paths it touches (`agents/dialect/input.rs`).
    pub patch_tool: Option<&'static str>,
    /// What it does with allow, ask and rewrites.
    pub powers: Powers,
    /// Its own hook settings.
    pub settings: AgentSettings,
    /// What `hookd import` must know of its settings files.
    pub import: AgentImport,
}

/// An agent's own hook settings file, as `--print-settings` writes it and `hookd import` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentSettings {
    pub format: SettingsFormat,
    /// Where the agent reads it, as its documentation names the place.
    pub file: &'static str,
    /// A hook's `timeout` is in milliseconds (else seconds).
    pub timeout_in_ms: bool,
    /// A hook has a `name` (in the agent's logs, and how its settings switch one off).
    pub named_hooks: bool,
    /// It runs http hooks (`--print-settings --http`).
    pub http_hooks: bool,
    /// The file `setup` and `doctor` look at when none is given: where the agent reads its user settings.
    pub default_file: DefaultFile,
    /// How long it lets a command hook run when its settings give no timeout, in seconds (what `hookd
    /// import` says of a hook that gave none).
    pub default_timeout_s: u64,
    /// Where an administrator's settings hold hooks the user's own settings cannot take out (`setup
    /// --managed`); `None` for an agent with no such place.
    pub managed: Option<ManagedPlace>,
}

/// An agent's managed (system) settings: a file root writes, that the agent reads beside the user's
/// own and whose hooks the user's settings cannot take out. Each was run for real on the pinned version
/// (docs/agents.md, "Managed setups").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagedPlace {
    /// The file, an absolute path.
    pub file: &'static str,
    /// The variable that names another file in its stead ("": none), read as the agent reads it.
    pub var: &'static str,
    /// Settings the relay needs in that file, since the user's own settings would otherwise switch
    /// every hook off, the managed ones included (a key path, and its value): written by setup beside
    /// the relay.
    pub pins: &'static [(&'static [&'static str], bool)],
}

/// Where an agent reads its user settings when nothing says otherwise: `file` in the folder the
/// variable `var` names, when it is set and not empty, else in `home_folder` under the home folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultFile {
    pub var: &'static str,
    /// How the agent reads the variable's value.
    pub var_read: VarRead,
    /// The folder without the variable, under the home folder (empty: the home folder itself).
    pub home_folder: &'static str,
    pub file: &'static str,
}

/// How an agent reads the variable that moves its settings' folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarRead {
    /// As it is.
    AsGiven,
    /// `~` at its start is the home folder; a relative folder is taken from the working folder.
    TildeIsHome,
    /// Its links resolved (Codex names the file by its real folder in its trust records); a folder that
    /// does not exist, made absolute.
    Resolved,
}

impl DefaultFile {
    /// The file, as the agent finds it in this process's environment.
    pub fn path(&self) -> Result<std::path::PathBuf, String> {
        use std::path::PathBuf;
        let home = crate::paths::home();
        let set = std::env::var_os(self.var)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from);
        let folder = match (set, self.var_read) {
            (None, _) => home.join(self.home_folder),
            (Some(dir), VarRead::AsGiven) => dir,
            (Some(dir), VarRead::TildeIsHome) => match dir.strip_prefix("~") {
                Ok(rest) => home.join(rest),
                Err(_) => std::path::absolute(&dir).unwrap_or(dir),
            },
            (Some(dir), VarRead::Resolved) => dir
                .canonicalize()
                .or_else(|_| std::path::absolute(&dir))
                .map_err(|e| format!("{} {}: {e}", self.var, dir.display()))?,
        };
        Ok(folder.join(self.file))
    }
}

/// What `hookd import` must know of an agent's settings files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentImport {
    /// The folder its settings live in, which tells whose a file is when `--agent` does not (`None`: the
    /// shape every file is read in when nothing points elsewhere).
    pub folder: Option<&'static str>,
    /// Keys under `hooks` that are its settings, not events.
    pub setting_keys: &'static [&'static str],
    /// The keys a hook's timeout may be given by.
    pub timeout_keys: &'static [&'static str],
    /// Environment variables it gives its hooks that hookd does not.
    pub own_env: &'static [&'static str],
    /// Its settings may switch hooks off in `hooksConfig` (`enabled = false`, `disabled = [names]`).
    pub hooks_config: bool,
}

/// Every agent, in the order of [`Agent`]'s variants.
pub const AGENTS: &[AgentRow] = &[
    AgentRow {
        agent: Agent::ClaudeCode,
        name: "claude-code",
        display_name: "Claude Code",
        dialect: Dialect::ClaudeCode,
        // A hook there replaces Claude Code's own git worktree handling (it must make the worktree and
        // print its path): no moment of hookd's, and left out of `--print-settings`.
        own_events: &["WorktreeCreate", "WorktreeRemove"],
        tools: &[],
        patch_tool: None,
        // Seen: an allow runs a tool not in the allow list; ask in -p refuses; updatedInput alone
        // applies; updatedToolOutput replaces a Bash result given in its own shape.
        powers: Powers {
            allow: true,
            ask: true,
            input: InputRewrite::Alone,
            output: OutputRewrite::Shaped,
        },
        settings: AgentSettings {
            format: SettingsFormat::Json,
            file: "~/.claude/settings.json",
            timeout_in_ms: false,
            named_hooks: false,
            http_hooks: true,
            default_file: DefaultFile {
                var: "CLAUDE_CONFIG_DIR",
                var_read: VarRead::AsGiven,
                home_folder: ".claude",
                file: "settings.json",
            },
            // Documented.
            default_timeout_s: 600,
            managed: Some(ManagedPlace {
                // No variable moves it; a user's `disableAllHooks` does not stop its hooks.
                file: "/etc/claude-code/managed-settings.json",
                var: "",
                pins: &[],
            }),
        },
        import: AgentImport {
            folder: None,
            setting_keys: &[],
            timeout_keys: &["timeout"],
            own_env: &[],
            hooks_config: false,
        },
    },
    AgentRow {
        agent: Agent::Codex,
        name: "codex",
        display_name: "Codex",
        dialect: Dialect::ClaudeCode,
        own_events: &[],
        tools: &[],
        patch_tool: Some("apply_patch"),
        // Seen: allow alone and ask are a failed hook (the tool runs); updatedInput applies only with
        // allow; a PostToolUse block replaces the output with the reason.
        powers: Powers {
            allow: false,
            ask: false,
            input: InputRewrite::WithAllow,
            output: OutputRewrite::AsReason,
        },
        settings: AgentSettings {
            format: SettingsFormat::CodexToml,
            file: "$CODEX_HOME/config.toml, else ~/.codex/config.toml",
            timeout_in_ms: false,
            named_hooks: false,
            http_hooks: false,
            default_file: DefaultFile {
                var: "CODEX_HOME",
                var_read: VarRead::Resolved,
                home_folder: ".codex",
                file: "config.toml",
            },
            // Documented.
            default_timeout_s: 600,
            // requirements.toml, not the system config.toml: a user's `[features] hooks = false`
            // switches off the hooks of both, unless requirements.toml pins the feature on.
            managed: Some(ManagedPlace {
                file: "/etc/codex/requirements.toml",
                var: "",
                pins: &[(&["features", "hooks"], true)],
            }),
        },
        import: AgentImport {
            folder: Some(".codex"),
            setting_keys: &["state"],
            timeout_keys: &["timeout", "timeoutSec"],
            own_env: &[],
            hooks_config: false,
        },
    },
    AgentRow {
        agent: Agent::GeminiCli,
        name: "gemini-cli",
        display_name: "Gemini CLI",
        dialect: Dialect::GeminiCli,
        own_events: &["BeforeModel", "AfterModel", "BeforeToolSelection"],
        tools: &[
            ("run_shell_command", "Bash"),
            ("replace", "Edit"),
            ("write_file", "Write"),
            ("read_file", "Read"),
            ("grep_search", "Grep"),
            ("glob", "Glob"),
            ("list_directory", "LS"),
            ("web_fetch", "WebFetch"),
            ("google_web_search", "WebSearch"),
            // The rest of Gemini CLI 0.61.0's tools that Claude Code has (its source's *_TOOL_NAME
            // constants; Claude Code 2.1.332's tool list). `read_many_files` reads files as `Read` does,
            // so that a guard on reading fires for it too; its input is `include` patterns, not a
            // `file_path`. Its tools with no counterpart (`save_memory` is gone in 0.61.0; `tracker_*`,
            // `update_topic`, `complete_task`, `get_internal_docs`, `take_snapshot`) keep their names,
            // and its MCP tools are renamed by the dialect (`mcp_<server>_<tool>`: `agents/dialect/input.rs`).
            ("read_many_files", "Read"),
            ("write_todos", "TodoWrite"),
            ("ask_user", "AskUserQuestion"),
            ("enter_plan_mode", "EnterPlanMode"),
            ("exit_plan_mode", "ExitPlanMode"),
            ("activate_skill", "Skill"),
            ("invoke_agent", "Agent"),
            ("read_mcp_resource", "ReadMcpResourceTool"),
            ("list_mcp_resources", "ListMcpResourcesTool"),
        ],
        patch_tool: None,
        // Seen: an allow grants nothing; an ask in -p waits for an answer that never comes;
        // hookSpecificOutput.tool_input replaces the arguments; an AfterTool deny replaces the result
        // with the reason.
        powers: Powers {
            allow: false,
            ask: false,
            input: InputRewrite::Alone,
            output: OutputRewrite::AsReason,
        },
        settings: AgentSettings {
            format: SettingsFormat::Json,
            file: "~/.gemini/settings.json",
            timeout_in_ms: true,
            named_hooks: true,
            http_hooks: false,
            default_file: DefaultFile {
                var: "GEMINI_CLI_HOME",
                var_read: VarRead::AsGiven,
                home_folder: "",
                file: ".gemini/settings.json",
            },
            // `DEFAULT_HOOK_TIMEOUT = 6e4` ms, read in its bundle (0.61.0).
            default_timeout_s: 60,
            // The system file is merged last: its `hooksConfig.enabled` wins over the user's.
            managed: Some(ManagedPlace {
                file: "/etc/gemini-cli/settings.json",
                var: "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
                pins: &[(&["hooksConfig", "enabled"], true)],
            }),
        },
        import: AgentImport {
            folder: Some(".gemini"),
            setting_keys: &["enabled", "disabled", "notifications"],
            timeout_keys: &["timeout"],
            own_env: &["GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID"],
            hooks_config: true,
        },
    },
    AgentRow {
        agent: Agent::QwenCode,
        name: "qwen-code",
        display_name: "Qwen Code",
        // A Gemini CLI fork that reads Claude Code's answers (checked in @qwen-code/qwen-code 0.24.4:
        // `permissionDecision`, `decision: "block"`, `decision.behavior`, exit 2 with stderr).
        dialect: Dialect::ClaudeCode,
        // Its events with no counterpart in Claude Code.
        own_events: &["SessionDelete", "TodoCreated", "TodoCompleted"],
        // Gemini CLI's names for the tools both have, and Qwen's own for the rest.
        tools: &[
            ("run_shell_command", "Bash"),
            ("edit", "Edit"),
            ("write_file", "Write"),
            ("read_file", "Read"),
            ("grep_search", "Grep"),
            ("glob", "Glob"),
            ("list_directory", "LS"),
            ("web_fetch", "WebFetch"),
            ("web_search", "WebSearch"),
            ("todo_write", "TodoWrite"),
            ("notebook_edit", "NotebookEdit"),
            ("exit_plan_mode", "ExitPlanMode"),
            ("ask_user_question", "AskUserQuestion"),
            ("skill", "Skill"),
            // Runs any shell command in the background; Qwen's own safety code treats it as its shell.
            ("monitor", "Bash"),
        ],
        patch_tool: None,
        // Read in its code and seen (0.24.4): PreToolUse fires only once a call is approved, so an allow
        // changes nothing; an ask blocks in -p; no input rewrite reaches the tool; at PostToolUse only
        // `continue: false` is read, and its stopReason is what the model gets as the result.
        powers: Powers {
            allow: false,
            ask: true,
            input: InputRewrite::Refused,
            output: OutputRewrite::ContinueFalse,
        },
        settings: AgentSettings {
            format: SettingsFormat::Json,
            file: "~/.qwen/settings.json",
            // Seconds (a value of 1000 or more it reads as milliseconds, an older form).
            timeout_in_ms: false,
            named_hooks: false,
            http_hooks: false,
            default_file: DefaultFile {
                var: "QWEN_HOME",
                var_read: VarRead::TildeIsHome,
                home_folder: ".qwen",
                file: "settings.json",
            },
            // `DEFAULT_COMMAND_HOOK_TIMEOUT_SECONDS = 60`, read in its bundle (0.24.4).
            default_timeout_s: 60,
            // The system file is merged last: its `disableAllHooks` wins over the user's.
            managed: Some(ManagedPlace {
                file: "/etc/qwen-code/settings.json",
                var: "QWEN_CODE_SYSTEM_SETTINGS_PATH",
                pins: &[(&["disableAllHooks"], false)],
            }),
        },
        import: AgentImport {
            folder: Some(".qwen"),
            setting_keys: &["enabled", "disabled", "notifications"],
            timeout_keys: &["timeout"],
            own_env: &["QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR"],
            hooks_config: false,
        },
    },
    AgentRow {
        agent: Agent::CopilotCli,
        name: "copilot-cli",
        display_name: "Copilot CLI",
        dialect: Dialect::CopilotCli,
        own_events: &["userPromptTransformed", "preMcpToolCall", "errorOccurred"],
        // Its built-in tools, as 1.0.102 offers them to the model.
        tools: &[
            ("bash", "Bash"),
            ("read_bash", "BashOutput"),
            ("stop_bash", "KillShell"),
            ("view", "Read"),
            ("create", "Write"),
            ("edit", "Edit"),
            ("grep", "Grep"),
            ("glob", "Glob"),
            ("task", "Task"),
            ("web_fetch", "WebFetch"),
            ("web_search", "WebSearch"),
            // Found in 1.0.102's own code (not offered in the runs seen): an edit, and shells of other
            // kinds, which a `Bash` guard must see (input sent to a running shell included).
            ("str_replace", "Edit"),
            ("write_bash", "Bash"),
            ("powershell", "Bash"),
            ("write_powershell", "Bash"),
            ("local_shell", "Bash"),
        ],
        // Also in its code: a patch tool of Codex's format, its patch the argument itself.
        patch_tool: Some("apply_patch"),
        // Seen: an allow runs a tool without --allow-all-tools; modifiedArgs replaces the arguments;
        // an ask nobody can answer is denied; postToolUse modifiedResult replaces the result.
        powers: Powers {
            allow: true,
            ask: true,
            input: InputRewrite::Alone,
            output: OutputRewrite::CopilotResult,
        },
        settings: AgentSettings {
            format: SettingsFormat::CopilotJson,
            file: ".github/hooks/hookd.json, or the \"hooks\" of ~/.copilot/settings.json",
            timeout_in_ms: false,
            named_hooks: false,
            http_hooks: false,
            default_file: DefaultFile {
                var: "COPILOT_HOME",
                var_read: VarRead::AsGiven,
                home_folder: ".copilot",
                file: "settings.json",
            },
            // The documented default of `timeoutSec`.
            default_timeout_s: 30,
            // Its policy folder: every file there a hooks file of its own; a user's `disableAllHooks`
            // does not stop its hooks.
            managed: Some(ManagedPlace {
                file: "/etc/github-copilot/policy.d/hookd.json",
                var: "",
                pins: &[],
            }),
        },
        import: AgentImport {
            folder: Some(".copilot"),
            setting_keys: &[],
            timeout_keys: &["timeoutSec", "timeout"],
            own_env: &["COPILOT_PROJECT_DIR"],
            hooks_config: false,
        },
    },
];

impl Agent {
    /// Every agent, in the order of [`AGENTS`]; checked when compiled: each row is at the place of its
    /// agent's discriminant, so that [`Agent::row`] is an index.
    pub const ALL: [Agent; AGENTS.len()] = {
        let mut all = [Agent::ClaudeCode; AGENTS.len()];
        let mut i = 0;
        while i < AGENTS.len() {
            assert!(
                AGENTS[i].agent as usize == i,
                "AGENTS must list the agents in the order of the enum"
            );
            all[i] = AGENTS[i].agent;
            i += 1;
        }
        all
    };

    /// The agent's row.
    pub fn row(self) -> &'static AgentRow {
        &AGENTS[self as usize]
    }

    /// The agent's name, as in `--agent` and in a hook's `agents`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// How the agent is named in a message.
    pub fn display_name(self) -> &'static str {
        self.row().display_name
    }

    pub fn dialect(self) -> Dialect {
        self.row().dialect
    }

    pub fn powers(self) -> Powers {
        self.row().powers
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name)
    }

    /// Claude Code's name for one of this agent's tools, when the agent has a name of its own for it.
    pub fn claude_tool_name(self, tool: &str) -> Option<&'static str> {
        self.row()
            .tools
            .iter()
            .find(|(own, _)| *own == tool)
            .map(|(_, claude)| *claude)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_file_without_its_variable_is_under_the_home_folder() {
        let file = DefaultFile {
            var: "HOOKD_NO_SUCH_VARIABLE_IS_SET",
            var_read: VarRead::AsGiven,
            home_folder: ".agent",
            file: "settings.json",
        };
        assert_eq!(
            file.path().unwrap(),
            crate::paths::home().join(".agent/settings.json")
        );
        let in_home = DefaultFile {
            home_folder: "",
            file: ".agent/settings.json",
            ..file
        };
        assert_eq!(in_home.path().unwrap(), file.path().unwrap());
    }

    #[test]
    fn every_agent_is_at_its_place_in_the_table() {
        assert_eq!(AGENTS.len(), Agent::ALL.len());
        for agent in Agent::ALL {
            assert_eq!(agent.row().agent, agent);
        }
    }

    #[test]
    fn no_agent_names_two_moments_alike() {
        for agent in Agent::ALL {
            let names = agent.event_names();
            for (i, name) in names.iter().enumerate() {
                assert!(!names[..i].contains(name), "{agent:?} {name}");
            }
        }
    }
}
