use super::*;
use serde_json::json;

fn kinds(diff: &Diff) -> Vec<(DiffKind, &str)> {
    diff.lines
        .iter()
        .map(|l| (l.kind, l.text.as_str()))
        .collect()
}

fn project(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

#[test]
fn an_edit_shows_the_tools_own_diff() {
    let dir = project(&[("a.txt", b"one\ntwo\nthree\n")]);
    let args = json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"});
    let diff = for_call(dir.path(), "edit_file", &args).unwrap();
    assert_eq!(diff.change, Change::Modify);
    let lines = kinds(&diff);
    assert_eq!(lines[0].0, DiffKind::Hunk, "{lines:?}");
    assert!(lines.contains(&(DiffKind::Removed, "two")), "{lines:?}");
    assert!(lines.contains(&(DiffKind::Added, "TWO")), "{lines:?}");
    assert!(lines.contains(&(DiffKind::Context, "one")), "{lines:?}");
}

/// Each refusal the tool will make is said, with the replacement asked for after it.
#[test]
fn an_edit_the_tool_will_refuse_says_why() {
    let dir = project(&[("a.txt", b"one\none\n"), ("bin", b"a\0b")]);
    let table = [
        (
            "a.txt",
            "zzz",
            "y",
            "old_string is not found in the file: the call will fail",
        ),
        (
            "a.txt",
            "one",
            "y",
            "old_string occurs 2 times and replace_all is not set",
        ),
        (
            "a.txt",
            "one",
            "one",
            "old_string and new_string are the same",
        ),
        ("bin", "a", "y", "the file is binary: the call will fail"),
        (
            "gone.txt",
            "a",
            "y",
            "the file does not exist: the call will fail",
        ),
    ];
    for (path, old, new, why) in table {
        let args = json!({"path": path, "old_string": old, "new_string": new});
        let diff = for_call(dir.path(), "edit_file", &args).unwrap();
        assert_eq!(diff.lines[0].kind, DiffKind::Note, "{path} {old}");
        assert!(
            diff.lines[0].text.contains(why),
            "{path} {old}: {:?}",
            diff.lines
        );
        assert_eq!(diff.lines[1], line(DiffKind::Removed, old));
        assert_eq!(diff.lines[2], line(DiffKind::Added, new));
    }
}

#[test]
fn a_write_diffs_the_whole_file() {
    let dir = project(&[("b.txt", b"a\nb\nc\n")]);
    let args = json!({"path": "b.txt", "content": "a\nB\nc\n"});
    let diff = for_call(dir.path(), "write_file", &args).unwrap();
    assert_eq!(diff.change, Change::Modify);
    let lines = kinds(&diff);
    assert_eq!(lines[0], (DiffKind::Hunk, "@@ -1,3 +1,3 @@"));
    assert!(lines.contains(&(DiffKind::Removed, "b")));
    assert!(lines.contains(&(DiffKind::Added, "B")));
    let same = json!({"path": "b.txt", "content": "a\nb\nc\n"});
    let diff = for_call(dir.path(), "write_file", &same).unwrap();
    assert_eq!(
        kinds(&diff),
        [(DiffKind::Note, "(the content is unchanged)")]
    );
}

#[test]
fn a_new_file_is_all_added_and_its_escapes_are_shown() {
    let dir = project(&[]);
    let new = json!({"path": "new.txt", "content": "x\n\u{1b}[2J"});
    let diff = for_call(dir.path(), "write_file", &new).unwrap();
    assert_eq!(diff.change, Change::Create);
    assert_eq!(
        kinds(&diff),
        [
            (DiffKind::Note, "(a new file)"),
            (DiffKind::Hunk, "@@ -0,0 +1,2 @@"),
            (DiffKind::Added, "x"),
            (DiffKind::Added, "\\x1b[2J"),
        ]
    );
    let empty = json!({"path": "e.txt", "content": ""});
    let diff = for_call(dir.path(), "write_file", &empty).unwrap();
    assert_eq!(kinds(&diff), [(DiffKind::Note, "(a new, empty file)")]);
}

#[test]
fn binary_and_huge_files_are_said_to_be_so() {
    let big = vec![b'x'; MAX_READ as usize + 1];
    let dir = project(&[("bin", b"\x7fELF\0\0"), ("big", &big)]);
    let cases = [
        (
            "write_file",
            json!({"path": "bin", "content": "text\n"}),
            "replaces a binary file of 6 bytes",
        ),
        (
            "write_file",
            json!({"path": "big", "content": "x"}),
            "larger than 4 MiB",
        ),
        (
            "write_file",
            json!({"path": "new", "content": "a\u{0}b"}),
            "binary (3 bytes)",
        ),
        (
            "delete_file",
            json!({"path": "bin"}),
            "(deletes a binary file of 6 bytes)",
        ),
        ("delete_file", json!({"path": "big"}), "larger than 4 MiB"),
    ];
    for (tool, args, said) in cases {
        let diff = for_call(dir.path(), tool, &args).unwrap();
        assert!(
            diff.lines[0].text.contains(said),
            "{args}: {:?}",
            diff.lines
        );
    }
}

#[test]
fn a_delete_removes_every_line() {
    let dir = project(&[("d.txt", b"one\ntwo\n")]);
    let diff = for_call(dir.path(), "delete_file", &json!({"path": "d.txt"})).unwrap();
    assert_eq!(diff.change, Change::Delete);
    assert_eq!(
        kinds(&diff),
        [
            (DiffKind::Hunk, "@@ -1,2 +0,0 @@"),
            (DiffKind::Removed, "one"),
            (DiffKind::Removed, "two"),
        ]
    );
    let gone = for_call(dir.path(), "delete_file", &json!({"path": "nope"})).unwrap();
    assert!(gone.lines[0].text.contains("nothing is deleted"));
}

#[test]
fn the_path_shown_is_the_root_relative_file() {
    let dir = project(&[]);
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.txt"), "one\n").unwrap();
    std::os::unix::fs::symlink("src", dir.path().join("lnk")).unwrap();
    let absolute = dir.path().canonicalize().unwrap().join("src/a.txt");
    let edit = |path: &str| json!({"path": path, "old_string": "one", "new_string": "1"});
    let diff = for_call(dir.path(), "edit_file", &edit(absolute.to_str().unwrap())).unwrap();
    assert_eq!(diff.path, "src/a.txt");
    let diff = for_call(dir.path(), "edit_file", &edit("./src/../src/a.txt")).unwrap();
    assert_eq!(diff.path, "src/a.txt");
    let diff = for_call(dir.path(), "edit_file", &edit("lnk/a.txt")).unwrap();
    assert_eq!(diff.path, "src/a.txt");
    assert_eq!(
        kinds(&diff)[0],
        (DiffKind::Note, "(lnk/a.txt leads to src/a.txt)")
    );
    let hostile = for_call(
        dir.path(),
        "write_file",
        &json!({"path": "x\u{1b}[2J", "content": ""}),
    );
    assert_eq!(hostile.unwrap().path, "x\\x1b[2J");
}

#[test]
fn a_path_outside_the_root_is_not_read() {
    let dir = project(&[]);
    let args = json!({"path": "../../etc/passwd", "old_string": "root", "new_string": "x"});
    let diff = for_call(dir.path(), "edit_file", &args).unwrap();
    assert!(
        diff.lines[0].text.contains("the path is refused"),
        "{:?}",
        diff.lines
    );
    assert_eq!(diff.path, "../../etc/passwd");
}

#[test]
fn other_tools_have_no_diff() {
    assert!(for_call(Path::new("/"), "bash", &json!({"command": "ls"})).is_none());
    assert!(for_call(Path::new("/"), "write_file", &json!({"path": "a"})).is_none());
}

#[test]
fn long_diffs_and_long_lines_are_capped_with_a_count() {
    let content: String = (0..200).map(|i| format!("{i}\n")).collect();
    let dir = project(&[]);
    let args = json!({"path": "n", "content": content});
    let diff = for_call(dir.path(), "write_file", &args).unwrap();
    assert_eq!(diff.lines.len(), MAX_LINES + 1);
    // The note and the hunk take two of the lines shown.
    assert_eq!(diff.lines[MAX_LINES].text, "… 122 more lines");
    let wide = json!({"path": "w", "content": "y".repeat(10_000)});
    let diff = for_call(dir.path(), "write_file", &wide).unwrap();
    assert_eq!(diff.lines[2].text.chars().count(), MAX_LINE_CHARS);
    assert!(diff.lines[2].text.ends_with('…'));
}
