//! Retained tool output through `Runtime::run_batch` (seed 000, "Retained tool output"):
//! previews at and around each limit, read hints that are present only when something was cut
//! and point at the first line not fully shown, artifacts byte-identical to what the tool wrote,
//! manifests, dedup, the 2 MiB result bound, the truncation opt-out, the streaming protocol and
//! its limits, and the references `call_finished` leaves for the janitor.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, SystemTime};

use common::*;
use serde_json::json;
use tackle_protocol::{CallStatus, ToolResult};
use tackle_runtime::{PreviewLimits, RESULT_LIMIT_BYTES};
use tackle_store::{ArtifactId, Janitor, Manifest};
use tackle_tool::{CompletionOutput, OutputChunk, ToolProgress};

/// A read hint as rendered for the model.
#[derive(Debug, PartialEq)]
struct Hint {
    what: String,
    shown_lines: u64,
    total_lines: u64,
    shown_bytes: usize,
    total_bytes: usize,
    uri: String,
    offset: u64,
}

fn hints(text: &str) -> Vec<Hint> {
    text.lines().filter_map(parse_hint).collect()
}

fn parse_hint(line: &str) -> Option<Hint> {
    let rest = line.strip_prefix('[')?;
    let (what, rest) = rest.split_once(" truncated: showing ")?;
    let (shown_lines, rest) = rest.split_once(" of ")?;
    let (total_lines, rest) = rest.split_once(" lines, ")?;
    let (shown_bytes, rest) = rest.split_once(" of ")?;
    let (total_bytes, rest) =
        rest.split_once(" bytes. Read the rest with read_file {\"path\": \"")?;
    let (uri, rest) = rest.split_once("\", \"offset\": ")?;
    let offset = rest.strip_suffix("}]")?;
    Some(Hint {
        what: what.to_owned(),
        shown_lines: shown_lines.parse().ok()?,
        total_lines: total_lines.parse().ok()?,
        shown_bytes: shown_bytes.parse().ok()?,
        total_bytes: total_bytes.parse().ok()?,
        uri: uri.to_owned(),
        offset: offset.parse().ok()?,
    })
}

/// Byte ranges of each line of `full` (the last may lack its newline).
fn line_ranges(full: &str) -> Vec<(usize, usize)> {
    let mut at = 0;
    full.split_inclusive('\n')
        .map(|l| {
            let r = (at, at + l.len());
            at += l.len();
            r
        })
        .collect()
}

/// A hint is truthful when the preview it follows is a prefix of the stream, its counts are
/// the stream's, and its 1-based offset names the first line not fully shown: everything before
/// it was shown whole and nothing from it on was skipped.
fn assert_hint_truthful(hint: &Hint, preview: &str, full: &str) {
    assert_eq!(hint.shown_bytes, preview.len(), "{hint:?}");
    assert!(
        full.starts_with(preview),
        "{hint:?}: the preview is a prefix of the stream"
    );
    assert_eq!(hint.total_bytes, full.len(), "{hint:?}");
    let lines = line_ranges(full);
    assert_eq!(hint.total_lines, lines.len() as u64, "{hint:?}");
    let (start, end) = lines[hint.offset as usize - 1];
    assert!(
        start <= preview.len() && preview.len() < end,
        "{hint:?}: offset is the first line not fully shown"
    );
    assert_eq!(hint.shown_lines, hint.offset - 1, "{hint:?}");
}

fn sha_hex(bytes: &[u8]) -> String {
    ArtifactId::of(bytes).to_hex()
}

async fn run_one(h: &Harness, tool: &str, script: &str) -> ToolResult {
    h.run(vec![call(script, tool, json!({"script": script}))])
        .await
        .remove(0)
}

// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_output_below_at_and_above_each_limit() {
    // (limits, output, preview shown, 1-based offset of the hint when truncated)
    let by_lines = PreviewLimits {
        max_lines: 3,
        max_bytes: 1000,
    };
    let by_bytes = PreviewLimits {
        max_lines: 1000,
        max_bytes: 10,
    };
    let cases: &[(PreviewLimits, &str, &str, Option<u64>)] = &[
        (by_lines, "a\nb\n", "a\nb\n", None),
        (by_lines, "a\nb\nc\n", "a\nb\nc\n", None),
        (by_lines, "a\nb\nc", "a\nb\nc", None),
        (by_lines, "a\nb\nc\nd\n", "a\nb\nc\n", Some(4)),
        (by_lines, "a\nb\nc\nd", "a\nb\nc\n", Some(4)),
        (by_bytes, "abcd\nefg\n", "abcd\nefg\n", None),
        (by_bytes, "abcd\nefgh\n", "abcd\nefgh\n", None),
        (by_bytes, "abcdefghij", "abcdefghij", None),
        // One byte over, cut inside line 2: the hint points back at line 2.
        (by_bytes, "abcd\nefghi\n", "abcd\nefghi", Some(2)),
        (by_bytes, "abcdefghijk", "abcdefghij", Some(1)),
        // Cut exactly at a line end: continue at the next line.
        (by_bytes, "abcd\nefgh\nij\n", "abcd\nefgh\n", Some(3)),
        // Never split a character: "é" is two bytes, the tenth byte would split it.
        (by_bytes, "abcdefghié\n", "abcdefghi", Some(1)),
    ];
    for (i, (limits, output, shown, offset)) in cases.iter().enumerate() {
        let scripts = new_scripts();
        let h = Harness::new(
            vec![Scripted::single("single", &scripts)],
            *limits,
            LONG_TIMEOUT,
        );
        register(&scripts, "s", Script::complete_single(*output));
        let r = run_one(&h, "single", "s").await;
        let case = format!("case {i}: {output:?}");
        assert_eq!(r.status, CallStatus::Ok, "{case}");
        assert_eq!(r.retained_output.len(), 1, "{case}");
        let retained = &r.retained_output[0];
        assert_eq!(retained.stream, None, "{case}");
        assert_eq!(
            h.read_artifact(&retained.artifact),
            output.as_bytes(),
            "{case}"
        );
        assert_eq!(
            (retained.bytes, retained.truncated),
            (output.len() as u64, offset.is_some()),
            "{case}"
        );
        let text = r.text();
        match offset {
            None => {
                assert_eq!(
                    text, *output,
                    "{case}: untruncated output is shown exactly, with no hint"
                );
            }
            Some(offset) => {
                let found = hints(&text);
                assert_eq!(found.len(), 1, "{case}: {text}");
                let hint = &found[0];
                assert_eq!(
                    hint.what, "output",
                    "{case}: single output has no stream heading"
                );
                assert_eq!(
                    hint.uri,
                    format!("artifact://{}", sha_hex(output.as_bytes())),
                    "{case}"
                );
                assert_eq!(hint.offset, *offset, "{case}");
                assert!(text.starts_with(shown), "{case}: {text}");
                let rest = &text[shown.len()..];
                let rest = rest
                    .strip_prefix('\n')
                    .filter(|_| !shown.ends_with('\n'))
                    .unwrap_or(rest);
                assert!(
                    rest.starts_with("[output truncated") && rest.lines().count() == 1,
                    "{case}: {text}"
                );
                assert_hint_truthful(hint, shown, output);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn named_output_hints_only_truncated_streams_with_the_manifest_digest() {
    let limits = PreviewLimits {
        max_lines: 2,
        max_bytes: 8,
    };
    // (stdout, stderr); which of them is truncated follows from the limits.
    let cases: &[(&str, &str)] = &[
        ("1\n2\n", "e\n"),                // both below or at
        ("1\n2\n3\n", "e\n"),             // stdout one line over
        ("1\n2\n", "x\ny\nz\n"),          // stderr one line over
        ("1234567\n", "123456789"),       // stdout at 8 bytes, stderr one byte over
        ("12\n34\n56\n", "abcdefgh\nij"), // both over: lines and bytes
    ];
    for (i, (out, err)) in cases.iter().enumerate() {
        let scripts = new_scripts();
        let h = Harness::new(
            vec![Scripted::named("named", &["stdout", "stderr"], &scripts)],
            limits,
            LONG_TIMEOUT,
        );
        register(
            &scripts,
            "n",
            Script::complete_named(&[("stdout", out), ("stderr", err)]),
        );
        let r = run_one(&h, "named", "n").await;
        let case = format!("case {i}");
        assert_eq!(r.status, CallStatus::Ok, "{case}");
        let text = r.text();

        // Manifest first, then the streams in declaration order.
        let names: Vec<Option<&str>> = r
            .retained_output
            .iter()
            .map(|o| o.stream.as_ref().map(|s| s.as_str()))
            .collect();
        assert_eq!(names, [None, Some("stdout"), Some("stderr")], "{case}");
        let manifest_uri = &r.retained_output[0].artifact;
        let manifest = Manifest::parse(&h.read_artifact(manifest_uri)).expect("a manifest");
        let manifest_hex = manifest_uri.strip_prefix("artifact://sha256/").unwrap();

        let found = hints(&text);
        let mut expected_hints = 0;
        for (k, (name, full)) in [("stdout", *out), ("stderr", *err)].into_iter().enumerate() {
            let retained = &r.retained_output[k + 1];
            assert_eq!(
                h.read_artifact(&retained.artifact),
                full.as_bytes(),
                "{case} {name}"
            );
            assert_eq!(manifest.streams[k].name, name);
            assert_eq!(
                manifest.streams[k].artifact.internal_uri(),
                retained.artifact
            );
            let truncated =
                full.len() > limits.max_bytes || full.matches('\n').count() > limits.max_lines;
            assert_eq!(retained.truncated, truncated, "{case} {name}");
            let heading = format!("[{name}]\n");
            let body_start = text
                .find(&heading)
                .unwrap_or_else(|| panic!("{case}: no {heading:?} in {text}"))
                + heading.len();
            let hint = found.iter().find(|h| h.what == name);
            assert_eq!(hint.is_some(), truncated, "{case} {name}: {text}");
            if let Some(hint) = hint {
                expected_hints += 1;
                assert_eq!(
                    hint.uri,
                    format!("artifact://{manifest_hex}/{name}"),
                    "{case}"
                );
                let preview = &text[body_start..body_start + hint.shown_bytes];
                assert_hint_truthful(hint, preview, full);
            } else {
                assert_eq!(
                    &text[body_start..body_start + full.len()],
                    full,
                    "{case} {name} shown whole"
                );
            }
        }
        assert_eq!(found.len(), expected_hints, "{case}: {text}");
        assert!(
            text.find("[stdout]").unwrap() < text.find("[stderr]").unwrap(),
            "declaration order"
        );
    }
}

/// Many small and some over-64 KiB writes, multi-byte characters split across chunks, and
/// progress deltas interleaving two streams: every artifact is exactly the bytes written.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn artifacts_are_byte_identical_to_what_the_tool_wrote() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![
            Scripted::single("single", &scripts),
            Scripted::named("named", &["stdout", "stderr"], &scripts),
        ],
        PreviewLimits {
            max_lines: 5,
            max_bytes: 100,
        },
        LONG_TIMEOUT,
    );

    let mut pieces = Vec::new();
    for i in 0..400 {
        let piece = match i % 5 {
            0 => format!("line {i} é€𝄞\n"),
            1 => format!("partial {i} "),
            2 => "\n".to_owned(),
            3 => "x".repeat(i * 7),
            _ => format!("{}\n", "y€".repeat(30_000)), // 150 KiB: split by OutputSink::write
        };
        pieces.push(piece);
    }
    let whole: String = pieces.concat();
    register(
        &scripts,
        "writes",
        Script::streamed(pieces.iter().map(|p| Act::Write(None, p.clone())).collect()),
    );

    let (mut out, mut err) = (String::new(), String::new());
    let mut deltas = Vec::new();
    for d in 0..50 {
        let mut chunks = Vec::new();
        for c in 0..8 {
            let (name, buf) = if (d + c) % 3 == 0 {
                ("stderr", &mut err)
            } else {
                ("stdout", &mut out)
            };
            let text = format!("{d}.{c} ünïcödé {}\n", "z".repeat((d * 131 + c * 17) % 700));
            buf.push_str(&text);
            chunks.push(OutputChunk {
                stream: Some(stream(name)),
                text,
            });
        }
        deltas.push(Act::Progress(ToolProgress {
            output: chunks,
            message: Some(format!("delta {d}")),
            display: None,
        }));
    }
    register(&scripts, "deltas", Script::streamed(deltas));

    let results = h
        .run(vec![
            call("w", "single", json!({"script": "writes"})),
            call("d", "named", json!({"script": "deltas"})),
        ])
        .await;
    for r in &results {
        assert_eq!(r.status, CallStatus::Ok, "{}", r.text());
    }
    let single = &results[0].retained_output[0];
    assert_eq!(h.read_artifact(&single.artifact), whole.as_bytes());
    assert_eq!(single.bytes, whole.len() as u64);
    assert_eq!(single.lines, line_ranges(&whole).len() as u64);

    let named = &results[1].retained_output;
    assert_eq!(h.read_artifact(&named[1].artifact), out.as_bytes());
    assert_eq!(h.read_artifact(&named[2].artifact), err.as_bytes());
    let manifest = Manifest::parse(&h.read_artifact(&named[0].artifact)).unwrap();
    for (entry, full) in manifest.streams.iter().zip([&out, &err]) {
        assert_eq!(
            (entry.bytes, entry.lines),
            (full.len() as u64, line_ranges(full).len() as u64)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn empty_streams_still_get_artifacts_and_manifest_entries() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![
            Scripted::single("single", &scripts),
            Scripted::named("named", &["stdout", "stderr"], &scripts),
        ],
        WIDE,
        LONG_TIMEOUT,
    );
    register(
        &scripts,
        "one-empty",
        Script::streamed(vec![Act::Write(
            Some(stream("stdout")),
            "only out\n".into(),
        )]),
    );
    register(&scripts, "all-empty", Script::streamed(vec![]));
    register(&scripts, "single-empty", Script::complete_single(""));
    let results = h
        .run(vec![
            call("a", "named", json!({"script": "one-empty"})),
            call("b", "named", json!({"script": "all-empty"})),
            call("c", "single", json!({"script": "single-empty"})),
        ])
        .await;
    let empty = ArtifactId::of(b"").internal_uri();

    let a = &results[0];
    assert_eq!(
        a.text(),
        "[stdout]\nonly out\n",
        "an empty stream gets no heading"
    );
    assert_eq!(a.retained_output.len(), 3);
    assert_eq!(
        (
            a.retained_output[2].artifact.as_str(),
            a.retained_output[2].bytes
        ),
        (empty.as_str(), 0)
    );
    let manifest = Manifest::parse(&h.read_artifact(&a.retained_output[0].artifact)).unwrap();
    let names: Vec<&str> = manifest.streams.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["stdout", "stderr"]);
    assert_eq!(
        (manifest.streams[1].bytes, manifest.streams[1].lines),
        (0, 0)
    );

    let b = &results[1];
    assert_eq!(b.text(), "(no output)\n");
    assert_eq!(b.retained_output.len(), 3);
    assert!(
        b.retained_output[1..]
            .iter()
            .all(|o| o.artifact == empty && !o.truncated)
    );

    let c = &results[2];
    assert_eq!(c.text(), "");
    assert_eq!(c.retained_output.len(), 1);
    assert_eq!(c.retained_output[0].artifact, empty);
    assert_eq!(h.read_artifact(&empty), b"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn identical_output_dedups_to_one_artifact() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![Scripted::single("single", &scripts)],
        WIDE,
        LONG_TIMEOUT,
    );
    register(
        &scripts,
        "same-streamed",
        Script::streamed(vec![
            Act::Write(None, "same\n".into()),
            Act::Write(None, "bytes\n".into()),
        ]),
    );
    register(
        &scripts,
        "same-whole",
        Script::complete_single("same\nbytes\n"),
    );
    let first = h
        .run(vec![
            call("x1", "single", json!({"script": "same-streamed"})),
            call("x2", "single", json!({"script": "same-whole"})),
        ])
        .await;
    let second = h
        .run(vec![call("x3", "single", json!({"script": "same-whole"}))])
        .await;
    let id = ArtifactId::of(b"same\nbytes\n").internal_uri();
    for r in first.iter().chain(&second) {
        assert_eq!(r.retained_output[0].artifact, id);
    }
    let on_disk: Vec<String> = h
        .session
        .store
        .list()
        .unwrap()
        .iter()
        .map(|a| a.id.internal_uri())
        .collect();
    assert_eq!(on_disk, [id]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_manifest_and_rendering_follow_declaration_order() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![Scripted::named("trio", &["zeta", "alpha", "mid"], &scripts)],
        WIDE,
        LONG_TIMEOUT,
    );
    register(
        &scripts,
        "whole",
        Script::complete_named(&[("alpha", "A\n"), ("mid", "M\n"), ("zeta", "Z\n")]),
    );
    register(
        &scripts,
        "streamed",
        Script::streamed(vec![
            Act::Write(Some(stream("mid")), "M\n".into()),
            Act::Write(Some(stream("alpha")), "A\n".into()),
            Act::Write(Some(stream("zeta")), "Z\n".into()),
        ]),
    );
    let results = h
        .run(vec![
            call("w", "trio", json!({"script": "whole"})),
            call("s", "trio", json!({"script": "streamed"})),
        ])
        .await;
    for r in &results {
        assert_eq!(r.text(), "[zeta]\nZ\n[alpha]\nA\n[mid]\nM\n");
        let streams: Vec<&str> = r.retained_output[1..]
            .iter()
            .map(|o| o.stream.as_ref().unwrap().as_str())
            .collect();
        assert_eq!(streams, ["zeta", "alpha", "mid"]);
        let manifest = Manifest::parse(&h.read_artifact(&r.retained_output[0].artifact)).unwrap();
        let names: Vec<&str> = manifest.streams.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
    }
    assert_eq!(
        results[0].retained_output, results[1].retained_output,
        "same output, same artifacts"
    );
}

/// With preview limits set far above the result bound, about 3 MiB of output still renders
/// within 2 MiB, small streams stay whole, and every hint stays truthful.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_result_stays_within_two_mib_with_truthful_hints() {
    let scripts = new_scripts();
    let huge = PreviewLimits {
        max_lines: usize::MAX,
        max_bytes: usize::MAX,
    };
    let h = Harness::new(
        vec![
            Scripted::single("single", &scripts),
            Scripted::named("named", &["stdout", "stderr"], &scripts),
        ],
        huge,
        LONG_TIMEOUT,
    );
    let lines = |tag: &str, bytes: usize| -> String {
        let mut s = String::new();
        let mut i = 0;
        while s.len() < bytes {
            s.push_str(&format!("{tag} {i:07} {}\n", "-".repeat(i % 97)));
            i += 1;
        }
        s
    };
    let (out, err) = (lines("out", 1536 * 1024), lines("err", 1536 * 1024));
    let big = lines("big", 3 * 1024 * 1024);
    let small = lines("small", 300);
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("even", vec![("stdout", &out), ("stderr", &err)]),
        ("uneven", vec![("stdout", &big), ("stderr", &small)]),
    ];
    for (name, streams) in &cases {
        register(&scripts, name, Script::complete_named(streams));
    }
    register(&scripts, "single", Script::complete_single(big.clone()));
    let results = h
        .run(vec![
            call("even", "named", json!({"script": "even"})),
            call("uneven", "named", json!({"script": "uneven"})),
            call("single", "single", json!({"script": "single"})),
        ])
        .await;

    for (r, (name, streams)) in results.iter().zip(&cases) {
        let text = r.text();
        assert!(
            text.len() <= RESULT_LIMIT_BYTES,
            "{name}: {} bytes",
            text.len()
        );
        let found = hints(&text);
        for (stream_name, full) in streams {
            let heading = format!("[{stream_name}]\n");
            let body = text.find(&heading).unwrap() + heading.len();
            match found.iter().find(|h| h.what == *stream_name) {
                Some(hint) => {
                    assert_hint_truthful(hint, &text[body..body + hint.shown_bytes], full)
                }
                None => assert_eq!(
                    &text[body..body + full.len()],
                    *full,
                    "{name}: {stream_name} shown whole"
                ),
            }
        }
        let truncated: Vec<&str> = found.iter().map(|h| h.what.as_str()).collect();
        match *name {
            "even" => assert_eq!(truncated, ["stdout", "stderr"]),
            _ => assert_eq!(
                truncated,
                ["stdout"],
                "the small stream keeps its whole preview"
            ),
        }
    }
    let single = &results[2];
    let text = single.text();
    assert!(text.len() <= RESULT_LIMIT_BYTES);
    let found = hints(&text);
    assert_eq!(found.len(), 1);
    assert_hint_truthful(&found[0], &text[..found[0].shown_bytes], &big);
    assert_eq!(
        h.read_artifact(&single.retained_output[0].artifact),
        big.as_bytes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn opt_out_pages_are_whole_unretained_and_bounded_by_resource_limit() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![Scripted::opt_out("page", &scripts)],
        PreviewLimits {
            max_lines: 2,
            max_bytes: 10,
        },
        LONG_TIMEOUT,
    );
    let page = "first line of the page\nsecond\nthird\nfourth\n";
    let exactly_max = "p".repeat(RESULT_LIMIT_BYTES);
    register(&scripts, "page", Script::complete_single(page));
    register(
        &scripts,
        "max",
        Script::complete_single(exactly_max.clone()),
    );
    register(
        &scripts,
        "over",
        Script::complete_single("p".repeat(RESULT_LIMIT_BYTES + 1)),
    );
    register(
        &scripts,
        "over-streamed",
        Script::streamed(vec![
            Act::Write(None, "q".repeat(RESULT_LIMIT_BYTES)),
            Act::Write(None, "q".into()),
        ]),
    );
    let results = h
        .run(vec![
            call("page", "page", json!({"script": "page"})),
            call("max", "page", json!({"script": "max"})),
            call("over", "page", json!({"script": "over"})),
            call("over-streamed", "page", json!({"script": "over-streamed"})),
        ])
        .await;

    let r = &results[0];
    assert_eq!(r.status, CallStatus::Ok);
    assert_eq!(
        r.text(),
        page,
        "the page is returned whole despite the tiny preview limits"
    );
    assert!(r.retained_output.is_empty());
    assert_eq!(r.metadata, json!({"scripted": true}));
    assert_eq!(results[1].status, CallStatus::Ok);
    assert_eq!(results[1].text(), exactly_max);
    for r in &results[2..] {
        assert_eq!(
            (r.status, code(r)),
            (CallStatus::Error, Some("resource_limit")),
            "{}",
            r.call_id
        );
        assert!(
            r.text().len() < 1024,
            "{}: never silently truncated into the result",
            r.call_id
        );
        assert!(r.retained_output.is_empty());
    }
    assert!(
        h.session.store.list().unwrap().is_empty(),
        "opt-out output is never retained"
    );
    let finished = h.finished_events();
    assert!(finished.iter().all(|e| e.get("retained_output").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resupplying_output_after_streaming_is_a_protocol_violation_that_keeps_the_stream() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![
            Scripted::single("single", &scripts),
            Scripted::named("named", &["stdout", "stderr"], &scripts),
        ],
        WIDE,
        LONG_TIMEOUT,
    );
    register(
        &scripts,
        "single",
        Script {
            acts: vec![Act::Write(None, "streamed part\n".into())],
            completion: CompletionOutput::Single("again\n".into()),
            display: None,
        },
    );
    register(
        &scripts,
        "named",
        Script {
            acts: vec![Act::Write(Some(stream("stderr")), "warned\n".into())],
            completion: CompletionOutput::Named(vec![(stream("stdout"), "late\n".into())]),
            display: None,
        },
    );
    let results = h
        .run(vec![
            call("s", "single", json!({"script": "single"})),
            call("n", "named", json!({"script": "named"})),
        ])
        .await;
    for (r, kept, stream_index) in [
        (&results[0], "streamed part\n", 0),
        (&results[1], "warned\n", 2),
    ] {
        assert_eq!(
            (r.status, code(r)),
            (CallStatus::Error, Some("tool_protocol_violation")),
            "{}",
            r.text()
        );
        assert!(r.incomplete, "{}", r.call_id);
        assert!(r.text().contains(kept), "{}: {}", r.call_id, r.text());
        assert!(
            !r.text().contains("again") && !r.text().contains("late"),
            "the resupplied output is refused"
        );
        assert_eq!(
            h.read_artifact(&r.retained_output[stream_index].artifact),
            kept.as_bytes()
        );
    }
    let finished = h.finished_events();
    for e in &finished {
        assert_eq!(e["code"], "tool_protocol_violation");
        assert!(
            e["retained_output"]
                .as_array()
                .is_some_and(|a| !a.is_empty()),
            "{e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn progress_deltas_over_their_limits_are_rejected_whole() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![Scripted::named("named", &["stdout", "stderr"], &scripts)],
        WIDE,
        LONG_TIMEOUT,
    );
    let chunk = |text: String| OutputChunk {
        stream: Some(stream("stdout")),
        text,
    };
    let accepted = "accepted\n";
    let cases: Vec<(&str, ToolProgress, bool)> = vec![
        (
            "eight-chunks",
            ToolProgress {
                output: (0..8).map(|i| chunk(format!("{i}\n"))).collect(),
                ..Default::default()
            },
            true,
        ),
        (
            "nine-chunks",
            ToolProgress {
                output: (0..9).map(|i| chunk(format!("{i}\n"))).collect(),
                ..Default::default()
            },
            false,
        ),
        (
            "64k",
            ToolProgress {
                output: vec![chunk("a".repeat(32 * 1024)), chunk("b".repeat(32 * 1024))],
                ..Default::default()
            },
            true,
        ),
        (
            "64k-plus-one",
            ToolProgress {
                output: vec![
                    chunk("a".repeat(32 * 1024)),
                    chunk("b".repeat(32 * 1024 + 1)),
                ],
                ..Default::default()
            },
            false,
        ),
        (
            "message-1k",
            ToolProgress {
                message: Some("m".repeat(1024)),
                ..Default::default()
            },
            true,
        ),
        (
            "message-over",
            ToolProgress {
                message: Some("m".repeat(1025)),
                ..Default::default()
            },
            false,
        ),
        (
            "display-over",
            ToolProgress {
                display: Some("d".repeat(1025)),
                ..Default::default()
            },
            false,
        ),
        (
            "undeclared",
            ToolProgress::output(Some(stream("stdin")), "x"),
            false,
        ),
    ];
    let mut calls = Vec::new();
    for (name, delta, _) in &cases {
        let acts = vec![
            Act::Write(Some(stream("stdout")), accepted.into()),
            Act::Progress(delta.clone()),
        ];
        register(&scripts, name, Script::streamed(acts));
        calls.push(call(name, "named", json!({"script": name})));
    }
    let results = h.run(calls).await;
    for ((name, delta, ok), r) in cases.iter().zip(&results) {
        let stdout = h.read_artifact(&r.retained_output[1].artifact);
        if *ok {
            assert_eq!(r.status, CallStatus::Ok, "{name}: {}", r.text());
            let mut want = accepted.to_owned();
            for c in &delta.output {
                want.push_str(&c.text);
            }
            assert_eq!(stdout, want.as_bytes(), "{name}");
        } else {
            assert_eq!(
                (r.status, code(r)),
                (CallStatus::Error, Some("tool_protocol_violation")),
                "{name}: {}",
                r.text()
            );
            assert_eq!(
                stdout,
                accepted.as_bytes(),
                "{name}: nothing of a rejected delta is captured"
            );
            assert!(
                r.incomplete && r.text().contains(accepted),
                "{name}: accepted output is kept"
            );
        }
    }
}

/// `call_finished` carries every retained reference (manifest and streams), so the janitor,
/// even with no grace period, would remove only what no event references.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn call_finished_references_keep_artifacts_from_the_janitor() {
    let scripts = new_scripts();
    let h = Harness::new(
        vec![
            Scripted::single("single", &scripts),
            Scripted::named("named", &["stdout", "stderr"], &scripts),
        ],
        PreviewLimits {
            max_lines: 1,
            max_bytes: 100,
        },
        LONG_TIMEOUT,
    );
    register(&scripts, "single", Script::complete_single("one\ntwo\n"));
    register(
        &scripts,
        "named",
        Script::complete_named(&[("stdout", "out\nmore\n"), ("stderr", "err\n")]),
    );
    let results = h
        .run(vec![
            call("s", "single", json!({"script": "single"})),
            call("n", "named", json!({"script": "named"})),
        ])
        .await;
    let finished = h.finished_events();
    let mut referenced = Vec::new();
    for r in &results {
        let event = finished
            .iter()
            .find(|e| e["call_id"] == r.call_id.0.as_str())
            .unwrap();
        assert_eq!(
            event["retained_output"],
            serde_json::to_value(&r.retained_output).unwrap()
        );
        referenced.extend(
            r.retained_output
                .iter()
                .map(|o| ArtifactId::from_internal_uri(&o.artifact).unwrap()),
        );
    }
    assert_eq!(
        referenced.len(),
        4,
        "single output, manifest and two streams"
    );

    let orphan = h.session.store.put(b"referenced by nothing\n").unwrap().id;
    let later = SystemTime::now() + Duration::from_secs(5);
    let report = Janitor::new(&h.session.store, Duration::ZERO)
        .collect(later, true)
        .unwrap();
    assert!(
        !report.skipped_guard_held,
        "no publication guard outlives its batch"
    );
    assert_eq!(
        report.removed,
        [orphan],
        "only the unreferenced artifact would be removed"
    );
    for id in &referenced {
        assert!(h.session.store.contains(*id));
    }
}

/// (call id, message, display) as a user interface would be shown them live.
type LiveUpdate = (String, Option<String>, Option<String>);

/// Records what a user interface would be shown live.
#[derive(Default)]
struct SeenLive {
    shown: std::sync::Mutex<Vec<LiveUpdate>>,
}

impl tackle_runtime::ProgressObserver for SeenLive {
    fn on_progress(
        &self,
        call: &tackle_protocol::CallId,
        message: Option<&str>,
        display: Option<&str>,
    ) {
        self.shown.lock().unwrap().push((
            call.0.clone(),
            message.map(str::to_owned),
            display.map(str::to_owned),
        ));
    }
}

/// Live message/display text is sanitized and capped at 64 KiB per call without ever stopping
/// authoritative output; the final display is sanitized, bounded, kept out of the model's text
/// and recorded in `call_finished`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn live_and_final_display_are_bounded_sanitized_and_never_model_text() {
    let scripts = new_scripts();
    let seen = std::sync::Arc::new(SeenLive::default());
    let h = Harness::new(
        vec![Scripted::single("single", &scripts)],
        WIDE,
        LONG_TIMEOUT,
    )
    .with_observer(seen.clone());
    let mut acts = vec![Act::Progress(ToolProgress {
        output: vec![],
        message: Some("bell\u{7} and\r tab\t newline\n".into()),
        display: Some("\u{1b}[31mred\u{1b}[0m".into()),
    })];
    let mut want = String::new();
    for i in 0..100 {
        let line = format!("out {i}\n");
        want.push_str(&line);
        acts.push(Act::Progress(ToolProgress {
            output: vec![OutputChunk {
                stream: None,
                text: line,
            }],
            message: Some("m".repeat(1024)),
            display: None,
        }));
    }
    let display = format!("{}\u{0}{}", "final ", "d".repeat(70 * 1024));
    register(
        &scripts,
        "chatty",
        Script {
            acts,
            completion: CompletionOutput::Streamed,
            display: Some(display),
        },
    );
    let r = run_one(&h, "single", "chatty").await;

    assert_eq!(r.status, CallStatus::Ok, "{}", r.text());
    assert_eq!(
        h.read_artifact(&r.retained_output[0].artifact),
        want.as_bytes(),
        "output never stops"
    );
    assert_eq!(r.text(), want, "display is not model text");

    let shown = seen.shown.lock().unwrap();
    assert_eq!(shown[0].1.as_deref(), Some("bell  and  tab\t newline\n"));
    assert_eq!(shown[0].2.as_deref(), Some(" [31mred [0m"));
    let live: usize = shown
        .iter()
        .map(|(_, m, d)| m.as_ref().map_or(0, String::len) + d.as_ref().map_or(0, String::len))
        .sum();
    assert!(live <= tackle_runtime::LIVE_DISPLAY_BUDGET_BYTES, "{live}");
    assert!(
        shown.len() > 1 && shown.len() < 101,
        "the budget stops live text, and only live text"
    );

    let final_display = r.display.as_deref().unwrap();
    assert!(final_display.len() <= tackle_runtime::FINAL_DISPLAY_LIMIT_BYTES);
    assert!(final_display.starts_with("final  ddd") && !final_display.contains('\u{0}'));
    let finished = h.finished_events();
    assert_eq!(finished[0]["display"], json!(final_display));
}

/// While a call runs its publication guard is held, so a janitor pass does nothing; once the
/// batch has recorded `call_finished`, a pass runs and keeps the call's artifacts.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_janitor_stays_away_while_a_call_is_publishing() {
    let lab = Lab::new(None);
    let h = Harness::new(
        vec![std::sync::Arc::new(Hang { lab: lab.clone() })],
        WIDE,
        LONG_TIMEOUT,
    );
    let cancel = tackle_runtime::CancellationToken::new();
    let later = SystemTime::now() + Duration::from_secs(5);
    let calls = vec![call(
        "held",
        "hang",
        json!({"id": "held", "before": "kept\n"}),
    )];
    let (results, during) = tokio::join!(h.run_with(calls, cancel.clone()), async {
        lab.wait("start:held").await;
        let report = Janitor::new(&h.session.store, Duration::ZERO)
            .collect(later, false)
            .unwrap();
        cancel.cancel();
        report
    });
    assert!(during.skipped_guard_held, "{during:?}");
    let after = Janitor::new(&h.session.store, Duration::ZERO)
        .collect(later, false)
        .unwrap();
    assert!(
        !after.skipped_guard_held && after.removed.is_empty(),
        "{after:?}"
    );
    assert_eq!(
        h.read_artifact(&results[0].retained_output[0].artifact),
        b"kept\n"
    );
}
