//! Recorded and scripted model turns: [`RecordingProvider`] writes every exchange another
//! provider has to a replay file, and [`ReplayProvider`] answers from such a file, so agent
//! tests run offline and deterministically. The file format is in [`format`].

pub mod format;
mod record;

use std::path::Path;
use std::sync::Mutex;

use futures::stream;

use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::event::StreamEvent;
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::transport::TurnStream;

pub use format::{
    Exchange, REPLAY_VERSION, RecordedError, RecordedEvent, RecordedRequest, ScriptedCall,
    ScriptedTurn,
};
pub use record::RecordingProvider;

/// A replay file that cannot be used, with the line at fault.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}:{line}: {message}")]
pub struct ReplayFileError {
    pub source_name: String,
    /// 1-based; 0 when the file could not be read at all.
    pub line: usize,
    pub message: String,
}

/// Parses a replay file's text. `source_name` names it in errors.
pub fn parse(source_name: &str, text: &str) -> Result<Vec<Exchange>, ReplayFileError> {
    let fault = |line: usize, message: String| ReplayFileError {
        source_name: source_name.to_owned(),
        line,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let header_help =
        format!("a replay file opens with the line {{\"tackle_replay\":{REPLAY_VERSION}}}");
    let Some((n, first)) = lines.next() else {
        return Err(fault(1, format!("the file is empty; {header_help}")));
    };
    let header: format::Header = serde_json::from_str(first)
        .map_err(|e| fault(n, format!("not a replay header ({e}); {header_help}")))?;
    if header.tackle_replay != REPLAY_VERSION {
        return Err(fault(
            n,
            format!(
                "replay version {} is not the one this build reads ({REPLAY_VERSION}); record it again",
                header.tackle_replay
            ),
        ));
    }
    let mut exchanges = Vec::new();
    for (n, line) in lines {
        let exchange: Exchange =
            serde_json::from_str(line).map_err(|e| fault(n, format!("not an exchange: {e}")))?;
        check(&exchange).map_err(|m| fault(n, m))?;
        exchanges.push(exchange);
    }
    Ok(exchanges)
}

/// Reads and parses a replay file.
pub fn read(path: &Path) -> Result<Vec<Exchange>, ReplayFileError> {
    let name = path.display().to_string();
    let text = read_text(path)?.ok_or_else(|| ReplayFileError {
        source_name: name.clone(),
        line: 0,
        message: "cannot read it: there is no such file".to_owned(),
    })?;
    parse(&name, &text)
}

/// A replay file's text, read as tackle reads its own files ([`tackle_fs::OwnFile::REPLAY`]:
/// links followed, but regular files only, capped, never blocking); `None` when there is none.
pub(crate) fn read_text(path: &Path) -> Result<Option<String>, ReplayFileError> {
    let kind = tackle_fs::OwnFile::REPLAY;
    let shown = path.display().to_string();
    let refused = |e: tackle_fs::OwnFileError| ReplayFileError {
        source_name: shown.clone(),
        line: 0,
        message: e.to_string(),
    };
    match kind.read_at(path).map_err(refused)? {
        Some(bytes) => bytes.into_text(kind, &shown).map(Some).map_err(refused),
        None => Ok(None),
    }
}

fn check(exchange: &Exchange) -> Result<(), String> {
    if !exchange.events.is_empty() && exchange.turn.is_some() {
        return Err("an exchange has `events` or a `turn`, not both".to_owned());
    }
    if exchange.events.is_empty() && exchange.turn.is_none() && exchange.error.is_none() {
        return Err("an exchange needs `events`, a `turn` or an `error`".to_owned());
    }
    if exchange.turn.is_some() && exchange.error.is_some() {
        return Err("a scripted `turn` always completes; to script a broken stream write its `events` and the `error`".to_owned());
    }
    if let Some(turn) = &exchange.turn
        && let Some(call) = turn
            .tool_calls
            .iter()
            .find(|c| c.arguments.is_some() && c.arguments_raw.is_some())
    {
        return Err(format!(
            "tool call `{}` has both `arguments` and `arguments_raw`; give one",
            call.name
        ));
    }
    if let Some(error) = &exchange.error
        && format::error_kind(&error.kind).is_none()
    {
        let names: Vec<&str> = format::ERROR_KINDS.iter().map(|k| k.as_str()).collect();
        return Err(format!(
            "unknown error kind `{}`; use one of {}",
            error.kind,
            names.join(", ")
        ));
    }
    Ok(())
}

/// Answers each turn with the next exchange of a replay file.
///
/// With [`ReplayProvider::strict`], a turn whose request differs from the recorded one (model,
/// system prompt, messages or tool names) fails as `invalid_request`, naming the first
/// difference: a replayed conversation is then known to be the recorded one. Without it the
/// exchanges are played in order whatever is asked. Running out of exchanges is an error, never
/// a hang.
pub struct ReplayProvider {
    name: String,
    exchanges: Vec<Exchange>,
    next: Mutex<usize>,
    strict: bool,
}

impl ReplayProvider {
    pub fn new(name: impl Into<String>, exchanges: Vec<Exchange>) -> Self {
        Self {
            name: name.into(),
            exchanges,
            next: Mutex::new(0),
            strict: false,
        }
    }

    /// Reads `path` (see [`read`]).
    pub fn from_file(name: impl Into<String>, path: &Path) -> Result<Self, ReplayFileError> {
        Ok(Self::new(name, read(path)?))
    }

    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Continues a conversation whose first `played` exchanges were answered before (a resumed
    /// session): the next turn is answered with exchange `played + 1`, and its default call ids
    /// are numbered from there.
    pub fn starting_at(self, played: usize) -> Self {
        *self.next.lock().unwrap_or_else(|p| p.into_inner()) = played;
        self
    }

    /// How many exchanges have been played.
    pub fn played(&self) -> usize {
        *self.next.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait::async_trait]
impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        &self.name
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let ctx = ErrorContext {
            provider: self.name.clone(),
            model: request.model.clone(),
        };
        let turn = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let turn = *next;
            if turn >= self.exchanges.len() {
                return Err(ctx.error(
                    ErrorKind::InvalidRequest,
                    format!(
                        "the replay has {} turn(s) and turn {} was asked for; record or script more turns",
                        self.exchanges.len(),
                        turn + 1
                    ),
                ));
            }
            *next += 1;
            turn
        };
        let exchange = &self.exchanges[turn];
        if self.strict
            && let Some(recorded) = &exchange.request
            && let Some(difference) = differs(recorded, &RecordedRequest::of(request))
        {
            return Err(ctx.error(
                ErrorKind::InvalidRequest,
                format!(
                    "turn {}'s request is not the recorded one: {difference}",
                    turn + 1
                ),
            ));
        }
        let mut events: Vec<Result<StreamEvent, LlmError>> = match &exchange.turn {
            Some(scripted) => scripted
                .events(&request.model, turn + 1)
                .into_iter()
                .map(Ok)
                .collect(),
            None => exchange
                .events
                .iter()
                .cloned()
                .map(|e| Ok(e.into()))
                .collect(),
        };
        if let Some(error) = &exchange.error {
            let failure = LlmError {
                status: error.status,
                request_id: error.request_id.clone(),
                ..ctx.error(
                    format::error_kind(&error.kind).unwrap_or(ErrorKind::InvalidResponse),
                    error.message.clone(),
                )
            };
            if events.is_empty() {
                return Err(failure);
            }
            events.push(Err(failure));
        }
        Ok(Box::pin(stream::iter(events)))
    }
}

/// The first difference between a recorded request and the one made, in words.
fn differs(recorded: &RecordedRequest, made: &RecordedRequest) -> Option<String> {
    if recorded.model != made.model {
        return Some(format!(
            "model `{}` was recorded, `{}` asked",
            recorded.model, made.model
        ));
    }
    if recorded.system != made.system {
        return Some("the system prompt differs".to_owned());
    }
    if recorded.tools != made.tools {
        return Some(format!(
            "tools [{}] were recorded, [{}] offered",
            recorded.tools.join(", "),
            made.tools.join(", ")
        ));
    }
    if let Some(at) = recorded
        .messages
        .iter()
        .zip(&made.messages)
        .position(|(a, b)| a != b)
    {
        return Some(format!("message {} differs", at + 1));
    }
    if recorded.messages.len() != made.messages.len() {
        return Some(format!(
            "{} message(s) were recorded, {} sent",
            recorded.messages.len(),
            made.messages.len()
        ));
    }
    None
}

#[cfg(test)]
mod tests;
