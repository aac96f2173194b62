//! [`RecordingProvider`]: another provider's exchanges, appended to a replay file as they
//! complete.
//!
//! Each exchange is one line written with one `write` on a file opened for appending, so a
//! crash leaves whole lines (a torn last line is what [`super::parse`] reports, with its
//! number). The file is created 0600: it holds the conversation, which may hold whatever the
//! tools read. It never holds a credential: only neutral requests and events are written.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::StreamExt;

use super::format::{Exchange, Header, RecordedError, RecordedEvent, RecordedRequest};
use crate::error::LlmError;
use crate::event::StreamEvent;
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::transport::TurnStream;

/// Wraps a provider and writes every exchange it has to a replay file.
pub struct RecordingProvider {
    inner: Arc<dyn Provider>,
    file: Arc<Mutex<File>>,
}

impl RecordingProvider {
    /// Records into `path`: a new file gets the header; an existing replay file is appended to
    /// (its header is checked, so a recording never lands in some other file).
    pub fn create(inner: Arc<dyn Provider>, path: &Path) -> std::io::Result<Self> {
        let existing = super::read_text(path)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
        if let Some(text) = &existing
            && !text.trim().is_empty()
        {
            super::parse(&path.display().to_string(), text)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let mut file = options.open(path)?;
        if existing.is_none_or(|t| t.trim().is_empty()) {
            let header = serde_json::to_string(&Header {
                tackle_replay: super::REPLAY_VERSION,
            })
            .map_err(std::io::Error::other)?;
            file.write_all(format!("{header}\n").as_bytes())?;
        }
        Ok(Self {
            inner,
            file: Arc::new(Mutex::new(file)),
        })
    }
}

fn recorded_error(error: &LlmError) -> RecordedError {
    RecordedError {
        kind: error.kind.as_str().to_owned(),
        status: error.status,
        request_id: error.request_id.clone(),
        message: error.message.clone(),
    }
}

/// Appends one exchange as one line. A failure to record is reported on stderr and does not
/// fail the turn: the model's answer matters more than its copy.
fn append(file: &Mutex<File>, exchange: &Exchange) {
    let line = match serde_json::to_string(exchange) {
        Ok(l) => format!("{l}\n"),
        Err(e) => {
            eprintln!("tackle: the turn could not be recorded: {e}");
            return;
        }
    };
    let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
    if let Err(e) = file.write_all(line.as_bytes()) {
        eprintln!("tackle: the turn could not be recorded: {e}");
    }
}

#[async_trait::async_trait]
impl Provider for RecordingProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let recorded = RecordedRequest::of(request);
        let upstream = match self.inner.stream(request).await {
            Ok(s) => s,
            Err(error) => {
                append(
                    &self.file,
                    &Exchange {
                        request: Some(recorded),
                        events: Vec::new(),
                        turn: None,
                        error: Some(recorded_error(&error)),
                    },
                );
                return Err(error);
            }
        };
        // The exchange is written when the stream stops, fails or ends; a stream dropped
        // before that (a cancelled turn) is written by the guard as far as it went.
        let guard = Pending {
            file: Arc::clone(&self.file),
            exchange: Some(Exchange {
                request: Some(recorded),
                events: Vec::new(),
                turn: None,
                error: None,
            }),
        };
        Ok(Box::pin(upstream.scan(guard, |guard, item| {
            match &item {
                Ok(event) => {
                    guard.push(event);
                    if matches!(event, StreamEvent::Stop(_)) {
                        guard.finish();
                    }
                }
                Err(error) => {
                    guard.fail(error);
                }
            }
            futures::future::ready(Some(item))
        })))
    }
}

/// The exchange in progress, written once.
struct Pending {
    file: Arc<Mutex<File>>,
    exchange: Option<Exchange>,
}

impl Pending {
    fn push(&mut self, event: &StreamEvent) {
        if let Some(exchange) = &mut self.exchange {
            exchange.events.push(RecordedEvent::from(event));
        }
    }

    fn fail(&mut self, error: &LlmError) {
        if let Some(exchange) = &mut self.exchange {
            exchange.error = Some(recorded_error(error));
        }
        self.finish();
    }

    fn finish(&mut self) {
        if let Some(exchange) = self.exchange.take() {
            append(&self.file, &exchange);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Ended without a stop or an error: the stream was dropped (cancelled) or cut.
        if let Some(exchange) = &mut self.exchange
            && exchange.error.is_none()
        {
            exchange.error = Some(RecordedError {
                kind: crate::error::ErrorKind::StreamCut.as_str().to_owned(),
                status: None,
                request_id: None,
                message: "the stream ended before its terminal event (recorded as it was cut)"
                    .to_owned(),
            });
        }
        self.finish();
    }
}
