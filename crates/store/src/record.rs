//! One line of the event log: its encoding, its check, and what a torn write may leave of it.
//!
//! A record is `{"seq":N,"event":<json>,"crc":"<8 hex>"}\n`, where `crc` is CRC-32C over the
//! exact bytes of the line before `,"crc":`. A session log's lines also carry
//! `,"tag":"<64 hex>"` before the CRC ([`crate::log_seal`]), which the CRC covers.
//!
//! **Key decision:** a line that ends in its newline was written whole, so if it fails its
//! check it is corruption, never a torn write. Only the final line without its newline can be
//! the remains of an interrupted write, and only when it could be the start of the record that
//! comes next: a prefix of `{"seq":<next>,"event":…`, possibly followed by the NUL bytes some
//! filesystems show for blocks that never reached the device before a crash. Anything else at
//! the end (a complete record followed by something other than a newline, an earlier seq,
//! garbage) is corruption too, so no acknowledged event is ever dropped as if it were torn.

use serde::Deserialize;
use serde_json::Value;

use crate::log_seal::{LogSeal, append_tag};

/// `,"crc":"` + 8 hex + `"}`.
pub(crate) const CRC_SUFFIX_LEN: usize = 18;
pub(crate) const CRC_PREFIX: &[u8] = b",\"crc\":\"";

/// One acknowledged event.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its sequence number; consecutive within a log, starting at 1.
    pub seq: u64,
    /// The event exactly as appended.
    pub event: Value,
}

/// Appends the encoded line (newline included) for `event` at `seq` to `out`, tagged when
/// `seal` is given.
pub(crate) fn encode_record(out: &mut Vec<u8>, seq: u64, event: &[u8], seal: Option<&LogSeal>) {
    let start = out.len();
    out.extend_from_slice(b"{\"seq\":");
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(b",\"event\":");
    out.extend_from_slice(event);
    if let Some(seal) = seal {
        append_tag(out, start, seal);
    }
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(CRC_PREFIX);
    out.extend_from_slice(format!("{crc:08x}\"}}\n").as_bytes());
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordWire {
    seq: u64,
    event: Value,
    /// Checked only against a seal ([`crate::log_seal::check_line`]), never by decoding.
    #[serde(default)]
    tag: Option<serde::de::IgnoredAny>,
    #[allow(dead_code)]
    crc: String,
}

/// Checks one complete line (without its newline) and decodes it.
pub(crate) fn decode_record(line: &[u8]) -> Result<Record, String> {
    decode_line(line).map(|(record, _)| record)
}

/// [`decode_record`], and whether the line has a `tag` field.
pub(crate) fn decode_line(line: &[u8]) -> Result<(Record, bool), String> {
    checked_body(line)?;
    let wire: RecordWire =
        serde_json::from_slice(line).map_err(|err| format!("record is not valid JSON: {err}"))?;
    Ok((
        Record {
            seq: wire.seq,
            event: wire.event,
        },
        wire.tag.is_some(),
    ))
}

/// Checks that a line ends in a checksum that matches the bytes before it.
fn checked_body(line: &[u8]) -> Result<(), String> {
    if line.len() < CRC_SUFFIX_LEN {
        return Err("record too short to hold a checksum".into());
    }
    let (covered, suffix) = line.split_at(line.len() - CRC_SUFFIX_LEN);
    if !suffix.starts_with(CRC_PREFIX) || !suffix.ends_with(b"\"}") {
        return Err("record does not end with a \"crc\" field".into());
    }
    let stored = parse_crc(&suffix[CRC_PREFIX.len()..CRC_PREFIX.len() + 8])
        .ok_or("checksum is not 8 lowercase hex digits")?;
    let actual = crc32c::crc32c(covered);
    if stored != actual {
        return Err(format!(
            "checksum mismatch: stored {stored:08x}, computed {actual:08x}"
        ));
    }
    Ok(())
}

fn parse_crc(hex: &[u8]) -> Option<u32> {
    if hex.len() != 8 || !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    std::str::from_utf8(hex)
        .ok()
        .and_then(|h| u32::from_str_radix(h, 16).ok())
}

/// Whether `fragment`, the bytes after the last newline of a log whose next record would be
/// `next_seq`, can be what an interrupted write of that record left behind. `Err` says why not.
pub(crate) fn check_torn_fragment(fragment: &[u8], next_seq: u64) -> Result<(), String> {
    // Blocks allocated but never written before a crash read as zeros up to the end.
    let body_len = fragment
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |last| last + 1);
    let body = &fragment[..body_len];
    if body.contains(&0) {
        return Err("the last line holds a NUL byte, which no record contains".into());
    }
    let header = format!("{{\"seq\":{next_seq},\"event\":");
    let header = header.as_bytes();
    if !(header.starts_with(body) || body.starts_with(header)) {
        return Err(format!(
            "the last line has no newline and is not the start of record {next_seq}"
        ));
    }
    if let Some(end) = complete_record_end(body)
        && end < body.len()
    {
        return Err(format!(
            "record {next_seq} is complete but followed by {:?} instead of a newline",
            String::from_utf8_lossy(&body[end..(end + 8).min(body.len())])
        ));
    }
    Ok(())
}

/// The end of the first complete, checksummed record at the start of `body`, if there is one.
fn complete_record_end(body: &[u8]) -> Option<usize> {
    let mut crc = 0u32;
    let mut covered = 0;
    for at in memchr::memmem::find_iter(body, CRC_PREFIX) {
        crc = crc32c::crc32c_append(crc, &body[covered..at]);
        covered = at;
        let end = at + CRC_SUFFIX_LEN;
        let Some(suffix) = body.get(at..end) else {
            break;
        };
        let stored = parse_crc(&suffix[CRC_PREFIX.len()..CRC_PREFIX.len() + 8]);
        if suffix.ends_with(b"\"}") && stored == Some(crc) {
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64, event: &str) -> Vec<u8> {
        let mut out = Vec::new();
        encode_record(&mut out, seq, event.as_bytes(), None);
        out
    }

    #[test]
    fn an_encoded_line_decodes_to_its_seq_and_event() {
        let encoded = line(7, r#"{"a":"b\nc"}"#);
        assert_eq!(encoded.last(), Some(&b'\n'));
        let record = decode_record(&encoded[..encoded.len() - 1]).unwrap();
        assert_eq!(record.seq, 7);
        assert_eq!(record.event, serde_json::json!({"a": "b\nc"}));
    }

    #[test]
    fn every_prefix_of_the_next_record_is_a_torn_write() {
        let seal = LogSeal::new(&crate::LogKey::from_bytes(&[3; 32]), "s");
        let event = r#"{"crc":"00000000","tag":"00","k":1}"#;
        let untagged = line(12, event);
        let mut tagged = Vec::new();
        encode_record(&mut tagged, 12, event.as_bytes(), Some(&seal));
        for encoded in [untagged, tagged] {
            every_prefix_is_torn(&encoded);
        }
    }

    fn every_prefix_is_torn(encoded: &[u8]) {
        // Up to the record without its newline: each is a write cut short.
        for cut in 0..encoded.len() {
            assert_eq!(
                check_torn_fragment(&encoded[..cut], 12),
                Ok(()),
                "cut {cut}"
            );
            let mut zeroed = encoded[..cut].to_vec();
            zeroed.extend_from_slice(&[0; 700]);
            assert_eq!(check_torn_fragment(&zeroed, 12), Ok(()), "cut {cut} + NULs");
        }
    }

    #[test]
    fn what_no_interrupted_write_of_the_next_record_leaves_is_not_torn() {
        let encoded = line(3, "{}");
        let whole = &encoded[..encoded.len() - 1];
        let mut flipped_newline = whole.to_vec();
        flipped_newline.push(b'\n' ^ 1);
        let mut nul_inside = encoded[..5].to_vec();
        nul_inside.push(0);
        nul_inside.extend_from_slice(&encoded[6..encoded.len() - 1]);
        let cases: [(&[u8], u64, &str); 5] = [
            (&flipped_newline, 3, "instead of a newline"),
            (whole, 4, "start of record 4"),
            (b"garbage", 3, "start of record 3"),
            (&nul_inside, 3, "NUL"),
            (b"{\"seq\":30", 3, "start of record 3"),
        ];
        for (fragment, next, why) in cases {
            let err = check_torn_fragment(fragment, next).unwrap_err();
            assert!(err.contains(why), "{fragment:?}: {err}");
        }
        // A shorter seq is a prefix of a longer one only in the right direction.
        assert_eq!(check_torn_fragment(b"{\"seq\":3", 30), Ok(()));
    }
}
