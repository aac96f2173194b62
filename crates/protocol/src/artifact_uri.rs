//! The public `artifact://` URI form that models use to page retained output.

use std::fmt;

use crate::stream_name::{StreamName, StreamNameError};

/// Length of a SHA-256 digest in lowercase hex.
pub const DIGEST_HEX_LEN: usize = 64;

/// A parsed public artifact URI: `artifact://<64 lowercase hex>` or
/// `artifact://<64 lowercase hex>/<stream>`.
///
/// Parsing is deliberately strict (seed 000, "Retained tool output"): bare hashes, the internal
/// `artifact://sha256/…` form, extra path segments, traversal, queries, fragments and uppercase
/// digests are all rejected, and a rejected URI never falls back to a filesystem read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArtifactUri {
    digest_hex: String,
    stream: Option<StreamName>,
}

/// Why a string is not a valid public artifact URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactUriError {
    /// The string does not start with `artifact://` (a bare hash, a path, another scheme).
    NotArtifactUri,
    /// The internal `artifact://sha256/<digest>` form is for stored references, not for reads.
    InternalForm,
    /// The URI carries a `?query` or `#fragment`.
    QueryOrFragment,
    /// The digest is not 64 lowercase hex characters.
    BadDigest,
    /// More than one segment follows the digest, or an empty one.
    ExtraSegments,
    /// The stream suffix is not a valid stream name (this includes `.` and `..`).
    BadStream(StreamNameError),
}

impl fmt::Display for ArtifactUriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const FORM: &str =
            "use artifact://<64 lowercase hex digest> or artifact://<digest>/<stream>";
        match self {
            Self::NotArtifactUri => write!(f, "not an artifact URI; {FORM}"),
            Self::InternalForm => {
                write!(f, "the artifact://sha256/ form is internal; {FORM}")
            }
            Self::QueryOrFragment => {
                write!(f, "artifact URIs take no query or fragment; {FORM}")
            }
            Self::BadDigest => {
                write!(
                    f,
                    "artifact digest must be 64 lowercase hex characters; {FORM}"
                )
            }
            Self::ExtraSegments => {
                write!(f, "artifact URI has extra path segments; {FORM}")
            }
            Self::BadStream(e) => write!(f, "bad artifact stream suffix: {e}"),
        }
    }
}

impl std::error::Error for ArtifactUriError {}

impl ArtifactUri {
    pub const SCHEME: &'static str = "artifact://";

    /// True when `s` claims the artifact scheme, i.e. must be parsed as an artifact URI and never
    /// treated as a path. Matching is case-insensitive so `ARTIFACT://…` cannot slip through to a
    /// filesystem read.
    pub fn claims(s: &str) -> bool {
        s.len() >= Self::SCHEME.len()
            && s.as_bytes()[..Self::SCHEME.len()].eq_ignore_ascii_case(Self::SCHEME.as_bytes())
    }

    pub fn parse(s: &str) -> Result<Self, ArtifactUriError> {
        let Some(rest) = s.strip_prefix(Self::SCHEME) else {
            return Err(ArtifactUriError::NotArtifactUri);
        };
        if rest.contains(['?', '#']) {
            return Err(ArtifactUriError::QueryOrFragment);
        }
        if rest.starts_with("sha256/") {
            return Err(ArtifactUriError::InternalForm);
        }
        let mut parts = rest.split('/');
        let digest = parts.next().unwrap_or_default();
        if !is_lower_hex_digest(digest) {
            return Err(ArtifactUriError::BadDigest);
        }
        let stream = match (parts.next(), parts.next()) {
            (None, _) => None,
            (Some(_), Some(_)) | (Some(""), None) => return Err(ArtifactUriError::ExtraSegments),
            (Some(name), None) => {
                Some(StreamName::parse(name).map_err(ArtifactUriError::BadStream)?)
            }
        };
        Ok(Self {
            digest_hex: digest.to_owned(),
            stream,
        })
    }

    pub fn digest_hex(&self) -> &str {
        &self.digest_hex
    }

    pub fn stream(&self) -> Option<&StreamName> {
        self.stream.as_ref()
    }

    /// The permission resource for reading this artifact: the public URI without the stream.
    pub fn resource(&self) -> String {
        format!("{}{}", Self::SCHEME, self.digest_hex)
    }
}

impl fmt::Display for ArtifactUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", Self::SCHEME, self.digest_hex)?;
        if let Some(s) = &self.stream {
            write!(f, "/{s}")?;
        }
        Ok(())
    }
}

fn is_lower_hex_digest(s: &str) -> bool {
    s.len() == DIGEST_HEX_LEN && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    /// Every accepted and rejected form named in seed 000, "Retained tool output".
    #[test]
    fn artifact_uri_table() {
        use ArtifactUriError::*;
        let upper = D.to_uppercase();
        let ok: &[(String, Option<&str>)] = &[
            (format!("artifact://{D}"), None),
            (format!("artifact://{D}/results"), Some("results")),
            (format!("artifact://{D}/stdout"), Some("stdout")),
            (format!("artifact://{D}/a.b-c_d"), Some("a.b-c_d")),
            (
                "artifact://0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
                    .into(),
                None,
            ),
        ];
        for (input, stream) in ok {
            let uri = ArtifactUri::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(uri.stream().map(StreamName::as_str), *stream);
            assert_eq!(uri.to_string(), *input);
        }
        let bad: &[(String, ArtifactUriError)] = &[
            (D.to_string(), NotArtifactUri),
            (format!("sha256:{D}"), NotArtifactUri),
            (format!("file://{D}"), NotArtifactUri),
            (format!("ARTIFACT://{D}"), NotArtifactUri),
            (format!("artifact:/{D}"), NotArtifactUri),
            (format!("artifact://sha256/{D}"), InternalForm),
            (format!("artifact://{D}/stdout/extra"), ExtraSegments),
            (format!("artifact://{D}/"), ExtraSegments),
            (format!("artifact://{D}//stdout"), ExtraSegments),
            (
                format!("artifact://{D}/.."),
                BadStream(StreamNameError::DotSegment),
            ),
            (
                format!("artifact://{D}/."),
                BadStream(StreamNameError::DotSegment),
            ),
            (format!("artifact://{D}/../../etc/passwd"), ExtraSegments),
            (format!("artifact://../{D}"), BadDigest),
            (format!("artifact://{D}?offset=3"), QueryOrFragment),
            (format!("artifact://{D}#frag"), QueryOrFragment),
            (format!("artifact://{D}/stdout?x"), QueryOrFragment),
            (format!("artifact://{upper}"), BadDigest),
            (format!("artifact://{}", &D[..63]), BadDigest),
            (format!("artifact://{D}a"), BadDigest),
            (format!("artifact://{}g", &D[..63]), BadDigest),
            ("artifact://".into(), BadDigest),
            (
                format!("artifact://{D}/std out"),
                BadStream(StreamNameError::BadByte { byte: b' ', at: 3 }),
            ),
            (
                format!("artifact://{D}/{}", "s".repeat(65)),
                BadStream(StreamNameError::TooLong { len: 65 }),
            ),
        ];
        for (input, want) in bad {
            assert_eq!(ArtifactUri::parse(input).as_ref(), Err(want), "{input}");
        }
    }

    #[test]
    fn claims_is_case_insensitive_so_no_variant_reaches_the_filesystem() {
        assert!(ArtifactUri::claims("artifact://x"));
        assert!(ArtifactUri::claims("ARTIFACT://x"));
        assert!(ArtifactUri::claims("Artifact://"));
        assert!(!ArtifactUri::claims("artifact:/x"));
        assert!(!ArtifactUri::claims("src/artifact://x"));
    }
}
