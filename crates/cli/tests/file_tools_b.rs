//! view_file_outline, json_query, todo, media reads in read_file, survey digests and
//! retrieve_raw, through `tackle call`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

/// CRC-32 (IEEE), for hand-built PNG chunks.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A minimal valid 1×1 PNG.
fn png() -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [
        (&b"IHDR"[..], &[0u8, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0][..]),
        (
            b"IDAT",
            &[
                0x78, 0x01, 0x01, 0x02, 0x00, 0xFD, 0xFF, 0x00, 0x80, 0x00, 0x81, 0x00, 0x81,
            ],
        ),
        (b"IEND", &[]),
    ] {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    out
}

/// The id of the only session in the project.
fn only_session(p: &Project) -> String {
    let dir = p.join(".agents/store/sessions");
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

#[test]
fn read_file_sniffs_media_by_content_not_extension() {
    let p = Project::new();
    let png = png();
    p.write("picture.txt", &png);
    p.write("notes.png", "just text\n");
    let out = call_json(&p, "read_file", &json!({"path": "picture.txt"}));
    out.success();
    let v = out.json();
    let attachment = v["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "attachment")
        .unwrap_or_else(|| out.fail("no attachment block"))
        .clone();
    assert_eq!(attachment["mime_type"], "image/png");
    assert_eq!(attachment["bytes"], png.len());
    let artifact = attachment["artifact"].as_str().unwrap();
    let digest = artifact.strip_prefix("artifact://sha256/").unwrap();
    // Retained as a content-addressed artifact, byte for byte.
    let stored = std::fs::read(p.join(".agents/store/artifacts").join(digest)).unwrap();
    assert_eq!(stored, png);
    // call_finished names it, so the janitor keeps it.
    let finished = p.sessions()[0]
        .iter()
        .find(|e| e["event"]["type"] == "call_finished")
        .cloned()
        .unwrap();
    assert_eq!(finished["event"]["attachments"][0], artifact);

    let out = call_json(&p, "read_file", &json!({"path": "notes.png"}));
    out.success();
    assert_eq!(out.text(), "just text\n");
}

#[test]
fn read_file_refuses_truncated_and_oversized_media() {
    let p = Project::new();
    let png = png();
    p.write("cut.png", &png[..png.len() - 4]);
    let out = call_json(&p, "read_file", &json!({"path": "cut.png"}));
    out.tool_error("media_invalid");
    assert!(out.text().contains("truncated"), "{}", out.text());

    p.write("ok.png", &png);
    p.config("[tool_output]\nmedia_max_bytes = 10\n");
    call_json(&p, "read_file", &json!({"path": "ok.png"})).tool_error("media_too_large");
}

#[test]
fn view_file_outline_parses_and_refuses_unknown_extensions() {
    let p = Project::new();
    p.write(
        "src/lib.rs",
        "pub struct S {\n    pub a: u8,\n}\n\npub fn f(x: u8) -> u8 {\n    let hidden = x;\n    hidden\n}\n",
    );
    let out = call_json(&p, "view_file_outline", &json!({"path": "src/lib.rs"}));
    out.success();
    assert_eq!(
        out.text(),
        "    1  pub struct S\n    2      pub a: u8\n    5  pub fn f(x: u8) -> u8\n"
    );
    assert_eq!(out.metadata()["analysis"], "parsed");
    assert_eq!(out.metadata()["declarations"][2]["name"], "f");

    p.write("notes.txt", "hello\n");
    let out = call_json(&p, "view_file_outline", &json!({"path": "notes.txt"}));
    out.tool_error("unsupported_language");
    assert!(out.text().contains("rs, go"), "{}", out.text());

    p.write("bad.py", "def ok():\n    pass\n\ndef broken(:\n");
    let out = call_json(&p, "view_file_outline", &json!({"path": "bad.py"}));
    out.success();
    assert_eq!(out.metadata()["analysis"], "partial");
    assert_eq!(out.metadata()["syntax_error"]["line"], 4);
}

#[test]
fn json_query_over_files_and_inline_json() {
    let p = Project::new();
    p.write(
        "package.json",
        r#"{"name": "x", "scripts": {"test": "jest", "build": "tsc"}}"#,
    );
    let out = call_json(
        &p,
        "json_query",
        &json!({"expression": ".scripts | keys", "path": "package.json"}),
    );
    out.success();
    assert_eq!(out.text(), "[\"build\",\"test\"]\n");

    let out = call_json(
        &p,
        "json_query",
        &json!({"expression": ".[] * 2", "data": "[1, 2]"}),
    );
    out.success();
    assert_eq!(out.text(), "2\n4\n");

    let cases = [
        (
            json!({"expression": ".a |", "data": "{}"}),
            "invalid_filter",
        ),
        (json!({"expression": ".", "data": "{oops"}), "invalid_json"),
        (json!({"expression": "."}), "invalid_arguments"),
        (json!({"expression": ".", "path": "nope.json"}), "not_found"),
    ];
    for (args, code) in cases {
        call_json(&p, "json_query", &args).tool_error(code);
    }
    let out = call_json(
        &p,
        "json_query",
        &json!({"expression": "[range(1e9)]", "data": "0"}),
    );
    let code = out.result_code().unwrap();
    assert!(code == "resource_limit" || code == "timeout", "{code}");
}

#[test]
fn todo_returns_the_whole_list_after_every_change() {
    let p = Project::new();
    let out = call_json(&p, "todo", &json!({"action": "add", "text": "write tests"}));
    out.success();
    assert_eq!(out.text(), "todo (0/1 done):\n[ ] 1. write tests\n");
    assert_eq!(out.metadata()["items"][0]["status"], "pending");
    call_json(
        &p,
        "todo",
        &json!({"action": "set_status", "id": 7, "status": "done"}),
    )
    .tool_error("unknown_item");
    call_json(&p, "todo", &json!({"action": "explode"})).tool_error("invalid_arguments");
}

fn many_entries(p: &Project, n: usize) {
    for i in 0..n {
        p.write(format!("big/file-with-a-fairly-long-name-{i:04}.rs"), "");
    }
}

#[test]
fn large_survey_results_become_digests_that_retrieve_raw_undoes() {
    let p = Project::new();
    many_entries(&p, 300);
    let out = p
        .tackle([
            "call",
            "list_dir",
            r#"{"path": "big"}"#,
            "--json",
            "--id",
            "survey-1",
        ])
        .run();
    out.success();
    let text = out.text();
    assert!(text.starts_with("[digest of list_dir output"), "{text}");
    assert!(text.contains("300 entries: 300 files"), "{text}");
    assert!(
        text.contains(r#"retrieve_raw {"call_id": "survey-1"}"#),
        "{text}"
    );
    assert_eq!(out.json()["digested"], true);
    let raw_bytes = out.json()["retained_output"][0]["bytes"].as_u64().unwrap();
    assert!(raw_bytes > 8000 && (text.len() as u64) < raw_bytes);

    let session = only_session(&p);
    let back = p
        .tackle([
            "call",
            "retrieve_raw",
            r#"{"call_id": "survey-1"}"#,
            "--json",
            "--id",
            "raw-1",
            "--session",
            &session,
        ])
        .run();
    back.success();
    let expected: String = (0..300)
        .map(|i| format!("file-with-a-fairly-long-name-{i:04}.rs\n"))
        .collect();
    assert_eq!(back.text(), expected);

    p.tackle([
        "call",
        "retrieve_raw",
        r#"{"call_id": "nope"}"#,
        "--json",
        "--session",
        &session,
    ])
    .run()
    .tool_error("unknown_call");
}

#[test]
fn small_survey_results_stay_raw() {
    let p = Project::new();
    many_entries(&p, 3);
    let out = call_json(&p, "list_dir", &json!({"path": "big"}));
    out.success();
    assert!(
        out.text()
            .starts_with("file-with-a-fairly-long-name-0000.rs\n")
    );
    assert!(out.json().get("digested").is_none());
}

#[test]
fn digests_switched_off_show_raw_output_and_drop_retrieve_raw() {
    let p = Project::new();
    many_entries(&p, 300);
    for switch in [&["--no-digest"][..], &[][..]] {
        if switch.is_empty() {
            p.config("[tool_output]\ndigests = false\n");
        }
        let mut args = vec!["call", "list_dir", r#"{"path": "big"}"#, "--json"];
        args.extend_from_slice(switch);
        let out = p.tackle(args).run();
        out.success();
        assert!(
            out.text()
                .starts_with("file-with-a-fairly-long-name-0000.rs\n")
        );
        let mut args = vec!["tools"];
        args.extend_from_slice(switch);
        p.tackle(args)
            .run()
            .success()
            .stdout_lacks("retrieve_raw\n");
    }
}
