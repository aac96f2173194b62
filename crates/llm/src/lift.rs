//! Lifting a family's frames into neutral [`StreamEvent`]s: the [`Lift`] trait each adapter
//! implements, and [`drive`], which reads frames until the terminal one, an error or a cut.

use std::collections::VecDeque;

use tackle_net::SseEvent;

use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::framing::Framing;
use crate::transport::{FrameReader, TurnStream};

/// Whether a lifted event ended the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lifted {
    More,
    Done,
}

/// A vendor event that is an error, or not what the family sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LiftFailure {
    pub kind: ErrorKind,
    pub message: String,
}

/// Lifts one family's frames (server-sent events unless it says otherwise) into neutral events.
pub(crate) trait Lift<Frame = SseEvent>: Send + 'static {
    /// Whether the family sends failures as bare JSON outside the event framing (its
    /// endpoint then reads the body with [`crate::framing::UnframedSseFraming`]).
    const READS_UNFRAMED: bool = false;

    fn lift(&mut self, event: &Frame, out: &mut Vec<StreamEvent>) -> Result<Lifted, LiftFailure>;

    /// At a clean end of the body before a frame said [`Lifted::Done`]: whether what came
    /// completes the turn (with the events to add). By default it does not: the stream was cut.
    fn end_of_body(&mut self, _out: &mut Vec<StreamEvent>) -> bool {
        false
    }

    /// The body ended with text outside the event framing (only when `READS_UNFRAMED`).
    fn unframed(&mut self, _text: &str) -> LiftFailure {
        LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: "the stream carried text outside its events".into(),
        }
    }
}

struct Drive<F: Framing, L> {
    reader: FrameReader<F>,
    lift: L,
    buffer: VecDeque<StreamEvent>,
    finished: bool,
}

/// The turn's events: lifted until the terminal event, an error, or a cut.
pub(crate) fn drive<F: Framing, L: Lift<F::Frame>>(reader: FrameReader<F>, lift: L) -> TurnStream {
    let state = Drive {
        reader,
        lift,
        buffer: VecDeque::new(),
        finished: false,
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(event) = s.buffer.pop_front() {
                return Some((Ok(event), s));
            }
            if s.finished {
                return None;
            }
            let next = s.reader.next().await;
            s.finished = true;
            let failure = match next {
                Ok(Some(event)) => {
                    let mut out = Vec::new();
                    match s.lift.lift(&event, &mut out) {
                        Ok(lifted) => {
                            s.finished = lifted == Lifted::Done;
                            s.buffer.extend(out);
                            continue;
                        }
                        Err(failure) => s.reader.error(failure.kind, failure.message),
                    }
                }
                Ok(None) if !s.reader.unframed.trim().is_empty() => {
                    let failure = s.lift.unframed(&s.reader.unframed);
                    s.reader.error(failure.kind, failure.message)
                }
                Ok(None) => {
                    let mut out = Vec::new();
                    if s.lift.end_of_body(&mut out) {
                        s.buffer.extend(out);
                        continue;
                    }
                    s.reader.error(
                    ErrorKind::StreamCut,
                        "the stream ended before its terminal event; the connection was cut, try again",
                    )
                }
                Err(e) => e,
            };
            return Some((Err(failure), s));
        }
    }))
}
