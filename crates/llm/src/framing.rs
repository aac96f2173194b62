//! How a successful response body is cut into frames before an adapter lifts them: server-sent
//! events for the JSON families, or a binary framing of the adapter's own (Bedrock's
//! `application/vnd.amazon.eventstream`). The transport owns the reading (idle timeout,
//! deadline, cuts); a framing only splits bytes.

use tackle_net::{SseDecoder, SseEvent};

/// How a family's successful response body is cut into frames: server-sent events
/// ([`SseFraming`]) or a binary framing of the adapter's own. Splitting is all it does; what a
/// frame means is the [`Lift`]'s business.
pub(crate) trait Framing: Send + 'static {
    type Frame: Send + 'static;
    /// What the response's content type must contain.
    const CONTENT_TYPE: &'static str;
    /// A framing that refuses frames over `max_frame_bytes`.
    fn new(max_frame_bytes: usize) -> Self;
    /// Appends the frames `chunk` completes; an error is a malformed or oversized frame.
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Self::Frame>) -> Result<(), String>;
    /// At the end of the body: whether a frame was left unfinished.
    fn finish(self) -> bool;

    /// Whether a successful response of this content type is read.
    fn accepts(content_type: &str) -> bool {
        content_type.contains(Self::CONTENT_TYPE)
    }

    /// At the end of the body: the text that was outside any frame, for a framing that keeps
    /// it ([`UnframedSseFraming`]); empty for the others.
    fn take_unframed(&mut self) -> String {
        String::new()
    }
}

/// Server-sent events, the framing of every JSON-over-SSE family.
pub(crate) struct SseFraming(SseDecoder);

impl Framing for SseFraming {
    type Frame = SseEvent;
    const CONTENT_TYPE: &'static str = "text/event-stream";

    fn new(max_frame_bytes: usize) -> Self {
        Self(SseDecoder::new(max_frame_bytes))
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        self.0.feed(chunk, out).map_err(|e| e.to_string())
    }

    fn finish(self) -> bool {
        self.0.finish().incomplete_event
    }
}

/// Server-sent events from a family that may answer a failure with bare JSON instead, even
/// with a 200 (Gemini): an `application/json` success is read rather than refused, and the
/// lines outside the event framing are kept for [`crate::lift::Lift::unframed`].
pub(crate) struct UnframedSseFraming(SseDecoder);

impl Framing for UnframedSseFraming {
    type Frame = SseEvent;
    const CONTENT_TYPE: &'static str = "text/event-stream";

    fn new(max_frame_bytes: usize) -> Self {
        let mut decoder = SseDecoder::new(max_frame_bytes);
        decoder.keep_unframed();
        Self(decoder)
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        self.0.feed(chunk, out).map_err(|e| e.to_string())
    }

    fn finish(self) -> bool {
        self.0.finish().incomplete_event
    }

    fn accepts(content_type: &str) -> bool {
        content_type.contains(Self::CONTENT_TYPE) || content_type.contains("application/json")
    }

    fn take_unframed(&mut self) -> String {
        self.0.take_unframed()
    }
}
