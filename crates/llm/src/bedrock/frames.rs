//! `application/vnd.amazon.eventstream` framing, decoded by the AWS SDK's own decoder
//! (`aws-smithy-eventstream`): prelude and message CRCs are checked there; the size bound is
//! checked here from the prelude's total length, before the frame's bytes are awaited.

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::Message;
use bytes::BytesMut;

use crate::framing::Framing;

/// The frames of one ConverseStream response.
pub(crate) struct EventStreamFraming {
    decoder: MessageFrameDecoder,
    buffer: BytesMut,
    max_frame_bytes: usize,
    /// Whether the current frame's length was read (and checked); the decoder may already have
    /// taken its prelude out of the buffer.
    in_frame: bool,
}

/// A frame's total length: the first four bytes of its prelude, big-endian.
const LENGTH_BYTES: usize = 4;

impl Framing for EventStreamFraming {
    type Frame = Message;
    const CONTENT_TYPE: &'static str = "application/vnd.amazon.eventstream";

    fn new(max_frame_bytes: usize) -> Self {
        Self {
            decoder: MessageFrameDecoder::new(),
            buffer: BytesMut::new(),
            max_frame_bytes,
            in_frame: false,
        }
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Message>) -> Result<(), String> {
        self.buffer.extend_from_slice(chunk);
        loop {
            if !self.in_frame {
                let Some(length) = self.buffer.get(..LENGTH_BYTES) else {
                    return Ok(());
                };
                let mut be = [0u8; LENGTH_BYTES];
                be.copy_from_slice(length);
                let total = u32::from_be_bytes(be) as usize;
                if total > self.max_frame_bytes {
                    return Err(format!(
                        "an event-stream frame of {total} bytes exceeds the limit of {} bytes",
                        self.max_frame_bytes
                    ));
                }
                self.in_frame = true;
            }
            match self.decoder.decode_frame(&mut self.buffer) {
                Ok(DecodedFrame::Complete(message)) => {
                    self.in_frame = false;
                    out.push(message);
                }
                Ok(DecodedFrame::Incomplete) => return Ok(()),
                Err(e) => return Err(format!("an event-stream frame is malformed: {e}")),
            }
        }
    }

    fn finish(self) -> bool {
        self.in_frame || !self.buffer.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::{Header, HeaderValue};

    fn frame(payload: &str) -> Vec<u8> {
        let message = Message::new(payload.as_bytes().to_vec()).add_header(Header::new(
            ":event-type",
            HeaderValue::String("messageStart".into()),
        ));
        let mut bytes = Vec::new();
        write_message_to(&message, &mut bytes).unwrap();
        bytes
    }

    fn feed_all(
        framing: &mut EventStreamFraming,
        bytes: &[u8],
        step: usize,
    ) -> Result<usize, String> {
        let mut out = Vec::new();
        for piece in bytes.chunks(step) {
            framing.feed(piece, &mut out)?;
        }
        Ok(out.len())
    }

    #[test]
    fn frames_decode_across_any_split_and_a_cut_is_incomplete() {
        let two = [frame(r#"{"role":"assistant"}"#), frame("{}")].concat();
        for step in [1, 3, 7, two.len()] {
            let mut framing = EventStreamFraming::new(1 << 20);
            assert_eq!(feed_all(&mut framing, &two, step), Ok(2), "step {step}");
            assert!(!framing.finish(), "step {step}");
        }
        for cut in [2, 5, 12, 20, two.len() - 1] {
            let mut framing = EventStreamFraming::new(1 << 20);
            let _ = feed_all(&mut framing, &two[..cut], 1);
            assert!(framing.finish(), "cut at {cut}");
        }
    }

    #[test]
    fn bad_crcs_and_oversized_frames_are_errors() {
        let good = frame(r#"{"role":"assistant"}"#);
        // The prelude's CRC (bytes 8..12), a payload byte, the message CRC (the last 4).
        for at in [9, good.len() - 6, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x55;
            let mut framing = EventStreamFraming::new(1 << 20);
            let e = feed_all(&mut framing, &bad, 7).unwrap_err();
            assert!(e.contains("malformed"), "{at}: {e}");
        }
        let mut framing = EventStreamFraming::new(16);
        let e = feed_all(&mut framing, &good, 1).unwrap_err();
        assert!(e.contains("exceeds"), "{e}");
    }
}
