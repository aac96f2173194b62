//! Following read hints with the real `read_file` through the runtime: the hint's URI and offset
//! return exactly what the preview did not show, stream suffixes select from manifests, and
//! missing, mistaken or corrupt artifacts are tool errors that leave the batch running.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use tackle_protocol::{CallStatus, ToolResult};
use tackle_runtime::PreviewLimits;
use tackle_store::ArtifactId;
use tackle_tools::ReadFile;

const LIMITS: PreviewLimits = PreviewLimits {
    max_lines: 10,
    max_bytes: 400,
};

fn harness(scripts: &Scripts) -> Harness {
    Harness::new(
        vec![
            Arc::new(ReadFile::new()),
            Scripted::single("single", scripts),
            Scripted::named("named", &["stdout", "stderr"], scripts),
        ],
        LIMITS,
        LONG_TIMEOUT,
    )
}

/// The (uri, offset) of the one read hint in `text`.
fn hint_of(text: &str) -> (String, u64) {
    let line = text
        .lines()
        .find(|l| l.contains(" truncated: showing "))
        .unwrap_or_else(|| panic!("no hint in {text}"));
    let (_, rest) = line.split_once("read_file {\"path\": \"").unwrap();
    let (uri, rest) = rest.split_once("\", \"offset\": ").unwrap();
    (
        uri.to_owned(),
        rest.strip_suffix("}]").unwrap().parse().unwrap(),
    )
}

/// `full` from the start of 1-based line `offset`.
fn from_line(full: &str, offset: u64) -> &str {
    let skip: usize = full
        .split_inclusive('\n')
        .take(offset as usize - 1)
        .map(str::len)
        .sum();
    &full[skip..]
}

async fn read(h: &Harness, id: &str, args: serde_json::Value) -> ToolResult {
    h.run(vec![call(id, "read_file", args)]).await.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn following_a_hint_returns_exactly_the_rest() {
    let scripts = new_scripts();
    let h = harness(&scripts);
    let by_lines: String = (1..=50).map(|i| format!("line {i:02}\n")).collect();
    // The byte limit cuts inside the long second line; the hint must point back at it.
    let by_bytes = format!("short\n{}\ntail one\ntail two", "x".repeat(500));
    register(&scripts, "lines", Script::complete_single(by_lines.clone()));
    register(&scripts, "bytes", Script::complete_single(by_bytes.clone()));
    let results = h
        .run(vec![
            call("lines", "single", json!({"script": "lines"})),
            call("bytes", "single", json!({"script": "bytes"})),
        ])
        .await;

    for (r, full, want_offset) in [(&results[0], &by_lines, 11), (&results[1], &by_bytes, 2)] {
        let (uri, offset) = hint_of(&r.text());
        assert_eq!(offset, want_offset, "{}", r.text());
        assert_eq!(
            uri,
            format!("artifact://{}", ArtifactId::of(full.as_bytes()).to_hex())
        );
        let page = read(
            &h,
            &format!("read-{}", r.call_id),
            json!({"path": uri, "offset": offset}),
        )
        .await;
        assert_eq!(page.status, CallStatus::Ok, "{}", page.text());
        let rest = from_line(full, offset);
        let text = page.text();
        // read_file ends a page without a final newline with one; the content is otherwise exact.
        assert!(
            text == rest || text == format!("{rest}\n"),
            "{}: {text:?}",
            r.call_id
        );
        assert_eq!(page.metadata["next_offset"], json!(null));
        assert!(
            page.retained_output.is_empty(),
            "read_file pages are not retained again"
        );

        // What the preview showed plus what the hint returned covers the whole output.
        // (The hint starts on a line of its own, after a newline added if the preview lacked one.)
        let text = r.text();
        let shown = &text[..text.find("[output truncated").unwrap()];
        let shown = if full.starts_with(shown) {
            shown
        } else {
            shown.strip_suffix('\n').unwrap()
        };
        assert!(full.starts_with(shown));
        assert!(
            shown.len() >= full.len() - rest.len(),
            "nothing unseen is skipped"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stream_suffixes_select_from_the_manifest_and_errors_name_the_fix() {
    let scripts = new_scripts();
    let h = harness(&scripts);
    let out: String = (1..=30).map(|i| format!("out {i}\n")).collect();
    let err = "warning: a\nwarning: b\n";
    register(
        &scripts,
        "n",
        Script::complete_named(&[("stdout", &out), ("stderr", err)]),
    );
    let r = h
        .run(vec![call("n", "named", json!({"script": "n"}))])
        .await
        .remove(0);
    let (uri, offset) = hint_of(&r.text());
    let manifest_hex = r.retained_output[0]
        .artifact
        .strip_prefix("artifact://sha256/")
        .unwrap()
        .to_owned();
    let stdout_hex = r.retained_output[1]
        .artifact
        .strip_prefix("artifact://sha256/")
        .unwrap()
        .to_owned();
    assert_eq!(
        (uri.as_str(), offset),
        (format!("artifact://{manifest_hex}/stdout").as_str(), 11)
    );

    let missing = "0".repeat(64);
    let results = h
        .run(vec![
            call("rest", "read_file", json!({"path": uri, "offset": offset})),
            call(
                "stderr",
                "read_file",
                json!({"path": format!("artifact://{manifest_hex}/stderr")}),
            ),
            call(
                "manifest",
                "read_file",
                json!({"path": format!("artifact://{manifest_hex}")}),
            ),
            call(
                "unknown-stream",
                "read_file",
                json!({"path": format!("artifact://{manifest_hex}/stdin")}),
            ),
            call(
                "not-a-manifest",
                "read_file",
                json!({"path": format!("artifact://{stdout_hex}/stdout")}),
            ),
            call(
                "missing",
                "read_file",
                json!({"path": format!("artifact://{missing}")}),
            ),
            call(
                "uppercase",
                "read_file",
                json!({"path": format!("artifact://{}", manifest_hex.to_uppercase())}),
            ),
        ])
        .await;
    assert_eq!(results[0].text(), from_line(&out, 11));
    assert_eq!(results[1].text(), err);
    let manifest_text = results[2].text();
    assert!(
        manifest_text.contains("tackle.manifest.v1") && manifest_text.contains("\"stdout\""),
        "{manifest_text}"
    );

    let errors: Vec<(&str, Option<&str>)> = results[3..]
        .iter()
        .map(|r| (r.call_id.0.as_str(), code(r)))
        .collect();
    assert_eq!(
        errors,
        [
            ("unknown-stream", Some("not_found")),
            ("not-a-manifest", Some("invalid_artifact_uri")),
            ("missing", Some("artifact_missing")),
            ("uppercase", Some("invalid_artifact_uri")),
        ]
    );
    assert!(
        results[3]
            .text()
            .contains("its streams are: stdout, stderr"),
        "{}",
        results[3].text()
    );
    assert!(
        results[4].text().contains("not a manifest"),
        "{}",
        results[4].text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_corrupt_artifact_is_a_tool_error_and_the_batch_goes_on() {
    let scripts = new_scripts();
    let h = harness(&scripts);
    let victim: String = (1..=40).map(|i| format!("victim {i}\n")).collect();
    let healthy: String = (1..=40).map(|i| format!("healthy {i}\n")).collect();
    register(&scripts, "victim", Script::complete_single(victim.clone()));
    register(
        &scripts,
        "healthy",
        Script::complete_single(healthy.clone()),
    );
    let made = h
        .run(vec![
            call("v", "single", json!({"script": "victim"})),
            call("h", "single", json!({"script": "healthy"})),
        ])
        .await;
    let (victim_uri, _) = hint_of(&made[0].text());
    let (healthy_uri, _) = hint_of(&made[1].text());

    // Flip one byte of the victim on disk.
    let victim_id = ArtifactId::of(victim.as_bytes());
    let path = h
        .root()
        .join(".agents/store/artifacts")
        .join(victim_id.to_hex());
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[3] ^= 0x20;
    std::fs::write(&path, bytes).unwrap();

    let results = h
        .run(vec![
            call("corrupt", "read_file", json!({"path": victim_uri})),
            call(
                "next",
                "read_file",
                json!({"path": healthy_uri, "offset": 39}),
            ),
        ])
        .await;
    assert_eq!(
        (results[0].status, code(&results[0])),
        (CallStatus::Error, Some("artifact_corrupt"))
    );
    assert!(
        results[0].text().contains(&victim_id.to_hex()),
        "{}",
        results[0].text()
    );
    assert_eq!(results[1].status, CallStatus::Ok);
    assert_eq!(results[1].text(), "healthy 39\nhealthy 40\n");

    // The session keeps working. The damaged copy was set aside when it was detected, so it is
    // never served: a second read finds no artifact (re-running its tool would store it again).
    let again = read(&h, "again", json!({"path": victim_uri, "offset": 2})).await;
    assert_eq!(code(&again), Some("artifact_missing"));
}
