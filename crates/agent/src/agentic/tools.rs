//! The four wrappers as tools: one [`Tool`] implementation, [`Agentic`], over four
//! descriptions of what differs ([`Wrapper`]: name, arguments, description, the actions their
//! calls key, label, and the work they ask of the subtask).
//!
//! A wrapper keys nothing itself beyond its own `tool.<name>`: the underlying tool's keys
//! (`read:<path>`, `fetch:<url>`) are asked about the call the subtask makes, where they belong,
//! so an `ask` rule asks once, about the real call. It declares the underlying tool's
//! permission actions, so the catalog leaves it out exactly when it would leave that tool out.
//! Read-only (nothing a subtask may call changes anything), Parallel (each call has its own
//! subtask session), and opted out of truncation: its text is the small model's answer,
//! bounded by the answer's token limit, and a line of references.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tackle_protocol::{Concurrency, ErrorCode, Label, Truncation};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::agentic::answer;
use crate::agentic::args::{
    FetchUrlQuestion, GrepQuestion, MAX_QUESTION_BYTES, ReadFileQuestion, ResearchQuestion,
};
use crate::agentic::subtasks::{Request, Subtasks, Work};

/// What differs between the four wrappers.
pub trait Wrapper: Send + Sync + 'static {
    const NAME: &'static str;
    type Args: DeserializeOwned + schemars::JsonSchema + Send + 'static;
    fn description() -> &'static str;
    fn summary() -> &'static str;
    /// The underlying tool's permission actions.
    fn permission_actions() -> &'static [&'static str];
    fn label() -> Label {
        Label::LOCAL
    }
    /// The question, and the work it asks of the subtask.
    fn work(args: Self::Args) -> (String, Work);
}

/// A wrapper as a tool.
pub struct Agentic<W> {
    subtasks: Arc<Subtasks>,
    wrapper: PhantomData<fn() -> W>,
}

impl<W> Agentic<W> {
    pub fn new(subtasks: Arc<Subtasks>) -> Self {
        Self {
            subtasks,
            wrapper: PhantomData,
        }
    }
}

/// The planned call: the question and the work.
pub struct Planned {
    question: String,
    work: Work,
}

impl<W: Wrapper> Tool for Agentic<W> {
    type Args = W::Args;
    type Plan = Planned;

    fn name(&self) -> &str {
        W::NAME
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(W::description())
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed(W::summary())
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        W::permission_actions()
    }

    fn label(&self) -> Label {
        W::label()
    }

    fn prepare(
        &self,
        args: W::Args,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<Planned>, ToolError> {
        let (question, work) = W::work(args);
        let question = question.trim().to_owned();
        if question.is_empty() {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "{}: `question` is empty; say what you want to know from the output",
                    W::NAME
                ),
            ));
        }
        if question.len() > MAX_QUESTION_BYTES {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "{}: `question` is {} bytes, over {MAX_QUESTION_BYTES}; ask one question, \
                     and point at files instead of pasting them",
                    W::NAME,
                    question.len()
                ),
            ));
        }
        Ok(Prepared::new(
            Routing::default(),
            Planned { question, work },
        ))
    }

    async fn execute(
        &self,
        plan: Planned,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let call = match &plan.work {
            Work::Digest { call, .. } => Some(call.describe()),
            Work::Research { .. } => None,
        };
        let request = Request {
            wrapper: W::NAME,
            question: plan.question,
            work: plan.work,
            caller: cx.call_id.clone(),
        };
        // On a task of its own: a wrapper dropped on its timeout leaves the subtask to end on
        // the cancellation the runtime sends right after, never cut between two records.
        let (subtasks, session, cancel) =
            (self.subtasks.clone(), cx.session.clone(), cx.cancel.clone());
        let outcome = tokio::spawn(async move { subtasks.run(&session, request, &cancel).await })
            .await
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::INTERNAL,
                    format!("{}: the subtask's task failed: {e}", W::NAME),
                )
            })?;
        // What the subtask read is behind the answer, whether or not one came.
        if let Some(label) = outcome.reads.label {
            cx.artifacts.derived_from(label, &outcome.reads.read_keys);
        }
        match (outcome.result, call) {
            (Ok(answered), Some(call)) => Ok(answer::digest(W::NAME, &call, answered)),
            (Ok(answered), None) => Ok(answer::research(W::NAME, answered, &outcome.reads.calls)),
            (Err(failure), _) => Err(answer::failure(W::NAME, failure, &outcome.reads.calls)),
        }
    }
}

/// agentic_read_file.
pub enum ReadFileWrapper {}
/// agentic_grep.
pub enum GrepWrapper {}
/// agentic_fetch_url.
pub enum FetchUrlWrapper {}
/// agentic_research.
pub enum ResearchWrapper {}

pub type AgenticReadFile = Agentic<ReadFileWrapper>;
pub type AgenticGrep = Agentic<GrepWrapper>;
pub type AgenticFetchUrl = Agentic<FetchUrlWrapper>;
pub type AgenticResearch = Agentic<ResearchWrapper>;

impl Wrapper for ReadFileWrapper {
    const NAME: &'static str = "agentic_read_file";
    type Args = ReadFileQuestion;

    fn description() -> &'static str {
        "Ask a question about a file and get the answer instead of the file: another, smaller \
         model reads the file (all of it, page after page, unless you give `limit`) and answers \
         `question` from it. Use this INSTEAD OF read_file when the file might be large and you \
         need facts from it (where something is defined, what a function does, which lines \
         mention a name), not its exact text. Before edit_file, read the lines you change with \
         read_file. The answer ends with the path and lines it was read from, which read_file \
         pages when you need the text itself."
    }

    fn summary() -> &'static str {
        "Ask a smaller model a question about a file; get its answer, not the file."
    }

    fn permission_actions() -> &'static [&'static str] {
        &["read"]
    }

    fn work(args: ReadFileQuestion) -> (String, Work) {
        let (call, paging) = args.underlying();
        (args.question, Work::Digest { call, paging })
    }
}

impl Wrapper for GrepWrapper {
    const NAME: &'static str = "agentic_grep";
    type Args = GrepQuestion;

    fn description() -> &'static str {
        "Search file contents as grep does and get an answer from the matches instead of the \
         matches: another, smaller model reads every matching line and answers `question`. Use \
         this INSTEAD OF grep when the search may match hundreds of lines and you need a \
         conclusion from them (which files use a name, how callers pass an argument, how many \
         places do something). The answer ends with the artifact:// URI of the full match \
         list, which read_file pages when you need the matches themselves."
    }

    fn summary() -> &'static str {
        "Search like grep and get a smaller model's answer from the matches, not the matches."
    }

    fn permission_actions() -> &'static [&'static str] {
        &["read"]
    }

    fn work(args: GrepQuestion) -> (String, Work) {
        let call = args.underlying();
        (
            args.question,
            Work::Digest {
                call,
                paging: false,
            },
        )
    }
}

impl Wrapper for FetchUrlWrapper {
    const NAME: &'static str = "agentic_fetch_url";
    type Args = FetchUrlQuestion;

    fn description() -> &'static str {
        "Fetch a URL as fetch_url does and get an answer from the page instead of the page: \
         another, smaller model reads the whole body and answers `question`. Use this INSTEAD \
         OF fetch_url for long pages (documentation, references, changelogs) when you need \
         facts from them, not their text. The same URL scope applies. The answer ends with \
         the artifact:// URI of the whole body, which read_file pages."
    }

    fn summary() -> &'static str {
        "Fetch a URL and get a smaller model's answer from the page, not the page."
    }

    fn permission_actions() -> &'static [&'static str] {
        &["fetch"]
    }

    fn label() -> Label {
        Label::REMOTE
    }

    fn work(args: FetchUrlQuestion) -> (String, Work) {
        let call = args.underlying();
        (
            args.question,
            Work::Digest {
                call,
                paging: false,
            },
        )
    }
}

impl Wrapper for ResearchWrapper {
    const NAME: &'static str = "agentic_research";
    type Args = ResearchQuestion;

    fn description() -> &'static str {
        "Hand a research question about the project to another, smaller model, which \
         investigates it with read-only tools for a few turns and answers. Use this for a \
         question that would take you several searches and reads (where is this handled, what \
         calls that, how does a value get here) when you need the conclusion, not the files. \
         Give the whole question: the researcher sees nothing of your conversation. The answer \
         ends with the calls it made and the artifact:// URIs of their raw output."
    }

    fn summary() -> &'static str {
        "Hand a research question to a smaller model that reads the project and answers."
    }

    fn permission_actions() -> &'static [&'static str] {
        &["read"]
    }

    fn work(args: ResearchQuestion) -> (String, Work) {
        let path = args.path.filter(|p| !p.trim().is_empty());
        (args.question, Work::Research { path })
    }
}
