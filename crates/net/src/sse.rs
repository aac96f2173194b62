//! A server-sent-events decoder (the WHATWG `text/event-stream` rules): bytes in, events out.
//!
//! Chunks may split anywhere — inside a line, between `\r` and `\n`, inside a UTF-8 sequence —
//! so bytes are buffered and lines are cut only at ASCII `\r`/`\n`, which never occur inside a
//! multi-byte sequence; each complete line is then decoded (invalid UTF-8 becomes U+FFFD, as the
//! standard says). One event's size is bounded: a stream that never sends a blank line cannot
//! grow memory without limit.

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `message` when the event had none.
    pub event: String,
    /// Every `data:` line of the event joined with `\n`.
    pub data: String,
    /// The last `id:` seen on the stream so far, as the standard defines it.
    pub id: Option<String>,
}

/// What was left when the input ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseTail {
    /// Bytes of an event had arrived without the blank line that dispatches it: the stream was
    /// cut mid-event, and those bytes were discarded.
    pub incomplete_event: bool,
}

/// Why decoding stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error(
        "a server-sent event exceeds {limit} bytes without ending; the server is not sending events of a model stream, or the limit must be raised"
    )]
    EventTooLarge { limit: usize },
}

/// Incremental decoder. Feed it chunks in order; call [`SseDecoder::finish`] at end of input.
#[derive(Debug)]
pub struct SseDecoder {
    max_event_bytes: usize,
    /// The start of a line whose end has not arrived.
    partial_line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` opening the next one belongs to that line end.
    skip_lf: bool,
    /// Nothing has been read yet: a leading byte-order mark is dropped.
    at_start: bool,
    event_type: String,
    data: String,
    last_id: Option<String>,
    retry_ms: Option<u64>,
    /// Bytes of the current event's lines so far, line ends included.
    event_bytes: usize,
    failed: Option<SseError>,
    /// Lines that are not event-stream fields, kept when asked ([`SseDecoder::keep_unframed`]).
    unframed: Option<String>,
}

const BOM: &[u8] = "\u{feff}".as_bytes();

impl SseDecoder {
    /// A decoder that refuses any event (its lines together) over `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            partial_line: Vec::new(),
            skip_lf: false,
            at_start: true,
            event_type: String::new(),
            data: String::new(),
            last_id: None,
            retry_ms: None,
            event_bytes: 0,
            failed: None,
            unframed: None,
        }
    }

    /// Keeps the lines that are not event-stream fields instead of ignoring them, for a server
    /// that answers some failures with a bare JSON body inside an event stream (Gemini). Only a
    /// line opening with `{`, `[`, `}`, `]`, `"` or whitespace counts; field lines of unknown names
    /// are still ignored. The kept text is bounded by the event limit.
    pub fn keep_unframed(&mut self) {
        self.unframed.get_or_insert_with(String::new);
    }

    /// The unframed lines kept so far, each followed by `\n`, and the final line if it had no
    /// line end; empty when none came or none were asked for.
    pub fn take_unframed(&mut self) -> String {
        let Some(kept) = self.unframed.as_mut() else {
            return String::new();
        };
        let mut text = std::mem::take(kept);
        if is_unframed(&self.partial_line) {
            text.push_str(&String::from_utf8_lossy(&self.partial_line));
        }
        text
    }

    /// The last `retry:` the server sent, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Decodes one chunk, appending every event it completes to `out`. After an error every
    /// later call returns the same error.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.at_start {
            if self.partial_line.len() + chunk.len() < BOM.len()
                && BOM.starts_with(&[self.partial_line.as_slice(), chunk].concat())
            {
                // Too short to tell whether the stream opens with a byte-order mark.
                self.partial_line.extend_from_slice(chunk);
                return Ok(());
            }
            let mut head = std::mem::take(&mut self.partial_line);
            self.at_start = false;
            if !head.is_empty() {
                head.extend_from_slice(chunk);
                let head = head.strip_prefix(BOM).unwrap_or(&head).to_vec();
                return self.feed(&head, out);
            }
            chunk = chunk.strip_prefix(BOM).unwrap_or(chunk);
        }
        if self.skip_lf {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            let terminator = chunk[end];
            let (segment, mut rest) = (&chunk[..end], &chunk[end + 1..]);
            self.grow(self.partial_line.len() + segment.len() + 1)?;
            if self.partial_line.is_empty() {
                self.line(segment, out);
            } else {
                let mut line = std::mem::take(&mut self.partial_line);
                line.extend_from_slice(segment);
                self.line(&line, out);
                line.clear();
                self.partial_line = line; // keep the allocation
            }
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            chunk = rest;
        }
        if self.event_bytes + self.partial_line.len() + chunk.len() > self.max_event_bytes {
            return self.fail();
        }
        self.partial_line.extend_from_slice(chunk);
        Ok(())
    }

    /// Ends the input: reports whether an event was cut off. A final line without its line end
    /// is discarded with it, as the standard says.
    pub fn finish(self) -> SseTail {
        SseTail {
            incomplete_event: !self.partial_line.is_empty() || self.event_bytes > 0,
        }
    }

    fn grow(&mut self, line_bytes: usize) -> Result<(), SseError> {
        self.event_bytes += line_bytes;
        if self.event_bytes > self.max_event_bytes {
            return self.fail();
        }
        Ok(())
    }

    fn fail(&mut self) -> Result<(), SseError> {
        let e = SseError::EventTooLarge {
            limit: self.max_event_bytes,
        };
        self.failed = Some(e.clone());
        Err(e)
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment or keep-alive
        }
        if let Some(kept) = self.unframed.as_mut()
            && is_unframed(line)
        {
            if kept.len() + line.len() < self.max_event_bytes {
                kept.push_str(&String::from_utf8_lossy(line));
                kept.push('\n');
            }
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                // Valid UTF-8 (every well-behaved stream) takes the fast check; only a stream
                // with broken bytes pays for the replacement characters.
                match std::str::from_utf8(value) {
                    Ok(text) => self.data.push_str(text),
                    Err(_) => self.data.push_str(&String::from_utf8_lossy(value)),
                }
                self.data.push('\n');
            }
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry_ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {} // unknown fields are ignored
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        self.event_bytes = 0;
        let event_type = std::mem::take(&mut self.event_type);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the `\n` after the last data line
        out.push(SseEvent {
            event: if event_type.is_empty() {
                "message".to_owned()
            } else {
                event_type
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

/// Whether a line looks like part of a JSON body rather than an event-stream field.
fn is_unframed(line: &[u8]) -> bool {
    matches!(
        line.first(),
        Some(b'{' | b'[' | b'}' | b']' | b'"' | b' ' | b'\t')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.to_owned(),
            data: data.to_owned(),
            id: id.map(str::to_owned),
        }
    }

    fn decode(chunks: &[&[u8]], limit: usize) -> (Result<Vec<SseEvent>, SseError>, bool) {
        let mut decoder = SseDecoder::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            if let Err(e) = decoder.feed(chunk, &mut out) {
                return (Err(e), false);
            }
        }
        (Ok(out), decoder.finish().incomplete_event)
    }

    struct Case {
        name: &'static str,
        input: &'static [u8],
        events: Vec<SseEvent>,
        incomplete: bool,
    }

    fn cases() -> Vec<Case> {
        vec![
            Case {
                name: "event and data",
                input: b"event: message_start\ndata: {\"a\":1}\n\n",
                events: vec![ev("message_start", "{\"a\":1}", None)],
                incomplete: false,
            },
            Case {
                name: "default type, several events",
                input: b"data: one\n\ndata: two\n\n",
                events: vec![ev("message", "one", None), ev("message", "two", None)],
                incomplete: false,
            },
            Case {
                name: "multi-line data joined with newlines",
                input: b"data: a\ndata:b\ndata:  c\n\n",
                events: vec![ev("message", "a\nb\n c", None)],
                incomplete: false,
            },
            Case {
                name: "crlf line ends",
                input: b"event: x\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n",
                events: vec![ev("x", "1", None), ev("message", "2", None)],
                incomplete: false,
            },
            Case {
                name: "cr line ends",
                input: b"data: 1\r\rdata: 2\r\r",
                events: vec![ev("message", "1", None), ev("message", "2", None)],
                incomplete: false,
            },
            Case {
                name: "comments and keep-alives are skipped",
                input: b": OPENROUTER PROCESSING\n\n:ping\ndata: x\n: mid\n\n",
                events: vec![ev("message", "x", None)],
                incomplete: false,
            },
            Case {
                name: "id persists, retry is not an event",
                input: b"id: 7\ndata: a\n\nretry: 1500\n\ndata: b\n\n",
                events: vec![ev("message", "a", Some("7")), ev("message", "b", Some("7"))],
                incomplete: false,
            },
            Case {
                name: "an event without data is not dispatched and its type is reset",
                input: b"event: ping\n\ndata: [DONE]\n\n",
                events: vec![ev("message", "[DONE]", None)],
                incomplete: false,
            },
            Case {
                name: "empty data line dispatches an empty event",
                input: b"data:\n\n",
                events: vec![ev("message", "", None)],
                incomplete: false,
            },
            Case {
                name: "field without colon and unknown fields",
                input: b"data\nfoo: bar\n\n",
                events: vec![ev("message", "", None)],
                incomplete: false,
            },
            Case {
                name: "multi-byte utf-8 survives any split",
                input: "data: héllo → 世界 🦀\n\n".as_bytes(),
                events: vec![ev("message", "héllo → 世界 🦀", None)],
                incomplete: false,
            },
            Case {
                name: "a leading byte-order mark is dropped",
                input: "\u{feff}data: a\n\n".as_bytes(),
                events: vec![ev("message", "a", None)],
                incomplete: false,
            },
            Case {
                name: "cut mid-event",
                input: b"data: a\n\ndata: {\"par",
                events: vec![ev("message", "a", None)],
                incomplete: true,
            },
            Case {
                name: "cut after a complete line but before the blank line",
                input: b"data: a\n",
                events: vec![],
                incomplete: true,
            },
            Case {
                name: "invalid utf-8 becomes the replacement character",
                input: b"data: a\xffb\n\n",
                events: vec![ev("message", "a\u{fffd}b", None)],
                incomplete: false,
            },
        ]
    }

    #[test]
    fn cases_decode_whole_and_split_at_every_byte() {
        for case in cases() {
            let (whole, incomplete) = decode(&[case.input], 1 << 20);
            assert_eq!(whole.as_ref(), Ok(&case.events), "{} (whole)", case.name);
            assert_eq!(incomplete, case.incomplete, "{} (whole)", case.name);
            for split in 0..=case.input.len() {
                let (a, b) = case.input.split_at(split);
                let (got, incomplete) = decode(&[a, b], 1 << 20);
                assert_eq!(
                    got.as_ref(),
                    Ok(&case.events),
                    "{} split at {split}",
                    case.name
                );
                assert_eq!(
                    incomplete, case.incomplete,
                    "{} split at {split}",
                    case.name
                );
            }
            let bytes: Vec<&[u8]> = case.input.chunks(1).collect();
            let (got, _) = decode(&bytes, 1 << 20);
            assert_eq!(got.as_ref(), Ok(&case.events), "{} byte by byte", case.name);
        }
    }

    #[test]
    fn oversized_events_fail_with_a_named_error_however_they_arrive() {
        let limit = 64;
        let long_line = format!("data: {}\n\n", "x".repeat(100));
        let many_lines = "data: 0123456789\n".repeat(10) + "\n";
        let unterminated = "data: ".to_owned() + &"y".repeat(200);
        for input in [long_line, many_lines, unterminated] {
            for chunk in [input.len(), 7, 1] {
                let chunks: Vec<&[u8]> = input.as_bytes().chunks(chunk).collect();
                let (got, _) = decode(&chunks, limit);
                assert_eq!(got, Err(SseError::EventTooLarge { limit }), "{input:?}");
            }
        }
        let mut decoder = SseDecoder::new(limit);
        let mut out = Vec::new();
        assert!(decoder.feed(&[b'a'; 100], &mut out).is_err());
        assert_eq!(
            decoder.feed(b"\n\ndata: ok\n\n", &mut out),
            Err(SseError::EventTooLarge { limit }),
            "a failed decoder stays failed"
        );
        assert!(
            SseError::EventTooLarge { limit }
                .to_string()
                .contains("64 bytes")
        );
    }

    #[test]
    fn the_limit_is_per_event_not_per_stream() {
        let input = "data: 0123456789\n\n".repeat(100);
        let (got, _) = decode(&[input.as_bytes()], 32);
        assert_eq!(got.map(|events| events.len()), Ok(100));
    }

    #[test]
    fn retry_field_is_remembered() {
        let mut decoder = SseDecoder::new(1024);
        let mut out = Vec::new();
        decoder
            .feed(b"retry: 2500\nretry: soon\n\n", &mut out)
            .unwrap();
        assert_eq!(decoder.retry_ms(), Some(2500));
        assert!(out.is_empty());
    }

    #[test]
    fn unframed_json_lines_are_kept_only_when_asked() {
        let input = b"data: {\"a\":1}\n\n[{\n  \"error\": {\n    \"code\": 429\n  }\n}]";
        for chunk in [input.len(), 7, 1] {
            let mut decoder = SseDecoder::new(1 << 10);
            decoder.keep_unframed();
            let mut out = Vec::new();
            for piece in input.chunks(chunk) {
                decoder.feed(piece, &mut out).unwrap();
            }
            assert_eq!(out, vec![ev("message", "{\"a\":1}", None)]);
            assert_eq!(
                decoder.take_unframed(),
                "[{\n  \"error\": {\n    \"code\": 429\n  }\n}]"
            );
        }
        let mut plain = SseDecoder::new(1 << 10);
        let mut out = Vec::new();
        plain
            .feed(b"{\"error\":1}\nfoo: bar\n\n", &mut out)
            .unwrap();
        assert!(out.is_empty());
        assert_eq!(plain.take_unframed(), "");
    }
}
