//! Session::resume checks who wrote a log before anything of it is used: the user's own
//! (every line tagged with the user's key for that session id) resumes; anything else is
//! refused unless the caller accepts it, and a refused log is left exactly as found.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::json;
use tackle_runtime::{
    ForeignLine, ForeignLogs, ForeignReason, LogKey, LogOrigin, RuntimeError, Session,
    SessionOptions, ToolFilter,
};
use tackle_store::{EventLog, session_log_path};

fn key(byte: u8) -> LogKey {
    LogKey::from_bytes(&[byte; 32])
}

fn log_of(root: &Path, id: &str) -> std::path::PathBuf {
    session_log_path(&Session::store_dir_for(&root.canonicalize().unwrap()), id)
}

/// A session of the user's (`key(1)`), and a child it opened; returns both ids.
fn own_sessions(root: &Path) -> (String, String) {
    let session = Session::open_sealed(root, SessionOptions::default(), &key(1)).unwrap();
    let child = session
        .open_child(Some("explorer".into()), ToolFilter::All)
        .unwrap();
    (session.id().0.clone(), child.id().0.clone())
}

#[test]
fn only_the_users_own_logs_resume_unless_a_foreign_one_is_accepted() {
    type Make = fn(&Path) -> String;
    let cases: [(&str, Make, Option<ForeignLine>); 6] = [
        ("own", |root| own_sessions(root).0, None),
        ("own child", |root| own_sessions(root).1, None),
        (
            "untagged (opened without a key)",
            |root| Session::open(root).unwrap().id().0.clone(),
            Some(ForeignLine {
                line: 1,
                reason: ForeignReason::Untagged,
            }),
        ),
        (
            "another user's key",
            |root| {
                Session::open_sealed(root, SessionOptions::default(), &key(2))
                    .unwrap()
                    .id()
                    .0
                    .clone()
            },
            Some(ForeignLine {
                line: 1,
                reason: ForeignReason::BadTag,
            }),
        ),
        (
            "own log copied to another id",
            |root| {
                let (id, _) = own_sessions(root);
                let copy = "20990101T000000Z-0000000000000000";
                let to = log_of(root, copy);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(log_of(root, &id), to).unwrap();
                copy.to_owned()
            },
            Some(ForeignLine {
                line: 1,
                reason: ForeignReason::BadTag,
            }),
        ),
        (
            "own log with a line appended without the key",
            |root| {
                let (id, _) = own_sessions(root);
                let (log, _) = EventLog::open(&log_of(root, &id)).unwrap();
                log.append(&json!({"type": "user_input", "text": "forged"}))
                    .unwrap();
                id
            },
            Some(ForeignLine {
                line: 2,
                reason: ForeignReason::Untagged,
            }),
        ),
    ];
    for (name, make, foreign) in cases {
        let dir = tempfile::tempdir().unwrap();
        let id = make(dir.path());
        let path = log_of(dir.path(), &id);
        let before = std::fs::read(&path).unwrap();
        let refused = Session::resume(dir.path(), &id, &key(1), ForeignLogs::Refuse);
        match (&foreign, refused) {
            (None, Ok(resumed)) => assert_eq!(resumed.origin, LogOrigin::Own, "{name}"),
            (Some(want), Err(RuntimeError::ForeignLog { id: got, first })) => {
                assert_eq!((&got, &first), (&id, want), "{name}");
                assert_eq!(
                    std::fs::read(&path).unwrap(),
                    before,
                    "{name}: left as found"
                );
            }
            (want, got) => panic!("{name}: wanted {want:?}, got {:?}", got.map(|r| r.origin)),
        }
        let accepted = Session::resume(dir.path(), &id, &key(1), ForeignLogs::Accept).unwrap();
        let want = foreign.map_or(LogOrigin::Own, LogOrigin::Foreign);
        assert_eq!(accepted.origin, want, "{name}");
        // What an accepted session appends is tagged; the lines before stay what they were.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(
            accepted
                .session
                .append_event(&tackle_protocol::Event::UserInput(
                    tackle_protocol::UserInput {
                        text: "next".into(),
                        at_ms: 0,
                    },
                )),
        )
        .unwrap();
        drop(accepted);
        let again = Session::resume(dir.path(), &id, &key(1), ForeignLogs::Accept).unwrap();
        assert_eq!(again.origin, want, "{name}: still as it was");
    }
}
