//! Retained output end to end: `artifact://` URIs through `read_file`, and
//! `tackle artifacts ls|cat|gc`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

/// A well-formed digest no test ever stores.
const MISSING: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// A project whose `[tool_output]` keeps 3 lines, and one `list_dir` call whose 10-entry listing
/// was therefore retained. Returns the project, the digest and the full listing.
fn project_with_artifact() -> (Project, String, String) {
    let p = Project::new();
    p.config("[tool_output]\nlines = 3\n");
    let mut full = String::new();
    for i in 0..10 {
        p.write(format!("many/f{i:02}"), "");
        full.push_str(&format!("f{i:02}\n"));
    }
    let out = call_json(&p, "list_dir", &json!({"path": "many"}));
    out.success();
    let v = out.json();
    let retained = v["retained_output"]
        .as_array()
        .unwrap_or_else(|| out.fail("no retained_output"));
    assert_eq!(retained.len(), 1);
    assert_eq!(retained[0]["truncated"], true);
    let internal = retained[0]["artifact"].as_str().unwrap();
    let digest = internal
        .strip_prefix("artifact://sha256/")
        .unwrap_or_else(|| out.fail("internal form"));
    let text = out.text();
    assert!(text.starts_with("f00\nf01\nf02\n"), "{text}");
    assert!(
        !text.contains("f03"),
        "preview must stop at 3 lines: {text}"
    );
    assert!(
        text.contains(&format!("artifact://{digest}")),
        "the hint names the public URI: {text}"
    );
    (p, digest.to_owned(), full)
}

#[test]
fn retained_output_reads_back_through_read_file() {
    let (p, digest, full) = project_with_artifact();
    let uri = format!("artifact://{digest}");
    let out = call_json(&p, "read_file", &json!({"path": uri}));
    out.success();
    assert_eq!(out.text(), full);
    // The preview hint's offset continues where the preview stopped.
    let out = call_json(
        &p,
        "read_file",
        &json!({"path": uri, "offset": 4, "limit": 2}),
    );
    out.success();
    assert!(out.text().starts_with("f03\nf04\n"), "{}", out.text());
    assert_eq!(out.metadata()["next_offset"], 6);
    call_json(&p, "read_file", &json!({"path": uri, "offset": 11})).tool_error("offset_past_end");
}

#[test]
fn artifacts_cat_accepts_digest_public_and_internal_forms() {
    let (p, digest, full) = project_with_artifact();
    for form in [
        digest.clone(),
        format!("artifact://{digest}"),
        format!("artifact://sha256/{digest}"),
    ] {
        p.tackle(["artifacts", "cat", &form])
            .run()
            .success()
            .stdout_is(&full);
    }
    // A stream suffix on an artifact that is not a manifest is refused, not ignored.
    p.tackle(["artifacts", "cat", &format!("artifact://{digest}/stdout")])
        .run()
        .code(2)
        .stderr_contains("not a manifest");
    for bad in [
        format!("artifact://{digest}?x"),
        "not-a-digest".to_owned(),
        digest.to_uppercase(),
    ] {
        p.tackle(["artifacts", "cat", &bad])
            .run()
            .code(2)
            .stdout_is("");
    }
    p.tackle(["artifacts", "cat", MISSING])
        .run()
        .code(3)
        .stdout_is("");
}

#[test]
fn artifacts_ls_text_and_json() {
    let (p, digest, full) = project_with_artifact();
    p.tackle(["artifacts", "ls"])
        .run()
        .success()
        .stdout_contains(&digest)
        .stdout_contains("s old  trusted\n")
        .stdout_contains("1 artifacts");
    let out = p.tackle(["artifacts", "ls", "--json"]).run();
    out.success();
    let rows = out.json();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(rows[0]["id"], digest.as_str());
    assert_eq!(rows[0]["bytes"], full.len());
    assert!(rows[0]["age_s"].as_u64().unwrap() < 3600);
    // list_dir's output: local, as its producer's call_finished says.
    assert_eq!(
        rows[0]["label"],
        json!({"trust": "trusted", "privacy": "private"})
    );
}

#[test]
fn artifacts_ls_on_an_empty_store() {
    let p = Project::new();
    p.tackle(["artifacts", "ls"])
        .run()
        .success()
        .stdout_contains("0 artifacts");
    let out = p.tackle(["artifacts", "ls", "--json"]).run();
    out.success();
    assert_eq!(out.json(), json!([]));
}

#[test]
fn gc_keeps_referenced_and_fresh_artifacts() {
    let (p, digest, _) = project_with_artifact();
    let out = p.tackle(["artifacts", "gc", "--json"]).run();
    out.success();
    let r = out.json();
    assert_eq!(r["live"], 1, "{r}");
    assert_eq!(r["removed"], json!([]), "{r}");
    assert_eq!(r["dry_run"], false);

    // Without the event log nothing references it, but it is inside the one-hour grace.
    std::fs::remove_dir_all(p.join(".agents/store/sessions")).unwrap();
    p.tackle(["artifacts", "gc", "--dry-run"])
        .run()
        .success()
        .stdout_contains("would remove 0");
    let out = p.tackle(["artifacts", "gc", "--json"]).run();
    out.success();
    let r = out.json();
    assert_eq!(r["live"], 0, "{r}");
    assert_eq!(r["removed"], json!([]), "{r}");
    assert_eq!(r["kept_in_grace"], 1, "{r}");
    assert_eq!(p.artifact_digests(), [digest]);
}

#[test]
fn gc_removes_unreferenced_artifacts_past_the_grace() {
    let (p, digest, _) = project_with_artifact();
    std::fs::remove_dir_all(p.join(".agents/store/sessions")).unwrap();
    let path = p.join(".agents/store/artifacts").join(&digest);
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::open(&path)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();

    let out = p.tackle(["artifacts", "gc", "--dry-run", "--json"]).run();
    out.success();
    assert_eq!(out.json()["removed"], json!([digest.as_str()]));
    assert_eq!(out.json()["dry_run"], true);
    assert!(path.exists(), "a dry run removes nothing");

    p.tackle(["artifacts", "gc"])
        .run()
        .success()
        .stdout_contains("removed 1");
    assert!(!path.exists());
}

#[test]
fn missing_artifact_is_artifact_missing() {
    let p = Project::new();
    call_json(
        &p,
        "read_file",
        &json!({"path": format!("artifact://{MISSING}")}),
    )
    .tool_error("artifact_missing");
    call_json(
        &p,
        "read_file",
        &json!({"path": format!("artifact://{MISSING}/stdout")}),
    )
    .tool_error("artifact_missing");
}

/// Every malformed form the seed rejects. Each row is the URI and the relative path a filesystem
/// read of that string would land on; a decoy is planted there so a fallback would show.
#[test]
fn malformed_artifact_uris_never_fall_back_to_the_filesystem() {
    let (p, d, _) = project_with_artifact();
    let upper = d.to_uppercase();
    let table: &[(String, String)] = &[
        (d.clone(), d.clone()),
        (
            format!("artifact://sha256/{d}"),
            format!("artifact:/sha256/{d}"),
        ),
        (
            format!("artifact://{d}/stdout/extra"),
            format!("artifact:/{d}/stdout/extra"),
        ),
        (format!("artifact://{d}/../x"), "artifact:/x".into()),
        (format!("artifact://{d}/../../x"), "x".into()),
        (format!("artifact://../{d}"), d.clone()),
        (
            format!("artifact://{d}?offset=3"),
            format!("artifact:/{d}?offset=3"),
        ),
        (
            format!("artifact://{d}#frag"),
            format!("artifact:/{d}#frag"),
        ),
        (format!("artifact://{upper}"), format!("artifact:/{upper}")),
        (format!("ARTIFACT://{d}"), format!("ARTIFACT:/{d}")),
        (format!("Artifact://{d}"), format!("Artifact:/{d}")),
        (format!("artifact://{d}/"), format!("artifact:/{d}")),
    ];
    for (_, decoy) in table {
        let path = p.join(decoy);
        if path.is_dir() {
            p.write(format!("{decoy}/DECOY-entry"), "DECOY");
        } else {
            p.write(decoy, "DECOY file content\n");
        }
    }
    for (uri, decoy) in table {
        let out = call_json(&p, "read_file", &json!({"path": uri}));
        if out.code != Some(1) || out.result_code().as_deref() != Some("invalid_artifact_uri") {
            out.fail(&format!(
                "{uri:?} (decoy at {decoy:?}) must be invalid_artifact_uri"
            ));
        }
        out.stdout_lacks("DECOY");
        p.tackle(["call", "read_file", &json!({"path": uri}).to_string()])
            .run()
            .code(1)
            .stdout_contains("invalid_artifact_uri")
            .stdout_lacks("DECOY");
    }
}

#[test]
fn artifacts_are_private_files() {
    use std::os::unix::fs::PermissionsExt;
    let (p, digest, _) = project_with_artifact();
    let meta = std::fs::metadata(p.join(".agents/store/artifacts").join(&digest)).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}

#[test]
fn stream_suffix_on_a_plain_artifact_is_refused() {
    let (p, digest, _) = project_with_artifact();
    let out = call_json(
        &p,
        "read_file",
        &json!({"path": format!("artifact://{digest}/stdout")}),
    );
    out.tool_error("invalid_artifact_uri");
    assert!(out.text().contains("not a manifest"), "{}", out.text());
}

#[test]
fn corrupt_artifact_is_a_tool_error_not_a_crash() {
    let (p, digest, _) = project_with_artifact();
    std::fs::write(
        p.join(".agents/store/artifacts").join(&digest),
        "tampered\n",
    )
    .unwrap();
    let out = call_json(
        &p,
        "read_file",
        &json!({"path": format!("artifact://{digest}")}),
    );
    out.tool_error("artifact_corrupt");
    out.stdout_lacks("tampered");
    // The damaged copy was set aside when it was detected, so it is gone, not served.
    p.tackle(["artifacts", "cat", &digest])
        .run()
        .code(3)
        .stdout_is("")
        .stderr_contains("not found in the store");
    // The project keeps working.
    p.tackle(["call", "list_dir", r#"{"path":"many"}"#])
        .run()
        .success();
}

/// The corrupt-artifact error says "re-run the tool that produced it": publishing the same
/// content again must replace the damaged copy, not deduplicate against it.
#[test]
fn rerunning_the_tool_repairs_a_corrupt_artifact() {
    let (p, digest, full) = project_with_artifact();
    std::fs::write(
        p.join(".agents/store/artifacts").join(&digest),
        "tampered\n",
    )
    .unwrap();
    call_json(&p, "list_dir", &json!({"path": "many"})).success();
    p.tackle(["artifacts", "cat", &digest])
        .run()
        .success()
        .stdout_is(&full);
}

/// Issue 13 §5: a committed `.agents/store/tmp -> <dir>` made start-up cleanup delete every
/// regular file older than an hour in that directory. Now the store refuses to open, names the
/// symlink and the fix, and the outside file survives.
#[test]
fn a_store_directory_symlinked_outside_is_refused_and_nothing_outside_is_removed() {
    for part in ["tmp", "artifacts", "sessions"] {
        let p = Project::new();
        let victim = p.write_outside(format!("{part}-target/precious"), "keep\n");
        let aged = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
        std::fs::File::options()
            .write(true)
            .open(&victim)
            .unwrap()
            .set_modified(aged)
            .unwrap();
        p.mkdir(".agents/store");
        p.symlink(victim.parent().unwrap(), format!(".agents/store/{part}"));
        let out = p.tackle(["call", "stat", r#"{"path":"."}"#]).run();
        out.code(3)
            .stderr_contains(&format!(".agents/store/{part} is a symbolic link to "))
            .stderr_contains("remove it (rm ");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "keep\n",
            "{part}"
        );
        let entries = std::fs::read_dir(victim.parent().unwrap()).unwrap().count();
        assert_eq!(entries, 1, "{part}: nothing was written beside the victim");
    }
}

/// What killed writers left, in the store's `tmp/` and beside a worktree file (found through
/// the write intent its commit recorded): counted by a dry run, removed by `gc`, and gone
/// from the next report.
#[test]
fn gc_sweeps_temps_whose_writer_is_gone_and_reports_them() {
    let p = Project::new();
    p.write("src/kept.txt", "kept\n");
    call_json(&p, "stat", &json!({"path": "src/kept.txt"})).success();
    p.write(".agents/store/tmp/capture-1-1-00000000", vec![b'x'; 1000]);
    p.write("src/deep/.tackle-1-1.tmp", vec![b'y'; 300]);
    p.write(".agents/store/writes/write-1-1", "src/deep\n");
    // The user's own file of a near name is never touched.
    p.write("src/deep/.tackle-1-1.tmp.orig", "mine\n");

    let out = p.tackle(["artifacts", "gc", "--dry-run", "--json"]).run();
    out.success();
    let r = out.json();
    assert_eq!(r["temps_removed"], 1, "{r}");
    assert_eq!(r["temp_bytes_removed"], 1000, "{r}");
    assert_eq!(r["write_temps_removed"], 1, "{r}");
    assert_eq!(r["write_temp_bytes_removed"], 300, "{r}");
    assert!(p.join(".agents/store/tmp/capture-1-1-00000000").exists());
    assert!(p.join("src/deep/.tackle-1-1.tmp").exists());

    p.tackle(["artifacts", "gc"])
        .run()
        .success()
        .stdout_contains("removed 1 in the store (1000 bytes) and 1 in the worktree (300 bytes)");
    assert!(!p.join(".agents/store/tmp/capture-1-1-00000000").exists());
    assert!(!p.join("src/deep/.tackle-1-1.tmp").exists());
    assert!(!p.join(".agents/store/writes/write-1-1").exists());
    assert_eq!(
        std::fs::read_to_string(p.join("src/deep/.tackle-1-1.tmp.orig")).unwrap(),
        "mine\n"
    );

    let out = p.tackle(["artifacts", "gc", "--json"]).run();
    out.success();
    let r = out.json();
    assert_eq!(r["temps_removed"], 0, "{r}");
    assert_eq!(r["write_temps_removed"], 0, "{r}");
}
