//! `S3Artifacts`: content-addressed artifacts in an S3-compatible bucket.
//!
//! **Key decision:** an artifact's key is its digest, `<prefix>/cas/sha256/<h0h1>/<h2h3>/<hex>`
//! (the first bytes spread keys across the store's partitions), and every write to it is
//! create-only (`PutMode::Create`, `If-None-Match: *`): the object under a key never changes,
//! and "already exists" is success. Large outputs go up in parts to a staging key and are then
//! copied create-only onto their digest's key, since a multipart upload's own key must be
//! chosen before its digest is known. Bytes are hashed on their first read in this process and
//! a mismatch is an error naming the key, never bytes returned. Rejected: HEAD before PUT,
//! which doubles the requests of every publication to save a write that the condition
//! already refuses.
//!
//! What is referenced lives in PostgreSQL (`artifact_refs`); see [`crate::ArtifactGc`] for the
//! collection and [`S3Artifacts::publish`] for the order that keeps it safe.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, S3CopyIfNotExists};
use object_store::path::Path;
use object_store::{
    CopyMode, CopyOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    WriteMultipart,
};
use sha2::{Digest, Sha256};
use tackle_store::ArtifactId;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::s3_http::RingConnector;
use crate::{FleetDb, FleetError};

/// Outputs at least this large go up in parts.
pub const MULTIPART_THRESHOLD: usize = 8 * 1024 * 1024;

/// The size of each part but the last (S3 wants at least 5 MiB).
const PART_SIZE: usize = 8 * 1024 * 1024;

/// Parts in flight at once during a multipart upload.
const PARTS_IN_FLIGHT: usize = 4;

/// How the S3 client authenticates.
#[derive(Clone)]
pub enum S3Credentials {
    /// The usual AWS chain: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` (and session token),
    /// web identity, container or instance credentials.
    Environment,
    /// Given keys (a test store, or keys the caller read from its own secret store).
    Static {
        access_key_id: String,
        secret_access_key: String,
    },
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Environment => f.write_str("Environment"),
            Self::Static { access_key_id, .. } => f
                .debug_struct("Static")
                .field("access_key_id", access_key_id)
                .field("secret_access_key", &"***")
                .finish(),
        }
    }
}

/// Where the bucket is.
#[derive(Debug, Clone)]
pub struct S3Settings {
    /// The S3 API's URL for a store other than AWS (path-style requests); `None` for AWS.
    pub endpoint: Option<String>,
    pub bucket: String,
    pub region: String,
    /// Keys start with it (no leading or trailing `/` needed); may be empty.
    pub prefix: String,
    /// Allow a plain `http://` endpoint (a store on loopback).
    pub allow_http: bool,
    pub credentials: S3Credentials,
}

/// What a put stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PutArtifact {
    /// The artifact's digest.
    pub id: ArtifactId,
    /// Its length.
    pub bytes: u64,
    /// This put wrote the object (`false`: it was there already).
    pub created: bool,
}

/// A content-addressed artifact store in a bucket. Cheap to clone.
#[derive(Clone)]
pub struct S3Artifacts {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// Artifacts whose bytes this process has hashed and found right.
    verified: Arc<Mutex<HashSet<ArtifactId>>>,
}

impl fmt::Debug for S3Artifacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Artifacts")
            .field("store", &self.store.to_string())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl S3Artifacts {
    /// Where the objects are, for a person: the store and the key prefix.
    pub fn describe(&self) -> String {
        match self.prefix.as_str() {
            "" => self.store.to_string(),
            prefix => format!("{} under {prefix}/", self.store),
        }
    }

    /// An S3 client for `settings`. Nothing is sent until the first call.
    pub fn connect(settings: &S3Settings) -> Result<Self, FleetError> {
        let builder = match &settings.credentials {
            S3Credentials::Environment => AmazonS3Builder::from_env(),
            S3Credentials::Static {
                access_key_id,
                secret_access_key,
            } => AmazonS3Builder::new()
                .with_access_key_id(access_key_id)
                .with_secret_access_key(secret_access_key),
        };
        let mut builder = builder
            .with_bucket_name(&settings.bucket)
            .with_region(&settings.region)
            .with_allow_http(settings.allow_http)
            .with_copy_if_not_exists(S3CopyIfNotExists::Multipart)
            .with_http_connector(RingConnector {
                allow_http: settings.allow_http,
            });
        if let Some(endpoint) = &settings.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        let store = builder.build().map_err(|e| FleetError::S3Settings {
            reason: e.to_string(),
        })?;
        Ok(Self::with_store(Arc::new(store), &settings.prefix))
    }

    /// Artifacts under `prefix` in any object store (a local directory, an in-memory store).
    pub fn with_store(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        Self {
            store,
            prefix: prefix.trim_matches('/').to_owned(),
            verified: Arc::new(Mutex::new(HashSet::new())),
        }
    }

    /// The store underneath, for what this type does not offer (listing staging keys).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// `<prefix>/cas/sha256/<h0h1>/<h2h3>/<hex>`.
    pub fn key(&self, id: ArtifactId) -> Path {
        let hex = id.to_hex();
        Path::from(format!(
            "{}cas/sha256/{}/{}/{hex}",
            self.dir_prefix(),
            &hex[..2],
            &hex[2..4]
        ))
    }

    /// Where every artifact key starts.
    pub fn cas_prefix(&self) -> Path {
        Path::from(format!("{}cas/sha256", self.dir_prefix()))
    }

    fn dir_prefix(&self) -> String {
        if self.prefix.is_empty() {
            String::new()
        } else {
            format!("{}/", self.prefix)
        }
    }

    /// The artifact a key names, if it is an artifact key of this store.
    pub fn id_of_key(&self, key: &Path) -> Option<ArtifactId> {
        let rest = key
            .as_ref()
            .strip_prefix(self.cas_prefix().as_ref())?
            .strip_prefix('/')?;
        let mut parts = rest.split('/');
        let (a, b, hex) = (parts.next()?, parts.next()?, parts.next()?);
        let id = ArtifactId::from_hex(hex)?;
        (parts.next().is_none() && hex.get(..2) == Some(a) && hex.get(2..4) == Some(b))
            .then_some(id)
    }

    /// Stores `bytes` under their digest, create-only; in parts from
    /// [`MULTIPART_THRESHOLD`] on.
    pub async fn put(&self, bytes: Bytes) -> Result<PutArtifact, FleetError> {
        if bytes.len() >= MULTIPART_THRESHOLD {
            return self.put_stream(&mut bytes.as_ref()).await;
        }
        self.put_one(bytes).await
    }

    /// [`S3Artifacts::put`] in one request.
    async fn put_one(&self, bytes: Bytes) -> Result<PutArtifact, FleetError> {
        let id = ArtifactId::of(&bytes);
        let len = bytes.len() as u64;
        let created = self.put_create(id, PutPayload::from(bytes)).await?;
        Ok(PutArtifact {
            id,
            bytes: len,
            created,
        })
    }

    /// Stores what `reader` yields under its digest: in one request below
    /// [`MULTIPART_THRESHOLD`], else in parts to a staging key, then copied create-only onto
    /// the digest's key and the staging object removed.
    pub async fn put_stream(
        &self,
        reader: &mut (impl AsyncRead + Unpin + ?Sized),
    ) -> Result<PutArtifact, FleetError> {
        let mut hasher = Sha256::new();
        let mut head = Vec::with_capacity(64 * 1024);
        let full = read_up_to(reader, &mut head, MULTIPART_THRESHOLD).await?;
        if !full {
            return self.put_one(Bytes::from(head)).await;
        }
        let staging = Path::from(format!(
            "{}staging/{}",
            self.dir_prefix(),
            hex::encode(rand::random::<[u8; 16]>())
        ));
        let upload = self
            .store
            .put_multipart(&staging)
            .await
            .map_err(FleetError::object_store(
                "start a multipart upload to",
                &staging,
            ))?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
        hasher.update(&head);
        writer.write(&head);
        let mut total = head.len() as u64;
        drop(head);
        let mut buf = vec![0u8; 1024 * 1024];
        let streamed: Result<(), FleetError> = async {
            loop {
                let n = reader
                    .read(&mut buf)
                    .await
                    .map_err(|e| FleetError::ObjectStore {
                        action: "read the output for",
                        key: staging.to_string(),
                        detail: e.to_string(),
                    })?;
                if n == 0 {
                    return Ok(());
                }
                hasher.update(&buf[..n]);
                total += n as u64;
                writer
                    .wait_for_capacity(PARTS_IN_FLIGHT)
                    .await
                    .map_err(FleetError::object_store("upload a part to", &staging))?;
                writer.write(&buf[..n]);
            }
        }
        .await;
        if let Err(e) = streamed {
            let _ = writer.abort().await;
            return Err(e);
        }
        writer.finish().await.map_err(FleetError::object_store(
            "complete the multipart upload to",
            &staging,
        ))?;
        let id = ArtifactId::from_bytes(hasher.finalize().into());
        let key = self.key(id);
        let copied = self
            .store
            .copy_opts(
                &staging,
                &key,
                CopyOptions {
                    mode: CopyMode::Create,
                    ..CopyOptions::default()
                },
            )
            .await;
        let created = match copied {
            Ok(()) => true,
            Err(object_store::Error::AlreadyExists { .. }) => false,
            Err(e) => {
                let _ = self.store.delete(&staging).await;
                return Err(FleetError::object_store("copy the staged upload to", &key)(
                    e,
                ));
            }
        };
        self.store
            .delete(&staging)
            .await
            .map_err(FleetError::object_store(
                "remove the staged upload",
                &staging,
            ))?;
        Ok(PutArtifact {
            id,
            bytes: total,
            created,
        })
    }

    /// The artifact's bytes, hashed on the first read in this process: a mismatch is
    /// [`FleetError::DigestMismatch`] naming the key (and is reported on every read).
    pub async fn get(&self, id: ArtifactId) -> Result<Bytes, FleetError> {
        let key = self.key(id);
        let missing = |e: object_store::Error| match e {
            object_store::Error::NotFound { .. } => FleetError::ArtifactMissing {
                id,
                key: key.to_string(),
            },
            e => FleetError::object_store("read", &key)(e),
        };
        let result = self.store.get(&key).await.map_err(missing)?;
        if self.is_verified(id) {
            return result.bytes().await.map_err(missing);
        }
        // Hashed chunk by chunk as they arrive, so the hashing overlaps the transfer.
        let mut bytes = BytesMut::with_capacity(usize::try_from(result.meta.size).unwrap_or(0));
        let mut hasher = Sha256::new();
        let mut chunks = result.into_stream();
        while let Some(chunk) = chunks.try_next().await.map_err(missing)? {
            hasher.update(&chunk);
            bytes.extend_from_slice(&chunk);
        }
        let actual = ArtifactId::from_bytes(hasher.finalize().into());
        if actual != id {
            return Err(FleetError::DigestMismatch {
                key: key.to_string(),
                expected: id,
                actual,
            });
        }
        self.lock_verified().insert(id);
        Ok(bytes.freeze())
    }

    /// Whether an object exists under the artifact's key (its bytes are not checked).
    pub async fn exists(&self, id: ArtifactId) -> Result<bool, FleetError> {
        let key = self.key(id);
        match self.store.head(&key).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(FleetError::object_store("look up", &key)(e)),
        }
    }

    /// Stores `bytes` and records that `session`'s event `seq` references them, in the order
    /// that keeps a concurrent collection from losing them: the object, then the reference
    /// (which clears any collection candidate in the same transaction), then a check that the
    /// object is still there; a collection that removed it in between is undone by writing
    /// it again. From the reference's commit on, no collection removes it.
    pub async fn publish(
        &self,
        db: &FleetDb,
        bytes: Bytes,
        session: &str,
        seq: u64,
    ) -> Result<PutArtifact, FleetError> {
        let put = self.put(bytes.clone()).await?;
        record_reference(db, put.id, session, seq).await?;
        if !self.exists(put.id).await? {
            let again = self.put(bytes).await?;
            return Ok(PutArtifact {
                created: true,
                ..again
            });
        }
        Ok(put)
    }

    /// One create-only PUT; `false` when the object was there already.
    async fn put_create(&self, id: ArtifactId, payload: PutPayload) -> Result<bool, FleetError> {
        let key = self.key(id);
        match self
            .store
            .put_opts(&key, payload, PutOptions::from(PutMode::Create))
            .await
        {
            Ok(_) => Ok(true),
            // 412 and 304 both mean the key is taken; with content addressing that is this
            // very content.
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(FleetError::object_store("write", &key)(e)),
        }
    }

    fn is_verified(&self, id: ArtifactId) -> bool {
        self.lock_verified().contains(&id)
    }

    fn lock_verified(&self) -> std::sync::MutexGuard<'_, HashSet<ArtifactId>> {
        // Only ever inserted into: a panic elsewhere cannot leave it inconsistent.
        self.verified
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Records that `session`'s event `seq` references `id` and clears `id`'s collection
/// candidate, in one transaction: a collector that chose it waits on the candidate's row and
/// has deleted the object by the time this commits, or finds the reference and keeps it.
pub async fn record_reference(
    db: &FleetDb,
    id: ArtifactId,
    session: &str,
    seq: u64,
) -> Result<(), FleetError> {
    let hex = id.to_hex();
    let seq = i64::try_from(seq).unwrap_or(i64::MAX);
    let mut client = db.client().await?;
    let tx = client
        .transaction()
        .await
        .map_err(FleetError::db("begin an artifact reference"))?;
    tx.execute(
        "INSERT INTO artifact_refs (sha256, session_id, seq) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
        &[&hex, &session, &seq],
    )
    .await
    .map_err(FleetError::db("record an artifact reference"))?;
    tx.execute("DELETE FROM gc_candidates WHERE sha256 = $1", &[&hex])
        .await
        .map_err(FleetError::db("clear a collection candidate"))?;
    tx.commit()
        .await
        .map_err(FleetError::db("commit an artifact reference"))
}

/// Reads into `buf` until it holds `limit` bytes or the reader ends; `true` when it is full
/// (the reader may have more).
async fn read_up_to(
    reader: &mut (impl AsyncRead + Unpin + ?Sized),
    buf: &mut Vec<u8>,
    limit: usize,
) -> Result<bool, FleetError> {
    let mut chunk = vec![0u8; 256 * 1024];
    while buf.len() < limit {
        let want = (limit - buf.len()).min(chunk.len());
        let n = reader
            .read(&mut chunk[..want])
            .await
            .map_err(|e| FleetError::ObjectStore {
                action: "read the output for",
                key: "a new artifact".to_owned(),
                detail: e.to_string(),
            })?;
        if n == 0 {
            return Ok(false);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;

    use super::*;

    #[test]
    fn keys_spread_by_the_digest_and_parse_back() {
        let id = ArtifactId::of(b"hello");
        let hex = id.to_hex();
        for (prefix, start) in [("", ""), ("/team/a/", "team/a/"), ("x", "x/")] {
            let store = S3Artifacts::with_store(Arc::new(InMemory::new()), prefix);
            let key = store.key(id);
            assert_eq!(
                key.as_ref(),
                format!("{start}cas/sha256/{}/{}/{hex}", &hex[..2], &hex[2..4])
            );
            assert_eq!(store.id_of_key(&key), Some(id));
        }
        let store = S3Artifacts::with_store(Arc::new(InMemory::new()), "p");
        for wrong in [
            format!("p/cas/sha256/00/00/{hex}"),
            format!("p/cas/sha256/{hex}"),
            format!("q/cas/sha256/{}/{}/{hex}", &hex[..2], &hex[2..4]),
            "p/staging/abc".to_owned(),
        ] {
            assert_eq!(
                store.id_of_key(&Path::from(wrong.as_str())),
                None,
                "{wrong}"
            );
        }
    }

    #[test]
    fn a_secret_key_is_not_in_debug_output() {
        let settings = S3Settings {
            endpoint: None,
            bucket: "b".into(),
            region: "us-east-1".into(),
            prefix: String::new(),
            allow_http: false,
            credentials: S3Credentials::Static {
                access_key_id: "AKIAEXAMPLE".into(),
                secret_access_key: "wJalrXUtnFEMI-secret".into(),
            },
        };
        let shown = format!("{settings:?}");
        assert!(
            shown.contains("AKIAEXAMPLE") && !shown.contains("wJalr"),
            "{shown}"
        );
    }
}
