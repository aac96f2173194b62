//! A session resumed through the facade alone: opened with the user's `LogKey`, reopened by
//! id with it, and refused as foreign under another key.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tackle::runtime::{ForeignLogs, LogKey, RuntimeError, Session, SessionOptions};

#[test]
fn a_session_opened_with_a_key_resumes_under_it_and_is_foreign_under_another() {
    let dir = tempfile::tempdir().unwrap();
    let key = LogKey::from_bytes(&[7; 32]);
    let opened = Session::open_sealed(dir.path(), SessionOptions::default(), &key).unwrap();
    let id = opened.id().0.clone();
    drop(opened);

    let resumed = Session::resume(dir.path(), &id, &key, ForeignLogs::Refuse).unwrap();
    assert_eq!(resumed.session.id().0, id);
    drop(resumed);

    let other = LogKey::from_bytes(&[8; 32]);
    let refused = Session::resume(dir.path(), &id, &other, ForeignLogs::Refuse).err();
    assert!(
        matches!(refused, Some(RuntimeError::ForeignLog { .. })),
        "{refused:?}"
    );
}
