//! `bash`: run a command line with `bash -c` in the project root (seed 003, "Shell"; seed
//! 000, "Bash").
//!
//! `prepare` reads the script without running it: the bash search gate refuses search-shaped
//! commands when the native tool exists, the denylist refuses destructive ones, and every simple
//! command becomes a `tool.bash.cmd:<verb> <args…>` routing key, every output redirection a
//! `write:<path>` key and every input redirection a `read:<path>` key (by name and by the file
//! its links lead to, after following `cd`), so the gate decides on what would actually run
//! (see [`crate::shell`]). `execute` streams stdout
//! and stderr as two named streams through the process runner (`tackle-process`), which ends
//! the whole process group on timeout or cancellation; the script parses once for all three.
//!
//! Key decision: the shell that runs the line is the one the keys were derived for. The
//! analyzer reads bash grammar, so the line runs with bash, found once per process at
//! `/bin/bash` or `/usr/bin/bash` (never through `PATH`) and started as `bash --norc --noprofile
//! -c` with an environment that cannot change what it runs (no `BASH_ENV`, no exported
//! functions, no `SHELLOPTS`…: [`tackle_process::SHELL_ENV_REMOVED`]). Where there is no bash the
//! line runs with `/bin/sh -c` and is analyzed as [`Dialect::Sh`], which keys every construct
//! whose meaning differs from bash's as `tool.bash.cmd:?`. A shell started ahead of the call
//! ([`tackle_process::Shell`]) is used only for `/bin/sh` that is dash, where it runs a line
//! exactly as `sh -c`; bash gets a fresh `bash -c` every time, since no warm bash can be exact.
//! Rejected: `/bin/sh -c` with a bash analyzer, under which `((…))`, `[[ … ]]` and `$'…'` ran
//! commands and wrote files that no key named.

use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_process::{
    CallFacts, Ended, EnvPolicy, OutputStream, ProcessError, Shell, ShellKind, ShellProgram,
    ShellRun, StdinRegistry,
};
use tackle_tool::protocol::{Concurrency, ErrorCode, OutputDeclaration, StreamName};
use tackle_tool::{
    Action, ExecuteContext, OutputSink, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError, ToolProgress,
};

use crate::shell::Dialect;
use crate::shell::analyze::{Analysis, ParseRefusal, analyze_parsed, parse_checked};
use crate::shell::denylist::{device_write, refusal_in};
use crate::shell::keys::BASH_CMD_ACTION;
use crate::shell::routing::{LineEnvironment, routing_keys};
use crate::shell::search_gate::find_search_parsed;
use crate::shell::sources::argument_sources;
use crate::stack::on_parser_stack;

/// Used when a call gives no `timeout`.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The largest `timeout` a call may ask for (ten minutes, the runtime's own call limit).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Between SIGTERM and SIGKILL when a command is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

pub const SEARCH_GATE_REFUSED: ErrorCode = ErrorCode::new("search_gate_refused");
pub const COMMAND_REFUSED: ErrorCode = ErrorCode::new("command_refused");

/// `[safety] bash_search_gate` / `--bash-search-gate` (seed 003, "The bash search gate").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchGateMode {
    /// Refuse search-shaped commands, naming the tool to use.
    #[default]
    Enforce,
    /// Run them, and attach the same advice to the result.
    Warn,
    /// No check.
    Allow,
}

impl SearchGateMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enforce => "enforce",
            Self::Warn => "warn",
            Self::Allow => "allow",
        }
    }
}

impl std::str::FromStr for SearchGateMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "enforce" => Ok(Self::Enforce),
            "warn" => Ok(Self::Warn),
            "allow" => Ok(Self::Allow),
            other => Err(format!(
                "unknown bash search gate mode `{other}`; use enforce, warn or allow"
            )),
        }
    }
}

/// The search gate as this catalog arms it: which redirections are possible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchGate {
    pub mode: SearchGateMode,
    pub grep: bool,
    pub glob: bool,
}

impl SearchGate {
    pub fn new(mode: SearchGateMode, registered: &[String]) -> Self {
        Self {
            mode,
            grep: registered.iter().any(|n| n == "grep"),
            glob: registered.iter().any(|n| n == "glob"),
        }
    }

    /// Whether it can refuse anything: not `allow`, and a tool to redirect to exists.
    pub fn armed(&self) -> bool {
        self.mode != SearchGateMode::Allow && (self.grep || self.glob)
    }

    /// The binaries it covers (only those whose native tool is registered).
    pub fn covered(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.grep {
            v.extend(["grep", "egrep", "fgrep", "rgrep", "rg", "ag", "ack"]);
        }
        if self.glob {
            v.extend(["find", "fd"]);
        }
        v
    }

    /// The startup/posture line (seed 003): names the posture and the binaries covered.
    pub fn posture(&self) -> String {
        match self.mode {
            SearchGateMode::Allow => "bash search gate: allow (off)".to_owned(),
            mode if !self.grep && !self.glob => format!(
                "bash search gate: {} but INERT (no grep or glob tool)",
                mode.as_str()
            ),
            mode => format!(
                "bash search gate: {} (covers {})",
                mode.as_str(),
                self.covered().join(", ")
            ),
        }
    }

    /// The advice for a search-shaped command of a parsed script, if this gate can redirect
    /// it (`program` is `None` when the script did not parse: the gate fails open).
    fn advice(&self, program: Option<&brush_parser::ast::Program>) -> Option<String> {
        if !self.armed() {
            return None;
        }
        let hit = find_search_parsed(program?)?;
        let redirectable = match hit.tool {
            "grep" => self.grep,
            _ => self.glob,
        };
        if !redirectable {
            return None;
        }
        let what = if hit.tool == "grep" {
            "It returns structured {path, line, text} matches, honors the permission gate and \
             the path scope, and applies per-tool output caps."
        } else {
            "It lists matching paths, honors the permission gate and the path scope, and applies \
             per-tool output caps."
        };
        Some(format!(
            "bash refused: `{verb}` is a search-shaped command; use the native `{tool}` tool \
             instead. {what} Piping into a search binary is unaffected — `go test ./... | grep -v \
             ok` filters a stream, which the native tool does not do; so is `find` with an action \
             such as -exec or -delete. Operator override: safety.bash_search_gate = \"warn\" or \
             \"allow\" (CLI: --bash-search-gate).",
            verb = hit.verb,
            tool = hit.tool,
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command line, run with `bash -c` in the project root (`/bin/sh -c` on a machine
    /// without bash).
    pub command: String,
    /// Time limit in milliseconds (default 120000, at most 600000). On expiry the command and
    /// everything it started are stopped; output so far is kept.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Keep stdin open so input can be sent to the command while it runs, naming the call by
    /// the call id it reports when it starts (default false: stdin is empty).
    #[serde(default)]
    pub interactive: Option<bool>,
}

pub struct BashPlan {
    command: String,
    timeout_ms: u64,
    interactive: bool,
    /// The line's `tool.bash.cmd:` keys: input to an interactive call is gated on them
    /// (`bash_stdin`).
    command_keys: Vec<String>,
    /// The shell parser read the whole command without error.
    parsed: bool,
    /// The search gate's advice in `warn` mode.
    notice: Option<String>,
}

/// The bash tool. Build it with [`Bash::new`] from the built-in configuration.
pub struct Bash {
    gate: SearchGate,
    shell: Shell,
    /// How the analyzer reads lines: the grammar of `shell`'s program.
    dialect: Dialect,
    stdin: StdinRegistry,
}

impl Bash {
    /// Runs lines with this machine's shell ([`ShellProgram::discover`]). `prestart`: keep a
    /// shell started ahead of the next call where that is exact ([`Shell`]).
    pub fn new(gate: SearchGate, env: EnvPolicy, stdin: StdinRegistry, prestart: bool) -> Self {
        Self::with_shell(ShellProgram::discover().clone(), gate, env, stdin, prestart)
    }

    /// Runs lines with `program`, and reads them in its dialect.
    pub fn with_shell(
        program: ShellProgram,
        gate: SearchGate,
        env: EnvPolicy,
        stdin: StdinRegistry,
        prestart: bool,
    ) -> Self {
        let dialect = dialect_of(program.kind());
        Self {
            gate,
            shell: Shell::new(program, env, KILL_GRACE, prestart),
            dialect,
            stdin,
        }
    }

    /// The shell lines run with.
    pub fn shell_program(&self) -> &ShellProgram {
        self.shell.program()
    }

    /// Parse a line once for the search gate, the command keys and the runner, and walk it.
    /// Recursive all the way down: run on [`on_parser_stack`]. A line nested past the limits
    /// of [`crate::shell::depth`] is refused, since no parser may read it.
    fn read_line(&self, command: &str) -> Result<LineReading, ToolError> {
        let program = match parse_checked(command) {
            Ok(program) => Some(program),
            Err(ParseRefusal::Syntax) => None,
            Err(ParseRefusal::TooDeep(deep)) => {
                return Err(
                    ToolError::new(ErrorCode::INVALID_ARGUMENTS, deep.message("bash"))
                        .with_metadata(json!({ "limit": deep.limit, "path": "$.command" })),
                );
            }
        };
        Ok(LineReading {
            parsed: program.is_some(),
            advice: self.gate.advice(program.as_ref()),
            analysis: analyze_parsed(program.as_ref(), self.dialect),
        })
    }
}

/// What [`Bash::read_line`] found in a line.
struct LineReading {
    /// The shell parser read the whole command without error.
    parsed: bool,
    /// The search gate's advice, if the line is search-shaped.
    advice: Option<String>,
    analysis: Analysis,
}

/// The dialect the analyzer must read a line in for the shell that will run it.
pub fn dialect_of(kind: ShellKind) -> Dialect {
    match kind {
        ShellKind::Bash => Dialect::Bash,
        ShellKind::Sh => Dialect::Sh,
    }
}

/// The posture line of the shell: which shell runs lines, and for `sh` what that costs.
pub fn shell_posture(program: &ShellProgram) -> String {
    match program.kind() {
        ShellKind::Bash => format!("bash runs lines with {}", program.invocation()),
        ShellKind::Sh => format!(
            "bash runs lines with {} (no bash at {}; bash-only constructs are keyed \
             tool.bash.cmd:?)",
            program.invocation(),
            tackle_process::BASH_PATHS.join(" or ")
        ),
    }
}

fn stream(name: &str) -> StreamName {
    // Only called with "stdout" and "stderr", valid stream names by the grammar (letters only).
    StreamName::parse(name).unwrap_or_else(|_| unreachable!("`{name}` is a valid stream name"))
}

impl Tool for Bash {
    type Args = BashArgs;
    type Plan = BashPlan;

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> Cow<'static, str> {
        let mut d = String::from(match self.dialect {
            Dialect::Bash => "Run a shell command line with bash -c in the project root, ",
            Dialect::Sh => {
                "Run a shell command line with /bin/sh -c in the project root (this machine \
                 has no bash: write POSIX sh; bash-only syntax such as [[ ]], (( )), $'…' or \
                 arrays always needs approval), "
            }
        });
        d.push_str(
            "with a per-call timeout in milliseconds (default 120000, max 600000) and a denylist \
             of destructive commands. Use it only for what the structured tools cannot do: builds, tests, git, \
             formatters, package managers. Every command in the line (through ;, &&, |, $(…), \
             find -exec, sh -c, env, sudo…) is checked by the permission gate as \
             tool.bash.cmd:<command>, output redirections as write:<path> and input redirections \
             as read:<path>. A line whose effect cannot be read without running it (arithmetic \
             on variables, setting PATH, HOME or IFS, source, a command name built at run time) \
             needs approval every time: write plain, literal commands. stdout and stderr come back as separate streams \
             with the exit code; long output is kept whole and can be paged with read_file. \
             Prefer read_file over cat, head or tail. Prefer list_dir over ls. Prefer stat over \
             test -e. Prefer write_file over echo > or cat <<EOF. Prefer edit_file over sed -i.",
        );
        if self.gate.armed() && self.gate.mode == SearchGateMode::Enforce {
            if self.gate.grep {
                d.push_str(" Searching with grep, rg, ag or ack is REFUSED: use the grep tool.");
            }
            if self.gate.glob {
                d.push_str(" Listing files with find or fd is REFUSED: use the glob tool.");
            }
            d.push_str(" Piping output into grep is allowed.");
        } else {
            d.push_str(
                " Prefer the grep tool over grep or rg. Prefer the glob tool over find or fd.",
            );
        }
        Cow::Owned(d)
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        false
    }

    fn output(&self) -> OutputDeclaration {
        OutputDeclaration::Named(vec![stream("stdout"), stream("stderr")])
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &[BASH_CMD_ACTION, "write", "read"]
    }

    fn prepare(
        &self,
        args: BashArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<BashPlan>, ToolError> {
        let timeout_ms = args.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "bash: timeout {timeout_ms} ms is out of range; pass 1 to {MAX_TIMEOUT_MS} ms \
                     (default {DEFAULT_TIMEOUT_MS})"
                ),
            ));
        }
        if args.command.trim().is_empty() {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "bash: command is empty; pass the command line to run",
            ));
        }
        // Longer than one argument may be, it would be refused at the spawn; refused here,
        // before the parser, it also bounds the parser's work.
        if args.command.len() > tackle_process::MAX_SCRIPT_BYTES {
            let too_long = ProcessError::ScriptTooLong {
                program: self.shell.program().path().display().to_string(),
                bytes: args.command.len(),
                limit: tackle_process::MAX_SCRIPT_BYTES,
            };
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!("bash: {too_long}"),
            ));
        }
        let LineReading {
            parsed,
            advice,
            mut analysis,
        } = on_parser_stack("bash", || self.read_line(&args.command))??;
        // The search gate runs here, before the permission gate, so no mode waves it through.
        let notice = match (advice, self.gate.mode) {
            (Some(advice), SearchGateMode::Enforce) => {
                return Err(ToolError::new(SEARCH_GATE_REFUSED, advice));
            }
            (advice, _) => advice,
        };
        // What the tree does not keep (`{fd}>`, dash's reading of bash-only spellings).
        analysis.check_text(&args.command);
        if let Some(why) = refusal_in(&args.command, &analysis, self.dialect) {
            return Err(refused(&why));
        }
        let resources = routing_keys(&analysis, cx.root, &LineEnvironment::inherited());
        // A link in the root to a disk is refused like the disk itself.
        let written = resources
            .iter()
            .filter(|r| r.action == Action::Write)
            .map(|r| r.target.as_str());
        if let Some(why) = device_write(written) {
            return Err(refused(&why));
        }
        let command_keys = resources
            .iter()
            .filter(|r| r.action == Action::Custom(BASH_CMD_ACTION))
            .map(|r| r.key())
            .collect();
        let sources = argument_sources(&analysis, cx.root);
        Ok(Prepared::new(
            Routing { resources },
            BashPlan {
                command: args.command,
                timeout_ms,
                interactive: args.interactive.unwrap_or(false),
                command_keys,
                parsed,
                notice,
            },
        )
        .with_sources(sources))
    }

    async fn execute(
        &self,
        plan: BashPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        // Every call registers, so input sent to a plain one is refused as "not interactive".
        let (registration, stdin) = if plan.interactive {
            let facts = CallFacts {
                keys: plan.command_keys.clone(),
            };
            let (reg, rx) = self
                .stdin
                .register_interactive(&cx.session.0, &cx.call_id.0, facts);
            // The id reaches front ends that know only what the call reports (an MCP client
            // sees it as a progress notification), so they can feed the call with bash_stdin.
            cx.output.progress(ToolProgress {
                message: Some(stdin_open_message(&cx.call_id.0)),
                ..ToolProgress::default()
            })?;
            (reg, Some(rx))
        } else {
            (
                self.stdin.register_plain(&cx.session.0, &cx.call_id.0),
                None,
            )
        };
        let job = ShellRun {
            script: &plan.command,
            parsed: plan.parsed,
            cwd: &cx.root,
            timeout: Duration::from_millis(plan.timeout_ms),
            stdin,
        };
        let mut out = Utf8Stream::new(cx.output.clone(), stream("stdout"));
        let mut err = Utf8Stream::new(cx.output.clone(), stream("stderr"));
        let outcome = self
            .shell
            .run(
                job,
                |s, bytes| match s {
                    OutputStream::Stdout => out.push(bytes),
                    OutputStream::Stderr => err.push(bytes),
                },
                cx.cancel.clone(),
            )
            .await
            .map_err(|e| {
                let code = match e {
                    // The model can shorten the line; nothing failed on this machine.
                    ProcessError::ScriptTooLong { .. } => ErrorCode::INVALID_ARGUMENTS,
                    _ => ErrorCode::IO,
                };
                ToolError::new(code, format!("bash: {e}"))
            })?;
        drop(registration);
        let flushed = out.finish().and_then(|()| err.finish());
        let duration_ms = outcome.duration.as_millis() as u64;
        let metadata = json!({
            "exit_code": outcome.status.code,
            "signal": outcome.status.signal,
            "duration_ms": duration_ms,
            "timed_out": outcome.ended == Ended::TimedOut,
            "stdout_bytes": outcome.stdout_bytes,
            "stderr_bytes": outcome.stderr_bytes,
            "notice": plan.notice,
        });
        match outcome.ended {
            Ended::Exited => {}
            Ended::TimedOut => {
                return Err(ToolError::new(
                    ErrorCode::TIMEOUT,
                    format!(
                        "bash: the command did not finish within {} ms and was stopped \
                         (SIGTERM to its process group, SIGKILL after {} s); all output so far is \
                         kept. Pass a larger \"timeout\" (up to {MAX_TIMEOUT_MS} ms), or run it in \
                         the background with its output redirected to a file",
                        plan.timeout_ms,
                        KILL_GRACE.as_secs()
                    ),
                )
                .with_metadata(metadata));
            }
            Ended::Cancelled => {
                return Err(ToolError::new(
                    ErrorCode::CANCELLED,
                    "bash: the call was cancelled and the command stopped; output so far is kept",
                )
                .with_metadata(metadata));
            }
            Ended::Stopped(e) => return Err(e),
        }
        flushed?;
        let status = match (outcome.status.code, outcome.status.signal) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "exit unknown".to_owned(),
        };
        let mut summary = format!("{status} · {duration_ms} ms");
        if let Some(n) = &plan.notice {
            summary.push_str("\nnotice: ");
            summary.push_str(n);
        }
        Ok(ToolCompletion::streamed()
            .with_metadata(metadata)
            .with_summary(summary))
    }
}

/// The progress message an interactive call sends when it starts: its call id and how to feed
/// it. A client may parse the id from `call_id=<id>`.
pub fn stdin_open_message(call_id: &str) -> String {
    format!(
        "stdin open: call_id={call_id}; send input with bash_stdin {{\"call_id\": \"{call_id}\", \
         \"data\": \"...\"}} and close it with {{\"call_id\": \"{call_id}\", \"eof\": true}}"
    )
}

/// The refusal of a line on the denylist.
fn refused(why: &str) -> ToolError {
    ToolError::new(
        COMMAND_REFUSED,
        format!(
            "bash refused {why}: it is on the denylist of destructive commands and is never run, \
             whatever the permission rules say; do the work with a narrower command"
        ),
    )
}

/// Bytes from a pipe → text for a named stream: UTF-8 sequences split across reads are joined,
/// and invalid bytes become U+FFFD (the sink carries text).
struct Utf8Stream {
    sink: OutputSink,
    name: StreamName,
    carry: Vec<u8>,
    /// Reused to build the text of a read that has invalid bytes.
    lossy: String,
}

impl Utf8Stream {
    fn new(sink: OutputSink, name: StreamName) -> Self {
        Self {
            sink,
            name,
            carry: Vec::new(),
            lossy: String::new(),
        }
    }

    fn push(&mut self, mut bytes: &[u8]) -> Result<(), ToolError> {
        // A sequence split by the last read is completed with only the few bytes it still needs
        // (at most three), not by joining it to this whole read: that copied every read after a
        // split, which output with many multi-byte characters has on most reads. The small join
        // may itself end in a new incomplete sequence, hence the loop; each turn consumes input.
        while !self.carry.is_empty() && !bytes.is_empty() {
            let need = utf8_width(self.carry[0])
                .saturating_sub(self.carry.len())
                .max(1);
            let (head, rest) = bytes.split_at(need.min(bytes.len()));
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(head);
            bytes = rest;
            self.emit(&joined)?;
        }
        if bytes.is_empty() {
            return Ok(());
        }
        self.emit(bytes)
    }

    /// Validation is SIMD (`simdutf8`, with the same error positions as `std`): it sees every
    /// byte of the output, and `std`'s check costs about as much as SHA-256 once the text is not
    /// ASCII.
    fn emit(&mut self, bytes: &[u8]) -> Result<(), ToolError> {
        let err = match simdutf8::compat::from_utf8(bytes) {
            Ok(text) => return self.sink.write(Some(&self.name), text),
            Err(e) => e,
        };
        let (valid, after) = bytes.split_at(err.valid_up_to());
        if err.error_len().is_none() {
            // Only a sequence cut by the end of the read: the text before it goes as it is, the
            // cut one waits for the next read.
            self.carry.clear();
            self.carry.extend_from_slice(after);
            return self.sink.write(Some(&self.name), known_valid(valid));
        }
        // Invalid bytes: the text is built once, with U+FFFD for each invalid sequence (as
        // `String::from_utf8_lossy` does), so output that is mostly invalid (binary) reaches the
        // sink in one piece per read rather than a few bytes at a time.
        let mut text = std::mem::take(&mut self.lossy);
        text.clear();
        text.push_str(known_valid(valid));
        let mut rest = after;
        let mut err = err;
        loop {
            match err.error_len() {
                Some(bad) => {
                    text.push('\u{fffd}');
                    rest = &rest[bad..];
                }
                None => {
                    self.carry.clear();
                    self.carry.extend_from_slice(rest);
                    break;
                }
            }
            match simdutf8::compat::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    text.push_str(known_valid(valid));
                    rest = after;
                    err = e;
                }
            }
        }
        let written = self.sink.write(Some(&self.name), &text);
        self.lossy = text;
        written
    }

    fn finish(&mut self) -> Result<(), ToolError> {
        if self.carry.is_empty() {
            return Ok(());
        }
        let rest = std::mem::take(&mut self.carry);
        self.sink
            .write(Some(&self.name), &String::from_utf8_lossy(&rest))
    }
}

/// `bytes` as text, where a validator has already found them valid UTF-8. Checked again rather
/// than trusted (no `unsafe`); with SIMD the second look costs little, and it only happens for a
/// read that did not end on a character boundary or has invalid bytes.
fn known_valid(bytes: &[u8]) -> &str {
    simdutf8::basic::from_utf8(bytes).unwrap_or_default()
}

/// The length of the UTF-8 sequence that `lead` starts (1 for a byte that starts none).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::analyze::parse;
    use std::path::Path;

    #[test]
    fn posture_lines() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let g = SearchGate::new(SearchGateMode::Enforce, &names(&["grep", "glob", "bash"]));
        assert_eq!(
            g.posture(),
            "bash search gate: enforce (covers grep, egrep, fgrep, rgrep, rg, ag, ack, find, fd)"
        );
        let g = SearchGate::new(SearchGateMode::Enforce, &names(&["bash"]));
        assert_eq!(
            g.posture(),
            "bash search gate: enforce but INERT (no grep or glob tool)"
        );
        assert!(!g.armed());
        let g = SearchGate::new(SearchGateMode::Allow, &names(&["grep"]));
        assert!(!g.armed());
    }

    /// Keeps everything a stream writes.
    #[derive(Default)]
    struct Collect(std::sync::Mutex<String>);

    impl tackle_tool::ProgressReceiver for Collect {
        fn accept(&self, progress: tackle_tool::ToolProgress) -> Result<(), ToolError> {
            for chunk in progress.output {
                self.0.lock().unwrap().push_str(&chunk.text);
            }
            Ok(())
        }

        fn accept_output(&self, _: Option<&StreamName>, text: &str) -> Result<(), ToolError> {
            self.0.lock().unwrap().push_str(text);
            Ok(())
        }
    }

    /// However the bytes are cut into reads, the text is what decoding them whole gives:
    /// sequences cut by a read are joined, invalid bytes become U+FFFD, and so does a sequence
    /// left unfinished at the end.
    #[test]
    fn utf8_stream_text_does_not_depend_on_read_boundaries() {
        let inputs: [&[u8]; 7] = [
            "aé€😀z".as_bytes(),
            "日本語のテキスト".as_bytes(),
            b"\xe2\x82",
            // A truncated sequence right before a whole one: completing the first with the
            // next read's bytes must not swallow the start of the second.
            b"a\xe2\x82\xe2\x82\xacb",
            b"\xf0\x9f\x41\xff\xc3",
            b"\xf0\x9f\x98",
            // Binary: invalid bytes between short valid runs, and cut sequences among them.
            b"\xff\xfeab\x80c\xe2\x82\xacd\xed\xa0\x80\xc0\xafe\xf4\x90\x80\x80\xe2\x82",
        ];
        for input in inputs {
            let whole = String::from_utf8_lossy(input).into_owned();
            for i in 0..=input.len() {
                for j in i..=input.len() {
                    let collected = std::sync::Arc::new(Collect::default());
                    let mut s =
                        Utf8Stream::new(OutputSink::new(collected.clone()), stream("stdout"));
                    for read in [&input[..i], &input[i..j], &input[j..]] {
                        s.push(read).unwrap();
                    }
                    s.finish().unwrap();
                    assert_eq!(
                        *collected.0.lock().unwrap(),
                        whole,
                        "{input:?} read as [..{i}], [{i}..{j}], [{j}..]"
                    );
                }
            }
        }
    }

    struct NoArtifacts;
    impl tackle_tool::ArtifactSource for NoArtifacts {
        fn derived_from(&self, _: tackle_tool::protocol::Label, _: &[String]) {}

        fn open(
            &self,
            _: &tackle_tool::protocol::ArtifactUri,
        ) -> Result<tackle_tool::OpenedArtifact, ToolError> {
            Err(ToolError::new(ErrorCode::NOT_FOUND, "no artifacts here"))
        }
    }

    fn prepare(
        mode: SearchGateMode,
        registered: &[&str],
        command: &str,
    ) -> Result<Prepared<BashPlan>, ToolError> {
        prepare_in(Path::new("/work/proj"), mode, registered, command)
    }

    fn prepare_in(
        root: &Path,
        mode: SearchGateMode,
        registered: &[&str],
        command: &str,
    ) -> Result<Prepared<BashPlan>, ToolError> {
        let registered: Vec<String> = registered.iter().map(|s| (*s).to_owned()).collect();
        let bash = Bash::new(
            SearchGate::new(mode, &registered),
            EnvPolicy::default(),
            StdinRegistry::new(),
            false,
        );
        let cx = PrepareContext {
            root,
            session: &tackle_tool::protocol::SessionId("s".into()),
            turn: &tackle_tool::protocol::TurnId("t".into()),
            agent: None,
            call_id: &tackle_tool::protocol::CallId("c".into()),
            artifacts: &NoArtifacts,
            read_scope: &tackle_tool::AdmitAll,
        };
        let args = BashArgs {
            command: command.to_owned(),
            timeout: None,
            interactive: None,
        };
        bash.prepare(args, &cx)
    }

    /// Lines nested past the parser's limits, and lines longer than one argument, are refused
    /// in prepare as invalid arguments naming the limit: never parsed, never a crash.
    #[test]
    fn lines_too_deep_or_too_long_are_refused_in_prepare() {
        let rows: &[(&str, String, &str)] = &[
            (
                "braces",
                "{ ".repeat(1500) + "true; " + &"} ".repeat(1500),
                "nesting",
            ),
            (
                "if",
                "if true; then ".repeat(1500) + "true; " + &"fi; ".repeat(1500),
                "nesting",
            ),
            (
                "$(",
                format!("echo {}x{}", "$(".repeat(7500), ")".repeat(7500)),
                "expansions",
            ),
            (
                "${",
                format!("echo {}x{}", "${a:-".repeat(300), "}".repeat(300)),
                "one word",
            ),
            (
                "long",
                format!("echo {}", "x".repeat(tackle_process::MAX_SCRIPT_BYTES)),
                "bytes",
            ),
        ];
        for (name, line, names) in rows {
            let err = prepare(SearchGateMode::Enforce, &["bash"], line)
                .err()
                .unwrap();
            assert_eq!(err.code, ErrorCode::INVALID_ARGUMENTS, "{name}");
            assert!(err.message.contains(names), "{name}: {}", err.message);
        }
        // Nested deeply but within the limits: read, and keyed.
        let line = "{ ".repeat(60) + "true; " + &"} ".repeat(60);
        assert!(prepare(SearchGateMode::Enforce, &["bash"], &line).is_ok());
    }

    /// The search gate with grep and glob registered, through `prepare` (which runs before the
    /// permission gate, so no mode can skip it).
    #[test]
    fn search_gate_modes_through_prepare() {
        let all = ["bash", "grep", "glob"];
        let err = prepare(SearchGateMode::Enforce, &all, "make && grep -rn TODO .")
            .err()
            .unwrap();
        assert_eq!(err.code, SEARCH_GATE_REFUSED);
        assert!(
            err.message.contains("use the native `grep` tool"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("--bash-search-gate"),
            "{}",
            err.message
        );
        let err = prepare(SearchGateMode::Enforce, &all, "/usr/bin/find . -name x")
            .err()
            .unwrap();
        assert!(err.message.contains("`glob`"), "{}", err.message);
        let warned = prepare(SearchGateMode::Warn, &all, "grep -rn TODO .")
            .ok()
            .unwrap();
        assert!(warned.plan.notice.is_some());
        let allowed = prepare(SearchGateMode::Allow, &all, "grep -rn TODO .")
            .ok()
            .unwrap();
        assert!(allowed.plan.notice.is_none());
        assert!(prepare(SearchGateMode::Enforce, &all, "cargo test | grep FAIL").is_ok());
        assert!(prepare(SearchGateMode::Enforce, &["bash"], "grep -rn TODO .").is_ok());
    }

    #[test]
    fn routing_has_a_key_per_command_and_write() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let p = prepare_in(
            &root,
            SearchGateMode::Enforce,
            &["bash"],
            &format!(
                "git add . && git commit -m 'x' > log.txt; cat $(ls) >> {}/b/../all.txt",
                root.display()
            ),
        )
        .ok()
        .unwrap();
        let keys: Vec<String> = p.routing.resources.iter().map(|r| r.key()).collect();
        assert_eq!(
            keys,
            [
                "tool.bash.cmd:git add .",
                "tool.bash.cmd:git commit -m x",
                "tool.bash.cmd:ls",
                "tool.bash.cmd:cat $(ls)",
                "write:log.txt",
                "write:all.txt",
            ]
        );
    }

    /// Redirections through links: both names are keys, a link to a disk is refused.
    #[test]
    fn redirect_keys_follow_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::os::unix::fs::symlink(".git/config", root.join("link")).unwrap();
        std::os::unix::fs::symlink("/dev/sda", root.join("disk")).unwrap();
        let p = prepare_in(
            &root,
            SearchGateMode::Enforce,
            &["bash"],
            "echo x >> link; cat < link",
        )
        .ok()
        .unwrap();
        let keys: Vec<String> = p.routing.resources.iter().map(|r| r.key()).collect();
        assert_eq!(
            keys,
            [
                "tool.bash.cmd:echo x",
                "tool.bash.cmd:cat",
                "write:link",
                "write:.git/config",
                "read:link",
                "read:.git/config",
            ]
        );
        let err = prepare_in(&root, SearchGateMode::Enforce, &["bash"], "echo x > disk")
            .err()
            .unwrap();
        assert_eq!(err.code, COMMAND_REFUSED);
        assert!(err.message.contains("/dev/sda"), "{}", err.message);
    }

    #[test]
    fn the_description_says_refused_only_when_armed() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let d = |mode, reg: &[&str]| {
            Bash::new(
                SearchGate::new(mode, &names(reg)),
                EnvPolicy::default(),
                StdinRegistry::new(),
                false,
            )
            .description()
            .into_owned()
        };
        assert!(d(SearchGateMode::Enforce, &["grep", "glob"]).contains("REFUSED"));
        assert!(!d(SearchGateMode::Enforce, &[]).contains("REFUSED"));
        assert!(!d(SearchGateMode::Warn, &["grep"]).contains("REFUSED"));
        assert!(!d(SearchGateMode::Allow, &["grep"]).contains("REFUSED"));
    }

    /// The analyzer reads a line in the grammar of the shell that runs it, and the model and
    /// the posture are told which shell that is.
    #[test]
    fn the_dialect_description_and_posture_follow_the_shell() {
        let tool = |program: ShellProgram| {
            Bash::with_shell(
                program,
                SearchGate::new(SearchGateMode::Allow, &[]),
                EnvPolicy::default(),
                StdinRegistry::new(),
                true,
            )
        };
        let bash = tool(ShellProgram::bash("/bin/bash"));
        assert_eq!(bash.dialect, Dialect::Bash);
        assert!(!bash.shell.prestarts(), "no bash is started ahead");
        assert!(
            bash.description()
                .starts_with("Run a shell command line with bash -c ")
        );
        assert_eq!(
            shell_posture(bash.shell_program()),
            "bash runs lines with /bin/bash --norc --noprofile -c"
        );
        let sh = tool(ShellProgram::sh("/bin/sh"));
        assert_eq!(sh.dialect, Dialect::Sh);
        assert!(sh.description().contains("/bin/sh -c"));
        assert!(sh.description().contains("has no bash"));
        assert_eq!(
            shell_posture(sh.shell_program()),
            "bash runs lines with /bin/sh -c (no bash at /bin/bash or /usr/bin/bash; bash-only \
             constructs are keyed tool.bash.cmd:?)"
        );
        assert_eq!(dialect_of(ShellKind::Bash), Dialect::Bash);
        assert_eq!(dialect_of(ShellKind::Sh), Dialect::Sh);
    }

    #[test]
    fn the_gate_refuses_only_what_it_can_redirect() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let only_grep = SearchGate::new(SearchGateMode::Enforce, &names(&["grep"]));
        assert!(only_grep.advice(parse("grep -rn x .").as_ref()).is_some());
        assert!(only_grep.advice(parse("find . -name x").as_ref()).is_none());
        let only_glob = SearchGate::new(SearchGateMode::Enforce, &names(&["glob"]));
        assert!(only_glob.advice(parse("rg x").as_ref()).is_none());
        assert!(only_glob.advice(parse("fd x").as_ref()).is_some());
    }
}
