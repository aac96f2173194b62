//! The small model's answer from a bulk: one exchange when the bulk fits its window, else
//! notes from each part ([`crate::agentic::parts`]) and one exchange that answers from them.
//!
//! A part's size is what the small model's window holds after the answer's tokens and the
//! prompt's frame, at 4 bytes a token and only [`FILL`] of it: the estimate is a guess (code
//! runs nearer 3 bytes a token), and a request the server refuses as too long costs a round
//! trip. One refused all the same is cut in two and asked again, [`MAX_HALVINGS`] times at
//! most. At most [`MAX_PARTS`] parts are read, [`PARALLEL_PARTS`] at once on a hosted API and
//! one at a time on a server of the user's own ([`SmallModel::parallel`]); what lies beyond is
//! reported unread, never implied read.
//!
//! Each part's exchange is recorded in a session of its own under the subtask's (its
//! conversation is that one request), so parts run side by side and every log says exactly
//! what its model was sent; the answer's exchange is the subtask session's own.

use futures::StreamExt;
use futures::future::BoxFuture;
use tackle_protocol::Usage;
use tackle_runtime::{ChildOptions, Session, ToolFilter};
use tokio_util::sync::CancellationToken;

use crate::agentic::exchange::{ExchangeError, Exchanged, SmallModel, exchange};
use crate::agentic::parts::{self, Part};
use crate::agentic::prompt;
use crate::conversation::add_usage;

/// The most parts of one output the small model reads.
pub const MAX_PARTS: usize = 16;
/// Parts read at once, at most (on a hosted API).
pub const PARALLEL_PARTS: usize = 4;
/// The share of the estimated room a part fills.
pub const FILL: f64 = 0.6;
/// How often a part refused as too long is cut in two before the digest gives up.
pub const MAX_HALVINGS: u32 = 3;
/// The longest answer, in tokens (less on a small window: at most a quarter of it).
pub const ANSWER_TOKENS: u32 = 1024;
/// The longest notes of one part, in tokens.
pub const NOTE_TOKENS: u32 = 512;

/// What the small model answered, and what of the bulk it read.
#[derive(Clone, Debug, PartialEq)]
pub struct Digested {
    pub answer: String,
    /// How many parts it read the bulk in (1: at once).
    pub parts: usize,
    /// Bytes of the bulk it read, from the start.
    pub covered_bytes: usize,
    /// The last line of the bulk it read.
    pub covered_lines: u64,
    pub usage: Usage,
}

/// Why no answer came, and what the attempt cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Undigested {
    pub why: String,
    pub cancelled: bool,
    pub usage: Usage,
}

/// What every exchange of one digest shares.
pub struct Reader<'a> {
    pub subtask: &'a Session,
    pub small: &'a SmallModel,
    /// The wrapper, for the part sessions' agent name.
    pub wrapper: &'a str,
    pub question: &'a str,
    /// The underlying call as the prompts name it.
    pub call: &'a str,
    pub cancel: &'a CancellationToken,
}

/// The bytes of output one exchange carries for `small`, asked `question` about `call`.
pub fn part_budget(small: &SmallModel, question: &str, call: &str) -> usize {
    let window = small.model.entry.context_window;
    let frame = (prompt::DIGEST_SYSTEM.len() + 2 * question.len() + call.len() + 800) as u64;
    let room = window.saturating_sub(u64::from(answer_tokens(small)) + frame.div_ceil(4));
    (room as f64 * 4.0 * FILL) as usize
}

fn answer_tokens(small: &SmallModel) -> u32 {
    let quarter = u32::try_from(small.model.entry.context_window / 4).unwrap_or(u32::MAX);
    small
        .model
        .max_tokens
        .min(ANSWER_TOKENS)
        .min(quarter)
        .max(1)
}

impl Reader<'_> {
    /// The answer to the question from `bulk`.
    pub async fn digest(&self, bulk: &str) -> Result<Digested, Undigested> {
        let mut usage = Usage::default();
        let budget = part_budget(self.small, self.question, self.call);
        let plan = parts::plan(bulk, budget, MAX_PARTS);
        if plan.parts.len() <= 1 && plan.complete(bulk) {
            let asked = prompt::whole(self.question, self.call, bulk);
            match self
                .ask(self.subtask, asked, answer_tokens(self.small))
                .await
            {
                Ok(answered) => {
                    return Ok(Digested {
                        answer: answered.text,
                        parts: 1,
                        covered_bytes: bulk.len(),
                        covered_lines: line_count(bulk),
                        usage: answered.usage,
                    });
                }
                // The estimate was short: read it in parts after all.
                Err(ExchangeError::TooLong) => {}
                Err(e) => return Err(self.undigested(e, Usage::default())),
            }
        }
        let plan = if plan.parts.len() <= 1 {
            parts::plan(bulk, budget / 2, MAX_PARTS)
        } else {
            plan
        };
        let count = plan.parts.len();
        // Built before they are streamed: a closure over borrowed parts would not be `Send`
        // for every lifetime, which the spawned subtask needs.
        let asked: Vec<_> = plan
            .parts
            .clone()
            .into_iter()
            .map(|p| self.notes(bulk, p, count, 0))
            .collect();
        let noted: Vec<Result<(Vec<String>, Usage), Undigested>> = futures::stream::iter(asked)
            .buffered(self.small.parallel.clamp(1, PARALLEL_PARTS))
            .collect()
            .await;
        let mut notes = Vec::new();
        let mut failure = None;
        for (part, noted) in plan.parts.iter().zip(noted) {
            match noted {
                Ok((texts, spent)) => {
                    add_usage(&mut usage, &spent);
                    let relevant: Vec<String> = texts
                        .into_iter()
                        .filter(|t| !t.trim().starts_with(prompt::NOTHING))
                        .collect();
                    if !relevant.is_empty() {
                        notes.push((part.index, relevant.join("\n")));
                    }
                }
                Err(e) => {
                    add_usage(&mut usage, &e.usage);
                    failure.get_or_insert(e);
                }
            }
        }
        if let Some(mut failure) = failure {
            failure.usage = usage;
            return Err(failure);
        }
        let covered = &bulk[..plan.covered_bytes];
        let mut digested = Digested {
            answer: String::new(),
            parts: count,
            covered_bytes: plan.covered_bytes,
            covered_lines: line_count(covered),
            usage,
        };
        if notes.is_empty() {
            digested.answer = format!(
                "Nothing in the output bears on the question (read in {count} parts, none \
                 relevant)."
            );
            return Ok(digested);
        }
        // Notes that together pass a part's room are each cut to their share of it.
        let total: usize = notes.iter().map(|(_, n)| n.len()).sum();
        if total > budget {
            let share = budget / notes.len();
            for (_, note) in &mut notes {
                cut(note, share);
            }
        }
        let asked = prompt::reduce(self.question, self.call, count, &notes);
        match self
            .ask(self.subtask, asked, answer_tokens(self.small))
            .await
        {
            Ok(answered) => {
                add_usage(&mut digested.usage, &answered.usage);
                digested.answer = answered.text;
                Ok(digested)
            }
            Err(e) => Err(self.undigested(e, digested.usage)),
        }
    }

    /// The notes of one part, in its own session; a part the window refused is cut in two.
    fn notes<'b>(
        &'b self,
        bulk: &'b str,
        part: Part,
        count: usize,
        halvings: u32,
    ) -> BoxFuture<'b, Result<(Vec<String>, Usage), Undigested>> {
        Box::pin(async move {
            let session = self
                .subtask
                .open_subagent(ChildOptions {
                    agent: Some(format!("{} part", self.wrapper)),
                    tools: ToolFilter::only(Vec::<String>::new()),
                    handle: None,
                    narrowing: Vec::new(),
                })
                .map_err(|e| Undigested {
                    why: format!("opening a part's session: {e}"),
                    cancelled: false,
                    usage: Usage::default(),
                })?;
            let asked = prompt::part(self.question, self.call, &part, count, part.text(bulk));
            match self.ask(&session, asked, NOTE_TOKENS).await {
                Ok(answered) => Ok((vec![answered.text], answered.usage)),
                Err(ExchangeError::TooLong) if halvings < MAX_HALVINGS => {
                    let mut texts = Vec::new();
                    let mut usage = Usage::default();
                    for piece in parts::halve(bulk, &part) {
                        let (more, spent) = self.notes(bulk, piece, count, halvings + 1).await?;
                        texts.extend(more);
                        add_usage(&mut usage, &spent);
                    }
                    Ok((texts, usage))
                }
                Err(e) => Err(self.undigested(e, Usage::default())),
            }
        })
    }

    async fn ask(
        &self,
        session: &Session,
        asked: String,
        max_tokens: u32,
    ) -> Result<Exchanged, ExchangeError> {
        exchange(
            session,
            self.small,
            prompt::DIGEST_SYSTEM,
            asked,
            max_tokens,
            self.cancel,
        )
        .await
    }

    fn undigested(&self, e: ExchangeError, mut usage: Usage) -> Undigested {
        add_usage(&mut usage, &e.usage());
        let (why, cancelled) = match e {
            ExchangeError::TooLong => (
                format!(
                    "the small model {}'s window ({} tokens) did not hold even a small part of \
                     the output",
                    self.small.id(),
                    self.small.model.entry.context_window
                ),
                false,
            ),
            ExchangeError::Cancelled => ("cancelled".to_owned(), true),
            ExchangeError::Empty { .. } => (
                format!("the small model {} answered with no text", self.small.id()),
                false,
            ),
            ExchangeError::Failed(why) => (format!("the small model failed: {why}"), false),
        };
        Undigested {
            why,
            cancelled,
            usage,
        }
    }
}

/// Cuts `text` to at most `bytes` (on a character boundary), marking the cut.
fn cut(text: &mut String, bytes: usize) {
    if text.len() <= bytes {
        return;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
}

/// The lines `text` holds (a last line without its newline counts).
fn line_count(text: &str) -> u64 {
    let newlines = text.matches('\n').count() as u64;
    newlines + u64::from(!text.is_empty() && !text.ends_with('\n'))
}
