//! The shell corpus: scripts a model might send (and bypass attempts), each with the command
//! targets (`tool.bash.cmd:<target>`), the files written, and what the search gate says.

use super::Dialect;
use super::analyze::analyze;
use super::denylist::refusal;
use super::keys::command_targets;
use super::search_gate::find_search;

/// (script, expected command targets, expected written paths)
const KEYS: &[(&str, &[&str], &[&str])] = &[
    ("git status", &["git status"], &[]),
    ("ls -la src", &["ls -la src"], &[]),
    // Chaining.
    ("a; b", &["a", "b"], &[]),
    ("make && curl x", &["make", "curl x"], &[]),
    ("false || curl x", &["false", "curl x"], &[]),
    ("cat f | curl -d @- x", &["cat f", "curl -d @- x"], &[]),
    ("sleep 1 & curl x", &["sleep 1", "curl x"], &[]),
    ("echo a\ncurl x", &["echo a", "curl x"], &[]),
    ("echo a\r\ncurl x", &["?", "curl x"], &[]),
    ("(cd sub && curl x)", &["cd sub", "curl x"], &[]),
    ("{ echo a; curl x; }", &["echo a", "curl x"], &[]),
    ("if true; then curl x; fi", &["true", "curl x"], &[]),
    ("for f in a b; do rm $f; done", &["rm $f"], &[]),
    (
        "while read l; do curl $l; done < list",
        &["read l", "curl $l"],
        &[],
    ),
    ("case x in x) curl y;; esac", &["curl y"], &[]),
    ("f() { curl x; }; f", &["curl x", "f"], &[]),
    // Substitutions.
    ("echo $(curl x)", &["curl x", "echo $(curl x)"], &[]),
    ("echo `curl x`", &["curl x", "echo `curl x`"], &[]),
    ("echo \"$(curl x)\"", &["curl x", "echo \"$(curl x)\""], &[]),
    ("X=$(curl x)", &["curl x"], &[]),
    (
        "diff <(curl a) <(curl b)",
        &["curl a", "curl b", "diff <(…) <(…)"],
        &[],
    ),
    ("$(echo curl) x", &["echo curl", "?"], &[]),
    (
        "echo $((1 + $(curl x)))",
        &["echo $((1 + $(curl x)))", "?"],
        &[],
    ),
    // Quoting as bash decodes it.
    ("c\\url x", &["curl x"], &[]),
    ("'c'url x", &["curl x"], &[]),
    ("cu''rl x", &["curl x"], &[]),
    ("\"curl\" x", &["curl x"], &[]),
    ("$'\\x63url' x", &["curl x"], &[]),
    ("$'cu\\162l' x", &["curl x"], &[]),
    (
        "git commit -m \"fix the bug\"",
        &["git commit -m fix the bug"],
        &[],
    ),
    // Expansions in the verb are unresolved.
    ("curl${IFS}x", &["?"], &[]),
    ("$CMD x", &["?"], &[]),
    ("~/bin/tool", &["?"], &[]),
    ("/usr/bin/cu?l x", &["?"], &[]),
    // Redirections.
    ("echo hi > out.txt", &["echo hi"], &["out.txt"]),
    ("echo hi >> logs/a.log 2>&1", &["echo hi"], &["logs/a.log"]),
    ("make &> build.log", &["make"], &["build.log"]),
    ("ls > /dev/null 2>&1", &["ls"], &["/dev/null"]),
    ("echo x > \"$F\"", &["echo x", "?"], &[]),
    ("cat < in.txt", &["cat"], &[]),
    ("echo x >&2", &["echo x"], &[]),
    // Wrappers and environment prefixes.
    ("env curl x", &["curl x", "env curl x"], &[]),
    (
        "env -i A=1 curl x",
        &["A=1 curl x", "env -i A=1 curl x"],
        &[],
    ),
    ("timeout 1 curl x", &["curl x", "timeout 1 curl x"], &[]),
    (
        "timeout -s KILL 5 curl x",
        &["curl x", "timeout -s KILL 5 curl x"],
        &[],
    ),
    (
        "sudo -u root rm -rf build",
        &["rm -rf build", "sudo -u root rm -rf build"],
        &[],
    ),
    ("nice -n 5 make", &["make", "nice -n 5 make"], &[]),
    ("nohup curl x", &["curl x", "nohup curl x"], &[]),
    ("command curl x", &["curl x", "command curl x"], &[]),
    ("exec curl x", &["curl x", "exec curl x"], &[]),
    (
        "find . -name '*.o' | xargs rm",
        &["find . -name *.o", "rm", "xargs rm"],
        &[],
    ),
    (
        "xargs -n 1 -I{} curl {}",
        &["curl {}", "xargs -n 1 -I{} curl {}"],
        &[],
    ),
    ("LD_PRELOAD=x ls", &["LD_PRELOAD=x ls"], &[]),
    (
        "RUST_LOG=debug cargo test",
        &["RUST_LOG=debug cargo test"],
        &[],
    ),
    ("bash -c 'curl x'", &["curl x", "bash -c curl x"], &[]),
    (
        "sh -ec 'a && curl x'",
        &["a", "curl x", "sh -ec a && curl x"],
        &[],
    ),
    ("bash -c \"$S\"", &["bash -c \"$S\"", "?"], &[]),
    ("eval 'curl x'", &["curl x", "eval curl x"], &[]),
    ("eval \"$X\"", &["eval \"$X\"", "?"], &[]),
    (
        "env sh -c 'timeout 1 curl x'",
        &[
            "curl x",
            "timeout 1 curl x",
            "sh -c timeout 1 curl x",
            "env sh -c timeout 1 curl x",
        ],
        &[],
    ),
    ("bash script.sh", &["bash script.sh"], &[]),
    // Path-qualified verbs are keyed as written, never by basename.
    ("./cat x", &["./cat x"], &[]),
    ("/tmp/x/cat x", &["/tmp/x/cat x"], &[]),
    // Heredocs.
    (
        "cat <<EOF > out\nhello $(curl x)\nEOF\n",
        &["curl x", "cat"],
        &["out"],
    ),
    ("cat <<'EOF'\n$(curl x)\nEOF\n", &["cat"], &[]),
    // A shell with no script operand runs its stdin: a heredoc or here-string is its script.
    ("bash <<'EOF'\ncurl x\nEOF\n", &["curl x", "bash"], &[]),
    ("sh <<EOF\ncurl x\nEOF\n", &["curl x", "sh"], &[]),
    ("sh <<-EOF\n\tcurl x\n\tEOF\n", &["curl x", "sh"], &[]),
    (
        "zsh -s <<'EOF'\nrm -rf build\nEOF\n",
        &["rm -rf build", "zsh -s"],
        &[],
    ),
    ("bash <<< 'curl x'", &["curl x", "bash"], &[]),
    (
        "dash - <<'EOF'\na && curl x\nEOF\n",
        &["a", "curl x", "dash -"],
        &[],
    ),
    (
        "timeout 5 bash <<'EOF'\ncurl x\nEOF\n",
        &["curl x", "bash", "timeout 5 bash"],
        &[],
    ),
    ("sh <<EOF\ncurl $HOST\nEOF\n", &["sh", "?"], &[]),
    (
        "bash <<EOF\ncurl $(cat url)\nEOF\n",
        &["cat url", "bash", "?"],
        &[],
    ),
    ("bash <<< \"$S\"", &["bash", "?"], &[]),
    // With -c or a script file, the heredoc is data.
    (
        "sh -c 'cat' <<'EOF'\ncurl x\nEOF\n",
        &["cat", "sh -c cat"],
        &[],
    ),
    (
        "bash script.sh <<'EOF'\ncurl x\nEOF\n",
        &["bash script.sh"],
        &[],
    ),
    // A shell reading a pipe or a file runs what cannot be known statically.
    ("curl -s x | sh", &["curl -s x", "sh", "?"], &[]),
    (
        "curl -s x | bash -s -- arg",
        &["curl -s x", "bash -s -- arg", "?"],
        &[],
    ),
    (
        "echo 'curl x' | sudo bash",
        &["echo curl x", "bash", "sudo bash", "?"],
        &[],
    ),
    ("curl x | (sh)", &["curl x", "sh", "?"], &[]),
    ("curl x > >(sh)", &["sh", "curl x", "?"], &[]),
    ("sh < script.sh", &["sh", "?"], &[]),
    (
        "while read l; do sh; done < list",
        &["read l", "sh", "?"],
        &[],
    ),
    ("bash", &["bash"], &[]),
    ("curl x | sh -c 'cat'", &["curl x", "cat", "sh -c cat"], &[]),
    // Parse errors.
    ("echo 'unterminated", &["?"], &[]),
    ("if then fi (", &["?"], &[]),
];

#[test]
fn command_keys_corpus() {
    let mut failures = Vec::new();
    for (script, targets, writes) in KEYS {
        let a = analyze(script, Dialect::Bash);
        let got = command_targets(&a);
        let written: Vec<String> = a.writes.iter().map(|w| w.shown()).collect();
        if got != *targets || written != *writes {
            failures.push(format!(
                "{script:?}\n  targets: got {got:?}, want {targets:?}\n  writes:  got {written:?}, want {writes:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn too_many_commands_is_unresolved() {
    let script = vec!["true"; 100].join("; ");
    assert_eq!(command_targets(&analyze(&script, Dialect::Bash)), vec!["?"]);
    let nested = "echo $(".repeat(20) + "x" + &")".repeat(20);
    assert!(command_targets(&analyze(&nested, Dialect::Bash)).contains(&"?".to_owned()));
}

/// (script, the search tool it is redirected to, if gated)
const SEARCH: &[(&str, Option<(&str, &str)>)] = &[
    ("grep -rn TODO .", Some(("grep", "grep"))),
    ("egrep x f", Some(("egrep", "grep"))),
    ("fgrep x f", Some(("fgrep", "grep"))),
    ("rgrep x", Some(("rgrep", "grep"))),
    ("rg foo", Some(("rg", "grep"))),
    ("ag foo", Some(("ag", "grep"))),
    ("ack foo", Some(("ack", "grep"))),
    ("find . -name '*.rs'", Some(("find", "glob"))),
    ("fd main", Some(("fd", "glob"))),
    ("/usr/bin/grep -r x .", Some(("grep", "grep"))),
    ("make build && grep -rn TODO .", Some(("grep", "grep"))),
    ("cd src; rg foo", Some(("rg", "grep"))),
    ("false || find .", Some(("find", "glob"))),
    ("(cd src && grep -r x)", Some(("grep", "grep"))),
    ("{ grep -r x .; }", Some(("grep", "grep"))),
    ("LC_ALL=C grep x f", Some(("grep", "grep"))),
    ("g\\rep x f", Some(("grep", "grep"))),
    // Not gated: pipes, find actions, what cannot be read literally, project programs.
    ("go test ./... | grep -v ok", None),
    ("grep x f | head", None),
    ("find . -name '*.tmp' -delete", None),
    ("find . -name '*.rs' -exec wc -l {} \\;", None),
    ("find . -execdir ls \\;", None),
    ("find . -type f -fprint out", None),
    ("find . -ok rm {} \\;", None),
    ("$TOOL -rn foo .", None),
    ("eval 'grep -r x .'", None),
    ("sh -c 'grep -r x .'", None),
    ("./grep x", None),
    ("echo $(grep -r x .)", None),
    ("cargo build", None),
    ("grepx foo", None),
    ("echo 'unterminated", None),
];

#[test]
fn search_gate_corpus() {
    let mut failures = Vec::new();
    for (script, want) in SEARCH {
        let got = find_search(script).map(|h| (h.verb, h.tool));
        let want = want.map(|(v, t)| (v.to_owned(), t));
        if got != want {
            failures.push(format!("{script:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// (script, refused)
const DENY: &[(&str, bool)] = &[
    ("rm -rf /", true),
    ("rm -rf /*", true),
    ("rm -fr ~", true),
    ("rm -rf ~/", true),
    ("rm -r -f $HOME", true),
    ("rm -rf \"$HOME\"", true),
    ("sudo rm -rf /usr", true),
    ("cd x && rm -Rf /etc/", true),
    ("rm --no-preserve-root -rf /", true),
    ("mkfs.ext4 /dev/sdb1", true),
    ("mkfs -t ext4 /dev/sdb1", true),
    ("echo x > /dev/sda", true),
    ("cat img > /dev/nvme0n1", true),
    ("dd if=/dev/zero of=/dev/sda bs=1M", true),
    (":(){ :|:& };:", true),
    ("bomb(){ bomb|bomb& }; bomb", true),
    ("chmod -R 777 /", true),
    ("chown -R nobody /home", true),
    ("bash -c 'rm -rf /'", true),
    // Ordinary work.
    ("rm -rf build target", false),
    ("rm -rf ./node_modules", false),
    ("rm -f /tmp/x.log", false),
    ("dd if=/dev/zero of=disk.img bs=1M count=1", false),
    ("dd if=/dev/zero of=/dev/null", false),
    ("echo x > /dev/null", false),
    ("chmod -R 755 scripts", false),
    ("chmod 644 /etc/hosts", false),
    ("f(){ echo hi; }; f", false),
];

#[test]
fn denylist_corpus() {
    let mut failures = Vec::new();
    for (script, refused) in DENY {
        let got = refusal(script, &analyze(script, Dialect::Bash));
        if got.is_some() != *refused {
            failures.push(format!("{script:?}: got {got:?}, want refused={refused}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
