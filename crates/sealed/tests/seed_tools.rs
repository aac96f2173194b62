//! Seed 004's tool tables, checked against what really happens: the "Asks you?" column
//! against the calls that reach the person, the routing/content split against the user's
//! rules, the eleven tools and nothing else, and a resumed session's references.

#![allow(clippy::unwrap_used)] // tests: a failure should panic

mod common;

use common::*;
use serde_json::{Value, json};
use tackle_gate::{Effect, Pattern, Rule, RuleSource};
use tackle_protocol::{CallStatus, Quarantined};
use tackle_sealed::RefId;
use tackle_sealed::catalog::NAMES;
use tackle_sealed::tools::SealedSkill;

fn project() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
        ("docs/guide.md", "# Guide\nuse the answer\n"),
        ("vendor/notes.txt", "vendor notes\nsecond line\n"),
    ]
}

fn skills() -> Vec<SealedSkill> {
    vec![SealedSkill {
        name: "commit-style".to_owned(),
        description: "how commits are written".to_owned(),
        body: "Write plain messages.".to_owned(),
    }]
}

/// The seed's table: a call of each tool, and whether it asks the person.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_asks_column_is_what_reaches_the_person() {
    let lab = Lab::new(
        Config {
            commands: vec![argv(&["echo", "vouched"])],
            skills: skills(),
            ..Config::default()
        },
        &project(),
    );
    // References the table's calls use: a file nobody vouched for and a command's output.
    let file = first_ref(
        &lab.call("read_file", json!({"path": "vendor/notes.txt"}))
            .await,
    );
    let ran = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["hello"]}]}),
        )
        .await;
    let out = first_ref(&ran);
    lab.person.take();

    // (tool, arguments, asks?, what the person is shown must contain)
    let table: Vec<(&str, Value, bool, &str)> = vec![
        ("read_file", json!({"path": "src/lib.rs"}), false, ""),
        ("read_file", json!({"path": "vendor/notes.txt"}), false, ""),
        ("list_files", json!({"directory": "."}), false, ""),
        ("search", json!({"pattern": "answer"}), false, ""),
        (
            "write_file",
            json!({"path": "docs/new.md", "contents": "new\n"}),
            true,
            "+new",
        ),
        (
            "write_file",
            json!({"path": "docs/new.md", "contents": "newer\n"}),
            true,
            "+newer",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "42", "new_text": "43"}),
            true,
            "+    43",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "43", "new_text": "44"}),
            true,
            "+    44",
        ),
        (
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["not", "vouched"]}]}),
            true,
            "echo not vouched",
        ),
        (
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["vouched"]}]}),
            false,
            "",
        ),
        (
            "ask_user",
            json!({"questions": [{"header": "Scope", "question": "Touch tests too?"}]}),
            false,
            "",
        ),
        // Last: once the planner has seen untrusted output, ask_user is closed.
        ("read_output", json!({"ref": out}), true, "hello"),
        (
            "spawn_processor",
            json!({"reads": [file], "instruction": "summarise"}),
            false,
            "",
        ),
        ("load_skill", json!({"name": "commit-style"}), false, ""),
        (
            "todo_write",
            json!({"todos": [{"content": "a", "status": "pending"}]}),
            false,
            "",
        ),
    ];
    let mut asked_tools = Vec::new();
    for (tool, args, asks, shown) in table {
        let result = lab.call(tool, args.clone()).await;
        assert!(!result.is_error, "{tool} {args}: {}", result.text());
        let asked = lab.person.take();
        assert_eq!(asked.len(), usize::from(asks), "{tool} {args}: {asked:?}");
        if let Some(request) = asked.first() {
            assert_eq!(request.tool, tool);
            let effect = request.effect.clone().unwrap_or_default();
            assert!(effect.contains(shown), "{tool}: {shown:?} not in {effect}");
            asked_tools.push(tool);
        }
    }
    // ask_user's question went to the person as a question, not an approval.
    assert_eq!(lab.questions.asked.lock().unwrap().len(), 1);
    asked_tools.dedup();
    assert_eq!(
        asked_tools,
        ["write_file", "edit_file", "run", "read_output"]
    );
}

/// read_file asks only to trust a quarantined file, and only where someone can be asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_asks_only_to_vouch_for_a_quarantined_file() {
    let lab = Lab::new(
        Config {
            voucher: true,
            ..Config::default()
        },
        &project(),
    );
    lab.person.denies_all();
    let refused = lab
        .call("read_file", json!({"path": "vendor/notes.txt"}))
        .await;
    assert!(refused.text().starts_with("ref:0"), "{}", refused.text());
    assert!(!refused.text().contains("vendor notes"));
    let asked = lab.person.take();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0]
            .effect
            .as_deref()
            .unwrap()
            .contains("vouch for vendor/notes.txt")
    );

    lab.call("read_file", json!({"path": "src/lib.rs"})).await;
    assert!(lab.person.take().is_empty(), "a trusted file asks nobody");

    lab.person.approves_all();
    let vouched = lab.call("read_file", json!({"path_ref": "ref:0"})).await;
    assert!(
        vouched.text().contains("vendor notes"),
        "{}",
        vouched.text()
    );
    assert_eq!(lab.person.take().len(), 1);
    // Vouched once, for the session: the next read asks nobody.
    let again = lab
        .call("read_file", json!({"path": "vendor/notes.txt"}))
        .await;
    assert!(again.text().contains("second line"));
    assert!(lab.person.take().is_empty());
}

fn rule(effect: Effect, pattern: &str) -> Rule {
    Rule::new(
        effect,
        Pattern::parse(pattern).unwrap(),
        RuleSource::BuiltIn,
    )
}

/// The routing column is what the user's rules decide on; the content column is carried and
/// never decides where a call lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_decides_and_content_is_carried() {
    let mut files = project();
    files.push(("private/key.txt", "k\n"));
    let lab = Lab::new(
        Config {
            directories: vec![".".to_owned()],
            rules: vec![
                rule(Effect::Deny, "read:private"),
                rule(Effect::Deny, "read:private/**"),
                rule(Effect::Deny, "write:private/**"),
                rule(Effect::Deny, "tool.bash.cmd:touch *"),
                rule(Effect::Deny, "skill:commit-style"),
            ],
            skills: skills(),
            ..Config::default()
        },
        &files,
    );
    lab.person.approves_all();
    // (tool, routing names the denied place, content names it)
    let table: Vec<(&str, Value, Value)> = vec![
        (
            "read_file",
            json!({"path": "private/key.txt"}),
            json!({"path": "src/lib.rs", "offset": 1}),
        ),
        (
            "list_files",
            json!({"directory": "private"}),
            json!({"directory": "docs", "pattern": "*.md"}),
        ),
        (
            "search",
            json!({"pattern": "k", "directory": "private"}),
            json!({"pattern": "private/key.txt", "directory": "docs"}),
        ),
        (
            "write_file",
            json!({"path": "private/new.txt", "contents": "x\n"}),
            json!({"path": "docs/new.md", "contents": "private/new.txt touch pwned\n"}),
        ),
        (
            "edit_file",
            json!({"path": "private/key.txt", "old_text": "k", "new_text": "j"}),
            json!({"path": "docs/guide.md", "old_text": "Guide", "new_text": "private/key.txt"}),
        ),
        (
            "run",
            json!({"pipeline": [{"program": "touch", "args": ["pwned"]}]}),
            json!({"pipeline": [{"program": "cat"}], "stdin": "touch pwned\n"}),
        ),
        (
            "load_skill",
            json!({"name": "commit-style"}),
            json!({"name": "nothing-like-it"}),
        ),
    ];
    for (tool, routed, carried) in table {
        let denied = lab.call(tool, routed.clone()).await;
        assert_eq!(denied.status, CallStatus::Denied, "{tool} {routed}");
        let through = lab.call(tool, carried.clone()).await;
        assert_ne!(
            through.status,
            CallStatus::Denied,
            "{tool} {carried}: {}",
            through.text()
        );
    }
    assert!(!lab.exists("pwned") && !lab.exists("private/new.txt"));
    assert_eq!(lab.read("private/key.txt").unwrap(), "k\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eleven_tools_and_an_unknown_one_is_reported() {
    let lab = Lab::new(Config::default(), &project());
    assert_eq!(NAMES.len(), 11);
    let offered: Vec<String> = lab
        .runtime
        .offered(&lab.session)
        .into_iter()
        .map(|s| s.name)
        .collect();
    for name in NAMES {
        assert!(offered.iter().any(|o| o == name), "{name} in {offered:?}");
    }
    for missing in ["bash", "shell", "sh", "exec"] {
        let result = lab.call(missing, json!({"command": "touch pwned"})).await;
        assert_eq!(result.code.as_ref().unwrap().as_str(), "unknown_tool");
        assert!(result.is_error);
    }
    assert!(!lab.exists("pwned"));
}

/// After a resume the restored table hands out the same references, and what a person vouched
/// for or a write tainted holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_hands_out_the_same_references() {
    let lab = Lab::new(Config::default(), &project());
    lab.write("vendor/other.txt", "other\n");
    let listing = lab.call("list_files", json!({"directory": "vendor"})).await;
    let listed = refs(&listing.text());
    assert_eq!(listed.len(), 2, "{}", listing.text());
    lab.person.approves_all();
    let ran = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["out"]}]}),
        )
        .await;
    let outputs = refs(&ran.text());
    // A trusted file tainted by quarantined content.
    lab.call(
        "write_file",
        json!({"path": "src/copied.rs", "contents_ref": listed[0]}),
    )
    .await;
    let before: Vec<_> = (0..lab.state.len() as u32)
        .map(|n| lab.state.get(RefId(n)).unwrap())
        .collect();

    let lab = lab.resume();
    assert_eq!(lab.state.len(), before.len());
    for (n, held) in before.iter().enumerate() {
        assert_eq!(lab.state.get(RefId(n as u32)).as_ref(), Some(held));
    }
    // The same file gets the same reference; a new one continues the numbering.
    let again = lab.call("list_files", json!({"directory": "vendor"})).await;
    assert_eq!(refs(&again.text()), listed);
    let tainted = lab
        .call("read_file", json!({"path": "src/copied.rs"}))
        .await;
    let fresh = first_ref(&tainted);
    assert_eq!(fresh, format!("ref:{}", before.len()));
    assert!(!tainted.text().contains("vendor"));
    // A command's output from before the resume still reads.
    lab.person.approves_all();
    let shown = lab.call("read_output", json!({"ref": outputs[0]})).await;
    assert_eq!(shown.text().trim(), "out");
    assert!(matches!(
        lab.state.get(RefId(0)).unwrap().held,
        Quarantined::File { .. }
    ));
}
