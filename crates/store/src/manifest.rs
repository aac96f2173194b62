//! The generic manifest that names the artifacts of a multi-stream output.

use serde::{Deserialize, Serialize};

use crate::ArtifactId;

/// The `kind` tag every manifest carries.
pub const MANIFEST_KIND: &str = "tackle.manifest.v1";

/// A named output: one artifact per declared stream, in declaration order.
///
/// Encoded as `{"kind":"tackle.manifest.v1","streams":[...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ManifestWire", into = "ManifestWire")]
pub struct Manifest {
    /// The streams, in declaration order.
    pub streams: Vec<ManifestStream>,
}

/// One stream of a [`Manifest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestStream {
    /// The declared stream name, e.g. `stdout`.
    pub name: String,
    /// The stream's artifact, encoded as `artifact://sha256/<hex>`.
    #[serde(with = "internal_uri")]
    pub artifact: ArtifactId,
    /// Length in bytes.
    pub bytes: u64,
    /// Number of lines.
    pub lines: u64,
}

impl Manifest {
    /// A manifest over `streams`.
    pub fn new(streams: Vec<ManifestStream>) -> Self {
        Self { streams }
    }

    /// Parses `bytes` as a manifest; anything else (including other JSON) is `None`.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        // Cheap rejection before a full parse: the janitor calls this on arbitrary artifacts.
        let trimmed = bytes.trim_ascii_start();
        if !trimmed.starts_with(b"{") || !contains(bytes, MANIFEST_KIND.as_bytes()) {
            return None;
        }
        serde_json::from_slice(bytes).ok()
    }

    /// The stream called `name`, if declared.
    pub fn stream(&self, name: &str) -> Option<&ManifestStream> {
        self.streams.iter().find(|s| s.name == name)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestWire {
    kind: String,
    streams: Vec<ManifestStream>,
}

impl TryFrom<ManifestWire> for Manifest {
    type Error = String;

    fn try_from(wire: ManifestWire) -> Result<Self, Self::Error> {
        if wire.kind != MANIFEST_KIND {
            return Err(format!(
                "manifest: kind is {:?}, expected {MANIFEST_KIND:?}",
                wire.kind
            ));
        }
        Ok(Self {
            streams: wire.streams,
        })
    }
}

impl From<Manifest> for ManifestWire {
    fn from(manifest: Manifest) -> Self {
        Self {
            kind: MANIFEST_KIND.to_owned(),
            streams: manifest.streams,
        }
    }
}

mod internal_uri {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::ArtifactId;

    pub(super) fn serialize<S: Serializer>(id: &ArtifactId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&id.internal_uri())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ArtifactId, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ArtifactId::from_internal_uri(&text).ok_or_else(|| {
            serde::de::Error::custom("manifest: artifact must be artifact://sha256/<64 hex>")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_wire_format_round_trips() {
        let id = ArtifactId::of(b"hello\n");
        let manifest = Manifest::new(vec![ManifestStream {
            name: "stdout".into(),
            artifact: id,
            bytes: 6,
            lines: 1,
        }]);
        let json = serde_json::to_string(&manifest).unwrap();
        assert_eq!(
            json,
            format!(
                r#"{{"kind":"tackle.manifest.v1","streams":[{{"name":"stdout","artifact":"artifact://sha256/{id}","bytes":6,"lines":1}}]}}"#
            )
        );
        assert_eq!(Manifest::parse(json.as_bytes()), Some(manifest));
    }

    #[test]
    fn parse_rejects_other_kinds_and_non_json() {
        assert_eq!(Manifest::parse(b"plain text"), None);
        assert_eq!(Manifest::parse(br#"{"kind":"other","streams":[]}"#), None);
        assert_eq!(
            Manifest::parse(br#"{"kind":"tackle.manifest.v1","streams":[{"name":"x","artifact":"artifact://abc","bytes":0,"lines":0}]}"#),
            None
        );
    }
}
