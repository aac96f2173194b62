//! A store opened in a tree a repository controls: every directory of the store that is a
//! symlink or not a directory is refused with an error naming it, and nothing outside the
//! project is read, written or removed. One case a row.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, SystemTime};

use tackle_store::{ArtifactStore, EventLog, EventLogError, StoreError, session_log_path};

/// What a hostile tree puts where (paths relative to the project root; `@OUT` is a directory
/// outside the project holding a file `victim` an hour and a half old).
struct Case {
    name: &'static str,
    plant: &'static [Plant],
    /// The path (relative to the project) the refusal must name; `None`: opening succeeds.
    refused_at: Option<&'static str>,
}

enum Plant {
    Dir(&'static str),
    /// A symlink at the path pointing to the outside directory.
    LinkOut(&'static str),
    /// A symlink at the path pointing to the given absolute target.
    LinkTo(&'static str, &'static str),
    File(&'static str),
    Fifo(&'static str),
}

const CASES: &[Case] = &[
    Case {
        name: "clean tree",
        plant: &[],
        refused_at: None,
    },
    Case {
        name: ".agents symlinked out",
        plant: &[Plant::LinkOut(".agents")],
        refused_at: Some(".agents"),
    },
    Case {
        name: "store symlinked out",
        plant: &[Plant::Dir(".agents"), Plant::LinkOut(".agents/store")],
        refused_at: Some(".agents/store"),
    },
    Case {
        name: "tmp symlinked out",
        plant: &[
            Plant::Dir(".agents/store"),
            Plant::LinkOut(".agents/store/tmp"),
        ],
        refused_at: Some(".agents/store/tmp"),
    },
    Case {
        name: "artifacts symlinked out",
        plant: &[
            Plant::Dir(".agents/store"),
            Plant::LinkOut(".agents/store/artifacts"),
        ],
        refused_at: Some(".agents/store/artifacts"),
    },
    Case {
        name: "sessions symlinked out",
        plant: &[
            Plant::Dir(".agents/store"),
            Plant::LinkOut(".agents/store/sessions"),
        ],
        refused_at: Some(".agents/store/sessions"),
    },
    Case {
        name: "tmp is a file",
        plant: &[
            Plant::Dir(".agents/store"),
            Plant::File(".agents/store/tmp"),
        ],
        refused_at: Some(".agents/store/tmp"),
    },
    Case {
        name: "store is a FIFO",
        plant: &[Plant::Dir(".agents"), Plant::Fifo(".agents/store")],
        refused_at: Some(".agents/store"),
    },
    Case {
        name: "session dir symlinked out",
        plant: &[
            Plant::Dir(".agents/store/sessions"),
            Plant::LinkOut(".agents/store/sessions/s1"),
        ],
        refused_at: Some(".agents/store/sessions/s1"),
    },
    Case {
        name: "log symlinked to /dev/zero",
        plant: &[
            Plant::Dir(".agents/store/sessions/s1"),
            Plant::LinkTo(".agents/store/sessions/s1/events.jsonl", "/dev/zero"),
        ],
        refused_at: Some(".agents/store/sessions/s1/events.jsonl"),
    },
    Case {
        name: "log is a FIFO",
        plant: &[
            Plant::Dir(".agents/store/sessions/s1"),
            Plant::Fifo(".agents/store/sessions/s1/events.jsonl"),
        ],
        refused_at: Some(".agents/store/sessions/s1/events.jsonl"),
    },
    Case {
        name: "log symlinked out",
        plant: &[
            Plant::Dir(".agents/store/sessions/s1"),
            Plant::LinkTo(".agents/store/sessions/s1/events.jsonl", "@OUT/victim"),
        ],
        refused_at: Some(".agents/store/sessions/s1/events.jsonl"),
    },
    Case {
        name: "gc.lock symlinked out",
        plant: &[
            Plant::Dir(".agents/store"),
            Plant::LinkTo(".agents/store/gc.lock", "@OUT/victim"),
        ],
        refused_at: Some(".agents/store/gc.lock"),
    },
];

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn hostile_store_layouts_are_refused_and_nothing_outside_is_touched() {
    for case in CASES {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        fs::write(&victim, b"keep me\n").unwrap();
        let old = SystemTime::now() - Duration::from_secs(90 * 60);
        fs::File::options()
            .write(true)
            .open(&victim)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let root = project.path();
        let out = outside.path().to_str().unwrap();
        for plant in case.plant {
            match plant {
                Plant::Dir(p) => fs::create_dir_all(root.join(p)).unwrap(),
                Plant::LinkOut(p) => symlink(outside.path(), root.join(p)).unwrap(),
                Plant::LinkTo(p, t) => symlink(t.replace("@OUT", out), root.join(p)).unwrap(),
                Plant::File(p) => fs::write(root.join(p), b"x").unwrap(),
                Plant::Fifo(p) => mkfifo(&root.join(p)),
            }
        }
        let store_dir = root.join(".agents/store");
        let opened = ArtifactStore::open(&store_dir).and_then(|store| {
            // A call's life: a log for its session, an artifact, a collection.
            let log = EventLog::open(&session_log_path(&store_dir, "s1")).map_err(|e| match e {
                EventLogError::Layout(l) => StoreError::Layout(l),
                other => panic!("{}: unexpected log error {other}", case.name),
            });
            let (log, _) = log?;
            log.append(&serde_json::json!({"type": "probe"})).unwrap();
            let info = store.put(b"content\n")?;
            store.open_artifact(info.id).unwrap();
            tackle_store::Janitor::new(&store, Duration::from_secs(3600))
                .collect(SystemTime::now(), false)
                .unwrap();
            Ok(())
        });
        match (case.refused_at, opened) {
            (None, Ok(())) => {}
            (Some(at), Err(StoreError::Layout(e))) => {
                assert_eq!(e.path, root.join(at), "{}: {e}", case.name);
                let text = e.to_string();
                assert!(
                    text.contains("rm "),
                    "{}: the error names the fix: {text}",
                    case.name
                );
            }
            (want, got) => panic!("{}: wanted refusal at {want:?}, got {got:?}", case.name),
        }
        // Nothing outside was removed, written or joined by store files.
        assert_eq!(fs::read(&victim).unwrap(), b"keep me\n", "{}", case.name);
        let names: Vec<_> = fs::read_dir(outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec!["victim"],
            "{}: files appeared outside",
            case.name
        );
    }
}
