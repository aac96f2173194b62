//! Agent type files as data: the corpus of single files (`corpus.rs`), the parser's bounds at
//! every depth (`bounds.rs`), and the scopes and folder trust through [`super::load`] on real
//! directories (`scopes.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bounds;
mod corpus;
mod scopes;

use tackle_agent::delegate::agent_type::{AgentType, ModelChoice};

/// A type on one line: `name | tools | disallowed | model | maxTurns | allow; ask; deny | prompt`.
pub(super) fn summary(t: &AgentType) -> String {
    let tools = t.tools.as_ref().map_or("all".to_owned(), |t| t.join(","));
    let model = match &t.model {
        ModelChoice::Inherit => "inherit".to_owned(),
        ModelChoice::Named(m) => m.clone(),
    };
    let turns = t.max_turns.map_or("-".to_owned(), |n| n.to_string());
    let p = &t.permissions;
    format!(
        "{} | {tools} | {} | {model} | {turns} | {}; {}; {} | {}",
        t.name,
        t.disallowed_tools.join(","),
        p.allow.join(","),
        p.ask.join(","),
        p.deny.join(","),
        t.prompt.replace('\n', "\\n"),
    )
}
pub(super) fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * n + middle.len());
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}
