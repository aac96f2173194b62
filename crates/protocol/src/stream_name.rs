//! Names of declared output streams, shared by tool declarations and artifact URI suffixes.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A validated stream name: a case-sensitive ASCII path segment of 1 to 64 bytes made of letters,
/// digits, `_`, `-` and `.`, and never `.` or `..` alone. The same rule governs output
/// declarations and the `/<stream>` suffix of artifact URIs, so one validator serves both.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct StreamName(String);

/// Why a string is not a valid [`StreamName`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamNameError {
    Empty,
    TooLong { len: usize },
    DotSegment,
    BadByte { byte: u8, at: usize },
}

impl fmt::Display for StreamNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "stream name is empty; use 1 to 64 of [A-Za-z0-9_.-]"),
            Self::TooLong { len } => {
                write!(f, "stream name is {len} bytes; the limit is 64")
            }
            Self::DotSegment => write!(f, "stream name may not be `.` or `..`"),
            Self::BadByte { byte, at } => write!(
                f,
                "stream name has byte 0x{byte:02x} at {at}; only [A-Za-z0-9_.-] are allowed"
            ),
        }
    }
}

impl std::error::Error for StreamNameError {}

impl StreamName {
    pub const MAX_LEN: usize = 64;

    pub fn parse(s: &str) -> Result<Self, StreamNameError> {
        if s.is_empty() {
            return Err(StreamNameError::Empty);
        }
        if s.len() > Self::MAX_LEN {
            return Err(StreamNameError::TooLong { len: s.len() });
        }
        if s == "." || s == ".." {
            return Err(StreamNameError::DotSegment);
        }
        if let Some((at, &byte)) = s
            .as_bytes()
            .iter()
            .enumerate()
            .find(|(_, b)| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
        {
            return Err(StreamNameError::BadByte { byte, at });
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for StreamName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        StreamName::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_rejects_per_the_declaration_rules() {
        for ok in [
            "stdout",
            "a",
            "results.v2",
            "x-y_z",
            "..a",
            "a..",
            &"x".repeat(64),
        ] {
            assert!(StreamName::parse(ok).is_ok(), "{ok:?} should be accepted");
        }
        let cases: &[(&str, StreamNameError)] = &[
            ("", StreamNameError::Empty),
            (".", StreamNameError::DotSegment),
            ("..", StreamNameError::DotSegment),
            ("a/b", StreamNameError::BadByte { byte: b'/', at: 1 }),
            ("a b", StreamNameError::BadByte { byte: b' ', at: 1 }),
            ("é", StreamNameError::BadByte { byte: 0xc3, at: 0 }),
            ("a?q", StreamNameError::BadByte { byte: b'?', at: 1 }),
        ];
        for (input, want) in cases {
            assert_eq!(StreamName::parse(input).as_ref(), Err(want), "{input:?}");
        }
        assert_eq!(
            StreamName::parse(&"x".repeat(65)),
            Err(StreamNameError::TooLong { len: 65 })
        );
    }
}
