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

/// (shell that runs it, script, command targets, files written, files read)
type Reproduction = (
    Dialect,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// Issue 13 §2's reproductions and their neighbours, with the keys each must get:
/// (shell that runs it, script, command targets, files written, files read). Under `Sh` (a
/// non-bash `/bin/sh` such as dash) every bash-only construct is unresolved.
const REPRODUCTIONS: &[Reproduction] = &[
    // Arithmetic is code: dash runs `((touch x))` as subshells, bash evaluates names.
    (Dialect::Sh, "((touch x))", &["?"], &[], &[]),
    (Dialect::Bash, "((touch x))", &["?"], &[], &[]),
    (Dialect::Bash, "((1+2))", &[], &[], &[]),
    (
        Dialect::Bash,
        "x='a[$(touch p)]'; (( x ))",
        &["?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "echo $((x))",
        &["echo $((x))", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "echo $((1+2))", &["echo $((1+2))"], &[], &[]),
    (Dialect::Bash, "echo $[x]", &["echo $[x]", "?"], &[], &[]),
    (Dialect::Bash, "let x", &["let x", "?"], &[], &[]),
    (
        Dialect::Bash,
        "declare -i y",
        &["declare -i y", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "[[ $x -eq 1 ]]", &["?"], &[], &[]),
    (Dialect::Bash, "[[ -v $x ]]", &["?"], &[], &[]),
    (
        Dialect::Bash,
        "echo ${a[$i]}",
        &["echo ${a[$i]}", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "echo ${s:$off}",
        &["echo ${s:$off}", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "echo ${!x}", &["echo ${!x}", "?"], &[], &[]),
    (
        Dialect::Bash,
        "test -v 'a[$(touch x)]'",
        &["test -v a[$(touch x)]", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "declare -a y='($(touch p))'",
        &["declare -a y=($(touch p))", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "mapfile -C 'rm x' -c 1 arr < f",
        &["mapfile -C rm x -c 1 arr", "?"],
        &[],
        &["f"],
    ),
    // `[[ … ]]` and `$'…'` mean something else under dash.
    (
        Dialect::Sh,
        "[[ a || sh -ef /dev/stdin ]] <<X\necho hi\nX",
        &["?"],
        &[],
        &[],
    ),
    (Dialect::Sh, "[[ x > victim ]]", &["?"], &[], &[]),
    (Dialect::Bash, "[[ x > victim ]]", &[], &[], &[]),
    (
        Dialect::Sh,
        "echo $'a\\' ; touch x ; #'",
        &["echo a' ; touch x ; #", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "echo $'a\\' ; touch x ; #'",
        &["echo a' ; touch x ; #"],
        &[],
        &[],
    ),
    (Dialect::Sh, "echo x &> f", &["echo x", "?"], &["f"], &[]),
    (Dialect::Sh, "cat <<< x", &["cat", "?"], &[], &[]),
    (Dialect::Sh, "a |& b", &["a", "b", "?"], &[], &[]),
    (Dialect::Sh, "echo {a,b}", &["echo {a,b}", "?"], &[], &[]),
    (
        Dialect::Sh,
        "echo ${x/a/b}",
        &["echo ${x/a/b}", "?"],
        &[],
        &[],
    ),
    (Dialect::Sh, "a=(1 2)", &["?"], &[], &[]),
    (
        Dialect::Sh,
        "function f { touch x; }",
        &["touch x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Sh,
        "echo ${x:-y} \"$HOME\"; cd sub && ls > out",
        &["echo ${x:-y} \"$HOME\"", "cd sub", "ls"],
        &["sub/out"],
        &[],
    ),
    // Substitutions inside parameter expansions, heredoc bodies included.
    (Dialect::Bash, "x=${y:-$(touch x)}", &["touch x"], &[], &[]),
    (
        Dialect::Bash,
        "echo ${x:-$(touch x)}",
        &["touch x", "echo ${x:-$(touch x)}"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "echo \"${x:-`touch x`}\"",
        &["touch x", "echo \"${x:-`touch x`}\""],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "cat <<EOF\n${x:-$(touch x)}\nEOF",
        &["touch x", "cat"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "echo \"${x:-'$(touch x)'}\"",
        &["touch x", "echo \"${x:-'$(touch x)'}\""],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "x='$(touch p)'; echo ${x@P}",
        &["echo ${x@P}", "?"],
        &[],
        &[],
    ),
    // Exec-ing arguments are unwrapped.
    (
        Dialect::Bash,
        "find . -exec rm {} \\;",
        &["rm {}", "find . -exec rm {} ;"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "find . -name '*.o' -exec rm -f {} +",
        &["rm -f {}", "find . -name *.o -exec rm -f {} +"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "find . $X rm {} \\;",
        &["find . $X rm {} ;", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "watch -n 1 'rm x'",
        &["rm x", "watch -n 1 rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "script -c 'rm x' /dev/null",
        &["rm x", "script -c rm x /dev/null"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "su -c 'rm x' root",
        &["rm x", "su -c rm x root"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "busybox rm x",
        &["rm x", "busybox rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "builtin eval 'rm x'",
        &["rm x", "eval rm x", "builtin eval rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "chrt -f 10 rm x",
        &["rm x", "chrt -f 10 rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "ionice -c 3 rm x",
        &["rm x", "ionice -c 3 rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "taskset -c 0 rm x",
        &["rm x", "taskset -c 0 rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "runuser -u bob -- rm x",
        &["rm x", "runuser -u bob -- rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "flock /tmp/l rm x",
        &["rm x", "flock /tmp/l rm x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "flock /tmp/l -c 'rm x'",
        &["rm x", "flock /tmp/l -c rm x"],
        &[],
        &[],
    ),
    (Dialect::Bash, "doas rm x", &["rm x", "doas rm x"], &[], &[]),
    (
        Dialect::Bash,
        "parallel rm ::: a b",
        &["parallel rm ::: a b", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "nice --frobnicate 5 rm x",
        &["nice --frobnicate 5 rm x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "sudo -s rm x",
        &["sudo -s rm x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "FOO=1 nice rm x",
        &["FOO=1 rm x", "FOO=1 nice rm x"],
        &[],
        &[],
    ),
    // Assignments and builtins that change what later commands do.
    (
        Dialect::Bash,
        "PATH=.:$PATH; git status",
        &["git status", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "HOME=$PWD; git status",
        &["git status", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "PATH=. git status",
        &["PATH=. git status"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "PATH=. eval git status",
        &["git status", "PATH=. eval git status", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "BASH_ENV=x bash -c true",
        &["true", "BASH_ENV=x bash -c true", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "export PATH=.; git status",
        &["export PATH=.", "git status", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "read PATH < f",
        &["read PATH", "?"],
        &[],
        &["f"],
    ),
    (
        Dialect::Bash,
        "printf -v PATH %s .",
        &["printf -v PATH %s .", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "for PATH in .; do git status; done",
        &["git status", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        ": ${PATH:=.}",
        &[": ${PATH:=.}", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "IFS=x; echo $a", &["echo $a", "?"], &[], &[]),
    (
        Dialect::Bash,
        "x=1; export X=2; read y < f; git status",
        &["export X=2", "read y", "git status"],
        &[],
        &["f"],
    ),
    (
        Dialect::Bash,
        "hash -p ./x git",
        &["hash -p ./x git", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "enable -f ./x.so foo",
        &["enable -f ./x.so foo", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "shopt -s expand_aliases",
        &["shopt -s expand_aliases", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "shopt -s nullglob",
        &["shopt -s nullglob"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "alias ls='rm x'",
        &["alias ls=rm x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "set -o posix",
        &["set -o posix", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "set -k", &["set -k", "?"], &[], &[]),
    (
        Dialect::Bash,
        "set -euo pipefail; echo x > f",
        &["set -euo pipefail", "echo x"],
        &["f"],
        &[],
    ),
    (
        Dialect::Bash,
        "trap 'rm x' EXIT",
        &["trap rm x EXIT", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "source ./env.sh",
        &["source ./env.sh", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, ". ./env.sh", &[". ./env.sh", "?"], &[], &[]),
    (Dialect::Bash, "cat {fd}>f", &["cat {fd}", "?"], &["f"], &[]),
    (
        Dialect::Bash,
        "[ -f \"$f\" ] && cat \"$f\"",
        &["[ -f \"$f\" ]", "cat \"$f\""],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "[ \"$a\" \"$b\" ]",
        &["[ \"$a\" \"$b\" ]", "?"],
        &[],
        &[],
    ),
    // `cd` is followed; where it may fail, both directories are keyed.
    (
        Dialect::Bash,
        "cd elsewhere && echo x >> f",
        &["cd elsewhere", "echo x"],
        &["elsewhere/f"],
        &[],
    ),
    (
        Dialect::Bash,
        "cd .git && echo x >> config",
        &["cd .git", "echo x"],
        &[".git/config"],
        &[],
    ),
    (
        Dialect::Bash,
        "cd a || true; > f",
        &["cd a", "true"],
        &["a/f", "f"],
        &[],
    ),
    (
        Dialect::Bash,
        "(cd sub; > f); > g",
        &["cd sub"],
        &["sub/f", "f", "g"],
        &[],
    ),
    (Dialect::Bash, "cd sub & > f", &["cd sub"], &["f"], &[]),
    (
        Dialect::Bash,
        "cd sub | cat; > f",
        &["cd sub", "cat"],
        &["f"],
        &[],
    ),
    (Dialect::Bash, "cd .. && > f", &["cd .."], &["../f"], &[]),
    (Dialect::Bash, "cd && > f", &["cd"], &["~/f"], &[]),
    (Dialect::Bash, "cd - && > f", &["cd -", "?"], &[], &[]),
    (
        Dialect::Bash,
        "cd \"$d\" && > f",
        &["cd \"$d\"", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "cd /tmp && > f",
        &["cd /tmp"],
        &["/tmp/f"],
        &[],
    ),
    (
        Dialect::Bash,
        "pushd sub && > f",
        &["pushd sub"],
        &["sub/f"],
        &[],
    ),
    (Dialect::Bash, "popd; > f", &["popd", "?"], &[], &[]),
    (
        Dialect::Bash,
        "eval 'cd sub'; > f",
        &["cd sub", "eval cd sub"],
        &["f", "sub/f"],
        &[],
    ),
    (
        Dialect::Bash,
        "f() { cd sub; }; f; > x",
        &["cd sub", "f", "?"],
        &["x"],
        &[],
    ),
    (
        Dialect::Bash,
        "f() { > x; }; cd sub; f",
        &["cd sub", "f", "?"],
        &["x"],
        &[],
    ),
    (
        Dialect::Bash,
        "cd() { :; }; cd sub; > f",
        &[":", "cd sub", "?"],
        &["sub/f", "f"],
        &[],
    ),
    (
        Dialect::Bash,
        "for i in 1 2; do cd sub; done",
        &["cd sub", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "cd sub; echo $(cat < g)",
        &["cd sub", "cat", "echo $(cat < g)"],
        &[],
        &["sub/g", "g"],
    ),
    (
        Dialect::Bash,
        "cd .git/hooks && ./pre-commit",
        &["cd .git/hooks", "./pre-commit", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "./configure && cd sub",
        &["./configure", "cd sub"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "select x in a; do touch y; done",
        &["?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "coproc touch y", &["touch y"], &[], &[]),
    (Dialect::Sh, "coproc touch y", &["touch y", "?"], &[], &[]),
    // Input redirects are read keys.
    (
        Dialect::Bash,
        "cat < ~/.ssh/id_rsa",
        &["cat"],
        &[],
        &["~/.ssh/id_rsa"],
    ),
    (Dialect::Bash, "cat <> f", &["cat"], &["f"], &["f"]),
    (Dialect::Bash, "cat 0< f", &["cat"], &[], &["f"]),
    (
        Dialect::Bash,
        "echo $(< secret)",
        &["echo $(< secret)"],
        &[],
        &["secret"],
    ),
    (Dialect::Bash, "exec 3< f", &["exec"], &[], &["f"]),
    (Dialect::Bash, "cat < \"$f\"", &["cat", "?"], &[], &[]),
    // Issue 37 §1: a line is read exactly as bash reads it.
    // A here-document that brush-parser ends elsewhere than bash is unresolved.
    (
        Dialect::Bash,
        "cat <<\"a'b\"\na'b\ntouch pwned\nab\n",
        &["?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "cat <<EOF\nEO\\\nF\ntouch pwned\nEOF\n",
        &["?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "cat <<$'EOF'\nEOF\ntouch pwned\n$EOF\n",
        &["?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "cat <<'EOF'\nEO\\\nF\nEOF\n",
        &["cat"],
        &[],
        &[],
    ),
    (Dialect::Bash, "cat <<EOF\nx\\\\\nEOF\n", &["cat"], &[], &[]),
    (
        Dialect::Bash,
        "cat <<EOF <<'E2'\na\nEOF\nb\nE2\ntouch after\n",
        &["cat", "touch after"],
        &[],
        &[],
    ),
    // History expansion, however it is turned on.
    (
        Dialect::Bash,
        "set -o history -o histexpand\necho x #;touch pwned\n!!:s/#//",
        &["set -o history -o histexpand", "echo x", "!!:s/#//", "?"],
        &[],
        &[],
    ),
    (Dialect::Bash, "set -eH", &["set -eH", "?"], &[], &[]),
    (
        Dialect::Bash,
        "set -ho history",
        &["set -ho history", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "set -euxo pipefail",
        &["set -euxo pipefail"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "bash -o history -o histexpand -c 'echo x'",
        &["echo x", "bash -o history -o histexpand -c echo x", "?"],
        &[],
        &[],
    ),
    // Translation and the variables that select its catalog; command lookup.
    (Dialect::Bash, "echo $\"hi\"", &["echo hi", "?"], &[], &[]),
    (
        Dialect::Bash,
        "TEXTDOMAINDIR=.; echo hi",
        &["echo hi", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "EXECIGNORE='*'; git status",
        &["git status", "?"],
        &[],
        &[],
    ),
    // Wrapper option clusters are read as the wrapper reads them.
    (
        Dialect::Bash,
        "script -qc 'touch x' /dev/null",
        &["touch x", "script -qc touch x /dev/null"],
        &[],
        &[],
    ),
    // Without /dev/null, script writes ./typescript, which no key shows.
    (
        Dialect::Bash,
        "script -qc 'touch x'",
        &["touch x", "script -qc touch x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "su -lc 'touch x'",
        &["touch x", "su -lc touch x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "su -c'touch x'",
        &["touch x", "su -ctouch x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "su --comm='touch x'",
        &["su --comm=touch x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "runuser -lc 'touch x'",
        &["touch x", "runuser -lc touch x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "runuser -u bob touch -m x",
        &["touch x", "runuser -u bob touch -m x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "su -s /bin/evil -c 'touch x'",
        &["su -s /bin/evil -c touch x", "?"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "bash -oc errexit 'touch x'",
        &["touch x", "bash -oc errexit touch x"],
        &[],
        &[],
    ),
    // A wrapper's own options end where its command starts.
    (
        Dialect::Bash,
        "command -- touch x",
        &["touch x", "command -- touch x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "sudo rm -l -rf x",
        &["rm -l -rf x", "sudo rm -l -rf x"],
        &[],
        &[],
    ),
    (
        Dialect::Bash,
        "taskset -c 0 rm -p x",
        &["rm -p x", "taskset -c 0 rm -p x"],
        &[],
        &[],
    ),
    (Dialect::Bash, "sudo -l", &["sudo -l"], &[], &[]),
    (Dialect::Bash, "sudo -s", &["sudo -s", "?"], &[], &[]),
    (
        Dialect::Bash,
        "bash -ic 'touch x'",
        &["touch x", "bash -ic touch x", "?"],
        &[],
        &[],
    ),
];

#[test]
fn issue_13_reproductions() {
    let mut failures = Vec::new();
    for (dialect, script, targets, writes, reads) in REPRODUCTIONS {
        let a = analyze(script, *dialect);
        let got = command_targets(&a);
        let written: Vec<String> = a.writes.iter().map(|w| w.shown()).collect();
        let read: Vec<String> = a.reads.iter().map(|w| w.shown()).collect();
        if got != *targets || written != *writes || read != *reads {
            failures.push(format!(
                "{dialect:?} {script:?}\n  targets: got {got:?}, want {targets:?}\n  writes:  got {written:?}, want {writes:?}\n  reads:   got {read:?}, want {reads:?}"
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
