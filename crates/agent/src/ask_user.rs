//! `ask_user` (seed 003, "Optional lifecycle tools"): the model asks the operator a question
//! and gets a typed answer. Registered only where someone can answer: the front end supplies
//! a [`Prompter`] (`tackle run --ask-user=stdin|auto`, the chat's input line, an embedder's
//! own). Where no one can (no terminal under `auto`, standard input closed, `--headless`) the
//! prompter refuses at once and the model is told so: a question never hangs a headless run.
//!
//! The answer is the call's result, so it is recorded in the session log with the batch and a
//! resumed session shows the model the same answer; it is never asked twice.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_protocol::SessionId;
use tackle_tool::protocol::{ErrorCode, Truncation};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

/// The tool's name.
pub const NAME: &str = "ask_user";

/// The longest question, and the longest default, in bytes.
pub const MAX_QUESTION_BYTES: usize = 4096;

/// A question for the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    pub session: SessionId,
    pub text: String,
    /// What an empty answer stands for.
    pub default: Option<String>,
}

/// What the operator said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The typed answer (an empty line with a default is the default, said so).
    Typed { text: String, defaulted: bool },
    /// No one can answer here, and why (the model is told, and goes on without it).
    Unavailable(String),
}

pub type AnswerFuture<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// Who answers the model's questions. An implementation must not block forever where no one
/// is there: it refuses with [`Answer::Unavailable`] instead. Dropping the future (the call
/// was cancelled) must stop the asking.
pub trait Prompter: Send + Sync {
    fn ask(&self, question: Question) -> AnswerFuture<'_>;
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserArgs {
    /// The question, complete in itself: the operator sees only it.
    pub question: String,
    /// The answer an empty reply stands for, e.g. "no".
    #[serde(default)]
    pub default: Option<String>,
}

pub struct AskUser {
    prompter: Arc<dyn Prompter>,
}

impl AskUser {
    pub fn new(prompter: Arc<dyn Prompter>) -> Self {
        Self { prompter }
    }
}

fn too_long(what: &str, len: usize) -> ToolError {
    ToolError::new(
        ErrorCode::INVALID_ARGUMENTS,
        format!("ask_user: `{what}` is {len} bytes; keep it under {MAX_QUESTION_BYTES}"),
    )
}

impl Tool for AskUser {
    type Args = AskUserArgs;
    type Plan = AskUserArgs;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Ask the user a question and wait for the typed answer. Use it only when you cannot \
             go on without a decision or a fact only the user has (which of two designs, whether \
             to delete something, a value that is nowhere in the repository); do not ask what \
             you can find out with the other tools. Give `default` when one answer is the safe \
             choice. If no one can answer here, the result says so: decide the safe way or stop.",
        )
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn prepare(
        &self,
        args: AskUserArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<AskUserArgs>, ToolError> {
        if args.question.trim().is_empty() {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "ask_user: `question` is empty; write the question the user should answer",
            ));
        }
        if args.question.len() > MAX_QUESTION_BYTES {
            return Err(too_long("question", args.question.len()));
        }
        if let Some(d) = &args.default
            && d.len() > MAX_QUESTION_BYTES
        {
            return Err(too_long("default", d.len()));
        }
        Ok(Prepared::new(
            Routing {
                resources: Vec::new(),
            },
            args,
        ))
    }

    async fn execute(
        &self,
        args: AskUserArgs,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let question = Question {
            session: cx.session.clone(),
            text: args.question.trim().to_owned(),
            default: args.default.filter(|d| !d.trim().is_empty()),
        };
        let answer = tokio::select! {
            answer = self.prompter.ask(question) => answer,
            () = cx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::CANCELLED, "ask_user: cancelled before an answer"));
            }
        };
        Ok(match answer {
            Answer::Typed { text, defaulted } => {
                let shown = if defaulted {
                    format!("The user gave no answer; the default applies: {text}")
                } else if text.is_empty() {
                    "The user answered with an empty line.".to_owned()
                } else {
                    format!("The user answered: {text}")
                };
                ToolCompletion::single(shown).with_metadata(
                    json!({"answered": true, "defaulted": defaulted, "answer": text}),
                )
            }
            Answer::Unavailable(why) => ToolCompletion::single(format!(
                "No one can answer here ({why}). Do not ask again in this run: decide the safe \
                 way, or stop and say what you need."
            ))
            .with_metadata(json!({"answered": false, "reason": why})),
        })
    }
}
