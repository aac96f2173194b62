//! One harness for the sealed tools' integration tests: a temporary project, a real session
//! whose log records the reference table, the sealed gate over a user policy in ask mode, and
//! a scripted person, processor and question-answerer that record what they were given.

#![allow(dead_code)] // each test file uses its own part of the harness
#![allow(clippy::unwrap_used, clippy::expect_used)] // test fixtures: a failure should panic

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tackle_gate::{Mode, PathScope, Policy, Rule, UrlScope};
use tackle_protocol::{CallId, ToolCall, ToolResult};
use tackle_runtime::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Catalog, LogKey,
    PolicyGate, Runtime, RuntimeConfig, Session, SessionOptions,
};
use tackle_sealed::tools::{SealedSkill, Shared};
use tackle_sealed::{
    Answer, DOCUMENT_MARKER, Processor, ProcessorInput, Question, Questions, SealedGate,
    SealedState, SessionRecorder, TrustMap, Vouches,
};

/// The key the harness's session logs are sealed with.
pub const LOG_KEY: [u8; 32] = [7; 32];

/// One request the person was shown.
#[derive(Clone, Debug)]
pub struct Asked {
    pub tool: String,
    pub keys: Vec<String>,
    pub message: String,
    pub effect: Option<String>,
    pub arguments: Value,
}

type Decide = Box<dyn Fn(&Asked) -> bool + Send + Sync>;

/// The person at the approval prompt: records every request and answers by a predicate.
pub struct Person {
    asked: Mutex<Vec<Asked>>,
    decide: Mutex<Decide>,
}

impl Person {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            asked: Mutex::new(Vec::new()),
            decide: Mutex::new(Box::new(|_| true)),
        })
    }

    /// From now on, approve exactly what `decide` accepts.
    pub fn answers(&self, decide: impl Fn(&Asked) -> bool + Send + Sync + 'static) {
        *self.decide.lock().unwrap() = Box::new(decide);
    }

    pub fn approves_all(&self) {
        self.answers(|_| true);
    }

    pub fn denies_all(&self) {
        self.answers(|_| false);
    }

    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }

    /// Forgets what was asked so far.
    pub fn take(&self) -> Vec<Asked> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

impl Approver for Person {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let asked = Asked {
            tool: request.tool.to_owned(),
            keys: request.keys.to_vec(),
            message: request.message.to_owned(),
            effect: request.effect.map(str::to_owned),
            arguments: request.arguments.clone(),
        };
        let yes = (self.decide.lock().unwrap())(&asked);
        self.asked.lock().unwrap().push(asked);
        let answer = if yes {
            Approval::Once
        } else {
            Approval::Deny { message: None }
        };
        Box::pin(std::future::ready(answer))
    }
}

type Reply = Box<dyn Fn(&str, &[ProcessorInput]) -> String + Send + Sync>;

/// A processor model that answers from a script and records every call it was given.
pub struct ScriptedProcessor {
    pub calls: Mutex<Vec<(String, Vec<ProcessorInput>)>>,
    reply: Mutex<Reply>,
}

impl ScriptedProcessor {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            calls: Mutex::new(Vec::new()),
            reply: Mutex::new(Box::new(|_, inputs| {
                let first = inputs.first().map(|i| i.text.as_str()).unwrap_or("");
                format!("Done.\n{DOCUMENT_MARKER}\n{first}processed\n")
            })),
        })
    }

    pub fn replies(
        &self,
        reply: impl Fn(&str, &[ProcessorInput]) -> String + Send + Sync + 'static,
    ) {
        *self.reply.lock().unwrap() = Box::new(reply);
    }
}

impl Processor for ScriptedProcessor {
    fn process<'a>(
        &'a self,
        instruction: &'a str,
        inputs: &'a [ProcessorInput],
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>> {
        self.calls
            .lock()
            .unwrap()
            .push((instruction.to_owned(), inputs.to_vec()));
        let reply = (self.reply.lock().unwrap())(instruction, inputs);
        Box::pin(std::future::ready(Ok(reply)))
    }
}

/// A person answering ask_user's questions from a queue (skipping once it is empty), recording
/// every question put to them.
#[derive(Default)]
pub struct ScriptedQuestions {
    pub asked: Mutex<Vec<Question>>,
    pub answers: Mutex<Vec<Answer>>,
}

impl Questions for ScriptedQuestions {
    fn ask<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        self.asked.lock().unwrap().push(question.clone());
        let mut answers = self.answers.lock().unwrap();
        let answer = if answers.is_empty() {
            Answer::Skipped
        } else {
            answers.remove(0)
        };
        Box::pin(std::future::ready(answer))
    }
}

/// What a test vouches for and who can be reached.
pub struct Config {
    pub directories: Vec<String>,
    pub commands: Vec<Vec<String>>,
    pub rules: Vec<Rule>,
    /// Whether anyone answers ask_user (false: a one-shot run).
    pub questions: bool,
    /// Whether the person is offered to vouch for a quarantined file at read time.
    pub voucher: bool,
    pub skills: Vec<SealedSkill>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            directories: vec!["src".to_owned(), "docs".to_owned()],
            commands: Vec::new(),
            rules: Vec::new(),
            questions: true,
            voucher: false,
            skills: Vec::new(),
        }
    }
}

pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// A project, its session and the sealed surface over it.
pub struct Lab {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub session: Arc<Session>,
    pub state: Arc<SealedState>,
    pub runtime: Runtime,
    pub person: Arc<Person>,
    pub processor: Arc<ScriptedProcessor>,
    pub questions: Arc<ScriptedQuestions>,
    config: Config,
    next: AtomicUsize,
}

impl Lab {
    /// A project holding `files` (path, contents; a path ending in `*` is made executable).
    pub fn new(config: Config, files: &[(&str, &str)]) -> Lab {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (path, contents) in files {
            write_file(&root, path, contents);
        }
        let session = Arc::new(
            Session::open_sealed(
                &root,
                SessionOptions::default(),
                &LogKey::from_bytes(&LOG_KEY),
            )
            .unwrap(),
        );
        let state = SealedState::new(Arc::new(SessionRecorder(session.clone())));
        Self::over(dir, root, session, state, config)
    }

    /// The same project and log, as a new process would resume it: the state is restored from
    /// the session's log.
    pub fn resume(self) -> Lab {
        let Lab {
            dir,
            root,
            session,
            config,
            ..
        } = self;
        let id = session.id().0.clone();
        drop(session);
        let resumed = Session::resume(
            &root,
            &id,
            &LogKey::from_bytes(&LOG_KEY),
            tackle_runtime::ForeignLogs::Refuse,
        )
        .unwrap();
        let session = Arc::new(resumed.session);
        let state = SealedState::restore(
            &session.event_log_path(),
            Arc::new(SessionRecorder(session.clone())),
        );
        Self::over(dir, root, session, state, config)
    }

    fn over(
        dir: tempfile::TempDir,
        root: PathBuf,
        session: Arc<Session>,
        state: Arc<SealedState>,
        config: Config,
    ) -> Lab {
        let vouches = Vouches {
            directories: config.directories.clone(),
            commands: config.commands.clone(),
            tainted: Vec::new(),
        };
        let person = Person::new();
        let processor = ScriptedProcessor::new();
        let questions = Arc::new(ScriptedQuestions::default());
        let shared = Shared {
            root: tackle_fs::Root::open_shared(&root).unwrap(),
            state: state.clone(),
            trust: TrustMap::new(vouches.clone(), state.clone()),
            processor: Some(processor.clone() as Arc<dyn Processor>),
            questions: config
                .questions
                .then(|| questions.clone() as Arc<dyn Questions>),
            voucher: config.voucher.then(|| person.clone() as Arc<dyn Approver>),
            skills: config.skills.clone(),
            env: tackle_process::EnvPolicy::default(),
            path_var: std::env::var_os("PATH"),
            run_timeout: Duration::from_secs(30),
        };
        let policy = Policy::new(
            config.rules.clone(),
            Mode::Ask,
            PathScope::default(),
            UrlScope::default(),
        )
        .unwrap();
        let gate = SealedGate::new(Arc::new(PolicyGate::new(policy)), vouches);
        let runtime = Runtime::new(
            Catalog::new(tackle_sealed::tools(shared)).unwrap(),
            Arc::new(gate),
            RuntimeConfig::default(),
        )
        .with_approver(person.clone());
        Lab {
            dir,
            root,
            session,
            state,
            runtime,
            person,
            processor,
            questions,
            config,
            next: AtomicUsize::new(0),
        }
    }

    /// One call, in a batch of its own.
    pub async fn call(&self, tool: &str, arguments: Value) -> ToolResult {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let call = ToolCall {
            id: CallId(format!("c{n}")),
            name: tool.to_owned(),
            arguments,
        };
        let batch = self
            .runtime
            .run_batch(&self.session, vec![call], CancellationToken::new());
        let mut results = tokio::time::timeout(Duration::from_secs(60), batch)
            .await
            .expect("the call finished")
            .unwrap();
        results.pop().unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A file's contents now, if it exists.
    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    pub fn write(&self, rel: &str, contents: &str) {
        write_file(&self.root, rel, contents);
    }
}

fn write_file(root: &Path, rel: &str, contents: &str) {
    let (rel, executable) = match rel.strip_suffix('*') {
        Some(rel) => (rel, true),
        None => (rel, false),
    };
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, contents).unwrap();
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Every `ref:N` a text hands out, in order.
pub fn refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("ref:") {
        let digits: String = rest[at + 4..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if !digits.is_empty() {
            let r = format!("ref:{digits}");
            if !out.contains(&r) {
                out.push(r);
            }
        }
        rest = &rest[at + 4..];
    }
    out
}

/// The first reference a result hands out.
pub fn first_ref(result: &ToolResult) -> String {
    refs(&result.text())
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no reference in {:?}", result.text()))
}

/// What the planner receives of a result: its text and its error code.
pub fn planner_sees(result: &ToolResult) -> String {
    format!(
        "{} {}",
        result.text(),
        result.code.as_ref().map(|c| c.as_str()).unwrap_or("")
    )
}
