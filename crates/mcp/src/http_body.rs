//! Reading an HTTP request body with a bound, so that a client whose body is too large reads
//! a 413 instead of a connection reset.
//!
//! Answering before the body is read and closing the connection leaves the unread bytes in the
//! socket's receive queue, and the kernel answers those with a reset, which destroys the
//! response before the client reads it (what every client saw for a 50 MB body). So a body past
//! the limit is read on and thrown away, up to [`DRAIN_BYTES`], and only then answered; the
//! first bytes are kept so the answer can carry the request's id. Two cases are answered
//! without reading: a client that sent `Expect: 100-continue` (it waits for our word before it
//! sends the body, and a 413 is that word), and a declared `Content-Length` past
//! [`DRAIN_BYTES`], which is not worth reading. Rejected: reading the whole body whatever its
//! size, which lets one request hold the server busy for as long as the client keeps sending.

use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http_body_util::BodyExt;
use hyper::body::Body;

use crate::screen::prefix_id::SCAN_BYTES;

/// How much of a body past the limit is read and thrown away before answering (64 MiB, far
/// past any real request, and a fraction of a second on loopback).
pub const DRAIN_BYTES: usize = 64 * 1024 * 1024;

/// A body, read.
#[derive(Debug)]
pub enum Intake {
    /// Within the limit.
    Complete(Bytes),
    /// Past the limit. `start` holds the first bytes (for the id); `drained` says whether the
    /// whole body was read, so the connection can stay open.
    TooLarge { start: Bytes, drained: bool },
}

/// Reads `body` (whose request carried `headers`), keeping at most `limit` bytes.
pub async fn read_bounded<B>(headers: &HeaderMap, body: B, limit: usize) -> Result<Intake, B::Error>
where
    B: Body<Data = Bytes>,
{
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let waits_for_us = headers
        .get(http::header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
    if let Some(declared) = declared
        && declared > limit as u64
        && (waits_for_us || declared > DRAIN_BYTES as u64)
    {
        return Ok(Intake::TooLarge {
            start: Bytes::new(),
            drained: false,
        });
    }
    let mut body = std::pin::pin!(body);
    let mut kept = BytesMut::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue; // trailers
        };
        seen = seen.saturating_add(data.len());
        if seen <= limit {
            kept.extend_from_slice(&data);
            continue;
        }
        if kept.len() < SCAN_BYTES {
            let room = SCAN_BYTES - kept.len();
            kept.extend_from_slice(&data[..room.min(data.len())]);
        }
        if seen > DRAIN_BYTES {
            kept.truncate(SCAN_BYTES);
            return Ok(Intake::TooLarge {
                start: kept.freeze(),
                drained: false,
            });
        }
    }
    if seen > limit {
        kept.truncate(SCAN_BYTES);
        return Ok(Intake::TooLarge {
            start: kept.freeze(),
            drained: true,
        });
    }
    Ok(Intake::Complete(kept.freeze()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};
    use hyper::body::Frame;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    type Frames = std::vec::IntoIter<Result<Frame<Bytes>, std::convert::Infallible>>;

    fn chunks(parts: Vec<Vec<u8>>) -> StreamBody<futures::stream::Iter<Frames>> {
        let frames: Vec<_> = parts
            .into_iter()
            .map(|p| Ok(Frame::data(Bytes::from(p))))
            .collect();
        StreamBody::new(futures::stream::iter(frames))
    }

    #[tokio::test]
    async fn a_body_within_the_limit_is_kept_whole() {
        let body = chunks(vec![b"{\"a\":".to_vec(), b"1}".to_vec()]);
        match read_bounded(&HeaderMap::new(), body, 7).await.unwrap() {
            Intake::Complete(b) => assert_eq!(&b[..], b"{\"a\":1}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_body_past_the_limit_is_drained_and_its_start_kept() {
        let mut first = br#"{"id":"x","params":""#.to_vec();
        first.resize(100, b'a');
        let body = chunks(vec![first.clone(), vec![b'a'; 1000], vec![b'a'; 1000]]);
        match read_bounded(&HeaderMap::new(), body, 150).await.unwrap() {
            Intake::TooLarge { start, drained } => {
                assert!(drained);
                assert_eq!(&start[..100], &first[..]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_client_waiting_for_100_continue_or_declaring_too_much_is_answered_unread() {
        for h in [
            headers(&[("content-length", "1000"), ("expect", "100-continue")]),
            headers(&[("content-length", &(DRAIN_BYTES + 1).to_string())]),
        ] {
            let body = Full::new(Bytes::from(vec![0u8; 1000]));
            match read_bounded(&h, body, 10).await.unwrap() {
                Intake::TooLarge { start, drained } => {
                    assert!(start.is_empty() && !drained, "{h:?}")
                }
                other => panic!("{h:?}: {other:?}"),
            }
        }
    }
}
