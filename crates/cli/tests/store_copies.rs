//! Issue 37 §5, a deny covers every copy: output retained from a read of a file the user
//! later denies is refused by every route to its bytes (`read_file artifact://<digest>`,
//! `retrieve_raw`, the store's files by name or through a symlink, a walk over `.agents`, a
//! second MCP client), with the deny written literally or as a wildcard; output of reads that
//! stay allowed is still read by possession (seed 000, "Retained tool output").
//!
//! Every producer runs in a session of its own, with no deny, as a user would before adding
//! one; every reader in a fresh session (a fresh `tackle call` or `tackle serve` process), so
//! nothing but the store's records links the two.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Output, Project};
use serde_json::{Value, json};

/// What every secret file holds; no refused result may show it.
const SECRET: &str = "API_TOKEN=hunter2-5f1c9e";

fn project() -> Project {
    let p = Project::new();
    p.write(".env", format!("{SECRET}\n"));
    p.write("secrets/key.txt", format!("{SECRET}\n"));
    p.write("README.md", format!("public notes, not {}\n", "a secret"));
    p.symlink("secrets", "linked");
    p
}

/// `tackle [flags] call <tool> <args> --json`, headless, optionally in an existing session.
fn call(p: &Project, flags: &[&str], session: Option<&str>, tool: &str, args: &Value) -> Output {
    let mut argv: Vec<String> = vec!["--headless".into()];
    argv.extend(flags.iter().map(|f| f.to_string()));
    argv.extend([
        "call".into(),
        tool.into(),
        args.to_string(),
        "--json".into(),
    ]);
    if let Some(s) = session {
        argv.extend(["--session".into(), s.into(), "--id".into(), "call-2".into()]);
    }
    p.tackle(argv).run()
}

/// The public digests of everything a call retained, and which of them is a manifest over
/// named streams (the entry without a stream name beside entries with one).
fn retained(out: &Output) -> Vec<String> {
    retained_entries(out).into_iter().map(|(_, d)| d).collect()
}

fn retained_entries(out: &Output) -> Vec<(Option<String>, String)> {
    out.json()["retained_output"]
        .as_array()
        .unwrap_or_else(|| out.fail("no retained_output"))
        .iter()
        .map(|r| {
            let digest = r["artifact"]
                .as_str()
                .and_then(|a| a.strip_prefix("artifact://sha256/"))
                .unwrap_or_else(|| out.fail("internal artifact form"))
                .to_owned();
            (r["stream"].as_str().map(str::to_owned), digest)
        })
        .collect()
}

/// The only session directory of a project that has run one call.
fn only_session(p: &Project) -> String {
    let dir = std::fs::read_dir(p.join(".agents/store/sessions")).unwrap();
    let ids: Vec<String> = dir
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids[0].clone()
}

/// A refusal that names why and shows nothing of the secret.
#[track_caller]
fn refused(out: &Output, row: &str, words: &[&str]) {
    out.tool_error("permission_denied");
    let text = out.text();
    assert!(!text.contains(SECRET), "{row}: the secret leaked: {text}");
    for w in words {
        assert!(text.contains(w), "{row}: {text:?} lacks {w:?}");
    }
}

/// A producer: a call that copies a secret into the store, and the path its read keys name.
struct Producer {
    name: &'static str,
    tool: &'static str,
    args: Value,
    flags: &'static [&'static str],
    /// Deny rules that must cover the copy (each tried alone).
    covering: &'static [&'static str],
    /// What the denial names as the source.
    source: &'static str,
    /// Whether the output holds the secret's bytes (not only something computed from them).
    copies_bytes: bool,
}

fn producers() -> Vec<Producer> {
    vec![
        Producer {
            name: "grep on .env",
            tool: "grep",
            args: json!({"pattern": "API_TOKEN", "path": ".env"}),
            flags: &[],
            covering: &["read:.env", "read:**/.env", "read:*.env"],
            source: ".env",
            copies_bytes: true,
        },
        Producer {
            name: "read_many_files of .env",
            tool: "read_many_files",
            args: json!({"paths": [".env", "README.md"]}),
            flags: &[],
            covering: &["read:.env", "read:**/.env", "read:*.env"],
            source: ".env",
            copies_bytes: true,
        },
        Producer {
            name: "bash reading .env through a redirect",
            tool: "bash",
            args: json!({"command": "cat < .env"}),
            flags: &["--allow", "tool.bash.cmd:*"],
            covering: &["read:.env", "read:**/.env", "read:*.env"],
            source: ".env",
            copies_bytes: true,
        },
        Producer {
            name: "grep walking a directory",
            tool: "grep",
            args: json!({"pattern": "API_TOKEN", "path": "secrets"}),
            flags: &[],
            covering: &["read:secrets/**", "read:**/key.txt"],
            source: "secrets/key.txt",
            copies_bytes: true,
        },
        Producer {
            name: "grep walking a symlink to that directory",
            tool: "grep",
            args: json!({"pattern": "API_TOKEN", "path": "linked"}),
            flags: &[],
            covering: &["read:secrets/**", "read:linked/**"],
            source: "key.txt",
            copies_bytes: true,
        },
        Producer {
            name: "read_many_files by pattern",
            tool: "read_many_files",
            args: json!({"pattern": "*.txt", "path": "secrets"}),
            flags: &[],
            covering: &["read:secrets/**", "read:**/*.txt"],
            source: "secrets/key.txt",
            copies_bytes: true,
        },
        // A tool that calls another: what its poll read is behind its own output.
        Producer {
            name: "wait_and_verify polling read_file of .env",
            tool: "wait_and_verify",
            args: json!({"tool": "read_file", "args_json": "{\"path\": \".env\"}",
                "expect_contains": "API_TOKEN", "timeout_seconds": 5}),
            flags: &[],
            covering: &["read:.env", "read:**/.env"],
            source: ".env",
            copies_bytes: false,
        },
    ]
}

/// Every producer × every covering deny: the copy is refused through read_file by URI (each
/// artifact the call retained, streams and manifest alike), and read by possession without
/// the deny or with a deny elsewhere.
#[test]
fn a_deny_on_the_source_covers_the_artifact() {
    let mut rows = 0;
    for producer in producers() {
        let p = project();
        let made = call(&p, producer.flags, None, producer.tool, &producer.args);
        made.success();
        assert_eq!(
            made.text().contains(SECRET),
            producer.copies_bytes,
            "{}: {}",
            producer.name,
            made.text()
        );
        let entries = retained_entries(&made);
        assert!(!entries.is_empty(), "{}", producer.name);
        let mut uris: Vec<String> = entries
            .iter()
            .map(|(_, d)| format!("artifact://{d}"))
            .collect();
        if entries.iter().any(|(stream, _)| stream.is_some()) {
            // The manifest, read by stream name as a read hint names it.
            let (_, manifest) = entries.iter().find(|(s, _)| s.is_none()).unwrap();
            uris.push(format!("artifact://{manifest}/stdout"));
        }
        for uri in &uris {
            let args = json!({"path": uri});
            // Possession: no deny, or a deny on something else.
            for flags in [&[][..], &["--deny", "read:unrelated/**"][..]] {
                let out = call(&p, flags, None, "read_file", &args);
                let row = format!("{} {uri} {flags:?}", producer.name);
                assert_eq!(out.result_code(), None, "{row}: {}", out.stdout);
                rows += 1;
            }
            for deny in producer.covering {
                let row = format!("{} {uri} --deny {deny}", producer.name);
                let out = call(&p, &["--deny", deny], None, "read_file", &args);
                refused(
                    &out,
                    &row,
                    &["was produced by a read of", producer.source, "now denied"],
                );
                // yolo lifts no deny.
                let out = call(
                    &p,
                    &["--mode", "yolo", "--deny", deny],
                    None,
                    "read_file",
                    &args,
                );
                refused(&out, &row, &["now denied"]);
                rows += 2;
            }
        }
    }
    assert!(rows >= 60, "{rows} rows");
}

/// The bash stdout artifact holds the secret itself, so the possession rows above read it; a
/// read of an allowed file stays readable with a deny on the secret in place.
#[test]
fn output_of_allowed_reads_stays_readable_by_possession() {
    let p = project();
    let made = call(
        &p,
        &[],
        None,
        "grep",
        &json!({"pattern": "public", "path": "README.md"}),
    );
    made.success();
    for digest in retained(&made) {
        for deny in ["read:.env", "read:**/.env", "read:secrets/**"] {
            let out = call(
                &p,
                &["--deny", deny],
                None,
                "read_file",
                &json!({"path": format!("artifact://{digest}")}),
            );
            out.success();
            assert!(out.text().contains("public notes"), "{}", out.text());
        }
    }
}

/// A digested result undone by retrieve_raw: the raw output, and retrieve_raw's own copy of
/// it, are refused once the source is denied.
#[test]
fn retrieve_raw_and_its_copy_are_covered() {
    let p = project();
    let lines: String = (0..600)
        .map(|i| format!("{SECRET} line {i:04}\n"))
        .collect();
    p.write("big/secrets.txt", lines);
    let made = call(
        &p,
        &[],
        None,
        "grep",
        &json!({"pattern": "API_TOKEN", "path": "big"}),
    );
    made.success();
    assert_eq!(made.json()["digested"], true, "{}", made.text());
    let session = only_session(&p);
    let raw = json!({"call_id": "call-1"});
    // Before the deny: retrieve_raw returns it, retaining a copy.
    let copy = call(&p, &[], Some(&session), "retrieve_raw", &raw);
    copy.success();
    let copies = retained(&copy);
    let deny = ["--deny", "read:big/**"];
    refused(
        &call(&p, &deny, Some(&session), "retrieve_raw", &raw),
        "retrieve_raw",
        &["big/secrets.txt", "now denied"],
    );
    for digest in retained(&made).iter().chain(&copies) {
        let args = json!({"path": format!("artifact://{digest}")});
        refused(
            &call(&p, &deny, None, "read_file", &args),
            &format!("read_file {digest}"),
            &["big/secrets.txt", "now denied"],
        );
    }
}

/// The store is not a file tree for tools: its files are refused by name, by any spelling and
/// through symlinks, with or without a deny, in every mode; walks over `.agents` skip it.
#[test]
fn the_store_is_never_read_as_files() {
    let p = project();
    let made = call(
        &p,
        &[],
        None,
        "grep",
        &json!({"pattern": "API_TOKEN", "path": ".env"}),
    );
    made.success();
    let digest = retained(&made)[0].clone();
    let session = only_session(&p);
    p.symlink(".agents/store/artifacts", "artifacts-link");
    p.symlink(format!(".agents/store/artifacts/{digest}"), "artifact-link");
    p.symlink(".agents/store", "store-link");
    // A name view_file_outline takes for source, on an artifact.
    p.symlink(format!(".agents/store/artifacts/{digest}"), "artifact.rs");
    p.symlink(".agents", "agents-link");
    let log = format!(".agents/store/sessions/{session}/events.jsonl");
    let reads: Vec<(&str, Value)> = vec![
        (
            "read_file",
            json!({"path": format!(".agents/store/artifacts/{digest}")}),
        ),
        (
            "read_file",
            json!({"path": format!("./.agents//store/artifacts/{digest}")}),
        ),
        (
            "read_file",
            json!({"path": format!("artifacts-link/{digest}")}),
        ),
        ("read_file", json!({"path": "artifact-link"})),
        (
            "read_file",
            json!({"path": format!("store-link/artifacts/{digest}")}),
        ),
        (
            "read_file",
            json!({"path": format!("agents-link/store/artifacts/{digest}")}),
        ),
        ("read_file", json!({"path": ".agents/store/artifacts"})),
        ("read_file", json!({"path": log})),
        (
            "read_many_files",
            json!({"paths": [format!(".agents/store/artifacts/{digest}")]}),
        ),
        (
            "read_many_files",
            json!({"paths": [format!("artifacts-link/{digest}")]}),
        ),
        ("list_dir", json!({"path": ".agents/store/artifacts"})),
        ("list_dir", json!({"path": "artifacts-link"})),
        ("list_dir", json!({"path": "store-link/sessions"})),
        (
            "stat",
            json!({"path": format!(".agents/store/artifacts/{digest}")}),
        ),
        (
            "grep",
            json!({"pattern": "API_TOKEN", "path": ".agents/store"}),
        ),
        (
            "grep",
            json!({"pattern": "API_TOKEN", "path": "store-link"}),
        ),
        (
            "glob",
            json!({"pattern": "*", "path": ".agents/store/artifacts"}),
        ),
        (
            "read_many_files",
            json!({"pattern": "*", "path": "store-link"}),
        ),
        ("view_file_outline", json!({"path": "artifact.rs"})),
        (
            "bash",
            json!({"command": format!("cat < .agents/store/artifacts/{digest}")}),
        ),
    ];
    let mut rows = 0;
    for mode in ["ask", "yolo"] {
        for (tool, args) in &reads {
            let row = format!("--mode {mode} {tool} {args}");
            let out = call(
                &p,
                &[
                    "--mode",
                    mode,
                    "--allow",
                    "read:**",
                    "--allow",
                    "tool.bash.cmd:*",
                ],
                None,
                tool,
                args,
            );
            if out.result_code().as_deref() == Some("unknown_tool") {
                // view_file_outline is built only with its feature.
                continue;
            }
            refused(&out, &row, &["tackle's record", "artifact://"]);
            rows += 1;
        }
    }
    assert!(rows >= 2 * (reads.len() - 1), "{rows} rows");
    // Walks over `.agents` (and the root) skip the store: nothing of it is found or listed.
    let walks: Vec<(&str, Value)> = vec![
        ("grep", json!({"pattern": "API_TOKEN", "path": ".agents"})),
        (
            "grep",
            json!({"pattern": "API_TOKEN", "path": "agents-link"}),
        ),
        ("glob", json!({"pattern": "**", "path": ".agents"})),
        ("glob", json!({"pattern": "*", "path": "agents-link"})),
        (
            "read_many_files",
            json!({"pattern": "*", "path": ".agents"}),
        ),
        ("grep", json!({"pattern": "sha256", "path": "."})),
    ];
    for (tool, args) in &walks {
        let out = call(&p, &[], None, tool, args);
        let row = format!("{tool} {args}");
        let text = out.text();
        assert!(!text.contains(SECRET), "{row}: {text}");
        assert!(!text.contains(&digest), "{row}: {text}");
        assert!(!text.contains("events.jsonl"), "{row}: {text}");
        assert!(
            out.json()["metadata"]["excluded_by_scope"]
                .as_u64()
                .unwrap_or(0)
                == 0,
            "{row}: the store was walked and its files counted: {}",
            out.stdout
        );
    }
}

/// A second MCP client (another `tackle serve` process, its own session) reaches the first
/// client's output by possession, and is refused it once the source is denied: by tools/call
/// read_file and by resources/read.
#[test]
fn a_second_mcp_client_is_refused_the_first_clients_copy() {
    let p = project();
    let first = mcp_session(
        &p,
        &[],
        &[json!({"name": "grep", "arguments": {"pattern": "API_TOKEN", "path": ".env"}})],
    );
    let logs = p.sessions();
    let digest = logs
        .iter()
        .flatten()
        .find_map(|r| {
            let e = &r["event"];
            (e["type"] == "call_finished" && e["tool"] == "grep")
                .then(|| {
                    e["retained_output"][0]["artifact"]
                        .as_str()
                        .map(str::to_owned)
                })
                .flatten()
        })
        .unwrap_or_else(|| panic!("no grep output recorded: {first:?}"));
    let digest = digest
        .strip_prefix("artifact://sha256/")
        .unwrap()
        .to_owned();
    let uri = format!("artifact://{digest}");
    let read = json!({"name": "read_file", "arguments": {"path": uri}});
    for (flags, denied) in [
        (&[][..], false),
        (&["--deny", "read:.env"][..], true),
        (&["--deny", "read:**/.env"][..], true),
    ] {
        let answers = mcp_session(&p, flags, std::slice::from_ref(&read));
        let call = &answers["call-0"];
        let resource = &answers["resource"];
        let row = format!("{flags:?}: {call} {resource}");
        let call_text = call["result"]["content"][0]["text"].as_str().unwrap_or("");
        if denied {
            assert_eq!(call["result"]["isError"], true, "{row}");
            assert!(call_text.contains("now denied"), "{row}");
            assert!(!call_text.contains(SECRET), "{row}");
            assert!(resource.get("error").is_some(), "{row}");
            assert!(!resource.to_string().contains(SECRET), "{row}");
        } else {
            assert!(call_text.contains(SECRET), "{row}");
            assert!(resource.to_string().contains(SECRET), "{row}");
        }
    }
}

/// One stdio MCP session of `tackle serve [flags]`: initialize, each tool call, and (when the
/// first call reads an artifact) a resources/read of it. Answers by name: `call-<i>`,
/// `resource`.
fn mcp_session(p: &Project, flags: &[&str], calls: &[Value]) -> serde_json::Map<String, Value> {
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (i, c) in calls.iter().enumerate() {
        lines.push(json!({"jsonrpc": "2.0", "id": format!("call-{i}"),
            "method": "tools/call", "params": c}));
    }
    if let Some(uri) = calls
        .first()
        .and_then(|c| c["arguments"]["path"].as_str())
        .filter(|u| u.starts_with("artifact://"))
    {
        lines.push(json!({"jsonrpc": "2.0", "id": "resource",
            "method": "resources/read", "params": {"uri": uri}}));
    }
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut argv: Vec<&str> = flags.to_vec();
    argv.push("serve");
    let out = p.tackle(argv).stdin(&input).run();
    out.success();
    let mut answers = serde_json::Map::new();
    for line in out.stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(id) = v["id"].as_str() {
            answers.insert(id.to_owned(), v);
        }
    }
    answers
}
