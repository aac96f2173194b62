//! Call arguments too large for the event log: stored as an artifact and named from
//! `call_started` by digest.
//!
//! **Key decision:** the log keeps what a call was, not what it carried. A `write_file` of
//! megabytes put its whole content into the log, so every `--session` reopen, every history
//! scan and every janitor pass paid for it again. Above [`ARGUMENTS_INLINE_LIMIT`] bytes of JSON
//! the arguments become an artifact — published and fsynced (file and directory) before the
//! `call_started` naming it is written, under a publication guard held until that record is in
//! the file, so neither a crash nor the janitor can leave the record naming nothing. The janitor
//! keeps it as it keeps any artifact a log line names. If the store cannot take them, the
//! arguments stay inline: a longer log, nothing lost.

use serde_json::Value;
use tackle_protocol::{CallStarted, StoredArguments, ToolCall};
use tackle_store::{ArtifactId, ArtifactStore, Durability, PublicationGuard};

use crate::clock::now_ms;
use crate::error::RuntimeError;

/// Arguments whose JSON is longer than this are stored as an artifact instead of inline.
pub const ARGUMENTS_INLINE_LIMIT: usize = 64 * 1024;

/// A `call_started` ready to append, with the guard that keeps its stored arguments (if any)
/// from the janitor until it is written.
pub(crate) struct StartRecord {
    pub event: CallStarted,
    pub guard: Option<PublicationGuard>,
}

/// Whether `call`'s arguments are too large to record inline (the cheap check, so small calls
/// never leave the executor).
pub(crate) fn too_large_for_the_log(call: &ToolCall) -> bool {
    let mut counter = ByteCount(0);
    // Counting stops early: once past the limit, the writer fails and the answer is known.
    let _ = serde_json::to_writer(&mut counter, &call.arguments);
    counter.0 > ARGUMENTS_INLINE_LIMIT
}

/// Counts bytes written and fails once past the limit, so sizing huge arguments is cheap.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        if self.0 > ARGUMENTS_INLINE_LIMIT {
            return Err(std::io::Error::other("past the inline limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `call_started` for `call`: arguments inline, or stored in `store` when their JSON is
/// longer than [`ARGUMENTS_INLINE_LIMIT`]. Blocks on the device when it stores them.
pub(crate) fn start_record(call: &ToolCall, store: &ArtifactStore) -> StartRecord {
    let inline = |guard| StartRecord {
        event: CallStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            stored_arguments: None,
            at_ms: now_ms(),
        },
        guard,
    };
    if !too_large_for_the_log(call) {
        return inline(None);
    }
    let Ok(json) = serde_json::to_vec(&call.arguments) else {
        return inline(None);
    };
    // Taken before publication, dropped once the record naming the artifact is written.
    let Ok(guard) = store.publication_guard() else {
        return inline(None);
    };
    match store.put_with(&json, Durability::Synced) {
        Ok(info) => StartRecord {
            event: CallStarted {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: Value::Null,
                stored_arguments: Some(StoredArguments {
                    artifact: info.id.internal_uri(),
                    bytes: info.bytes,
                }),
                at_ms: now_ms(),
            },
            guard: Some(guard),
        },
        Err(_) => inline(Some(guard)),
    }
}

/// The arguments a `call_started` records: inline, or read back (and verified against their
/// digest) from the store.
pub(crate) fn recorded_arguments(
    store: &ArtifactStore,
    started: &CallStarted,
) -> Result<Value, RuntimeError> {
    let Some(stored) = &started.stored_arguments else {
        return Ok(started.arguments.clone());
    };
    let unreadable = |reason: String| RuntimeError::StoredArguments {
        call_id: started.call_id.0.clone(),
        artifact: stored.artifact.clone(),
        reason,
    };
    let id = ArtifactId::from_internal_uri(&stored.artifact)
        .ok_or_else(|| unreadable("it is not an artifact://sha256/<hex> reference".into()))?;
    let json = store.read(id)?;
    serde_json::from_slice(&json).map_err(|e| unreadable(format!("it is not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tackle_protocol::CallId;

    use super::*;

    fn call(arguments: Value) -> ToolCall {
        ToolCall {
            id: CallId("c1".into()),
            name: "write_file".into(),
            arguments,
        }
    }

    #[test]
    fn arguments_up_to_the_limit_stay_inline_and_larger_ones_are_stored() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        // `{"content":"…"}` is 14 bytes around the string.
        let at_limit = call(json!({"content": "x".repeat(ARGUMENTS_INLINE_LIMIT - 14)}));
        let over = call(json!({"content": "x".repeat(ARGUMENTS_INLINE_LIMIT - 13)}));
        assert!(!too_large_for_the_log(&at_limit));
        assert!(too_large_for_the_log(&over));

        let inline = start_record(&at_limit, &store);
        assert_eq!(inline.event.arguments, at_limit.arguments);
        assert!(inline.event.stored_arguments.is_none() && inline.guard.is_none());
        assert!(store.list().unwrap().is_empty());

        let stored = start_record(&over, &store);
        assert_eq!(stored.event.arguments, Value::Null);
        let reference = stored.event.stored_arguments.clone().unwrap();
        assert_eq!(reference.bytes, ARGUMENTS_INLINE_LIMIT as u64 + 1);
        assert!(
            stored.guard.is_some(),
            "the janitor waits until the record is written"
        );
        assert_eq!(
            recorded_arguments(&store, &stored.event).unwrap(),
            over.arguments
        );
        assert_eq!(
            recorded_arguments(&store, &inline.event).unwrap(),
            at_limit.arguments
        );
    }

    #[test]
    fn a_record_without_stored_arguments_reads_as_written_before_they_existed() {
        let old: CallStarted = serde_json::from_value(json!({
            "call_id": "c0", "tool": "write_file",
            "arguments": {"path": "a", "content": "b"}, "at_ms": 1
        }))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        assert_eq!(
            recorded_arguments(&store, &old).unwrap(),
            json!({"path": "a", "content": "b"})
        );
    }

    #[test]
    fn a_reference_to_something_else_is_an_error_naming_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let not_json = store.put(b"not json").unwrap();
        for (artifact, why) in [
            (not_json.id.internal_uri(), "not JSON"),
            ("file:///etc/passwd".to_owned(), "not an artifact"),
        ] {
            let started = CallStarted {
                call_id: CallId("c9".into()),
                tool: "write_file".into(),
                arguments: Value::Null,
                stored_arguments: Some(StoredArguments { artifact, bytes: 8 }),
                at_ms: 0,
            };
            let err = recorded_arguments(&store, &started)
                .unwrap_err()
                .to_string();
            assert!(err.contains("c9") && err.contains(why), "{err}");
        }
    }
}
