//! Hostile files never crash or stall tackle: every file tackle reads for itself, in every
//! hostile form a repository (or a mistake) can give it, run through the real binary with a
//! command that reads it. Each case must end within [`DEADLINE`], with its peak RSS under
//! [`MAX_RSS_KIB`] (`wait4`'s `ru_maxrss` of the process itself), and with the refusal its
//! table row expects: an error naming the file and the fix, a warning that names it, or the
//! file left out.
//!
//! The table is data: a new file tackle reads gets a row in [`TARGETS`], and every form in
//! [`FORMS`] is then tried against it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::replay::{model, script};
use harness::{Project, TestCommand};
use serde_json::json;
use tackle_fs::OwnFile;

/// A case that took longer hangs: `/dev/zero` read without bound takes seconds to reach
/// gigabytes, a FIFO forever.
const DEADLINE: Duration = Duration::from_secs(30);
/// Far above what a command needs (tens of MiB), far below what an unbounded read reaches.
const MAX_RSS_KIB: u64 = 256 * 1024;

/// The hostile forms of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    DevZero,
    DevUrandom,
    Fifo,
    Socket,
    Directory,
    /// A regular file one byte over its kind's cap (sparse: nothing is written).
    Oversized,
    /// A link to a real, valid file of its kind outside the project root.
    LinkOut,
    Dangling,
    LinkLoop,
}

const FORMS: [Form; 9] = [
    Form::DevZero,
    Form::DevUrandom,
    Form::Fifo,
    Form::Socket,
    Form::Directory,
    Form::Oversized,
    Form::LinkOut,
    Form::Dangling,
    Form::LinkLoop,
];

/// Where a file lives.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// Relative to the project root: read through the root handle, links out refused.
    Project(&'static str),
    /// Relative to the user's config directory (`$XDG_CONFIG_HOME/tackle`): links followed.
    User(&'static str),
    /// A file named on the command line (outside the root): links followed.
    Named(&'static str),
}

/// What a command does with a refused file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// The command fails, its error naming the file and the problem.
    Fails,
    /// The command succeeds and warns on stderr, naming the file and the problem.
    Warns,
    /// The command goes on without the file (a session log that cannot be read is not listed),
    /// and stderr says this.
    LeavesOut { says: &'static str },
}

struct Target {
    name: &'static str,
    place: Place,
    /// The kind's name and cap, where the one reading path reads it.
    kind: Option<OwnFile>,
    /// The contents of a valid file of this kind (what a link out points at).
    valid: fn(&Project) -> Vec<u8>,
    /// The command that reads it.
    command: fn(&Project, &Path) -> TestCommand,
    refusal: Refusal,
}

const SESSION: &str = "20260101T000000Z-hostile";

fn tools(p: &Project, _: &Path) -> TestCommand {
    p.tackle(["tools"])
}

fn run_one_turn(p: &Project, _: &Path) -> TestCommand {
    let file = script(p, "s.jsonl", &[json!({"turn": {"text": "done"}})]);
    let mut cmd = p.tackle(["--model", &model(&file), "run", "say done"]);
    cmd.timeout(DEADLINE);
    cmd
}

fn run_replay(p: &Project, file: &Path) -> TestCommand {
    p.tackle(["--model", &model(file), "run", "say done"])
}

fn replay_script(_: &Project) -> Vec<u8> {
    format!(
        "{{\"tackle_replay\":1}}\n{}\n",
        json!({"turn": {"text": "done"}})
    )
    .into_bytes()
}

const TARGETS: &[Target] = &[
    Target {
        name: "project settings",
        place: Place::Project(".agents/config.toml"),
        kind: Some(OwnFile::SETTINGS),
        valid: |_| b"[tool_output]\nlines = 10\n".to_vec(),
        command: tools,
        refusal: Refusal::Fails,
    },
    Target {
        name: "project mcp config",
        place: Place::Project(".agents/mcp.json"),
        kind: Some(OwnFile::MCP_CONFIG),
        valid: |_| b"{\"servers\": {}}".to_vec(),
        command: tools,
        refusal: Refusal::Fails,
    },
    Target {
        name: "user settings",
        place: Place::User("config.toml"),
        kind: Some(OwnFile::SETTINGS),
        valid: |_| b"[tool_output]\nlines = 10\n".to_vec(),
        command: tools,
        refusal: Refusal::Fails,
    },
    Target {
        name: "user mcp config",
        place: Place::User("mcp.json"),
        kind: Some(OwnFile::MCP_CONFIG),
        valid: |_| b"{\"servers\": {}}".to_vec(),
        command: |p, _| p.tackle(["mcp", "list"]),
        refusal: Refusal::Fails,
    },
    Target {
        name: "trust store",
        place: Place::User("trust.json"),
        kind: Some(OwnFile::TRUST_STORE),
        valid: |_| b"{\"version\": 1, \"roots\": {}}".to_vec(),
        command: |p, _| p.tackle(["trust", "--list"]),
        refusal: Refusal::Warns,
    },
    Target {
        name: "instructions",
        place: Place::Project("AGENTS.md"),
        kind: Some(OwnFile::INSTRUCTIONS),
        valid: |_| b"be brief".to_vec(),
        command: run_one_turn,
        refusal: Refusal::Warns,
    },
    Target {
        name: "replay script",
        place: Place::Named("replay.jsonl"),
        kind: Some(OwnFile::REPLAY),
        valid: replay_script,
        command: run_replay,
        refusal: Refusal::Fails,
    },
    Target {
        // Refused alone: `tackle agents` names it and exits 1; the other types still load.
        name: "project agent type",
        place: Place::Project(".agents/agents/x.md"),
        kind: Some(OwnFile::AGENT_TYPE),
        valid: |_| b"---\nname: x\ndescription: d\n---\n".to_vec(),
        command: |p, _| p.tackle(["agents"]),
        refusal: Refusal::Fails,
    },
    Target {
        name: "user agent type",
        place: Place::User("agents/x.md"),
        kind: Some(OwnFile::AGENT_TYPE),
        valid: |_| b"---\nname: x\ndescription: d\n---\n".to_vec(),
        command: |p, _| p.tackle(["agents"]),
        refusal: Refusal::Fails,
    },
    Target {
        // Refused alone: `tackle skills` names it with its rule and exits 1.
        name: "project skill",
        place: Place::Project(".agents/skills/x/SKILL.md"),
        kind: Some(OwnFile::SKILL),
        valid: |_| b"---\nname: x\ndescription: d\n---\n".to_vec(),
        command: |p, _| p.tackle(["skills"]),
        refusal: Refusal::Fails,
    },
    Target {
        name: "user skill",
        place: Place::User("skills/x/SKILL.md"),
        kind: Some(OwnFile::SKILL),
        valid: |_| b"---\nname: x\ndescription: d\n---\n".to_vec(),
        command: |p, _| p.tackle(["skills"]),
        refusal: Refusal::Fails,
    },
    Target {
        // Read by the plan gate through `Root::read_capped` (the same confined, capped,
        // non-blocking open): a file that is not a readable plan is no one's plan.
        name: "plan file",
        place: Place::Project(".agents/plans/plan-1.md"),
        kind: None,
        valid: |_| b"---\nsession: someone\n---\nplan\n".to_vec(),
        command: |p, _| {
            p.tackle([
                "--plan-mode",
                "required",
                "call",
                "write_file",
                r#"{"path":"x.txt","content":"y"}"#,
            ])
        },
        refusal: Refusal::LeavesOut {
            says: "this session has no plan on file",
        },
    },
    Target {
        name: "goal book",
        place: Place::Project(".agents/store/goals/events.jsonl"),
        kind: None,
        valid: |_| Vec::new(),
        command: |p, _| p.tackle(["goal", "show"]),
        refusal: Refusal::Fails,
    },
    Target {
        name: "session log (sessions ls)",
        place: Place::Project(".agents/store/sessions/20260101T000000Z-hostile/events.jsonl"),
        kind: None,
        valid: |_| Vec::new(),
        command: |p, _| p.tackle(["sessions", "ls", "--all"]),
        refusal: Refusal::LeavesOut {
            says: "tackle: session 20260101T000000Z-hostile is not listed: ",
        },
    },
    Target {
        name: "session log (run --continue)",
        place: Place::Project(".agents/store/sessions/20260101T000000Z-hostile/events.jsonl"),
        kind: None,
        valid: |_| Vec::new(),
        command: |p, _| {
            let file = script(p, "s.jsonl", &[json!({"turn": {"text": "done"}})]);
            p.tackle(["--model", &model(&file), "run", "--continue", "go on"])
        },
        // Which logs `--continue` may pick, and what it says of those it passes over, is the
        // session-log authentication's to decide; here it must only pass over this one.
        refusal: Refusal::LeavesOut {
            says: "--continue: this project has no earlier `tackle run` session",
        },
    },
];

/// Whether `form` of a file at `place` is read after all (a user's link out is the user's).
fn accepted(target: &Target, form: Form) -> bool {
    let followed = matches!(target.place, Place::User(_) | Place::Named(_));
    match form {
        Form::LinkOut => followed,
        // A cut kind keeps the start of a long file.
        Form::Oversized => target
            .kind
            .is_some_and(|k| k.over_cap == tackle_fs::OverCap::Cut),
        _ => false,
    }
}

/// What the refusal says about `form`.
fn problem(target: &Target, form: Form) -> String {
    let followed = matches!(target.place, Place::User(_) | Place::Named(_));
    match form {
        Form::DevZero | Form::DevUrandom if followed => "is not a regular file (a device)".into(),
        Form::DevZero | Form::DevUrandom | Form::LinkOut => {
            "leads out of the project through a symbolic link".into()
        }
        Form::Fifo => "is not a regular file (a FIFO)".into(),
        Form::Socket => "is not a regular file (a socket)".into(),
        Form::Directory => "is not a regular file (a directory)".into(),
        Form::Oversized => {
            let cap = target.kind.map_or(0, |k| k.cap);
            format!("is {} bytes, over the cap of {cap} bytes", cap + 1)
        }
        Form::Dangling => "is a symbolic link to nothing".into(),
        Form::LinkLoop => "is a loop of symbolic links".into(),
    }
}

/// Makes `form` at `path`; `valid` is what a link out points at.
fn plant(p: &Project, form: Form, path: &Path, valid: &[u8], cap: u64) {
    use std::os::unix::fs::symlink;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match form {
        Form::DevZero => symlink("/dev/zero", path).unwrap(),
        Form::DevUrandom => symlink("/dev/urandom", path).unwrap(),
        Form::Fifo => {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        }
        Form::Socket => {
            // A socket's path is limited to 108 bytes: bind it short, then move it in place.
            let short = tempfile::Builder::new().prefix("s").tempdir().unwrap();
            let at = short.path().join("s");
            drop(std::os::unix::net::UnixListener::bind(&at).unwrap());
            std::fs::rename(&at, path).unwrap();
        }
        Form::Directory => std::fs::create_dir(path).unwrap(),
        Form::Oversized => {
            let f = std::fs::File::create(path).unwrap();
            f.set_len(cap + 1).unwrap();
        }
        Form::LinkOut => {
            let name = format!("real-{}", path.file_name().unwrap().to_string_lossy());
            let real = p.write_outside(name, valid);
            symlink(real, path).unwrap();
        }
        Form::Dangling => symlink("missing-target", path).unwrap(),
        Form::LinkLoop => {
            let other = path.with_extension("loop");
            symlink(other.file_name().unwrap(), path).unwrap();
            symlink(path.file_name().unwrap(), &other).unwrap();
        }
    }
}

fn location(p: &Project, place: Place) -> (PathBuf, String) {
    match place {
        Place::Project(rel) => (p.join(rel), rel.to_owned()),
        Place::User(rel) => {
            let path = p.xdg().join("tackle").join(rel);
            let shown = path.display().to_string();
            (path, shown)
        }
        Place::Named(name) => {
            let path = p.outside(name);
            let shown = path.display().to_string();
            (path, shown)
        }
    }
}

#[test]
fn every_file_tackle_reads_itself_in_every_hostile_form() {
    let mut failures = Vec::new();
    let mut peak = 0;
    for target in TARGETS {
        for form in FORMS {
            let p = Project::new();
            let (path, shown) = location(&p, target.place);
            // A log is read a line at a time: its cap is one line's, and the file one line
            // (a plan file's cap, `read_capped`'s, is far below it).
            let cap = target
                .kind
                .map_or(tackle_store::MAX_RECORD_BYTES, |k| k.cap);
            plant(&p, form, &path, &(target.valid)(&p), cap);
            let measured = (target.command)(&p, &path).timeout(DEADLINE).run_measured();
            let out = &measured.output;
            peak = peak.max(measured.max_rss_kib);
            let case = format!("{} × {form:?}", target.name);
            if measured.max_rss_kib > MAX_RSS_KIB {
                failures.push(format!(
                    "{case}: peak RSS {} KiB over {MAX_RSS_KIB} KiB",
                    measured.max_rss_kib
                ));
            }
            eprintln!(
                "{case}: exit {:?}, {} KiB, {}",
                out.code,
                measured.max_rss_kib,
                out.stderr.lines().last().unwrap_or("")
            );
            let said = match target.kind {
                Some(_) => format!("{shown} {}", problem(target, form)),
                // The store's own logs: opened non-blocking and without following a link, and
                // refused in the store's words.
                None if form == Form::Oversized => format!(
                    "a line runs past {} bytes, the most a record may be",
                    tackle_store::MAX_RECORD_BYTES
                ),
                None => "not a regular file".to_owned(),
            };
            let verdict = if accepted(target, form) {
                (out.code == Some(0) && !out.stderr.contains(&shown))
                    .then_some(())
                    .ok_or("expected the file to be read and the command to succeed")
            } else {
                match target.refusal {
                    Refusal::Fails => (out.code != Some(0)
                        && out.stderr.contains(&said)
                        && out
                            .stderr
                            .contains(path.file_name().unwrap().to_str().unwrap()))
                    .then_some(())
                    .ok_or("expected a failure naming the file and the problem"),
                    Refusal::Warns => (out.code == Some(0) && out.stderr.contains(&said))
                        .then_some(())
                        .ok_or("expected success with a warning naming the file and the problem"),
                    Refusal::LeavesOut { says } => (out.code.is_some()
                        && !out.stdout.contains(SESSION)
                        && (out.stderr.contains(says) || out.stdout.contains(says))
                        && !out.stderr.contains("panicked"))
                    .then_some(())
                    .ok_or("expected the log to be left out, saying so"),
                }
            };
            if let Err(why) = verdict {
                failures.push(format!(
                    "{case}: {why}\n  wanted: {said}\n  exit: {:?}\n  stdout: {}\n  stderr: {}",
                    out.code,
                    out.stdout.trim(),
                    out.stderr.trim()
                ));
            }
        }
    }
    eprintln!("hostile files: peak RSS of any case {peak} KiB");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every kind the one reading path knows is in the corpus (a new kind without a row fails).
#[test]
fn every_kind_has_a_row_or_a_reason() {
    // Inbox messages are read by a waiting run (`crates/agent/src/autonomous.rs`, unit-tested
    // there); login tokens only by `tackle mcp` against an HTTP server (`crates/mcp`, unit-tested
    // in `oauth/store.rs`); the window cache only when a local server is asked for a window
    // (`crates/llm/src/window_probe/cache.rs`, every hostile form unit-tested there); a skill's
    // bundled file only by the skill tool (`crates/agent/src/skills/tool.rs`, tested there); the
    // sealed vouches by `tackle trust --sealed` and the sealed posture (`crates/sealed/src/vouches.rs`).
    let elsewhere = [
        OwnFile::VOUCHES,
        OwnFile::SKILL_FILE,
        OwnFile::INBOX_MESSAGE,
        OwnFile::LOGIN_TOKEN,
        OwnFile::WINDOW_CACHE,
    ];
    for kind in OwnFile::ALL {
        assert!(
            elsewhere.contains(&kind) || TARGETS.iter().any(|t| t.kind == Some(kind)),
            "{} has no row in TARGETS",
            kind.what
        );
    }
}
