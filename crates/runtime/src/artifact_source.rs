//! The store seen through the tool crate's `ArtifactSource`: public URIs in, verified files out.

use std::sync::Arc;

use tackle_protocol::{ArtifactUri, ErrorCode};
use tackle_store::{ArtifactId, ArtifactStore, Manifest};
use tackle_tool::{ArtifactSource, OpenedArtifact, ToolError};

use crate::retention::capture::store_error;

pub struct StoreArtifacts {
    store: Arc<ArtifactStore>,
}

impl StoreArtifacts {
    pub fn new(store: Arc<ArtifactStore>) -> Self {
        Self { store }
    }

    fn open_id(&self, id: ArtifactId) -> Result<OpenedArtifact, ToolError> {
        let file = self.store.open_artifact(id).map_err(store_error)?;
        let bytes = file
            .metadata()
            .map_err(|e| ToolError::io("artifact", &e))?
            .len();
        Ok(OpenedArtifact {
            file,
            digest: *id.as_bytes(),
            bytes,
        })
    }
}

impl ArtifactSource for StoreArtifacts {
    fn open(&self, uri: &ArtifactUri) -> Result<OpenedArtifact, ToolError> {
        let id = ArtifactId::from_hex(uri.digest_hex()).ok_or_else(|| {
            ToolError::new(
                ErrorCode::INVALID_ARTIFACT_URI,
                format!("bad artifact digest in {uri}"),
            )
        })?;
        let Some(stream) = uri.stream() else {
            return self.open_id(id);
        };
        let bytes = self.store.read(id).map_err(store_error)?;
        let Some(manifest) = Manifest::parse(&bytes) else {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARTIFACT_URI,
                format!(
                    "artifact {} is not a manifest of named streams, so it has no stream \
                     `{stream}`; read artifact://{} without a suffix",
                    id.to_hex(),
                    id.to_hex()
                ),
            ));
        };
        let Some(entry) = manifest.streams.iter().find(|s| s.name == stream.as_str()) else {
            let names: Vec<&str> = manifest.streams.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::new(
                ErrorCode::NOT_FOUND,
                format!(
                    "artifact {} has no stream `{stream}`; its streams are: {}",
                    id.to_hex(),
                    names.join(", ")
                ),
            ));
        };
        self.open_id(entry.artifact)
    }
}
