//! ask_user: up to four questions, put one at a time. Refused whole above four; closed once
//! the planner's context has met untrusted content (a reference alone is not); declined where
//! nobody can be asked. An answer is remembered for the session, question by question.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::errors;
use crate::questions::{Answer, Question};
use crate::tools::Shared;
use crate::tools::read_file::record_failed;

/// The most questions one call puts.
pub const MAX_QUESTIONS: usize = 4;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionArgs {
    /// A short label for the question (a few words).
    pub header: String,
    /// The question itself.
    pub question: String,
    /// Choices the user may pick from; they may also answer in their own words or skip.
    #[serde(default)]
    pub options: Vec<String>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multiple: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// At most four questions.
    pub questions: Vec<QuestionArgs>,
}

pub struct AskUser(pub Arc<Shared>);

impl Tool for AskUser {
    type Args = Args;
    type Plan = Vec<Question>;

    fn name(&self) -> &str {
        "ask_user"
    }

    fn description(&self) -> Cow<'static, str> {
        "Puts up to four questions to the user, one at a time, and waits: for what you cannot find \
         out yourself (which of two approaches, whether something is in scope, which of two files \
         they meant), never for a fact about the machine. A skipped question is an answer: do not \
         ask it again."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn prepare(
        &self,
        args: Args,
        _cx: &PrepareContext<'_>,
    ) -> Result<Prepared<Vec<Question>>, ToolError> {
        if args.questions.is_empty() {
            return Err(errors::invalid("questions is empty; ask at least one"));
        }
        if args.questions.len() > MAX_QUESTIONS {
            return Err(errors::invalid(format!(
                "{} questions is more than {MAX_QUESTIONS}: none was asked; ask the {MAX_QUESTIONS} that matter most",
                args.questions.len()
            )));
        }
        let mut questions = Vec::new();
        for (i, q) in args.questions.into_iter().enumerate() {
            if q.question.trim().is_empty() {
                return Err(errors::invalid(format!("questions[{i}].question is empty")));
            }
            questions.push(Question {
                header: q.header,
                question: q.question,
                options: q.options,
                multiple: q.multiple,
            });
        }
        Ok(Prepared::new(Routing::default(), questions))
    }

    async fn execute(
        &self,
        questions: Vec<Question>,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        if shared.state.met_untrusted() {
            return Err(ToolError::new(
                errors::DECLINED,
                "ask_user is closed: you have been shown untrusted output, so a question could have been shaped by content nobody vouched for; decide with what you have, or say what you need in your final answer",
            ));
        }
        let Some(person) = &shared.questions else {
            return Err(ToolError::new(
                errors::DECLINED,
                "every question was declined: nobody can be asked in this run; decide yourself, or say what you need in your final answer",
            ));
        };
        let mut text = String::new();
        for (i, question) in questions.iter().enumerate() {
            let answer = match shared.state.answer(&question.question) {
                Some(remembered) => remembered,
                None => {
                    let answer = match person.ask(question).await {
                        Answer::Chose(options) => Some(options.join(", ")),
                        Answer::Wrote(words) => Some(words),
                        Answer::Skipped => None,
                        Answer::Unavailable(why) => {
                            return Err(ToolError::new(
                                errors::DECLINED,
                                format!(
                                    "the question was declined: {why}; decide yourself, or say what you need in your final answer"
                                ),
                            ));
                        }
                    };
                    shared
                        .state
                        .remember_answer(&cx.call_id, &question.question, answer.clone())
                        .await
                        .map_err(record_failed)?;
                    answer
                }
            };
            let shown =
                answer.unwrap_or_else(|| "(skipped: work with that; do not ask again)".to_owned());
            text.push_str(&format!("{}. {}: {shown}\n", i + 1, question.header));
        }
        Ok(ToolCompletion::single(text))
    }
}
