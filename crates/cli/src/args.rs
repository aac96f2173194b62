//! The command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
Examples:
  tackle tools                                  the catalog a model receives
  tackle run \"fix the failing test\"             the agent works on the task (tackle run --help)
  tackle call read_file '{\"path\":\"README.md\"}'  run one call through every layer
  echo '{\"path\":\"src\"}' | tackle call list_dir -
  tackle artifacts ls                           retained output in this project
  tackle artifacts gc --dry-run                 what garbage collection would remove
  tackle config                                 effective settings and where each came from
  tackle plan revoke --session ID               archive a session's plan (plan_mode)
  tackle goal set \"<objective>\"                  set the goal the model works toward
  tackle models                                 the model catalog, providers, and where each came from
  tackle agents                                 the agent types a model may delegate to, and their files
  tackle trust                                  trust this folder's .agents/ config (shows what it widens)
  tackle mcp list                               MCP servers tackle connects to, and their state
  tackle mcp add fs -- npx -y <server>          add an MCP server (user scope; --scope project)
  tackle serve                                  MCP server on stdio (claude mcp add tackle -- tackle serve)
  tackle serve --http 127.0.0.1:8123            MCP server over Streamable HTTP
  tackle --deny 'read:secrets/**' call read_file '{\"path\":\"secrets/key\"}'

Project root: --root, else the nearest ancestor of the working directory holding .agents/ or
.git/. State lives under <root>/.agents/: config.toml (settings) and store/ (artifacts and
session event logs).

Settings, lowest to highest: built-in defaults, $XDG_CONFIG_HOME/tackle/config.toml (else
~/.config/tackle/config.toml), <root>/.agents/config.toml, then flags. Permission rules from
every layer apply together and a deny always wins over an ask, an ask over an allow. Until the
folder is trusted (tackle trust), its .agents/ config may only narrow and its MCP servers do
not start.

Exit codes:
  0  success
  1  the call ran and returned an error result (it is printed)
  2  bad command line or malformed input
  3  tackle could not work (no project root, bad config, store or event log failure)
  tackle run also exits 4 (a bound was reached), 5 (the provider failed), 130 (cancelled)";

/// tackle: the tool runtime for AI coding agents.
///
/// Publishes a catalog of tools, checks every call, runs calls with the right concurrency,
/// keeps every byte of their output retrievable and records what happened in a durable log.
#[derive(Debug, Parser)]
#[command(name = "tackle", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// Project root (default: nearest ancestor holding .agents/ or .git/).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,

    #[command(flatten)]
    pub policy: PolicyArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Permission and catalog flags; they override every configuration file.
#[derive(Debug, clap::Args)]
pub struct PolicyArgs {
    /// Allow keys matching PATTERN (repeatable), e.g. --allow 'write:src/**'.
    #[arg(long, global = true, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Ask before keys matching PATTERN (repeatable).
    #[arg(long, global = true, value_name = "PATTERN")]
    pub ask: Vec<String>,
    /// Deny keys matching PATTERN (repeatable); a deny always wins.
    #[arg(long, global = true, value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// Permission mode: ask (default), accept-edits, plan (read-only) or yolo (asks become allows;
    /// denies still hold).
    #[arg(long, global = true, value_name = "MODE",
          value_parser = ["ask", "accept-edits", "plan", "yolo"])]
    pub mode: Option<String>,
    /// Remove tools from the catalog, comma-separated (e.g. --disable-tools stat,list_dir).
    #[arg(long, global = true, value_name = "TOOLS", value_delimiter = ',')]
    pub disable_tools: Vec<String>,
    /// Never prompt: calls that need approval are refused with approval_unavailable (also
    /// TACKLE_HEADLESS=1). Without it, tackle asks on the controlling terminal when there is one.
    #[arg(long, global = true)]
    pub headless: bool,
    /// Put disabled tools back, comma-separated.
    #[arg(long, global = true, value_name = "TOOLS", value_delimiter = ',')]
    pub enable_tools: Vec<String>,
    /// Show large survey results (list_dir, grep, glob, read_many_files) raw instead of as a
    /// digest, and do not offer retrieve_raw (also `[tool_output] digests = false`).
    #[arg(long, global = true)]
    pub no_digest: bool,
    /// The bash search gate: enforce (refuse bash grep/rg/find when the grep or glob tool
    /// exists; the default), warn (run, with advice attached) or allow (off). Holds in every mode.
    #[arg(long, global = true, value_name = "MODE",
          value_parser = ["enforce", "warn", "allow"])]
    pub bash_search_gate: Option<String>,
    /// Plan-first mode (also `[permissions] plan_mode`): off (default), advisory (offer
    /// record_plan; nothing waits) or required (every mutating call is denied until the
    /// session has a plan on file). Not the same as `--mode plan`, which is read-only.
    #[arg(long, global = true, value_name = "MODE",
          value_parser = ["off", "advisory", "required"])]
    pub plan_mode: Option<String>,
    /// An investigation-shaped task: debug or research drop bash; review drops bash and the
    /// write tools. --enable-tools puts a dropped tool back.
    #[arg(long, global = true, value_enum, value_name = "CLASS")]
    pub task: Option<crate::task::TaskClass>,
    /// The model of a session as provider:model (e.g. anthropic:claude-sonnet-4-5); overrides
    /// `[model] default`. `tackle models` lists the catalog.
    #[arg(long, global = true, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,
    /// The small model the agentic tools (agentic_read_file, agentic_grep, agentic_fetch_url,
    /// agentic_research) hand bulk output to, as provider:model; overrides `[model] small`.
    /// The tools are offered only when a small model is configured and its key is set.
    #[arg(long, global = true, value_name = "PROVIDER:MODEL")]
    pub agentic_small_model: Option<String>,
    /// Who declares a task boundary (also `[checkpoint] mode`): model (default: the model may
    /// call mark_task_done, which writes a checkpoint before its next turn) or operator (the
    /// tool is withheld; only chat's /done declares one).
    #[arg(long, global = true, value_name = "MODE", value_parser = ["model", "operator"])]
    pub checkpoint: Option<String>,
    /// The loop's watchdog (also `[watchdog] mode`): enforce (default: the model is told when
    /// it repeats a call or its calls change nothing, and a run that keeps at it is ended,
    /// exit 4), warn (told, never ended) or off.
    #[arg(long, global = true, value_name = "MODE", value_parser = ["off", "warn", "enforce"])]
    pub watchdog: Option<String>,
    /// The agent's posture (also `[posture] mode`): standard (default: the configured tools
    /// behind the gate) or sealed (seed 004's eleven tools, no shell; files in directories you
    /// did not vouch for, their names and command output reach the model only as references;
    /// vouch with `tackle trust --sealed DIR`). For `run` and `chat`.
    #[arg(long, global = true, value_name = "POSTURE", value_parser = ["standard", "sealed"])]
    pub posture: Option<String>,
}

impl PolicyArgs {
    pub fn to_flags(&self) -> crate::settings::Flags {
        crate::settings::Flags {
            allow: self.allow.clone(),
            ask: self.ask.clone(),
            deny: self.deny.clone(),
            mode: self.mode.clone(),
            disable_tools: self.disable_tools.clone(),
            enable_tools: self.enable_tools.clone(),
            no_digest: self.no_digest,
            bash_search_gate: self.bash_search_gate.clone(),
            plan_mode: self.plan_mode.clone(),
            task: self.task,
            model: self.model.clone(),
            agentic_small_model: self.agentic_small_model.clone(),
            checkpoint: self.checkpoint.clone(),
            watchdog: self.watchdog.clone(),
            posture: self.posture.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List, show, replay or fork the root's sessions.
    #[command(after_help = SESSIONS_AFTER_HELP)]
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Print the tool catalog exactly as a model receives it.
    Tools {
        /// Print the catalog as JSON (name, description, input_schema).
        #[arg(long)]
        json: bool,
        /// Which descriptions: `full` (as the tools wrote them) or `compact` (one sentence
        /// each, the same schemas: what a model with a window under 16k tokens gets under
        /// `[tools] descriptions = "auto"`).
        #[arg(long, value_name = "FORM", default_value = "full", value_parser = ["full", "compact"])]
        descriptions: String,
    },
    /// Run the agent on a task until the model finishes it (headless; --json for events).
    Run(crate::run::RunArgs),
    /// Run one tool call through the whole pipeline and print what the model would see.
    Call {
        /// Tool name, e.g. read_file.
        tool: String,
        /// Arguments as a JSON object, or `-` to read them from standard input.
        arguments: String,
        /// Print the structured result (status, code, metadata, retained output) as JSON.
        #[arg(long)]
        json: bool,
        /// Call id to record (default: call-1).
        #[arg(long, default_value = "call-1")]
        id: String,
        /// Continue an existing session (its id is the directory name under
        /// .agents/store/sessions/) instead of starting a new one.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// The model turn the call belongs to. Calls that name the same turn (and session) are
        /// one turn to record_plan, which revises that turn's plan in place; without it, every
        /// invocation is a turn of its own.
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
    },
    /// Plans recorded with record_plan under `[permissions] plan_mode`.
    #[command(after_help = PLAN_AFTER_HELP)]
    Plan {
        #[command(subcommand)]
        command: PlanCommand,
    },
    /// List the model catalog (built-in entries and the user's [models.*]), the providers
    /// they are reached through, and the default and small model, each with where it came from.
    #[command(after_help = MODELS_AFTER_HELP)]
    Models {
        /// Print JSON: providers, models (limits, prices, origin), default and small; with
        /// --probe, what each server said.
        #[arg(long)]
        json: bool,
        /// Ask the servers behind providers with a base_url (llama.cpp, Ollama, vLLM, LM
        /// Studio) what window each model has: every such provider's configured models, the
        /// models of one provider (--probe local), or one model (--probe local:qwen). Always
        /// asks anew, and keeps the answers for tackle run.
        #[arg(long, value_name = "PROVIDER[:MODEL]", num_args = 0..=1, default_missing_value = "")]
        probe: Option<String>,
    },
    /// List the agent types a model may delegate work to: the built-ins, yours
    /// ($XDG_CONFIG_HOME/tackle/agents/*.md) and the project's (.claude/agents/*.md,
    /// .agents/agents/*.md), each with where it came from, its tools, model, turn bound and
    /// the rules it adds; then what was noted in those files. Files that were refused are
    /// named on stderr, with the fix, and the exit status is 1.
    #[command(after_help = AGENTS_AFTER_HELP)]
    Agents {
        /// Print one JSON document: types, notes, refused.
        #[arg(long)]
        json: bool,
    },
    /// List the skills a model may load: yours (~/.agents/skills/, $XDG_CONFIG_HOME/tackle/
    /// skills/) and the project's (.claude/skills/, .agents/skills/ from the root down to the
    /// working directory), each with where it came from, what it bundles and pre-approves;
    /// then the shadowed ones and the notes. Invalid skills are named on stderr with the rule
    /// they break, and the exit status is 1.
    #[command(after_help = SKILLS_AFTER_HELP)]
    Skills {
        /// Print one JSON document: skills, shadowed, notes, invalid.
        #[arg(long)]
        json: bool,
        /// Print only the problems: the invalid skills (stderr) and the warnings, each with
        /// the format's rule it breaks.
        #[arg(long, conflicts_with = "json")]
        check: bool,
    },
    /// Print the effective configuration, where each value came from, and the posture summary.
    Config {
        #[arg(long)]
        json: bool,
    },
    /// Serve the catalog to MCP clients: over stdio (default; for `claude mcp add tackle --
    /// tackle serve`) or Streamable HTTP with --http. Every call passes the same gate as
    /// `tackle call`; approvals go to the client when it supports elicitation.
    Serve {
        /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:8123) instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Environment variable holding the bearer token HTTP clients must send (at least 32
        /// bytes); required to bind a non-loopback address. Without it, on loopback, clients
        /// send this user's token, drawn once and kept in $XDG_STATE_HOME/tackle/serve/token
        /// (else ~/.local/state/tackle/serve/token, 0600): a loopback port is open to every
        /// local user.
        #[arg(long, value_name = "VAR", requires = "http")]
        token_env: Option<String>,
        /// Serve loopback HTTP without a bearer token, so any local user of the machine can
        /// call the tools as you: only where you alone use the machine.
        #[arg(long, requires = "http", conflicts_with = "token_env")]
        no_token: bool,
        /// Print the posture line on stderr even when stderr is not a terminal (MCP clients log
        /// a server's stderr as errors, so it is quiet there by default; `tackle config` shows
        /// the same facts).
        #[arg(long)]
        verbose: bool,
        /// Who answers for a call the gate asks about. `elicit` (default): tackle asks the
        /// client's user through MCP elicitation where the client supports it, and refuses
        /// with approval_unavailable where it does not. `client`: the client's own
        /// confirmation stands for the user's answer, for clients that confirm tool calls
        /// themselves but cannot be asked (Gemini CLI without `trust`, opencode with a
        /// `permission` of `ask`, Codex's approval modes): a mutating call the gate asks about
        /// runs once when the client sends it. Denies still hold, and reads and paths asked
        /// about every time (protected paths) still need tackle's own question. Use `client`
        /// only with a client set to confirm every mutating call.
        #[arg(long, value_name = "WHO", default_value = "elicit")]
        approvals: ServeApprovals,
    },
    /// Trust this folder: its .agents/config.toml and .agents/mcp.json may then widen your
    /// settings and start MCP servers. Prints what they widen and the secrets they would move
    /// before recording it; a later change that widens further is ignored until trusted again.
    Trust {
        /// Stop trusting this folder.
        #[arg(long, conflicts_with = "list")]
        revoke: bool,
        /// List the trusted folders and whether each still holds only what was accepted.
        #[arg(long)]
        list: bool,
        /// With --list: print JSON.
        #[arg(long, requires = "list")]
        json: bool,
        /// For the sealed posture: vouch for DIR (relative to the project root; `.` for all of
        /// it), so the model sees its files' content and names instead of references. Kept in
        /// your config directory, never in the project. Repeatable; with --revoke, takes the
        /// vouch back.
        #[arg(long, value_name = "DIR", conflicts_with = "list")]
        sealed: Vec<String>,
        /// For the sealed posture: vouch for a command, given as its exact argv split on
        /// spaces ("git status"): it then runs without asking and the model sees its output.
        /// Only that exact argv; repeatable; with --revoke, takes the vouch back.
        #[arg(long, value_name = "ARGV", conflicts_with = "list")]
        sealed_command: Vec<String>,
    },
    /// Manage the MCP servers tackle connects to (their tools join the catalog as
    /// mcp__<server>__<tool>): list them with their state, show one, add one, remove one.
    #[command(after_help = MCP_AFTER_HELP)]
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Chat with a model in the terminal: streamed answers, each tool call as it runs, edits as
    /// diffs, approvals inline, slash commands (/help lists them); the model is --model, else
    /// `[model] default`.
    Chat {
        /// Continue this session's conversation.
        #[arg(long)]
        resume: Option<String>,
    },
    /// Serve editors that speak the Agent Client Protocol (Zed, JetBrains IDEs, Neovim) on
    /// standard input and output: point the editor's agent settings at `tackle acp`. Each
    /// session is the agent on the project the editor names, with the configured model
    /// (--model), folder trust deciding without asking, and every ask of the gate sent to the
    /// editor as a permission request.
    Acp,
    /// Host agent sessions as a long-lived service: the Agent Client Protocol over HTTP
    /// (`POST /acp`, answers and updates as event streams) with `_tackle/` extensions to list
    /// sessions, attach to one, answer its approvals and send it input; sessions survive a
    /// restart (`--state-dir` keeps what it hosts). `tackle daemon status|stop` manage it.
    #[command(after_help = DAEMON_AFTER_HELP, args_conflicts_with_subcommands = true)]
    Daemon {
        #[command(subcommand)]
        command: Option<DaemonCommand>,
        #[command(flatten)]
        serve: DaemonArgs,
    },
    /// Follow a session a daemon hosts: what it said since it started (or since --last-event-id),
    /// then live. On a terminal this is the chat's screen: the transcript, approvals answered
    /// with o/s/d, each line you type sent to the session (steering a running prompt, else as
    /// the next prompt), Ctrl-C cancelling its turn, Ctrl-D leaving it running. Otherwise (or
    /// with --lines) line by line: `/allow ID`, `/allow-session ID`, `/reject ID` answer its
    /// approvals, `/cancel` ends its prompt. Without SESSION, lists the daemon's sessions.
    Attach {
        /// The session to follow.
        session: Option<String>,
        #[command(flatten)]
        daemon: DaemonAddress,
        /// Start after this event id (as a previous attach printed it) instead of the start.
        #[arg(long, value_name = "ID")]
        last_event_id: Option<String>,
        /// Print each message as a JSON line instead of text.
        #[arg(long)]
        json: bool,
        /// Follow line by line even on a terminal (a log to read, a script to drive).
        #[arg(long, conflicts_with = "json")]
        lines: bool,
    },
    /// The project's goal: set an objective, show it with its checklist, pause, resume or
    /// cancel it. The model reads it and keeps its checklist (goal_get, goal_update, offered
    /// while the goal is active or paused); only you change its lifecycle.
    #[command(after_help = GOAL_AFTER_HELP)]
    Goal {
        #[command(subcommand)]
        command: GoalCommand,
    },
    /// Inspect and collect retained output.
    Artifacts {
        #[command(subcommand)]
        command: ArtifactsCommand,
    },
    /// Move the project's sessions and artifacts between its files and the fleet's database
    /// and bucket ([store] and [artifacts] of your config).
    #[command(after_help = STORE_AFTER_HELP)]
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
}

const STORE_AFTER_HELP: &str = "\
The database and the bucket are the ones your config names ([store] backend = \"postgres\",
[artifacts] backend = \"s3\"); the database URL comes from the variable database_url_env names.
Every record is checked against its checksum and every artifact against its digest, on both
sides; a session already moved is checked and left as it is, so a migration can run again.
Logs your tackle did not write (a repository's) are not moved.

Examples:
  tackle store migrate --from files --to postgres     this project's sessions into the fleet
  tackle store migrate --from postgres --to files     the fleet's sessions into this project
  tackle store migrate --from files --to postgres --json";

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copy every session (and the artifacts they name) from one backend to the other,
    /// verified on both sides.
    Migrate {
        #[arg(long, value_enum)]
        from: StoreKind,
        #[arg(long, value_enum)]
        to: StoreKind,
        /// One JSON object a session, then a summary.
        #[arg(long)]
        json: bool,
    },
}

/// A storage backend `tackle store migrate` moves between.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreKind {
    /// The project's `.agents/store/`.
    Files,
    /// The fleet's database (and bucket, when [artifacts] names one).
    Postgres,
}

impl Command {
    /// Whether this command streams model turns, and so starts with the allocator settings
    /// for them ([`tackle_process::tune_allocator`]). `serve` and the rest keep glibc's
    /// defaults, under which a server returns more of what it freed.
    pub fn streams_model_turns(&self) -> bool {
        matches!(
            self,
            Command::Run(_)
                | Command::Chat { .. }
                | Command::Acp
                | Command::Daemon { command: None, .. }
        )
    }
}

const PLAN_AFTER_HELP: &str = "\
Plans live in <root>/.agents/plans/plan-<seq>.md, each opening with a YAML block naming its
plan number, agent, session and turn. Under plan_mode = \"required\" a session's mutating
calls are denied until a plan of that session is on file.

Examples:
  tackle plan revoke --session 20261202T071500Z-1f2e   archive that session's plan
  tackle plan revoke --json";

const SESSIONS_AFTER_HELP: &str = "\
Sessions live under .agents/store/sessions/<id>/ and are read from their logs.

Examples:
  tackle sessions ls                      agent sessions, newest first
  tackle sessions show 20261202T071500Z-1f2e
  tackle sessions replay 20261202T071500Z-1f2e --json
  tackle sessions fork 20261202T071500Z-1f2e --turn 3
  tackle run --resume <new id> \"try the other approach\"";

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List the root's sessions, newest first: id, start, model, turns, calls, cost, outcome
    /// and task.
    Ls {
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
        /// Also list sessions with tool calls only (tackle call, tackle serve).
        #[arg(long)]
        all: bool,
    },
    /// Print a session's conversation as the model had it (rebuilt as a resume rebuilds it).
    Show {
        id: String,
        /// The messages as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print every record of a session's log in order.
    Replay {
        id: String,
        /// One record a line, as {"seq", "event"}.
        #[arg(long)]
        json: bool,
    },
    /// Leave a message for a session: an autonomous run (`tackle run --autonomous`) waiting in
    /// it wakes and takes the message as its next input; otherwise it waits in the session's
    /// inbox for the next autonomous wait.
    Message {
        id: String,
        /// The message (the model reads it as the user's words).
        text: String,
    },
    /// Copy a session's conversation through one turn into a new session, to go on from there
    /// with `tackle run --resume <new id>`.
    Fork {
        id: String,
        /// The last turn to keep (1 is the first model turn).
        #[arg(long, value_name = "N")]
        turn: u32,
        /// Print the new session as JSON.
        #[arg(long)]
        json: bool,
        /// Fork it even though its log was not written by this user's tackle (`sessions ls`
        /// marks it foreign): the copy is tagged as yours, so only for a log you trust.
        #[arg(long)]
        trust_log: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Archive your plan (to .agents/plans/archive/; its number is never reused): the
    /// session's own plans; with none, the newest plan if it names no author. Another
    /// author's plan is left alone, and the command says whose it is. Either way the session
    /// has no plan on file afterwards, so under plan_mode = "required" its mutating calls
    /// are denied again until it records a new one.
    Revoke {
        /// The session whose plan to revoke (its id is the directory name under
        /// .agents/store/sessions/).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Print what was archived or left alone as JSON.
        #[arg(long)]
        json: bool,
    },
}
const SKILLS_AFTER_HELP: &str = "\
A skill is a folder holding SKILL.md (the open Agent Skills format other agents read too):
  .agents/skills/commit-style/
    SKILL.md
      ---
      name: commit-style          # equals the folder's name: a-z, 0-9 and -, at most 64
      description: Writes commit messages in this repository's style; use when committing.
      allowed-tools: Bash(git:*)  # optional: pre-approved while the skill is loaded
      ---
      (the instructions, in Markdown)
    references/, scripts/, assets/   # optional files the instructions point to

The model sees each skill's name and description, and loads one with the skill tool when a
task matches; in chat, /skills lists them and /skill NAME loads one. A project's
allowed-tools pre-approve nothing until the folder is trusted (tackle trust), and a project
skill replaces one of yours of the same name only then.

Examples:
  tackle skills
  tackle skills --check
  tackle skills --json | jq '.skills[].name'
  tackle --disable-tools skill run \"...\"   # no skill tool and no list for the model";

const AGENTS_AFTER_HELP: &str = "\
An agent type is a Markdown file: YAML fields between --- lines, then the child's prompt.
  ---
  name: code-reviewer            # lowercase letters, digits, - and _
  description: Reviews a change for bugs and style; use after code is written.
  tools: read_file, grep, glob   # or a list; Claude Code's names (Read, Grep) work too;
                                 # none: all of the parent's
  disallowedTools: [bash]
  model: inherit                 # or provider:model from `tackle models`
  maxTurns: 10
  permissions:                   # rules added to the parent's (gate patterns)
    ask: [\"write:**\"]
    deny: [\"read:.env\"]
  ---
  You review the change you are given and report problems by file and line.

Where they live, later winning by name: the built-ins (explore, general), then
$XDG_CONFIG_HOME/tackle/agents/ (else ~/.config/tackle/agents/), then the project's
.claude/agents/, then .agents/agents/. Until the folder is trusted (tackle trust), a project's
type may only narrow: its model is ignored, its allow rules are dropped, and it does not
replace a built-in or user type of the same name.

Examples:
  tackle agents                     the types, their files, notes; refusals on stderr
  tackle agents --json              one document: types, notes, refused
  tackle agents 2>/dev/null || echo \"an agent type file was refused\"";

const MODELS_AFTER_HELP: &str = "\
Model ids are provider:model: the provider's name (built-in: anthropic, openai, gemini, vertex,
bedrock, cohere, azure; or a [providers.<name>] table), then the model as that provider names it.

In $XDG_CONFIG_HOME/tackle/config.toml (else ~/.config/tackle/config.toml):
  [model]
  default = \"anthropic:claude-sonnet-4-5\"   # also --model
  small = \"openai:gpt-5-mini\"

  [providers.local]
  kind = \"openai-chat\"      # anthropic | openai-chat | openai-responses | gemini | vertex |
                              # bedrock | cohere | azure-chat | azure-responses
  base_url = \"http://127.0.0.1:8095/v1\"
  api_key_env = \"LOCAL_KEY\"   # optional: the variable holding the key, never the key
  # api_version = \"2024-10-21\"  # azure-chat, azure-responses: the api-version query
  # token_env = \"AZURE_OPENAI_AD_TOKEN\"  # azure: an Entra ID token in place of api-key
  # token_command = [\"gcloud\", \"auth\", \"print-access-token\"]  # vertex, azure: prints a
  #                           # token, run without a shell, again after a 401

  [models.\"local:qwen\"]       # a new entry, or an override of a built-in one
  context_window = 32768
  max_output = 4096
  input = [\"text\", \"image\"]
  media.image = { max_bytes = 5242880, max_count = 4 }
  prices = { input = 0.0, output = 0.0 }

[providers.*] and [models.*] are read only from your config: a project's .agents/config.toml
may not say where a credential goes, trusted or not. A project may name its preferred model in
[model], which applies once the folder is trusted (tackle trust).

Windows of local models: a model the catalog does not know gets the window its server names.
tackle asks the provider's base_url, and only it (a final /v1 taken off): llama.cpp's GET /props,
vLLM's GET /v1/models, LM Studio's GET /api/v0/models, Ollama's POST /api/show (the model's
maximum, and the num_ctx it runs with: its Modelfile's, the loaded model's, else Ollama's
default, 4096, since Ollama silently cuts the front of a longer prompt). The smallest size a
server names is the window. Answers are kept a day in $XDG_CACHE_HOME/tackle/windows.json (else
~/.cache/tackle/windows.json). OpenAI's and Anthropic's own APIs are never asked, and a
[models.\"provider:model\"] table always wins over what a server says.

  tackle models --probe                 every configured model of every local provider
  tackle models --probe local           the models configured for provider local
  tackle models --probe local:qwen      one model, configured or not
  tackle models --probe --json          the same, for scripts

With --probe the exit code is 1 when a server could not be asked or did not name a window.";

const MCP_AFTER_HELP: &str = "\
Examples:
  tackle mcp list                                   every server, its scope and state
  tackle mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .
  tackle mcp add gh --env GITHUB_TOKEN='${GH_PAT}' -- github-mcp-server stdio
  tackle mcp add --transport http docs https://example.com/mcp --header-env Authorization=DOCS_TOKEN
  tackle mcp add --scope project lint -- ./tools/lint-mcp
  tackle mcp get fs --json
  tackle mcp remove fs
  tackle mcp add --transport http wiki https://wiki.example/mcp --client-id tackle-cli
  tackle mcp login docs                             OAuth in the browser; tokens kept 0600
  tackle mcp logout docs

Scopes: user servers ($XDG_CONFIG_HOME/tackle/mcp.json, else ~/.config/tackle/mcp.json) always
start. Project servers (<root>/.agents/mcp.json, shared with the repository) start only once the
folder is trusted (tackle trust); adding one does not trust it. A name in both scopes is the
project's entry while the folder is trusted, else the user's.

Secrets stay out of the files: --env KEY='${VAR}' hands the child the value of VAR from tackle's
environment, --header-env HEADER=VAR sends VAR's value as that header. Values are never printed.";

const GOAL_AFTER_HELP: &str = "\
Examples:
  tackle goal set \"make the test suite pass on CI\"
  tackle goal show                                  objective, status, revision, checklist
  tackle goal pause --goal-id goal-1 --expected-revision 3
  tackle goal resume --goal-id goal-1 --expected-revision 4 --json

A control names the goal and the revision you last saw (tackle goal show); when the goal changed
since (the model updated its checklist), it is refused and nothing changes. Setting a new
objective replaces the current goal. Goals live in <root>/.agents/store/goals/ and survive
restarts.";

/// `tackle goal pause|resume|cancel`: which goal, at which revision.
#[derive(Debug, clap::Args)]
pub struct GoalControlArgs {
    /// The goal's id, as `tackle goal show` prints it (goal-1).
    #[arg(long, value_name = "ID")]
    pub goal_id: String,
    /// The revision you last saw; a goal that has changed since is not touched.
    #[arg(long, value_name = "N")]
    pub expected_revision: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum GoalCommand {
    /// Set a new objective: an active goal with an empty checklist, replacing the current one.
    Set {
        objective: String,
        #[arg(long)]
        json: bool,
    },
    /// Show the current goal: objective, status, revision and the whole checklist.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Pause the active goal (the model may still update its checklist).
    Pause(GoalControlArgs),
    /// Resume the paused goal.
    Resume(GoalControlArgs),
    /// Cancel the goal for good.
    Cancel(GoalControlArgs),
}

/// Where `tackle mcp add` and `remove` write.
pub use crate::mcp::scope::Scope as McpScope;

/// How `tackle mcp add` reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum McpTransport {
    /// A child process speaking MCP over stdin/stdout: `add <name> -- <command> [args...]`.
    Stdio,
    /// A Streamable HTTP endpoint: `add --transport http <name> <url>`.
    Http,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List every configured server with its scope, transport and state: connected (with its
    /// tool count), failed (with the cause), not started (untrusted folder) or replaced by a
    /// project entry. Each server is started once, all at once, within its start-up timeout.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one server's configuration and state (secret values are never shown).
    Get {
        name: String,
        /// Which entry, when the name is declared in both scopes (default: the one that applies).
        #[arg(long, value_enum)]
        scope: Option<McpScope>,
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `add [options] <name> -- <command> [args...]` for a stdio server,
    /// `add --transport http [options] <name> <url>` for a Streamable HTTP one. Refuses a name
    /// already in that scope.
    Add {
        /// Where to write it: user (your own file, the default) or project (.agents/mcp.json;
        /// starts only once the folder is trusted).
        #[arg(long, value_enum, default_value = "user")]
        scope: McpScope,
        /// stdio (default) or http.
        #[arg(long, value_enum, default_value = "stdio")]
        transport: McpTransport,
        /// An environment variable for a stdio server, KEY=VALUE (repeatable); write the value
        /// as '${VAR}' to pass VAR from tackle's environment instead of storing it.
        #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server, HEADER=VAR (repeatable): the value of environment
        /// variable VAR is sent as HEADER (Authorization takes a bare token or "Bearer …").
        #[arg(long, value_name = "HEADER=VAR")]
        header_env: Vec<String>,
        /// An OAuth client id registered with the HTTP server's authorization server out of band
        /// (without it `tackle mcp login` registers a client dynamically).
        #[arg(long, value_name = "ID")]
        client_id: Option<String>,
        /// The https URL of a client ID metadata document describing tackle as your client,
        /// used as the client id where the authorization server accepts those.
        #[arg(long, value_name = "URL")]
        client_metadata_url: Option<String>,
        /// The environment variable holding that client's secret (a confidential client).
        #[arg(long, value_name = "VAR", requires = "client_id")]
        client_secret_env: Option<String>,
        /// Every tool of this server is read-only (tackle may run them concurrently and poll them).
        #[arg(long)]
        read_only: bool,
        /// The server's name: letters, digits, `_` and `-`; its tools become mcp__<name>__<tool>.
        name: String,
        /// The URL of an HTTP server (with --transport http).
        url: Option<String>,
        /// The command of a stdio server and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Remove a server. Without --scope the name must be declared in exactly one scope.
    Remove {
        name: String,
        #[arg(long, value_enum)]
        scope: Option<McpScope>,
    },
    /// Authorize tackle with an HTTP server that asks for OAuth: discovers its authorization
    /// server, registers a client (or uses the entry's oauth.client_id), prints the
    /// authorization URL and opens it with $BROWSER (else xdg-open), then waits for the
    /// redirect to a one-shot listener on 127.0.0.1. Tokens are kept 0600 in the user's config
    /// directory, for this server name at this URL only.
    Login {
        name: String,
        /// Seconds to wait for the browser's redirect.
        #[arg(long, default_value_t = tackle_mcp::client::oauth::DEFAULT_LOGIN_TIMEOUT.as_secs())]
        timeout: u64,
        /// Print the URL only; do not start a browser.
        #[arg(long)]
        no_browser: bool,
        #[arg(long)]
        json: bool,
    },
    /// Delete the tokens `tackle mcp login` stored for a server name (at any URL).
    Logout {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ArtifactsCommand {
    /// List artifacts with size, age and the label their producers gave them.
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Write an artifact's bytes to standard output (verified against its digest).
    Cat {
        /// A digest, `artifact://<digest>[/<stream>]`, or `artifact://sha256/<digest>`.
        artifact: String,
    },
    /// Remove artifacts no event log references, once older than the one-hour grace.
    Gc {
        /// Report what would be removed without removing it.
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
}

/// `tackle serve --approvals`: who answers for a call the gate asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeApprovals {
    /// tackle asks the client's user through MCP elicitation.
    Elicit,
    /// The client's own confirmation of a mutating call is the user's answer.
    Client,
}

/// Where a daemon is, for the commands that talk to one.
#[derive(Debug, Clone, clap::Args)]
pub struct DaemonAddress {
    /// The daemon's URL (default: the one running from --state-dir).
    #[arg(long, value_name = "URL")]
    pub daemon: Option<String>,
    /// The environment variable holding the daemon's bearer token (default: the one the daemon
    /// of --state-dir was started with, else the token it drew; neither is sent to another
    /// --daemon URL).
    #[arg(long, value_name = "NAME")]
    pub daemon_token_env: Option<String>,
    /// The daemon's state directory (default: $XDG_STATE_HOME/tackle/daemon).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// `tackle daemon`'s serving options.
#[derive(Debug, Clone, clap::Args)]
pub struct DaemonArgs {
    /// The address to serve on; anything but loopback needs --token-env.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7420")]
    pub listen: std::net::SocketAddr,
    /// The environment variable holding the bearer token clients must send (at least 32
    /// bytes). Without it the daemon draws a token at start and writes it to <state-dir>/token
    /// (0600), where this user's tackle commands find it.
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
    /// Where the daemon keeps its lock, its address, its drawn token and the sessions it hosts.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The most sessions hosted at once.
    #[arg(long, value_name = "N", default_value_t = crate::daemon::hosted::DEFAULT_MAX_SESSIONS)]
    pub max_sessions: usize,
    /// Keep the peer registry (`POST /peers`, `GET /peers`) that call_peer resolves names in.
    #[arg(long)]
    pub peer_hub: bool,
    /// Register with the hub at URL as --name, and again as a heartbeat.
    #[arg(long, value_name = "URL", requires = "name")]
    pub hub: Option<String>,
    /// This daemon's name in the hub's registry; with sessions kept in a fleet database
    /// ([store] backend = "postgres") and no --hub, its name in the fleet's registry.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The URL the registry gives callers (default: http://<the bound address>).
    #[arg(long, value_name = "URL")]
    pub advertise: Option<String>,
    /// The variable, in callers' environments, holding this daemon's token (registered with
    /// the hub or the fleet; never the token itself): the shared TACKLE_PEER_TOKEN or this
    /// daemon's own TACKLE_PEER_TOKEN_<NAME> (--name in upper case, '-' and '.' as '_'), the
    /// only variables a caller reads a peer's token from.
    #[arg(long, value_name = "NAME")]
    pub peer_token_env: Option<String>,
    /// The variable holding the hub's token, when the hub requires one.
    #[arg(long, value_name = "NAME")]
    pub hub_token_env: Option<String>,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum DaemonCommand {
    /// Whether a daemon runs from the state directory, where, and what it hosts.
    Status {
        #[command(flatten)]
        daemon: DaemonAddress,
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop the daemon: running prompts are cancelled, their processes end, and the sessions
    /// stay in their logs for the next start to resume.
    Stop {
        #[command(flatten)]
        daemon: DaemonAddress,
    },
}

const DAEMON_AFTER_HELP: &str = "\
Examples:
  tackle daemon                              serve 127.0.0.1:7420
  tackle daemon --listen 0.0.0.0:7420 --token-env TACKLE_TOKEN
  tackle daemon --peer-hub                   also keep the peer registry
  tackle daemon --hub http://hub:7420 --name builder --peer-token-env TACKLE_PEER_TOKEN_BUILDER
  tackle daemon --name builder               in a fleet: registered in its database
  tackle run --daemon http://127.0.0.1:7420 'fix the failing test'
  tackle attach                              list the sessions
  tackle attach SESSION                      follow one, type to steer it
  tackle daemon status | tackle daemon stop

Clients speak the Agent Client Protocol: POST /acp with a JSON-RPC message; session/prompt and
_tackle/session/attach answer as event streams whose event ids are cursors.";
