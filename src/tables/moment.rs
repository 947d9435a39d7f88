//! The moments of an agent's turn that hookd knows, and the event field a `matcher` tests at each.
//!
//! One table, so that the settings validation, `check`, the fire path, the did-you-mean and every
//! agent's dialect all agree: a row per moment, with the agents that fire it and their names for it.

use crate::tables::agent::Agent;

/// Every moment's name, as Claude Code spells it: code names a moment by these, never by a literal.
pub const SESSION_START: &str = "SessionStart";
pub const USER_PROMPT_SUBMIT: &str = "UserPromptSubmit";
pub const PRE_TOOL_USE: &str = "PreToolUse";
pub const PERMISSION_REQUEST: &str = "PermissionRequest";
pub const POST_TOOL_USE: &str = "PostToolUse";
pub const POST_TOOL_USE_FAILURE: &str = "PostToolUseFailure";
pub const NOTIFICATION: &str = "Notification";
pub const SUBAGENT_START: &str = "SubagentStart";
pub const SUBAGENT_STOP: &str = "SubagentStop";
pub const STOP: &str = "Stop";
pub const PRE_COMPACT: &str = "PreCompact";
pub const POST_COMPACT: &str = "PostCompact";
pub const SESSION_END: &str = "SessionEnd";
pub const INTERRUPT: &str = "Interrupt";
pub const PRE_MODEL_REQUEST: &str = "PreModelRequest";
pub const POST_MODEL_REQUEST: &str = "PostModelRequest";
// Claude Code's other moments (2.1.332 fires 34 events; WorktreeCreate and WorktreeRemove are events of
// its own, see the agent's row).
pub const SETUP: &str = "Setup";
pub const INSTRUCTIONS_LOADED: &str = "InstructionsLoaded";
pub const USER_PROMPT_EXPANSION: &str = "UserPromptExpansion";
pub const PRE_MODEL_SWITCH: &str = "PreModelSwitch";
pub const POST_MODEL_SWITCH: &str = "PostModelSwitch";
pub const PRE_SKILL_SHELL_COMMAND: &str = "PreSkillShellCommand";
pub const PERMISSION_DENIED: &str = "PermissionDenied";
pub const POST_TOOL_BATCH: &str = "PostToolBatch";
pub const ELICITATION: &str = "Elicitation";
pub const ELICITATION_RESULT: &str = "ElicitationResult";
pub const TASK_CREATED: &str = "TaskCreated";
pub const TASK_COMPLETED: &str = "TaskCompleted";
pub const TEAMMATE_IDLE: &str = "TeammateIdle";
pub const MESSAGE_DISPLAY: &str = "MessageDisplay";
pub const STOP_FAILURE: &str = "StopFailure";
pub const CONFIG_CHANGE: &str = "ConfigChange";
pub const CWD_CHANGED: &str = "CwdChanged";
pub const FILE_CHANGED: &str = "FileChanged";
pub const DIRECTORY_ADDED: &str = "DirectoryAdded";

/// The longest Claude Code waits for its SessionEnd hooks: the larger of 1.5 s and the largest SessionEnd
/// hook `timeout` in its settings, capped at 60 s (2.1.332). The snippet of `--print-settings` gives its
/// hooks a `timeout` of 120, so 60 s; a hook written by hand with no `timeout` gets 1.5 s, whatever hookd
/// does (docs/agents.md, the timeout chain).
const CLAUDE_CODE_SESSION_END_MS: u64 = 60_000;

/// A known moment: one row of [`KNOWN`], everything hookd knows of it in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    pub name: &'static str,
    /// The event field a `matcher` is tested against; `None` where a matcher makes no sense.
    pub matcher_field: Option<&'static str>,
    /// What a refusal does to the agent here.
    pub refusal: Refusal,
    /// How a refusal is written here, in the dialect of Claude Code (whose moments these are); each
    /// agent's [`Dialect`](crate::tables::agent::Dialect) turns it into its own (`agents/dialect/answer.rs`).
    pub answer: Shape,
    /// What of the tool call a hook may rewrite here, if anything.
    pub rewrites: Option<Rewrite>,
    /// Its part in counting refused Stops in a row (docs/settings.md, "Stop loops").
    pub stop_loop: StopLoop,
    /// The agents that fire it, each under its own name for it. An agent not listed never fires it: its
    /// `--print-settings` leaves it out, and a hook scoped to that agent on it gets a warning.
    pub fired_by: &'static [Fired],
}

/// What of a tool call a hook may rewrite at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// The tool input (`tool_input`): the call has not run yet.
    Input,
    /// What the model sees of the tool's result (`tool_response`): the tool ran, the model has not seen
    /// its result.
    Output,
}

/// A moment's part in counting refused Stops in a row per session, against `stop_refusal_cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopLoop {
    /// None.
    Apart,
    /// Counted: its hooks are told the count so far (`stop_refusals`), and past the cap it goes through.
    Counted,
    /// A new prompt: the count starts over.
    StartsOver,
}

/// One agent firing one moment, under the agent's own name for it (its `hook_event_name`), and what
/// that agent does with an answer there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    pub agent: Agent,
    pub event: &'static str,
    /// It runs only command hooks here, skipping an http hook without a word: the `--http` snippet gives
    /// this moment the command hook of `hookd relay`.
    pub command_only: bool,
    /// It only takes advice here: a refusal is ignored by the agent (Gemini CLI at PreCompress, for
    /// one), so a refusal must be reported as what it is, never as a block that is not one.
    pub advisory: bool,
    /// The longest the agent waits for its hooks here, in milliseconds, when it is shorter than the
    /// relay's own timeout (Claude Code cancels SessionEnd hooks after about 1.5 s): hookd must answer
    /// within it.
    pub time_limit_ms: Option<u64>,
    /// It reads an answer carrying `additionalContext` here as a failed hook, refusal and all (Codex at
    /// PermissionRequest): what hooks add must not be sent there in that field.
    pub rejects_context: bool,
}

/// Shorthand for the rows: `agent` fires the moment as `event`.
const fn by(agent: Agent, event: &'static str) -> Fired {
    Fired {
        agent,
        event,
        command_only: false,
        advisory: false,
        time_limit_ms: None,
        rejects_context: false,
    }
}

impl Fired {
    /// The agent runs only command hooks here.
    const fn command_only(self) -> Fired {
        Fired {
            command_only: true,
            ..self
        }
    }

    /// The agent ignores a refusal here.
    const fn advisory(self) -> Fired {
        Fired {
            advisory: true,
            ..self
        }
    }

    /// The agent reads an answer with `additionalContext` here as a failed hook.
    const fn rejects_context(self) -> Fired {
        Fired {
            rejects_context: true,
            ..self
        }
    }

    /// The agent waits at most `ms` milliseconds for its hooks here.
    const fn within_ms(self, ms: u64) -> Fired {
        Fired {
            time_limit_ms: Some(ms),
            ..self
        }
    }
}

/// What refusing a moment does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// It holds something back (a tool call, a prompt, a permission, a compaction), or at the least
    /// tells the user.
    HoldsBack,
    /// It sends the agent on working instead of stopping: a refusal with nothing to say would loop it
    /// with no instruction, so it counts as nothing; and with no daemon (no stop cap) it is let through.
    SendsOn,
    /// The session is over: there is nothing left to hold back, a refusal is only shown as a failed hook.
    TooLate,
    /// It ends the agent's turn there and then (Claude Code's PostToolBatch, once the calls have run): a
    /// hook's policy, but made up by `--fail-closed` with hookd down it would only cut the turn short with
    /// nothing said to the model, whose every tool call is refused before it runs anyway; let through.
    EndsTurn,
}

/// How a refusal is written at a moment, in Claude Code's dialect (docs/agents.md, the agents' answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The reason on stderr and exit 2; over HTTP, which has no exit status, a JSON body instead.
    ExitTwo,
    /// `hookSpecificOutput.permissionDecision: "deny"` with `permissionDecisionReason`.
    PermissionDecision,
    /// `hookSpecificOutput.decision: {"behavior": "deny", "message": reason}`.
    PermissionBehavior,
    /// `decision: "block"` with `reason`.
    Block,
    /// A Stop: `decision: "block"` with the reason, what hooks add after it; what hooks add without a
    /// refusal goes to the user (`systemMessage`), since for the model it would read as "keep going".
    Stop,
    /// `decision: "block"` with the reason, what hooks add after it, as at a Stop: at a moment whose
    /// `hookSpecificOutput` Claude Code does not know (its schema has no variant for PreCompact,
    /// TaskCreated or ConfigChange: an answer naming one fails it and is read as plain text, the refusal
    /// lost), so that nothing the refusal rides on is out of its schema. What hooks add without a
    /// refusal goes to the user (`systemMessage`).
    BlockAlone,
    /// An MCP elicitation declined: `hookSpecificOutput.action: "decline"` with `reason` (Claude Code
    /// reads neither exit 2 nor `decision: "block"` there without an `action`, over HTTP).
    Decline,
}

/// Every moment hookd knows, in the order of an agent's turn (the order `check` prints them in).
pub const KNOWN: &[Moment] = &[
    Moment {
        name: SESSION_START,
        matcher_field: Some("source"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            // Seen with the real Claude Code 2.1.332, which skips an http hook on SessionStart without a
            // word (tests/it/e2e_claude_code.rs); exit 2 there only shows the reason to the user.
            by(Agent::ClaudeCode, SESSION_START)
                .command_only()
                .advisory(),
            by(Agent::Codex, SESSION_START),
            by(Agent::GeminiCli, "SessionStart").advisory(),
            // Qwen Code reads only the context added there (@qwen-code/qwen-code 0.24.4).
            by(Agent::QwenCode, SESSION_START).advisory(),
            // Copilot CLI takes only additionalContext at sessionStart.
            by(Agent::CopilotCli, "sessionStart").advisory(),
        ],
    },
    // Claude Code: `claude --init` or a maintenance run; exit 2 only shows the reason to the user.
    Moment {
        name: SETUP,
        matcher_field: Some("trigger"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, SETUP).advisory()],
    },
    // A CLAUDE.md or rule file loaded: "observability-only", Claude Code reads no refusal.
    Moment {
        name: INSTRUCTIONS_LOADED,
        matcher_field: Some("load_reason"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, INSTRUCTIONS_LOADED).advisory(),
            by(Agent::QwenCode, INSTRUCTIONS_LOADED).advisory(),
        ],
    },
    Moment {
        name: USER_PROMPT_SUBMIT,
        matcher_field: None,
        refusal: Refusal::HoldsBack,
        answer: Shape::Block,
        rewrites: None,
        stop_loop: StopLoop::StartsOver,
        fired_by: &[
            by(Agent::ClaudeCode, USER_PROMPT_SUBMIT),
            by(Agent::Codex, USER_PROMPT_SUBMIT),
            by(Agent::GeminiCli, "BeforeAgent"),
            // Also fired with an empty prompt after each tool result (docs/agents.md, Qwen Code).
            by(Agent::QwenCode, USER_PROMPT_SUBMIT),
            by(Agent::CopilotCli, "userPromptSubmitted"),
        ],
    },
    // Codex's (0.171.0), before and after each call of the model: they only observe there (a refusal
    // is ignored). No matcher: Codex takes none there (it leaves one out of the hook's trust hash).
    Moment {
        name: PRE_MODEL_REQUEST,
        matcher_field: None,
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::Codex, PRE_MODEL_REQUEST).advisory()],
    },
    Moment {
        name: POST_MODEL_REQUEST,
        matcher_field: None,
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::Codex, POST_MODEL_REQUEST).advisory()],
    },
    // A slash command expanding into a prompt: a refusal blocks the expansion.
    Moment {
        name: USER_PROMPT_EXPANSION,
        matcher_field: Some("command_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::Block,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, USER_PROMPT_EXPANSION),
            by(Agent::QwenCode, USER_PROMPT_EXPANSION),
        ],
    },
    // `/model` and the like: `permissionDecision: "deny"` keeps the model.
    Moment {
        name: PRE_MODEL_SWITCH,
        matcher_field: Some("to_model"),
        refusal: Refusal::HoldsBack,
        answer: Shape::PermissionDecision,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, PRE_MODEL_SWITCH)],
    },
    Moment {
        name: POST_MODEL_SWITCH,
        matcher_field: Some("to_model"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, POST_MODEL_SWITCH).advisory()],
    },
    Moment {
        name: PRE_TOOL_USE,
        matcher_field: Some("tool_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::PermissionDecision,
        rewrites: Some(Rewrite::Input),
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, PRE_TOOL_USE),
            by(Agent::Codex, PRE_TOOL_USE),
            by(Agent::GeminiCli, "BeforeTool"),
            by(Agent::QwenCode, PRE_TOOL_USE),
            by(Agent::CopilotCli, "preToolUse"),
        ],
    },
    // A skill's inline shell command, before it runs: a deny keeps it from running.
    Moment {
        name: PRE_SKILL_SHELL_COMMAND,
        matcher_field: Some("tool_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::PermissionDecision,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, PRE_SKILL_SHELL_COMMAND)],
    },
    Moment {
        name: PERMISSION_REQUEST,
        matcher_field: Some("tool_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::PermissionBehavior,
        rewrites: Some(Rewrite::Input),
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, PERMISSION_REQUEST),
            by(Agent::QwenCode, PERMISSION_REQUEST),
            by(Agent::CopilotCli, "permissionRequest"),
            // Codex 0.171.0 when its approval policy asks: `decision.behavior` "deny" + `message`
            // rejects, "allow" approves; with `additionalContext` beside it, the answer is read as a
            // failed hook and the refusal is lost (tests/it/e2e_codex.rs).
            by(Agent::Codex, PERMISSION_REQUEST).rejects_context(),
        ],
    },
    // After auto mode denied a call: the call is refused already; Claude Code reads only `retry`.
    Moment {
        name: PERMISSION_DENIED,
        matcher_field: Some("tool_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, PERMISSION_DENIED).advisory(),
            by(Agent::QwenCode, PERMISSION_DENIED).advisory(),
        ],
    },
    Moment {
        name: POST_TOOL_USE,
        matcher_field: Some("tool_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::Block,
        rewrites: Some(Rewrite::Output),
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, POST_TOOL_USE),
            by(Agent::Codex, POST_TOOL_USE),
            by(Agent::GeminiCli, "AfterTool"),
            // Qwen Code stops only on `continue: false` here, and ignores `decision: "block"`.
            by(Agent::QwenCode, POST_TOOL_USE).advisory(),
            // Copilot CLI 1.0.102: `decision: "block"` shows the model "Tool result blocked: R".
            by(Agent::CopilotCli, "postToolUse"),
        ],
    },
    Moment {
        name: POST_TOOL_USE_FAILURE,
        matcher_field: Some("tool_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::Block,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, POST_TOOL_USE_FAILURE),
            by(Agent::QwenCode, POST_TOOL_USE_FAILURE).advisory(),
            // Copilot CLI takes only additionalContext after a failed tool.
            by(Agent::CopilotCli, "postToolUseFailure").advisory(),
        ],
    },
    // Once every call of a batch has run, before the next model call: a refusal ends the turn.
    Moment {
        name: POST_TOOL_BATCH,
        matcher_field: None,
        refusal: Refusal::EndsTurn,
        answer: Shape::Block,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, POST_TOOL_BATCH),
            // Qwen Code 0.24.4 stops the batch on a block (read in its package, not run).
            by(Agent::QwenCode, POST_TOOL_BATCH),
        ],
    },
    Moment {
        name: NOTIFICATION,
        matcher_field: Some("notification_type"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, NOTIFICATION).advisory(),
            by(Agent::GeminiCli, "Notification").advisory(),
            by(Agent::QwenCode, NOTIFICATION).advisory(),
            by(Agent::CopilotCli, "notification").advisory(),
        ],
    },
    // An MCP server asks the user for input: a refusal declines it.
    Moment {
        name: ELICITATION,
        matcher_field: Some("mcp_server_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::Decline,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, ELICITATION)],
    },
    // The user's answer to it: a refusal turns it into a decline.
    Moment {
        name: ELICITATION_RESULT,
        matcher_field: Some("mcp_server_name"),
        refusal: Refusal::HoldsBack,
        answer: Shape::Decline,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, ELICITATION_RESULT)],
    },
    Moment {
        name: SUBAGENT_START,
        matcher_field: Some("agent_type"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, SUBAGENT_START).advisory(),
            by(Agent::QwenCode, SUBAGENT_START).advisory(),
            // Copilot CLI prepends additionalContext to the sub-agent's prompt; it takes no refusal.
            by(Agent::CopilotCli, "subagentStart").advisory(),
            by(Agent::Codex, SUBAGENT_START),
        ],
    },
    Moment {
        name: SUBAGENT_STOP,
        matcher_field: Some("agent_type"),
        refusal: Refusal::SendsOn,
        answer: Shape::Stop,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, SUBAGENT_STOP),
            by(Agent::QwenCode, SUBAGENT_STOP),
            by(Agent::CopilotCli, "subagentStop"),
            by(Agent::Codex, SUBAGENT_STOP),
        ],
    },
    // Agent teams: a refusal keeps the task from being created.
    Moment {
        name: TASK_CREATED,
        matcher_field: None,
        refusal: Refusal::HoldsBack,
        answer: Shape::BlockAlone,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, TASK_CREATED)],
    },
    // A refusal keeps the task open, and the model works on with the reason: a Stop of its own.
    Moment {
        name: TASK_COMPLETED,
        matcher_field: None,
        refusal: Refusal::SendsOn,
        answer: Shape::Stop,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, TASK_COMPLETED)],
    },
    // A refusal keeps the teammate working, with the reason.
    Moment {
        name: TEAMMATE_IDLE,
        matcher_field: None,
        refusal: Refusal::SendsOn,
        answer: Shape::Stop,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, TEAMMATE_IDLE)],
    },
    Moment {
        name: STOP,
        matcher_field: None,
        refusal: Refusal::SendsOn,
        answer: Shape::Stop,
        rewrites: None,
        stop_loop: StopLoop::Counted,
        fired_by: &[
            by(Agent::ClaudeCode, STOP),
            by(Agent::Codex, STOP),
            by(Agent::GeminiCli, "AfterAgent"),
            // Qwen Code 0.24.4 ends a loop of refused Stops itself after 8 (`stopHookBlockingCap`);
            // hookd's cap holds whatever that setting says.
            by(Agent::QwenCode, STOP),
            by(Agent::CopilotCli, "agentStop"),
        ],
    },
    // Codex's (0.171.0): the user interrupted the turn (SIGINT, Ctrl-C). The interrupt has happened;
    // Codex clamps the hook's timeout to 3 s, as at SessionEnd.
    Moment {
        name: INTERRUPT,
        matcher_field: None,
        refusal: Refusal::TooLate,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::Codex, INTERRUPT).within_ms(3000)],
    },
    // Instead of Stop when an API error ended the turn: "fire-and-forget", its answer is ignored.
    Moment {
        name: STOP_FAILURE,
        matcher_field: Some("error"),
        refusal: Refusal::TooLate,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, STOP_FAILURE).advisory(),
            // Qwen Code drops every answer there.
            by(Agent::QwenCode, STOP_FAILURE).advisory(),
        ],
    },
    // The model's text as it is shown: display only (a refusal shows the original text).
    Moment {
        name: MESSAGE_DISPLAY,
        matcher_field: None,
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, MESSAGE_DISPLAY).advisory(),
            by(Agent::QwenCode, MESSAGE_DISPLAY).advisory(),
        ],
    },
    Moment {
        name: PRE_COMPACT,
        matcher_field: Some("trigger"),
        refusal: Refusal::HoldsBack,
        // Not Block: Claude Code 2.1.332's schema has no hookSpecificOutput for PreCompact, and an answer
        // that names one is read as plain text, its refusal lost (seen with the real Claude Code).
        answer: Shape::BlockAlone,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, PRE_COMPACT),
            by(Agent::GeminiCli, "PreCompress").advisory(),
            by(Agent::QwenCode, PRE_COMPACT).advisory(),
            by(Agent::CopilotCli, "preCompact").advisory(),
            by(Agent::Codex, PRE_COMPACT),
        ],
    },
    Moment {
        name: POST_COMPACT,
        matcher_field: Some("trigger"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            by(Agent::ClaudeCode, POST_COMPACT).advisory(),
            by(Agent::QwenCode, POST_COMPACT).advisory(),
            by(Agent::Codex, POST_COMPACT),
        ],
    },
    // A settings file changed during the session: a refusal keeps the change out of it (not the
    // organization's policy settings).
    Moment {
        name: CONFIG_CHANGE,
        matcher_field: Some("source"),
        refusal: Refusal::HoldsBack,
        answer: Shape::BlockAlone,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, CONFIG_CHANGE)],
    },
    Moment {
        name: CWD_CHANGED,
        matcher_field: None,
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, CWD_CHANGED).advisory()],
    },
    // Claude Code matches the file's base name, and fires only for the files its matchers (or a
    // hook's `watchPaths`) name.
    Moment {
        name: FILE_CHANGED,
        matcher_field: Some("file_path"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, FILE_CHANGED).advisory()],
    },
    Moment {
        name: DIRECTORY_ADDED,
        matcher_field: Some("source"),
        refusal: Refusal::HoldsBack,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[by(Agent::ClaudeCode, DIRECTORY_ADDED).advisory()],
    },
    Moment {
        name: SESSION_END,
        matcher_field: Some("reason"),
        refusal: Refusal::TooLate,
        answer: Shape::ExitTwo,
        rewrites: None,
        stop_loop: StopLoop::Apart,
        fired_by: &[
            // Claude Code waits for the larger of 1.5 s and the largest SessionEnd hook `timeout` in its
            // settings, up to 60 s: `--print-settings` writes 120, so 60 s (2.1.332's own code).
            by(Agent::ClaudeCode, SESSION_END)
                .advisory()
                .within_ms(CLAUDE_CODE_SESSION_END_MS),
            by(Agent::GeminiCli, "SessionEnd").advisory(),
            by(Agent::QwenCode, SESSION_END).advisory(),
            by(Agent::CopilotCli, "sessionEnd"),
            // Codex clamps a SessionEnd hook's timeout to 3 s.
            by(Agent::Codex, SESSION_END).within_ms(3000),
        ],
    },
];

/// For a hook hung on a moment none of its agents fires, the moments it most likely meant, nearest in
/// what the hook sees there and what its answer does, tried in the table's order: a hook for Gemini CLI
/// on PermissionRequest (which Gemini CLI never fires) is told of PreToolUse (its BeforeTool), the moment
/// before a tool runs that every agent fires. Only pairs that are near in meaning; where none is, the
/// suggestion is a name near in spelling, or none.
pub const AKIN: &[(&str, &str)] = &[
    (PERMISSION_REQUEST, PRE_TOOL_USE),
    (PRE_SKILL_SHELL_COMMAND, PRE_TOOL_USE),
    (POST_TOOL_USE_FAILURE, POST_TOOL_USE),
    (POST_TOOL_BATCH, POST_TOOL_USE),
    (USER_PROMPT_EXPANSION, USER_PROMPT_SUBMIT),
    (SETUP, SESSION_START),
    (SUBAGENT_STOP, STOP),
    (STOP_FAILURE, STOP),
    (TASK_COMPLETED, STOP),
    (POST_COMPACT, PRE_COMPACT),
];

/// The moments a hook on `name` most likely meant, nearest first (see [`AKIN`]).
pub fn akin(name: &str) -> impl Iterator<Item = &'static str> {
    AKIN.iter()
        .filter(move |(from, _)| *from == name)
        .map(|(_, to)| *to)
}

/// Looks a moment up by its exact name.
pub fn known(name: &str) -> Option<&'static Moment> {
    KNOWN.iter().find(|m| m.name == name)
}

/// Position of a moment in [`KNOWN`], for ordering; extra (declared) moments sort after.
pub fn order(name: &str) -> usize {
    KNOWN
        .iter()
        .position(|m| m.name == name)
        .unwrap_or(KNOWN.len())
}

/// What refusing `name` does; a moment hookd does not know (one a settings file declares) holds back.
pub fn refusal(name: &str) -> Refusal {
    known(name).map_or(Refusal::HoldsBack, |m| m.refusal)
}

/// Whether a refusal with nothing to say should count as nothing: at `Stop` the agent would be sent on
/// with no instruction (docs/settings.md, how a hook answers).
pub fn is_stop(name: &str) -> bool {
    refusal(name) == Refusal::SendsOn
}

/// The moments whose tool input a hook may rewrite: the rows' [`Rewrite::Input`].
pub const REWRITES_INPUT: &[&str] =
    &rewriting::<{ count_rewriting(Rewrite::Input) }>(Rewrite::Input);

/// The moments whose tool output a hook may rewrite: the rows' [`Rewrite::Output`].
pub const REWRITES_OUTPUT: &[&str] =
    &rewriting::<{ count_rewriting(Rewrite::Output) }>(Rewrite::Output);

/// How many rows rewrite `what` (for [`rewriting`], in const context).
const fn count_rewriting(what: Rewrite) -> usize {
    let (mut at, mut count) = (0, 0);
    while at < KNOWN.len() {
        if same_rewrite(KNOWN[at].rewrites, what) {
            count += 1;
        }
        at += 1;
    }
    count
}

/// The names of the `N` rows that rewrite `what`, in the table's order.
const fn rewriting<const N: usize>(what: Rewrite) -> [&'static str; N] {
    let mut names = [""; N];
    let (mut at, mut found) = (0, 0);
    while at < KNOWN.len() {
        if same_rewrite(KNOWN[at].rewrites, what) {
            names[found] = KNOWN[at].name;
            found += 1;
        }
        at += 1;
    }
    names
}

const fn same_rewrite(row: Option<Rewrite>, what: Rewrite) -> bool {
    matches!(
        (row, what),
        (Some(Rewrite::Input), Rewrite::Input) | (Some(Rewrite::Output), Rewrite::Output)
    )
}

/// Whether a hook may rewrite the tool input (`tool_input`) at `name`.
pub fn rewrites_input(name: &str) -> bool {
    known(name).is_some_and(|m| m.rewrites == Some(Rewrite::Input))
}

/// Whether a hook may rewrite what the model sees of the tool's result (`tool_response`) at `name`.
pub fn rewrites_output(name: &str) -> bool {
    known(name).is_some_and(|m| m.rewrites == Some(Rewrite::Output))
}

/// `name`'s part in counting refused Stops in a row; a moment hookd does not know takes none.
pub fn stop_loop(name: &str) -> StopLoop {
    known(name).map_or(StopLoop::Apart, |m| m.stop_loop)
}

/// How a refusal is written at `name` in Claude Code's dialect; at a moment hookd does not know, with
/// stderr and exit 2, as at every moment with no JSON answer.
pub fn answer(name: &str) -> Shape {
    known(name).map_or(Shape::ExitTwo, |m| m.answer)
}

/// The agent whose own name for a known moment `name` is, and that moment (`BeforeTool`: Gemini CLI's
/// name for PreToolUse), so that a settings file using an agent's name is told the name it means.
pub fn agent_name_for(name: &str) -> Option<(Agent, &'static str)> {
    KNOWN.iter().find_map(|m| {
        m.fired_by
            .iter()
            .find(|fired| fired.event == name && m.name != name)
            .map(|fired| (fired.agent, m.name))
    })
}

/// What follows `unknown moment "NAME"` in a fire's error: the moment an agent's own name means
/// (`BeforeTool`: Gemini CLI's PreToolUse), as the settings' error says it, else a near name among
/// `candidates`, else nothing.
pub fn unknown_moment_hint<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    if let Some((agent, meant)) = agent_name_for(name) {
        return format!(
            ": it is {}'s name for {meant}, and hookd names moments as Claude Code does: fire {meant} (hookd fire {meant} --agent {})",
            agent.display_name(),
            agent.name()
        );
    }
    did_you_mean(name, candidates)
        .map_or_else(String::new, |meant| format!(" (did you mean \"{meant}\"?)"))
}

/// Names longer than this get no suggestion.
const MAX_SUGGESTED_LEN: usize = 64;

/// A client-given name as it is shown in an error: cut at 100 characters.
pub fn shown(name: &str) -> String {
    match name.char_indices().nth(100) {
        Some((cut, _)) => format!("{}...", &name[..cut]),
        None => name.to_string(),
    }
}

/// The closest name among `candidates` to `name`, when it is close enough to be a likely typo.
///
/// Case is ignored first (`pretooluse` is surely `PreToolUse`), then an edit distance of at most a third
/// of the length decides: the optimal string alignment distance, which counts a swap of two neighbours
/// as one edit, the commonest typo (`Stpo`).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // Names come from clients too (up to a request line of 65 MiB): a long one is no typo of a short one, and the
    // distance costs the product of the lengths.
    if name.len() > MAX_SUGGESTED_LEN {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = if candidate.to_ascii_lowercase() == lower {
            0
        } else {
            strsim::osa_distance(&lower, &candidate.to_ascii_lowercase())
        };
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.filter(|(d, c)| *d <= (c.len() / 3).max(1))
        .map(|(_, c)| c)
}

/// What the moment table says of an agent: which moments it fires, its names for them, and what it does
/// with an answer at each. Every question is read from the agent's entry in the moment's row.
impl Agent {
    /// The agent's entry in a moment's row, when it fires that moment.
    fn entry_in(self, moment: &Moment) -> Option<&'static Fired> {
        moment.fired_by.iter().find(|fired| fired.agent == self)
    }

    /// The agent's entry at `moment` (hookd's name), when it fires it.
    fn entry(self, moment: &str) -> Option<&'static Fired> {
        self.entry_in(known(moment)?)
    }

    /// The moments (hookd's names) this agent fires, in the order of [`KNOWN`].
    pub fn moments(self) -> Vec<&'static str> {
        KNOWN
            .iter()
            .filter(|m| self.entry_in(m).is_some())
            .map(|m| m.name)
            .collect()
    }

    /// Whether this agent ever fires `moment`.
    pub fn fires(self, moment: &str) -> bool {
        self.entry(moment).is_some()
    }

    /// The moment an event of this agent is, from its `hook_event_name`; an event with no moment keeps
    /// its name.
    pub fn moment_of(self, event_name: &str) -> String {
        KNOWN
            .iter()
            .find(|m| {
                self.entry_in(m)
                    .is_some_and(|fired| fired.event == event_name)
            })
            .map_or(event_name, |m| m.name)
            .to_string()
    }

    /// The agent's own name for a moment (Gemini's `BeforeTool` for `PreToolUse`); a moment it does not
    /// fire keeps its name.
    pub fn event_name_of(self, moment: &str) -> &str {
        self.entry(moment).map_or(moment, |fired| fired.event)
    }

    /// The event names this agent sends in `hook_event_name`: its names for its moments, then its own events.
    pub fn event_names(self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = KNOWN
            .iter()
            .filter_map(|m| Some(self.entry_in(m)?.event))
            .collect();
        names.extend_from_slice(self.row().own_events);
        names
    }

    /// Whether this agent only takes advice at `moment`: it ignores a refusal there (see
    /// `Fired::advisory`).
    pub fn advisory(self, moment: &str) -> bool {
        self.entry(moment).is_some_and(|fired| fired.advisory)
    }

    /// Whether this agent reads an answer with `additionalContext` at `moment` as a failed hook (see
    /// `Fired::rejects_context`).
    pub fn rejects_context(self, moment: &str) -> bool {
        self.entry(moment)
            .is_some_and(|fired| fired.rejects_context)
    }

    /// The longest this agent waits for its hooks at `moment`, when the table knows a limit there (see
    /// [`Fired::time_limit_ms`]).
    pub fn time_limit(self, moment: &str) -> Option<std::time::Duration> {
        self.entry(moment)?
            .time_limit_ms
            .map(std::time::Duration::from_millis)
    }

    /// Whether this agent runs only command hooks at `moment` (see `Fired::command_only`).
    pub fn command_only(self, moment: &str) -> bool {
        self.entry(moment).is_some_and(|fired| fired.command_only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rewrites_and_the_stop_loop_are_read_from_the_rows() {
        assert_eq!(REWRITES_INPUT, [PRE_TOOL_USE, PERMISSION_REQUEST]);
        assert_eq!(REWRITES_OUTPUT, [POST_TOOL_USE]);
        assert!(rewrites_input(PRE_TOOL_USE) && !rewrites_output(PRE_TOOL_USE));
        assert!(rewrites_output(POST_TOOL_USE) && !rewrites_input(POST_TOOL_USE));
        assert!(!rewrites_input("MyOwnMoment"));
        assert_eq!(stop_loop(STOP), StopLoop::Counted);
        assert_eq!(stop_loop(USER_PROMPT_SUBMIT), StopLoop::StartsOver);
        assert_eq!(stop_loop(SUBAGENT_STOP), StopLoop::Apart);
        assert_eq!(stop_loop("MyOwnMoment"), StopLoop::Apart);
    }

    fn names() -> impl Iterator<Item = &'static str> {
        KNOWN.iter().map(|m| m.name)
    }

    #[test]
    fn suggests_the_moment_a_typo_meant() {
        assert_eq!(did_you_mean("PreTooluse", names()), Some("PreToolUse"));
        assert_eq!(did_you_mean("pretooluse", names()), Some("PreToolUse"));
        assert_eq!(did_you_mean("PostToolUs", names()), Some("PostToolUse"));
        assert_eq!(did_you_mean("Stpo", names()), Some("Stop"));
    }

    #[test]
    fn a_huge_name_gets_no_suggestion_and_is_shown_cut() {
        let huge = "P".repeat(1 << 20);
        assert_eq!(did_you_mean(&huge, names()), None);
        assert_eq!(shown(&huge).len(), 103);
        assert_eq!(shown("Stop"), "Stop");
    }

    #[test]
    fn an_agents_own_name_is_told_the_moment_it_means() {
        let names = || KNOWN.iter().map(|m| m.name);
        assert_eq!(
            unknown_moment_hint("BeforeTool", names()),
            ": it is Gemini CLI's name for PreToolUse, and hookd names moments as Claude Code does: fire PreToolUse (hookd fire PreToolUse --agent gemini-cli)"
        );
        assert_eq!(
            unknown_moment_hint("PreTooluse", names()),
            " (did you mean \"PreToolUse\"?)"
        );
        assert_eq!(unknown_moment_hint("Lunch", names()), "");
    }

    #[test]
    fn suggests_nothing_for_a_name_far_from_all() {
        assert_eq!(did_you_mean("BeforeTool", names()), None);
        assert_eq!(did_you_mean("x", names()), None);
    }

    #[test]
    fn each_row_names_an_agent_once_and_each_agent_names_a_moment_once() {
        for m in KNOWN {
            for (i, fired) in m.fired_by.iter().enumerate() {
                assert!(
                    m.fired_by[..i].iter().all(|f| f.agent != fired.agent),
                    "{}: {:?} twice",
                    m.name,
                    fired.agent
                );
            }
        }
        assert!(is_stop(STOP) && is_stop(SUBAGENT_STOP) && !is_stop(PRE_TOOL_USE));
        assert_eq!(refusal(SESSION_END), Refusal::TooLate);
        assert_eq!(refusal("MyMoment"), Refusal::HoldsBack);
        assert_eq!(answer("MyMoment"), Shape::ExitTwo);
    }

    #[test]
    fn claude_code_fires_its_34_events_as_moments_or_events_of_its_own() {
        // Claude Code 2.1.332's event names (its hook schemas).
        let names = "PreToolUse PostToolUse PostToolUseFailure PostToolBatch Notification UserPromptSubmit \
            UserPromptExpansion SessionStart SessionEnd Stop StopFailure SubagentStart SubagentStop PreCompact \
            PostCompact PreModelSwitch PostModelSwitch PermissionRequest PermissionDenied Setup TeammateIdle \
            TaskCreated TaskCompleted Elicitation ElicitationResult ConfigChange WorktreeCreate WorktreeRemove \
            InstructionsLoaded CwdChanged FileChanged DirectoryAdded MessageDisplay PreSkillShellCommand";
        let names: Vec<&str> = names.split_whitespace().collect();
        assert_eq!(names.len(), 34);
        let mut sent = Agent::ClaudeCode.event_names();
        sent.sort_unstable();
        let mut expected = names.clone();
        expected.sort_unstable();
        assert_eq!(sent, expected);
        for name in names {
            assert_eq!(Agent::ClaudeCode.moment_of(name), name);
        }
        // A hook there makes the worktree itself: not a moment hookd hangs the relay on.
        assert!(!Agent::ClaudeCode.fires("WorktreeCreate"));
    }

    #[test]
    fn every_time_limit_leaves_the_relay_room_to_answer() {
        for m in KNOWN {
            for fired in m.fired_by {
                if let Some(ms) = fired.time_limit_ms {
                    assert!(
                        // Hooks get the limit less HOOK_LIMIT_MARGIN: at least as long again.
                        ms >= 2 * crate::limits::HOOK_LIMIT_MARGIN.as_millis() as u64,
                        "{} {:?}: {ms} ms",
                        m.name,
                        fired.agent
                    );
                }
            }
        }
        assert_eq!(
            Agent::ClaudeCode.time_limit(SESSION_END),
            Some(std::time::Duration::from_secs(60))
        );
        assert_eq!(Agent::ClaudeCode.time_limit(PRE_TOOL_USE), None);
    }

    #[test]
    fn each_akin_pair_is_two_known_moments() {
        for (from, to) in AKIN {
            assert!(known(from).is_some() && known(to).is_some(), "{from} {to}");
            assert_ne!(from, to);
        }
        assert_eq!(akin(PERMISSION_REQUEST).collect::<Vec<_>>(), [PRE_TOOL_USE]);
        assert_eq!(akin(PRE_TOOL_USE).count(), 0);
    }

    #[test]
    fn matcher_fields_follow_the_contract() {
        assert_eq!(
            known("PreToolUse").unwrap().matcher_field,
            Some("tool_name")
        );
        assert_eq!(known("Stop").unwrap().matcher_field, None);
        assert_eq!(known("UserPromptSubmit").unwrap().matcher_field, None);
        assert_eq!(
            known("SubagentStop").unwrap().matcher_field,
            Some("agent_type")
        );
        assert!(known("BeforeTool").is_none());
    }
}
