//! `ArtifactId`: the SHA-256 digest that names an artifact.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// The SHA-256 digest of an artifact's bytes, which is also its name in the store.
///
/// The textual form is exactly 64 lowercase hex characters; nothing else parses.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId([u8; 32]);

impl ArtifactId {
    /// Wraps a raw 32-byte digest.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw digest bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The id of `bytes`, computed in one pass.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// Parses exactly 64 lowercase hex characters; uppercase, prefixes and other lengths are
    /// rejected so one artifact has exactly one textual name.
    pub fn from_hex(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 || !bytes.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(bytes, &mut out).ok()?;
        Some(Self(out))
    }

    /// 64 lowercase hex characters.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The form shown to models and accepted by `read_file`: `artifact://<hex>`.
    pub fn public_uri(&self) -> String {
        format!("artifact://{}", self.to_hex())
    }

    /// The form stored in events and manifests: `artifact://sha256/<hex>`.
    pub fn internal_uri(&self) -> String {
        format!("artifact://sha256/{}", self.to_hex())
    }

    /// Parses the internal form `artifact://sha256/<hex>` and nothing else.
    pub fn from_internal_uri(uri: &str) -> Option<Self> {
        Self::from_hex(uri.strip_prefix("artifact://sha256/")?)
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        // The buffer is exactly twice the digest length, which is all encode_to_slice needs.
        hex::encode_to_slice(self.0, &mut buf).map_err(|_| fmt::Error)?;
        // Hex digits are ASCII, so this is valid UTF-8.
        f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArtifactId({self})")
    }
}

impl Serialize for ArtifactId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for ArtifactId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::from_hex(&text).ok_or_else(|| {
            serde::de::Error::custom("artifact id: expected 64 lowercase hex characters")
        })
    }
}

/// Finds every artifact reference inside `text`, in either URI form (`artifact://<hex>`,
/// possibly followed by `/<stream>`, or `artifact://sha256/<hex>`).
pub(crate) fn scan_references(text: &str, mut found: impl FnMut(ArtifactId)) {
    const SCHEME: &str = "artifact://";
    let mut rest = text;
    while let Some(at) = rest.find(SCHEME) {
        rest = &rest[at + SCHEME.len()..];
        let body = rest.strip_prefix("sha256/").unwrap_or(rest);
        if let Some(id) = body.get(..64).and_then(ArtifactId::from_hex) {
            found(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn hex_round_trip_and_uris() {
        let id = ArtifactId::from_hex(HEX).unwrap();
        assert_eq!(id, ArtifactId::of(b""));
        assert_eq!(id.to_hex(), HEX);
        assert_eq!(id.to_string(), HEX);
        assert_eq!(id.public_uri(), format!("artifact://{HEX}"));
        assert_eq!(id.internal_uri(), format!("artifact://sha256/{HEX}"));
        assert_eq!(ArtifactId::from_internal_uri(&id.internal_uri()), Some(id));
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{HEX}\""));
        let back: ArtifactId = serde_json::from_str(&format!("\"{HEX}\"")).unwrap();
        assert_eq!(back, id);
    }

    #[test]
    fn from_hex_rejects_everything_but_64_lowercase_hex() {
        assert!(ArtifactId::from_hex(&HEX.to_uppercase()).is_none());
        assert!(ArtifactId::from_hex(&HEX[..63]).is_none());
        assert!(ArtifactId::from_hex(&format!("{HEX}0")).is_none());
        assert!(ArtifactId::from_hex(&format!("{}g", &HEX[..63])).is_none());
        assert!(ArtifactId::from_hex("").is_none());
        assert!(serde_json::from_str::<ArtifactId>("\"abc\"").is_err());
    }

    #[test]
    fn scan_finds_both_forms_inside_longer_strings() {
        let mut ids = Vec::new();
        let text =
            format!("see artifact://{HEX}/stdout and artifact://sha256/{HEX}. artifact://nope");
        scan_references(&text, |id| ids.push(id));
        assert_eq!(ids.len(), 2);
        assert!(ids.iter().all(|id| id.to_hex() == HEX));
    }
}
