//! `bash_stdin` under the real policy gate: input to a running interactive bash call is
//! decided on that call's `tool.bash.cmd:` keys, through the same approval path as the call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use tackle_gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
use tackle_process::{StdinInput, StdinRegistry};
use tackle_protocol::{CallId, CallStatus, ToolCall, ToolResult};
use tackle_runtime::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Catalog, PolicyGate,
    ProgressObserver, Runtime, RuntimeConfig, Session,
};
use tokio::sync::mpsc;

/// Answers every ask with one answer and records (tool, keys) of each.
struct Recording {
    answer: Approval,
    asked: Mutex<Vec<(String, Vec<String>)>>,
}

impl Approver for Recording {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        self.asked
            .lock()
            .unwrap()
            .push((request.tool.to_owned(), request.keys.to_vec()));
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

/// Forwards progress messages.
struct Progress(mpsc::UnboundedSender<String>);

impl ProgressObserver for Progress {
    fn on_progress(&self, _: &CallId, message: Option<&str>, _: Option<&str>) {
        if let Some(m) = message {
            let _ = self.0.send(m.to_owned());
        }
    }
}

fn rule(effect: Effect, pattern: &str) -> Rule {
    Rule::new(
        effect,
        Pattern::parse(pattern).unwrap(),
        RuleSource::BuiltIn,
    )
}

struct Row {
    rules: Vec<Rule>,
    answer: Approval,
    /// The approver's questions in order: the tool, and the key the question names.
    asked: &'static [(&'static str, &'static str)],
    /// How the bash_stdin call ended.
    fed: CallStatus,
}

/// Runs `cat` interactively, feeds it `hi\n` and EOF with bash_stdin, and returns both results
/// and what the approver was asked.
async fn run(row: &Row) -> (ToolResult, ToolResult, Vec<(String, Vec<String>)>) {
    let dir = tempfile::tempdir().unwrap();
    let registry = StdinRegistry::new();
    let config = tackle_tools::BuiltinConfig {
        stdin: registry.clone(),
        ..tackle_tools::BuiltinConfig::default()
    };
    let policy = Policy::new(
        row.rules.clone(),
        Mode::Ask,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let approver = Arc::new(Recording {
        answer: row.answer.clone(),
        asked: Mutex::new(Vec::new()),
    });
    let (tx, mut progress) = mpsc::unbounded_channel();
    let runtime = Runtime::new(
        Catalog::new(tackle_tools::builtin_tools(&config)).unwrap(),
        Arc::new(PolicyGate::new(policy)),
        RuntimeConfig::default(),
    )
    .with_approver(approver.clone())
    .with_observer(Arc::new(Progress(tx)));
    let session = Session::open(dir.path()).unwrap();
    let bash = ToolCall {
        id: CallId("bash-1".to_owned()),
        name: "bash".to_owned(),
        arguments: json!({"command": "cat", "interactive": true}),
    };
    let feed = ToolCall {
        id: CallId("feed-1".to_owned()),
        name: "bash_stdin".to_owned(),
        arguments: json!({"call_id": "bash-1", "data": "hi\n", "eof": true}),
    };
    let running = runtime.run_batch(&session, vec![bash], CancellationToken::new());
    let feeding = async {
        loop {
            if progress.recv().await.unwrap().starts_with("stdin open:") {
                break;
            }
        }
        let fed = runtime
            .run_batch(&session, vec![feed], CancellationToken::new())
            .await
            .unwrap()
            .remove(0);
        // Input the gate refused never reached cat; end it so the call finishes.
        let _ = registry.send(&session.id().0, "bash-1", StdinInput::Eof);
        fed
    };
    let (ran, fed) = tokio::join!(running, feeding);
    let asked = approver.asked.lock().unwrap().clone();
    (ran.unwrap().remove(0), fed, asked)
}

#[tokio::test]
async fn input_is_gated_as_the_call_it_feeds() {
    let rows = [
        // No rule: cat asks, and so does input to it (approved once each time).
        Row {
            rules: vec![],
            answer: Approval::Once,
            asked: &[
                ("bash", "tool.bash.cmd:cat"),
                ("bash_stdin", "tool.bash.cmd:cat"),
            ],
            fed: CallStatus::Ok,
        },
        // Approved for the session: the grant covers input to the same command.
        Row {
            rules: vec![],
            answer: Approval::Session,
            asked: &[("bash", "tool.bash.cmd:cat")],
            fed: CallStatus::Ok,
        },
        // A rule that allows the command allows input to it.
        Row {
            rules: vec![rule(Effect::Allow, "tool.bash.cmd:cat")],
            answer: Approval::Deny { message: None },
            asked: &[],
            fed: CallStatus::Ok,
        },
        // A rule on the tool's own key governs it.
        Row {
            rules: vec![
                rule(Effect::Allow, "tool.bash.cmd:cat"),
                rule(Effect::Deny, "tool.bash_stdin"),
            ],
            answer: Approval::Once,
            asked: &[],
            fed: CallStatus::Denied,
        },
        // A rule that asks on the tool's own key asks even where the command is allowed, and a
        // refusal keeps the input from the call.
        Row {
            rules: vec![
                rule(Effect::Allow, "tool.bash.cmd:cat"),
                rule(Effect::Ask, "tool.bash_stdin"),
            ],
            answer: Approval::Deny { message: None },
            asked: &[("bash_stdin", "tool.bash_stdin")],
            fed: CallStatus::Denied,
        },
    ];
    for (i, row) in rows.iter().enumerate() {
        let (ran, fed, asked) = run(row).await;
        let tools: Vec<&str> = asked.iter().map(|(t, _)| t.as_str()).collect();
        let want: Vec<&str> = row.asked.iter().map(|(t, _)| *t).collect();
        assert_eq!(tools, want, "row {i}: {asked:?}");
        for ((tool, keys), (_, key)) in asked.iter().zip(row.asked) {
            assert!(
                keys.iter().any(|k| k == key),
                "row {i}: {tool} asked about {keys:?}, not {key}"
            );
        }
        assert_eq!(fed.status, row.fed, "row {i}: {}", fed.text());
        assert_eq!(ran.status, CallStatus::Ok, "row {i}: {}", ran.text());
        let delivered = ran.text().contains("hi");
        assert_eq!(
            delivered,
            row.fed == CallStatus::Ok,
            "row {i}: {}",
            ran.text()
        );
    }
}
