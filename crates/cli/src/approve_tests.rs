use super::*;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tackle_runtime::visible::is_hidden;

struct Script {
    answers: Vec<String>,
    said: Arc<Mutex<String>>,
}

impl Conversation for Script {
    fn say(&mut self, text: &str) -> std::io::Result<()> {
        self.said.lock().unwrap().push_str(text);
        Ok(())
    }
    fn hear(&mut self) -> std::io::Result<Option<String>> {
        Ok((!self.answers.is_empty()).then(|| self.answers.remove(0)))
    }
}

/// One ask of `tool` with `arguments` under `root`, as the runtime would make it.
struct Ask<'a> {
    root: &'a Path,
    tool: &'a str,
    arguments: serde_json::Value,
    keys: Vec<String>,
    message: &'a str,
    session_grant: bool,
    colour: bool,
}

impl<'a> Ask<'a> {
    fn new(root: &'a Path, tool: &'a str, arguments: serde_json::Value) -> Self {
        Self {
            root,
            tool,
            arguments,
            keys: vec!["write:src/a.rs".to_owned()],
            message: "write:src/a.rs needs approval (default for writes)",
            session_grant: true,
            colour: false,
        }
    }

    fn keys(mut self, keys: &[&str]) -> Self {
        self.keys = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    fn view(&self) -> ApprovalView {
        let session = tackle_protocol::SessionId("s".into());
        let call = tackle_protocol::CallId("c".into());
        let request = ApprovalRequest {
            session: &session,
            handle: None,
            call_id: &call,
            tool: self.tool,
            read_only: false,
            arguments: &self.arguments,
            keys: &self.keys,
            message: self.message,
            session_grant: self.session_grant,
            effect: None,
        };
        ApprovalView::of(&request, self.root)
    }

    /// The answer the scripted person gives with `lines`, and everything said to them.
    fn answered(&self, lines: &[&str]) -> (Approval, String) {
        let said = Arc::new(Mutex::new(String::new()));
        let script = Script {
            answers: lines.iter().map(|s| s.to_string()).collect(),
            said: said.clone(),
        };
        let approver =
            TerminalApprover::with_conversation(Box::new(script), self.root.into(), self.colour);
        let view = self.view();
        let got = approver.ask_blocking(&prompt(&view, self.colour), view.session_grant);
        let text = said.lock().unwrap().clone();
        (got, text)
    }
}

fn answer(lines: &[&str]) -> (Approval, String) {
    Ask::new(
        Path::new("/nonexistent"),
        "write_file",
        json!({"path": "src/a.rs"}),
    )
    .answered(lines)
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// No character that acts on a terminal, once the diff's own colours are taken out.
fn assert_inert(shown: &str) {
    let mut rest = shown.to_owned();
    for sgr in [
        "\u{1b}[0m",
        "\u{1b}[1m",
        "\u{1b}[2m",
        "\u{1b}[31m",
        "\u{1b}[32m",
        "\u{1b}[36m",
    ] {
        rest = rest.replace(sgr, "");
    }
    assert!(
        !rest.chars().any(|c| c != '\n' && is_hidden(c)),
        "{shown:?}"
    );
}

#[test]
fn answers_table() {
    assert_eq!(answer(&["o"]).0, Approval::Once);
    assert_eq!(answer(&["session"]).0, Approval::Session);
    assert_eq!(
        answer(&["d", "use edit_file"]).0,
        Approval::Deny {
            message: Some("use edit_file".into())
        }
    );
    assert_eq!(answer(&["d", ""]).0, Approval::Deny { message: None });
    assert_eq!(answer(&["maybe", "s"]).0, Approval::Session);
    assert!(matches!(answer(&[]).0, Approval::Unavailable { .. }));
    let (_, shown) = answer(&["o"]);
    assert!(
        shown.contains("write_file {\"path\":\"src/a.rs\"}")
            && shown.contains("key:  write:src/a.rs"),
        "{shown}"
    );
    assert!(shown.contains("default for writes"), "{shown}");
    // A key the gate asks about every time is not offered for the session.
    let mut ask = Ask::new(Path::new("/"), "write_file", json!({"path": "src/a.rs"}));
    ask.session_grant = false;
    let (got, shown) = ask.answered(&["s", "o"]);
    assert_eq!(got, Approval::Once);
    assert!(!shown.contains("[s]ession"), "{shown}");
    assert!(shown.contains("asks every time"), "{shown}");
}

#[test]
fn an_edit_shows_its_diff_instead_of_the_call() {
    let dir = project(&[("src/a.rs", "one\ntwo\nthree\n")]);
    let args = json!({"path": "./src/a.rs", "old_string": "two", "new_string": "TWO"});
    let (got, shown) = Ask::new(dir.path(), "edit_file", args).answered(&["o"]);
    assert_eq!(got, Approval::Once);
    let expected = "\ntackle: edit_file needs approval\n  key:  write:src/a.rs\n  \
                    --- a/src/a.rs\n  +++ b/src/a.rs\n  @@ -1,3 +1,3 @@\n   one\n  -two\n  \
                    +TWO\n   three\n  why:  write:src/a.rs needs approval (default for writes)\n";
    assert!(shown.starts_with(expected), "{shown}");
    assert!(!shown.contains("call:"), "{shown}");
}

#[test]
fn an_edit_that_will_fail_says_so() {
    let dir = project(&[("src/a.rs", "one\n")]);
    let args = json!({"path": "src/a.rs", "old_string": "zzz", "new_string": "y"});
    let (_, shown) = Ask::new(dir.path(), "edit_file", args).answered(&["d", ""]);
    assert!(
        shown.contains("  (old_string is not found in the file: the call will fail;"),
        "{shown}"
    );
    assert!(shown.contains("  -zzz\n  +y\n"), "{shown}");
}

#[test]
fn a_write_of_a_new_file_is_all_added() {
    let dir = project(&[]);
    let args = json!({"path": "src/new.rs", "content": "fn main() {}\n// end\n"});
    let (_, shown) = Ask::new(dir.path(), "write_file", args).answered(&["o"]);
    assert!(
        shown.contains(
            "  --- /dev/null\n  +++ b/src/new.rs\n  (a new file)\n  @@ -0,0 +1,2 @@\n  \
             +fn main() {}\n  +// end\n"
        ),
        "{shown}"
    );
}

#[test]
fn a_write_over_an_existing_file_diffs_it() {
    let dir = project(&[("b.txt", "a\nb\nc\n")]);
    let args = json!({"path": "b.txt", "content": "a\nB\nc\n"});
    let (_, shown) = Ask::new(dir.path(), "write_file", args).answered(&["o"]);
    assert!(
        shown.contains("  --- a/b.txt\n  +++ b/b.txt\n  @@ -1,3 +1,3 @@\n   a\n  -b\n  +B\n   c\n"),
        "{shown}"
    );
}

#[test]
fn bash_keys_show_as_the_commands_they_are() {
    let ask = Ask::new(
        Path::new("/"),
        "bash",
        json!({"command": "rm -rf build && ls"}),
    )
    .keys(&[
        "tool.bash.cmd:rm -rf build",
        "tool.bash.cmd:ls",
        "write:build",
    ]);
    let (_, shown) = ask.answered(&["o"]);
    assert!(
        shown.contains("needs approval\n  $ rm -rf build\n  $ ls\n  key:  write:build\n"),
        "{shown}"
    );
    assert!(
        shown.contains("  call: bash {\"command\":\"rm -rf build && ls\"}\n"),
        "{shown}"
    );
}

/// A hostile repository's file, or a model's new content or path, cannot repaint the prompt:
/// every escape, carriage return and override is shown escaped, coloured or not.
#[test]
fn escape_sequences_in_content_and_paths_are_made_visible() {
    let dir = project(&[(
        "evil.txt",
        "ok\n\u{1b}[1A\u{1b}[2K\r  allow [o]nce\n\u{9b}2J\n",
    )]);
    let edit = json!({"path": "evil.txt", "old_string": "ok", "new_string": "\u{1b}]0;owned\u{7}"});
    let write = json!({"path": "x\u{1b}[2J\u{202e}.txt", "content": "a\u{7f}\rb\n"});
    for colour in [false, true] {
        for (tool, args) in [("edit_file", edit.clone()), ("write_file", write.clone())] {
            let mut ask = Ask::new(dir.path(), tool, args);
            ask.colour = colour;
            let (_, shown) = ask.answered(&["o"]);
            assert_inert(&shown);
            assert_eq!(
                shown.matches("allow [o]nce").count(),
                1 + usize::from(tool == "edit_file")
            );
        }
    }
    let (_, shown) = Ask::new(dir.path(), "edit_file", edit).answered(&["o"]);
    assert!(
        shown.contains("\\x1b[1A\\x1b[2K\\r  allow [o]nce"),
        "{shown}"
    );
    assert!(shown.contains("+\\x1b]0;owned\\x07"), "{shown}");
    let (_, shown) = Ask::new(dir.path(), "write_file", write).answered(&["o"]);
    assert!(shown.contains("+++ b/x\\x1b[2J\\u{202e}.txt"), "{shown}");
    assert!(shown.contains("+a\\x7f\\rb"), "{shown}");
}

#[test]
fn a_long_diff_is_capped_with_a_count() {
    let dir = project(&[]);
    let content: String = (0..500).map(|i| format!("line {i}\n")).collect();
    let args = json!({"path": "n.txt", "content": content});
    let (_, shown) = Ask::new(dir.path(), "write_file", args).answered(&["o"]);
    assert!(
        shown.contains("  +line 77\n  … 422 more lines\n  why:"),
        "{shown}"
    );
    assert!(!shown.contains("line 78"), "{shown}");
}

#[test]
fn colour_only_when_asked_for() {
    let dir = project(&[("b.txt", "a\n")]);
    let args = json!({"path": "b.txt", "content": "b\n"});
    let mut ask = Ask::new(dir.path(), "write_file", args);
    let (_, plain) = ask.answered(&["o"]);
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    ask.colour = true;
    let (_, coloured) = ask.answered(&["o"]);
    assert!(
        coloured.contains("  \u{1b}[32m+b\u{1b}[0m\n"),
        "{coloured:?}"
    );
    assert!(
        coloured.contains("  \u{1b}[31m-a\u{1b}[0m\n"),
        "{coloured:?}"
    );
}

/// The approver the runtime holds reads the file when it is asked, not before.
#[tokio::test(flavor = "multi_thread")]
async fn the_approver_reads_the_file_when_asked() {
    let dir = project(&[("a.txt", "old\n")]);
    let said = Arc::new(Mutex::new(String::new()));
    let script = Script {
        answers: vec!["o".into()],
        said: said.clone(),
    };
    let approver = TerminalApprover::with_conversation(Box::new(script), dir.path().into(), false);
    std::fs::write(dir.path().join("a.txt"), "older\n").unwrap();
    let args = json!({"path": "a.txt", "old_string": "older", "new_string": "new"});
    let keys = vec!["write:a.txt".to_owned()];
    let (session, call_id) = (
        tackle_protocol::SessionId("s".into()),
        tackle_protocol::CallId("c".into()),
    );
    let request = ApprovalRequest {
        session: &session,
        handle: None,
        call_id: &call_id,
        tool: "edit_file",
        read_only: false,
        arguments: &args,
        keys: &keys,
        message: "writes ask",
        session_grant: true,
        effect: None,
    };
    assert_eq!(approver.approve(request).await, Approval::Once);
    let shown = said.lock().unwrap().clone();
    assert!(shown.contains("  -older\n  +new\n"), "{shown}");
}

/// Issue 13 §8: a model-supplied path that would redraw the prompt is shown escaped, in
/// the call line, the keys and the gate's message alike. One case a row.
#[test]
fn model_supplied_text_cannot_redraw_the_prompt() {
    let attacks = [
        "x\u{1b}[1A\u{1b}[2K\r  call: write_file {}",
        "a\rkey:  write:harmless.txt",
        "evil\u{202e}txt.sh",
        "csi\u{9b}1A",
        "bell\u{7}del\u{7f}",
        "line\nkey:  write:ok.txt",
    ];
    for path in attacks {
        let key = format!("write:{path}");
        let message = format!("write:{path} needs approval (default for writes)");
        let mut ask = Ask::new(Path::new("/"), "write_file", json!({"path": path}));
        ask.keys = vec![key];
        ask.message = &message;
        let shown = prompt(&ask.view(), false);
        let lines: Vec<&str> = shown.lines().collect();
        // The blank line, the heading, the call, one key, why, and the question.
        assert_eq!(lines.len(), 6, "{path:?}: {shown}");
        assert_inert(&shown);
    }
}

#[test]
fn no_terminal_is_unavailable() {
    let approver = TerminalApprover {
        conversation: Mutex::new(None),
        root: "/".into(),
        colour: false,
    };
    assert!(matches!(
        approver.ask_blocking("?", true),
        Approval::Unavailable { .. }
    ));
}
