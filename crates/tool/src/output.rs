//! Streaming output and progress, and how an execution completes.

use std::sync::Arc;

use tackle_protocol::StreamName;

use crate::{SurveyListing, ToolError};

/// A chunk of authoritative output text for one stream (`None` for single output).
#[derive(Clone, Debug, PartialEq)]
pub struct OutputChunk {
    pub stream: Option<StreamName>,
    pub text: String,
}

/// A progress delta (seed 000, "Retained tool output"): at most 8 chunks and 64 KiB of
/// authoritative text; `message` and `display` at most 1 KiB each. Display is UI-only and never
/// reaches the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolProgress {
    pub output: Vec<OutputChunk>,
    pub message: Option<String>,
    pub display: Option<String>,
}

impl ToolProgress {
    pub const MAX_CHUNKS: usize = 8;
    pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
    pub const MAX_MESSAGE_BYTES: usize = 1024;
    pub const MAX_DISPLAY_BYTES: usize = 1024;

    pub fn output(stream: Option<StreamName>, text: impl Into<String>) -> Self {
        Self {
            output: vec![OutputChunk {
                stream,
                text: text.into(),
            }],
            ..Self::default()
        }
    }
}

/// Receives progress for one call; implemented by the runtime's retention layer.
pub trait ProgressReceiver: Send + Sync {
    fn accept(&self, progress: ToolProgress) -> Result<(), ToolError>;

    /// Authoritative text for one stream, of any length, with no message or display.
    ///
    /// The default splits it into deltas within [`ToolProgress::MAX_OUTPUT_BYTES`] and passes
    /// each to [`ProgressReceiver::accept`]. A receiver that can take the text as it is
    /// overrides this, sparing a `String` copy per delta on the hot path of large output.
    fn accept_output(&self, stream: Option<&StreamName>, mut text: &str) -> Result<(), ToolError> {
        while !text.is_empty() {
            let mut cut = text.len().min(ToolProgress::MAX_OUTPUT_BYTES);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let (head, rest) = text.split_at(cut);
            self.accept(ToolProgress::output(stream.cloned(), head))?;
            text = rest;
        }
        Ok(())
    }
}

/// The tool-facing handle for streaming. Cheap to clone (e.g. one per pipe reader).
#[derive(Clone)]
pub struct OutputSink {
    receiver: Arc<dyn ProgressReceiver>,
}

impl OutputSink {
    pub fn new(receiver: Arc<dyn ProgressReceiver>) -> Self {
        Self { receiver }
    }

    /// Report a delta. An error means the delta broke the limits or the stream is unknown; the
    /// tool should stop and return it.
    pub fn progress(&self, progress: ToolProgress) -> Result<(), ToolError> {
        self.receiver.accept(progress)
    }

    /// Stream text of any length to one stream (the per-delta limit applies to
    /// [`OutputSink::progress`], not to this).
    pub fn write(&self, stream: Option<&StreamName>, text: &str) -> Result<(), ToolError> {
        self.receiver.accept_output(stream, text)
    }
}

/// Terminal output of an execution.
#[derive(Clone, Debug, PartialEq)]
pub enum CompletionOutput {
    /// The whole single output, supplied once.
    Single(String),
    /// Every declared stream's whole text, supplied once (undeclared names are an error; missing
    /// ones are empty).
    Named(Vec<(StreamName, String)>),
    /// Output was streamed through [`OutputSink`]; finalize what was accepted. Supplying
    /// `Single`/`Named` after streaming is a protocol error.
    Streamed,
}

/// How an execution completed.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCompletion {
    pub output: CompletionOutput,
    /// Structured result fields for scripts and clients (next_offset, exists, …).
    pub metadata: serde_json::Value,
    /// Final UI display text (replaces live display; at most 64 KiB; never shown to the model).
    pub display: Option<String>,
    /// Media the model should receive beside the text; the runtime retains each as an artifact
    /// and shows it as an attachment content block.
    pub attachments: Vec<Attachment>,
    /// A short status line the model sees above the output (`exit 0 · 12 ms`); the details
    /// belong in `metadata`.
    pub summary: Option<String>,
    /// A survey tool's items, typed, for the runtime's digest; also in `metadata` under
    /// [`SurveyListing::key`].
    pub survey: Option<SurveyListing>,
}

/// Bytes a tool returns as an attachment (already sniffed and validated by the tool).
#[derive(Clone, Debug, PartialEq)]
pub struct Attachment {
    pub mime_type: String,
    pub data: Vec<u8>,
}

impl ToolCompletion {
    pub fn single(text: impl Into<String>) -> Self {
        Self {
            output: CompletionOutput::Single(text.into()),
            metadata: serde_json::Value::Null,
            display: None,
            attachments: Vec::new(),
            summary: None,
            survey: None,
        }
    }

    pub fn streamed() -> Self {
        Self {
            output: CompletionOutput::Streamed,
            metadata: serde_json::Value::Null,
            display: None,
            attachments: Vec::new(),
            summary: None,
            survey: None,
        }
    }

    pub fn with_metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = metadata;
        self
    }

    pub fn with_attachment(mut self, attachment: Attachment) -> Self {
        self.attachments.push(attachment);
        self
    }

    /// A survey tool's items. Call it after [`ToolCompletion::with_metadata`], whose object
    /// holds the listing's [`SurveyListing::key`] with `null` where it belongs; the listing's
    /// [`SurveyListing::to_json`] replaces that `null`, in place. Clients read the metadata, the
    /// digest reads this.
    pub fn with_survey(mut self, listing: SurveyListing) -> Self {
        debug_assert_eq!(
            self.metadata.get(listing.key()),
            Some(&serde_json::Value::Null),
            "a survey tool's metadata holds its listing's key, with null"
        );
        if let serde_json::Value::Object(map) = &mut self.metadata {
            map.insert(listing.key().to_owned(), listing.to_json());
        }
        self.survey = Some(listing);
        self
    }

    /// A short status line shown to the model above the output.
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A receiver that keeps the default `accept_output` and records every delta.
    #[derive(Default)]
    struct Recording(Mutex<Vec<ToolProgress>>);

    impl ProgressReceiver for Recording {
        fn accept(&self, progress: ToolProgress) -> Result<(), ToolError> {
            self.0.lock().unwrap().push(progress);
            Ok(())
        }
    }

    #[test]
    fn a_survey_listing_fills_its_key_where_the_metadata_put_it() {
        // Objects keep their insertion order when a crate in the build asks serde_json to;
        // either way the key stays where the tool's metadata had it.
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object().unwrap().keys().cloned().collect()
        };
        let listing = SurveyListing::Paths(vec!["a.rs".into(), "b/c.rs".into()]);
        let metadata = serde_json::json!({"pattern": "*.rs", "files": null, "total": 2});
        let before = keys(&metadata);
        let done = ToolCompletion::single("x")
            .with_metadata(metadata)
            .with_survey(listing.clone());
        assert_eq!(keys(&done.metadata), before);
        assert_eq!(
            done.metadata["files"],
            serde_json::json!(["a.rs", "b/c.rs"])
        );
        assert_eq!(done.survey, Some(listing));
    }

    #[test]
    fn default_accept_output_splits_into_deltas_within_the_limit_on_char_boundaries() {
        let receiver = Arc::new(Recording::default());
        let sink = OutputSink::new(receiver.clone());
        let stream = StreamName::parse("stdout").unwrap();
        // A three-byte character straddles the 64 KiB cut.
        let text = format!(
            "{}€{}",
            "a".repeat(ToolProgress::MAX_OUTPUT_BYTES - 1),
            "b".repeat(70_000)
        );
        sink.write(Some(&stream), &text).unwrap();
        sink.write(Some(&stream), "").unwrap();
        let deltas = receiver.0.lock().unwrap();
        let mut joined = String::new();
        for delta in deltas.iter() {
            assert_eq!(delta.output.len(), 1);
            assert_eq!(delta.output[0].stream.as_ref(), Some(&stream));
            assert!(delta.output[0].text.len() <= ToolProgress::MAX_OUTPUT_BYTES);
            joined.push_str(&delta.output[0].text);
        }
        assert_eq!(deltas.len(), 3);
        assert_eq!(joined, text);
    }
}
