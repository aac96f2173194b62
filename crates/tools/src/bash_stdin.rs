//! `bash_stdin`: send bytes or EOF to the stdin of a running `bash {"interactive": true}` call
//! of the same session (the MCP counterpart of the daemon's `run.tool_stdin`).
//!
//! The call is found in the [`StdinRegistry`] by (session, call id), so a client can only feed
//! calls of its own session. Every state but "running and open" is an error that names it:
//! `unknown_call`, `call_finished`, `stdin_closed`, `not_interactive`.
//!
//! Key decision: input is gated as the call it feeds. Input to an interpreter is code, so
//! besides its own key `tool.bash_stdin` a call carries the running call's `tool.bash.cmd:`
//! keys: a rule that allows `tool.bash.cmd:python3 *` lets the model type into that python, a
//! rule that asks for it asks again for every input (or once, with a session grant), and a call
//! registered without keys is keyed `tool.bash.cmd:?`, which always asks. The tool exists only
//! where bash does. Rejected: gating on `tool.bash_stdin` alone, under which an approved
//! `bash -i` or `python3` would run anything typed into it without another look.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_process::{StdinError, StdinInput, StdinRegistry};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use crate::shell::keys::{BASH_CMD_ACTION, UNRESOLVED};

/// The tool's name.
pub const NAME: &str = "bash_stdin";

/// The most bytes one call may send.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashStdinArgs {
    /// The id of the running bash call, as it reported when it started ("stdin open:
    /// call_id=…").
    pub call_id: String,
    /// Text to write to the call's stdin, exactly as given (include "\n" to end a line).
    #[serde(default)]
    pub data: Option<String>,
    /// Close the call's stdin after writing `data` (the command then reads end of file).
    #[serde(default)]
    pub eof: Option<bool>,
}

pub struct BashStdinPlan {
    call_id: String,
    data: Vec<u8>,
    eof: bool,
}

/// The tool; shares the registry the bash tool registers its calls in.
pub struct BashStdin {
    stdin: StdinRegistry,
}

impl BashStdin {
    pub fn new(stdin: StdinRegistry) -> Self {
        Self { stdin }
    }
}

pub const UNKNOWN_CALL: ErrorCode = ErrorCode::new("unknown_call");
pub const CALL_FINISHED: ErrorCode = ErrorCode::new("call_finished");
pub const STDIN_CLOSED: ErrorCode = ErrorCode::new("stdin_closed");
pub const NOT_INTERACTIVE: ErrorCode = ErrorCode::new("not_interactive");

/// A registry refusal as a tool result, with its state as the code.
fn refusal(e: &StdinError) -> ToolError {
    let code = match e {
        StdinError::UnknownCall { .. } => UNKNOWN_CALL,
        StdinError::Finished { .. } => CALL_FINISHED,
        StdinError::Closed { .. } => STDIN_CLOSED,
        StdinError::NotInteractive { .. } => NOT_INTERACTIVE,
    };
    ToolError::new(code, format!("bash_stdin: {e}")).with_metadata(json!({ "state": e.state() }))
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorCode::INVALID_ARGUMENTS, message)
}

/// The routing keys of input to a call admitted under `keys`.
fn input_resources(keys: &[String]) -> Vec<PermissionResource> {
    let prefix = format!("{BASH_CMD_ACTION}:");
    let mut targets: Vec<&str> = Vec::new();
    for key in keys {
        // A key of another kind is not understood here: it asks rather than passes.
        let target = key.strip_prefix(&prefix).unwrap_or(UNRESOLVED);
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    if targets.is_empty() {
        targets.push(UNRESOLVED);
    }
    targets
        .into_iter()
        .map(|target| PermissionResource {
            action: Action::Custom(BASH_CMD_ACTION),
            target: target.to_owned(),
        })
        .collect()
}

impl Tool for BashStdin {
    type Args = BashStdinArgs;
    type Plan = BashStdinPlan;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'static, str> {
        "Send input to a running bash call started with \"interactive\": true: `data` is \
         written to its stdin as given (end lines with \"\\n\"), and `eof: true` closes stdin \
         afterwards. `call_id` is the id the bash call reported when it started (\"stdin open: \
         call_id=…\"). Input is checked \
         by the permission gate under the running command's tool.bash.cmd keys. Fails, naming \
         the state, when the call is unknown, has finished, was not interactive, or its stdin \
         is already closed."
            .into()
    }

    fn concurrency(&self) -> Concurrency {
        // It must run while the call it feeds is running.
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        false
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &[BASH_CMD_ACTION]
    }

    fn prepare(
        &self,
        args: BashStdinArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<BashStdinPlan>, ToolError> {
        let data = args.data.unwrap_or_default().into_bytes();
        let eof = args.eof.unwrap_or(false);
        if data.is_empty() && !eof {
            return Err(invalid(
                "bash_stdin: nothing to send; pass `data` (text for stdin), `eof: true`, or both"
                    .to_owned(),
            ));
        }
        if data.len() > MAX_INPUT_BYTES {
            return Err(invalid(format!(
                "bash_stdin: data is {} bytes, more than the {MAX_INPUT_BYTES} one call may send; \
                 send it in parts",
                data.len()
            )));
        }
        let call_id = args.call_id;
        let facts = self
            .stdin
            .open_call(&cx.session.0, &call_id)
            .map_err(|e| refusal(&e))?;
        Ok(Prepared::new(
            Routing {
                resources: input_resources(&facts.keys),
            },
            BashStdinPlan { call_id, data, eof },
        ))
    }

    async fn execute(
        &self,
        plan: BashStdinPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let session = &cx.session.0;
        let bytes = plan.data.len();
        if bytes > 0 {
            self.stdin
                .send(session, &plan.call_id, StdinInput::Bytes(plan.data))
                .map_err(|e| refusal(&e))?;
        }
        if plan.eof {
            self.stdin
                .send(session, &plan.call_id, StdinInput::Eof)
                .map_err(|e| refusal(&e))?;
        }
        let text = match (bytes, plan.eof) {
            (0, _) => format!("closed the stdin of call {}", plan.call_id),
            (n, false) => format!("sent {n} bytes to call {}", plan.call_id),
            (n, true) => format!(
                "sent {n} bytes to call {} and closed its stdin",
                plan.call_id
            ),
        };
        Ok(ToolCompletion::single(text).with_metadata(json!({
            "call_id": plan.call_id,
            "bytes": bytes,
            "eof": plan.eof,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::Arc;
    use tackle_process::EnvPolicy;
    use tackle_tool::protocol::{CallId, SessionId, StreamName};
    use tackle_tool::{AdmitAll, OutputSink, ProgressReceiver, ToolProgress};
    use tokio::sync::mpsc;

    use crate::bash::{Bash, BashArgs, stdin_open_message};
    use crate::{SearchGate, SearchGateMode};

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
        registry: &StdinRegistry,
        session: &str,
        args: Value,
    ) -> Result<Prepared<BashStdinPlan>, ToolError> {
        let args: BashStdinArgs = serde_json::from_value(args).unwrap();
        let session = SessionId(session.to_owned());
        let call = CallId("feeder".to_owned());
        let cx = PrepareContext {
            root: Path::new("/work/proj"),
            session: &session,
            turn: &tackle_tool::protocol::TurnId("t".into()),
            agent: None,
            call_id: &call,
            artifacts: &NoArtifacts,
            read_scope: &tackle_tool::AdmitAll,
        };
        BashStdin::new(registry.clone()).prepare(args, &cx)
    }

    use serde_json::Value;

    /// One row per way a call can be fed or refused: how the registry is set up (calls of
    /// session `s` unless named otherwise), the arguments, and the code of the refusal.
    #[test]
    fn refusals_name_the_state() {
        #[derive(Debug)]
        enum Setup {
            Empty,
            Open(&'static [&'static str]),
            EofSent,
            Finished,
            Plain,
            OpenInOtherSession,
        }
        let table: &[(Setup, Value, Option<ErrorCode>)] = &[
            (
                Setup::Empty,
                json!({"call_id": "c", "data": "x"}),
                Some(UNKNOWN_CALL),
            ),
            (
                Setup::Open(&["c"]),
                json!({"call_id": "c", "data": "x"}),
                None,
            ),
            (
                Setup::Open(&["c"]),
                json!({"call_id": "c", "eof": true}),
                None,
            ),
            (
                Setup::Open(&["c", "d"]),
                json!({"call_id": "d", "data": "x"}),
                None,
            ),
            (
                Setup::Open(&["c"]),
                json!({"call_id": "c"}),
                Some(ErrorCode::INVALID_ARGUMENTS),
            ),
            (
                Setup::Open(&["c"]),
                json!({"call_id": "c", "data": "", "eof": false}),
                Some(ErrorCode::INVALID_ARGUMENTS),
            ),
            (
                Setup::Open(&["c"]),
                json!({"call_id": "c", "data": "x".repeat(MAX_INPUT_BYTES + 1)}),
                Some(ErrorCode::INVALID_ARGUMENTS),
            ),
            (
                Setup::EofSent,
                json!({"call_id": "c", "data": "x"}),
                Some(STDIN_CLOSED),
            ),
            (
                Setup::EofSent,
                json!({"call_id": "c", "eof": true}),
                Some(STDIN_CLOSED),
            ),
            (
                Setup::Finished,
                json!({"call_id": "c", "data": "x"}),
                Some(CALL_FINISHED),
            ),
            (
                Setup::Plain,
                json!({"call_id": "c", "data": "x"}),
                Some(NOT_INTERACTIVE),
            ),
            (
                Setup::OpenInOtherSession,
                json!({"call_id": "c", "data": "x"}),
                Some(UNKNOWN_CALL),
            ),
        ];
        for (setup, args, want) in table {
            let registry = StdinRegistry::new();
            let mut keep = Vec::new();
            let mut receivers = Vec::new();
            match setup {
                Setup::Empty => {}
                Setup::Open(calls) => {
                    for c in *calls {
                        let (reg, rx) = registry.register("s", c);
                        keep.push(reg);
                        receivers.push(rx);
                    }
                }
                Setup::EofSent => {
                    let (reg, rx) = registry.register("s", "c");
                    keep.push(reg);
                    receivers.push(rx);
                    registry.send("s", "c", StdinInput::Eof).unwrap();
                }
                Setup::Finished => drop(registry.register("s", "c")),
                Setup::Plain => keep.push(registry.register_plain("s", "c")),
                Setup::OpenInOtherSession => {
                    let (reg, rx) = registry.register("t", "c");
                    keep.push(reg);
                    receivers.push(rx);
                }
            }
            let got = prepare(&registry, "s", args.clone());
            let code = got.as_ref().err().map(|e| e.code.clone());
            assert_eq!(code, *want, "{setup:?} {args}: {:?}", got.err());
            if let Some(e) = got.err()
                && e.code != ErrorCode::INVALID_ARGUMENTS
            {
                assert_eq!(e.metadata["state"], e.code.0.as_ref(), "{setup:?} {args}");
                assert!(e.message.starts_with("bash_stdin: "), "{}", e.message);
            }
        }
    }

    /// Input is keyed as the call it feeds; what the keys do not say asks.
    #[test]
    fn input_is_keyed_by_the_running_command() {
        let table: &[(&[&str], &[&str])] = &[
            (&["tool.bash.cmd:python3 -i"], &["tool.bash.cmd:python3 -i"]),
            (
                &["tool.bash.cmd:cat", "tool.bash.cmd:sort"],
                &["tool.bash.cmd:cat", "tool.bash.cmd:sort"],
            ),
            (&[], &["tool.bash.cmd:?"]),
            (&["write:out.txt"], &["tool.bash.cmd:?"]),
            (&["write:a", "read:b"], &["tool.bash.cmd:?"]),
        ];
        for (facts, want) in table {
            let keys: Vec<String> = facts.iter().map(|s| (*s).to_owned()).collect();
            let got: Vec<String> = input_resources(&keys).iter().map(|r| r.key()).collect();
            assert_eq!(got, *want, "{facts:?}");
        }
    }

    #[test]
    fn the_call_keys_reach_the_gate() {
        let registry = StdinRegistry::new();
        let facts = tackle_process::CallFacts {
            keys: vec!["tool.bash.cmd:bash -i".to_owned()],
        };
        let (_reg, _rx) = registry.register_interactive("s", "c", facts);
        let p = prepare(
            &registry,
            "s",
            json!({"call_id": "c", "data": "rm -rf ~\n"}),
        )
        .unwrap();
        let keys: Vec<String> = p.routing.resources.iter().map(|r| r.key()).collect();
        assert_eq!(keys, ["tool.bash.cmd:bash -i"]);
    }

    /// Progress messages and output of one call.
    struct Seen {
        messages: mpsc::UnboundedSender<String>,
        output: std::sync::Mutex<String>,
    }

    impl ProgressReceiver for Seen {
        fn accept(&self, progress: ToolProgress) -> Result<(), ToolError> {
            if let Some(m) = progress.message {
                let _ = self.messages.send(m);
            }
            for chunk in progress.output {
                self.output.lock().unwrap().push_str(&chunk.text);
            }
            Ok(())
        }

        fn accept_output(&self, _: Option<&StreamName>, text: &str) -> Result<(), ToolError> {
            self.output.lock().unwrap().push_str(text);
            Ok(())
        }
    }

    fn execute_context(root: &Path, session: &str, call: &str, sink: OutputSink) -> ExecuteContext {
        ExecuteContext {
            root: Arc::from(root),
            session: SessionId(session.to_owned()),
            call_id: CallId(call.to_owned()),
            artifacts: Arc::new(NoArtifacts),
            output: sink,
            cancel: tackle_tool::CancellationToken::new(),
            read_scope: Arc::new(AdmitAll),
            calls: Arc::new(tackle_tool::NoToolCalls),
        }
    }

    /// An interactive bash call reports its id, is fed a line by id, and answers it; after
    /// it ends, input to it is refused as finished, and a plain call refuses input.
    #[tokio::test]
    async fn feeds_a_running_interactive_bash_call() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let registry = StdinRegistry::new();
        let bash = Arc::new(Bash::new(
            SearchGate::new(SearchGateMode::Allow, &[]),
            EnvPolicy::default(),
            registry.clone(),
            false,
        ));
        let (tx, mut messages) = mpsc::unbounded_channel();
        let seen = Arc::new(Seen {
            messages: tx,
            output: std::sync::Mutex::new(String::new()),
        });
        let session = SessionId("s".to_owned());
        let call = CallId("bash-1".to_owned());
        let pcx = PrepareContext {
            root: &root,
            session: &session,
            turn: &tackle_tool::protocol::TurnId("t".into()),
            agent: None,
            call_id: &call,
            artifacts: &NoArtifacts,
            read_scope: &tackle_tool::AdmitAll,
        };
        let args: BashArgs = serde_json::from_value(
            json!({"command": "read line; echo got:$line", "interactive": true}),
        )
        .unwrap();
        let plan = bash.prepare(args, &pcx).unwrap().plan;
        let cx = execute_context(&root, "s", "bash-1", OutputSink::new(seen.clone()));
        let running = tokio::spawn({
            let bash = Arc::clone(&bash);
            async move { bash.execute(plan, cx).await }
        });
        assert_eq!(messages.recv().await.unwrap(), stdin_open_message("bash-1"));

        let feeder = BashStdin::new(registry.clone());
        let plan = prepare(
            &registry,
            "s",
            json!({"call_id": "bash-1", "data": "hello\n"}),
        )
        .unwrap()
        .plan;
        let sink = OutputSink::new(seen.clone());
        let fed = feeder
            .execute(plan, execute_context(&root, "s", "feeder", sink))
            .await
            .unwrap();
        assert_eq!(fed.metadata["bytes"], 6);
        let done = running.await.unwrap().unwrap();
        assert_eq!(done.metadata["exit_code"], 0);
        assert_eq!(*seen.output.lock().unwrap(), "got:hello\n");

        let after = prepare(&registry, "s", json!({"call_id": "bash-1", "eof": true}));
        assert_eq!(after.err().unwrap().code, CALL_FINISHED);
    }
}
