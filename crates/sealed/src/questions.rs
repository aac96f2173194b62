//! ask_user's seam to a person: one question at a time.

use futures::future::BoxFuture;

/// One question as the planner put it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    pub header: String,
    pub question: String,
    pub options: Vec<String>,
    pub multiple: bool,
}

/// A person's answer to one question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// One or more of the options (several only when the question allows it).
    Chose(Vec<String>),
    /// Their own words.
    Wrote(String),
    /// They chose not to answer: an answer to work with, not a reason to ask again.
    Skipped,
    /// Nobody could be asked after all (the terminal went away): the question is declined.
    Unavailable(String),
}

/// A front end that can put a question to a person and wait. `None` where nobody can be asked
/// (a one-shot run): every question is then declined, never answered on the person's behalf.
pub trait Questions: Send + Sync {
    fn ask<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer>;
}
