//! Seed 004's acting tools, sentence by sentence: write_file, edit_file, run, read_output,
//! spawn_processor, ask_user; and no message the planner gets names a quarantined file.

#![allow(clippy::unwrap_used)] // tests: a failure should panic

mod common;

use common::*;
use serde_json::{Value, json};
use tackle_sealed::{Answer, DOCUMENT_MARKER};

const SECRET_NAME: &str = "vendor/hidden-name.txt";

fn project() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/lib.rs", "a\nb\na\n"),
        ("docs/one.md", "one\n"),
        (SECRET_NAME, "hidden body\n"),
        ("vendor/other.txt", "other body\n"),
    ]
}

fn code(result: &tackle_protocol::ToolResult) -> String {
    result
        .code
        .as_ref()
        .map(|c| c.as_str().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_and_edit_follow_their_rules_and_never_name_a_file_held_by_reference() {
    let lab = Lab::new(Config::default(), &project());
    lab.person.approves_all();
    let listing = lab.call("list_files", json!({"directory": "vendor"})).await;
    let (hidden, other) = (
        refs(&listing.text())[0].clone(),
        refs(&listing.text())[1].clone(),
    );
    let ran = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["x"]}]}),
        )
        .await;
    let out = first_ref(&ran);
    let answer = first_ref(
        &lab.call(
            "spawn_processor",
            json!({"reads": [hidden], "instruction": "tidy"}),
        )
        .await,
    );
    // (tool, arguments, error code or "" for success)
    let table: Vec<(&str, Value, &str)> = vec![
        (
            "write_file",
            json!({"path": "docs/a.md"}),
            "invalid_arguments",
        ),
        (
            "write_file",
            json!({"path": "docs/a.md", "contents": "x", "contents_ref": out}),
            "invalid_arguments",
        ),
        (
            "write_file",
            json!({"path": "docs/a.md", "path_ref": hidden, "contents": "x"}),
            "invalid_arguments",
        ),
        (
            "write_file",
            json!({"path_ref": out, "contents": "x"}),
            "not_a_destination",
        ),
        (
            "write_file",
            json!({"path_ref": answer, "contents": "x"}),
            "not_a_destination",
        ),
        (
            "write_file",
            json!({"path_ref": other, "contents_ref": answer}),
            "not_a_destination",
        ),
        (
            "write_file",
            json!({"path": "docs/a.md", "contents_ref": answer}),
            "not_a_destination",
        ),
        (
            "write_file",
            json!({"path": "docs/a.md", "contents_ref": "ref:999"}),
            "unknown_reference",
        ),
        (
            "edit_file",
            json!({"path_ref": hidden, "old_text": "hidden", "new_text": "x"}),
            "untrusted_file",
        ),
        (
            "edit_file",
            json!({"path": "vendor/other.txt", "old_text": "other", "new_text": "x"}),
            "untrusted_file",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "zzz", "new_text": "x"}),
            "no_match",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "a", "new_text": "x"}),
            "multiple_matches",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "", "new_text": "x"}),
            "invalid_arguments",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "b", "new_text": "B"}),
            "",
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "a", "new_text": "A", "replace_all": true}),
            "",
        ),
        (
            "write_file",
            json!({"path_ref": hidden, "contents_ref": answer}),
            "",
        ),
        (
            "write_file",
            json!({"path": "docs/copy.txt", "contents_ref": out}),
            "",
        ),
    ];
    for (tool, args, want) in table {
        lab.person.take();
        let result = lab.call(tool, args.clone()).await;
        assert_eq!(code(&result), want, "{tool} {args}: {}", result.text());
        let seen = planner_sees(&result);
        assert!(
            !seen.contains("hidden-name") && !seen.contains("hidden body"),
            "{seen}"
        );
        // Every write or edit that got as far as the person was asked, with a diff.
        for asked in lab.person.take() {
            let effect = asked.effect.unwrap();
            assert!(
                effect.contains("\n--- ") || effect.contains("\n@@") || effect.contains("+++"),
                "{effect}"
            );
        }
    }
    assert_eq!(lab.read("src/lib.rs").unwrap(), "A\nB\nA\n");
    assert_eq!(lab.read(SECRET_NAME).unwrap(), "hidden body\nprocessed\n");
    assert_eq!(lab.read("docs/copy.txt").unwrap(), "x\n");

    // A write through a reference is shown to the person with the real name.
    lab.person.denies_all();
    let refused = lab
        .call(
            "write_file",
            json!({"path_ref": hidden, "contents": "gone\n"}),
        )
        .await;
    let asked = lab.person.take();
    assert!(
        asked[0]
            .effect
            .as_deref()
            .unwrap()
            .starts_with(&format!("write {SECRET_NAME}"))
    );
    assert!(
        !planner_sees(&refused).contains("hidden-name"),
        "{}",
        refused.text()
    );
    assert_eq!(lab.read(SECRET_NAME).unwrap(), "hidden body\nprocessed\n");
    // A write of quarantined content taints a trusted file: it is no longer shown or edited.
    lab.person.approves_all();
    lab.call(
        "write_file",
        json!({"path": "docs/one.md", "contents_ref": other}),
    )
    .await;
    let read = lab.call("read_file", json!({"path": "docs/one.md"})).await;
    assert!(!read.text().contains("other body") && !refs(&read.text()).is_empty());
    let edit = lab
        .call(
            "edit_file",
            json!({"path": "docs/one.md", "old_text": "other", "new_text": "x"}),
        )
        .await;
    assert_eq!(code(&edit), "untrusted_file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_has_no_shell_and_hands_back_references() {
    let lab = Lab::new(
        Config {
            commands: vec![argv(&["echo", "vouched"])],
            ..Config::default()
        },
        &project(),
    );
    lab.person.approves_all();
    let file = first_ref(&lab.call("read_file", json!({"path": SECRET_NAME})).await);
    // (pipeline arguments, what read_output then shows of stdout)
    let table: Vec<(Value, &str)> = vec![
        (
            json!({"pipeline": [{"program": "echo", "args": ["a; touch pwned | b"]}]}),
            "a; touch pwned | b\n",
        ),
        (
            json!({"pipeline": [{"program": "echo", "args": ["$(touch pwned)", "&&", "x"]}]}),
            "$(touch pwned) && x\n",
        ),
        (json!({"pipeline": [{"program": "cat"}]}), "(empty)"),
        (
            json!({"pipeline": [{"program": "sort"}, {"program": "uniq"}], "stdin": "b\na\nb\n"}),
            "a\nb\n",
        ),
        (
            json!({"pipeline": [{"program": "cat"}], "stdin": file}),
            "hidden body\n",
        ),
    ];
    for (args, shown) in table {
        lab.person.take();
        let ran = lab.call("run", args.clone()).await;
        assert!(!ran.is_error, "{args}: {}", ran.text());
        let out = refs(&ran.text());
        assert_eq!(
            out.len(),
            2,
            "stdout and stderr as references: {}",
            ran.text()
        );
        assert!(!ran.text().contains("hidden body"));
        // The person saw the exact argv of every stage before it ran.
        let asked = lab.person.take();
        let effect = asked[0].effect.clone().unwrap();
        let stages = args["pipeline"].as_array().unwrap().len();
        assert_eq!(
            effect.lines().filter(|l| l.starts_with("stage ")).count(),
            stages,
            "{effect}"
        );
        let read = lab.call("read_output", json!({"ref": out[0]})).await;
        assert_eq!(read.text(), shown, "{args}");
    }
    assert!(!lab.exists("pwned"));
    // A vouched command: no ask, its output as text.
    lab.person.take();
    let vouched = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["vouched"]}]}),
        )
        .await;
    assert!(
        vouched.text().contains("stdout:\nvouched\n"),
        "{}",
        vouched.text()
    );
    assert!(lab.person.take().is_empty());
    // A denied run never runs.
    lab.person.denies_all();
    let denied = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "touch", "args": ["ran"]}]}),
        )
        .await;
    assert!(denied.is_error && !lab.exists("ran"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_output_shows_only_what_run_printed() {
    let lab = Lab::new(Config::default(), &project());
    lab.person.approves_all();
    let file = first_ref(&lab.call("read_file", json!({"path": SECRET_NAME})).await);
    let search = first_ref(&lab.call("search", json!({"pattern": "body"})).await);
    let answer = first_ref(
        &lab.call(
            "spawn_processor",
            json!({"reads": [file], "instruction": "copy"}),
        )
        .await,
    );
    for r in [&file, &search, &answer] {
        lab.person.take();
        let result = lab.call("read_output", json!({"ref": r})).await;
        assert_eq!(code(&result), "quarantined", "{r}: {}", result.text());
        assert!(!result.text().contains("hidden"), "{}", result.text());
        assert!(
            lab.person.take().is_empty(),
            "{r}: refused before anyone is asked"
        );
    }
    let ran = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["shown"]}]}),
        )
        .await;
    let out = first_ref(&ran);
    lab.person.denies_all();
    let refused = lab.call("read_output", json!({"ref": out})).await;
    assert!(refused.is_error && !refused.text().contains("shown"));
    assert!(!lab.state.met_untrusted(), "a refused read shows nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_processor_is_isolated_and_its_remark_stays_on_the_screen() {
    let lab = Lab::new(Config::default(), &project());
    let listing = lab.call("list_files", json!({"directory": "vendor"})).await;
    let (hidden, other) = (
        refs(&listing.text())[0].clone(),
        refs(&listing.text())[1].clone(),
    );
    lab.processor.replies(|_, inputs| {
        format!(
            "I changed one line.\n{DOCUMENT_MARKER}\n{}new\n",
            inputs[0].text
        )
    });
    let result = lab
        .call(
            "spawn_processor",
            json!({"reads": [hidden], "instruction": "append"}),
        )
        .await;
    let answer = first_ref(&result);
    assert!(!result.text().contains("I changed") && !result.text().contains("hidden body"));
    assert!(
        result
            .display
            .as_deref()
            .unwrap()
            .contains("I changed one line.")
    );
    // Only the named reference was given, and nothing else.
    let calls = lab.processor.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].1.len(), 1);
    assert_eq!(calls[0].1[0].text, "hidden body\n");
    lab.person.approves_all();
    lab.call(
        "write_file",
        json!({"path_ref": hidden, "contents_ref": answer}),
    )
    .await;
    assert_eq!(
        lab.read(SECRET_NAME).unwrap(),
        "hidden body\nnew\n",
        "the remark is in no file"
    );

    // (arguments, error code or "")
    let table: Vec<(Value, &str)> = vec![
        (
            json!({"reads": [], "instruction": "x"}),
            "invalid_arguments",
        ),
        (
            json!({"reads": [hidden, other], "instruction": "x"}),
            "invalid_arguments",
        ),
        (
            json!({"reads": [hidden], "about": other, "instruction": "x"}),
            "invalid_arguments",
        ),
        (
            json!({"reads": [hidden], "instruction": " "}),
            "invalid_arguments",
        ),
        (
            json!({"reads": ["ref:999"], "instruction": "x"}),
            "unknown_reference",
        ),
        (
            json!({"reads": [hidden, other], "about": other, "instruction": "x"}),
            "",
        ),
    ];
    for (args, want) in table {
        let result = lab.call("spawn_processor", args.clone()).await;
        assert_eq!(code(&result), want, "{args}: {}", result.text());
    }
    // An answer with no marker names no document and can be written nowhere.
    lab.processor.replies(|_, _| "just a remark".to_owned());
    let bare = first_ref(
        &lab.call(
            "spawn_processor",
            json!({"reads": [other], "instruction": "x"}),
        )
        .await,
    );
    let write = lab
        .call(
            "write_file",
            json!({"path_ref": other, "contents_ref": bare}),
        )
        .await;
    assert_eq!(code(&write), "not_a_destination");
    assert_eq!(lab.read("vendor/other.txt").unwrap(), "other body\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_puts_four_questions_at_most_one_at_a_time() {
    let lab = Lab::new(Config::default(), &project());
    let q =
        |text: &str| json!({"header": text, "question": format!("{text}?"), "options": ["x", "y"]});
    *lab.questions.answers.lock().unwrap() = vec![
        Answer::Chose(vec!["x".to_owned()]),
        Answer::Wrote("my words".to_owned()),
        Answer::Skipped,
    ];
    let five = lab
        .call(
            "ask_user",
            json!({"questions": [q("a"), q("b"), q("c"), q("d"), q("e")]}),
        )
        .await;
    assert_eq!(code(&five), "invalid_arguments");
    assert!(
        lab.questions.asked.lock().unwrap().is_empty(),
        "refused whole"
    );
    let three = lab
        .call("ask_user", json!({"questions": [q("a"), q("b"), q("c")]}))
        .await;
    assert_eq!(
        three.text(),
        "1. a: x\n2. b: my words\n3. c: (skipped: work with that; do not ask again)\n"
    );
    let asked: Vec<String> = lab
        .questions
        .asked
        .lock()
        .unwrap()
        .iter()
        .map(|q| q.question.clone())
        .collect();
    assert_eq!(asked, ["a?", "b?", "c?"], "one at a time, in order");
    // Remembered per question, a skip included; only the new one is put.
    let again = lab
        .call("ask_user", json!({"questions": [q("c"), q("d")]}))
        .await;
    assert!(
        again.text().starts_with("1. c: (skipped"),
        "{}",
        again.text()
    );
    assert_eq!(lab.questions.asked.lock().unwrap().len(), 4);
    // A reference alone does not close it; untrusted output shown does.
    lab.person.approves_all();
    let ran = lab
        .call(
            "run",
            json!({"pipeline": [{"program": "echo", "args": ["z"]}]}),
        )
        .await;
    let open = lab.call("ask_user", json!({"questions": [q("e")]})).await;
    assert!(!open.is_error, "{}", open.text());
    lab.call("read_output", json!({"ref": first_ref(&ran)}))
        .await;
    let closed = lab.call("ask_user", json!({"questions": [q("f")]})).await;
    assert_eq!(code(&closed), "declined");
    assert_eq!(lab.questions.asked.lock().unwrap().len(), 5);
    // Nobody to ask: declined, never answered on the person's behalf.
    let alone = Lab::new(
        Config {
            questions: false,
            ..Config::default()
        },
        &[],
    );
    let declined = alone.call("ask_user", json!({"questions": [q("a")]})).await;
    assert_eq!(code(&declined), "declined");
}
