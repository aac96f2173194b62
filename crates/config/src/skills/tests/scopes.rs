//! Scopes and trust: the user's two directories, the project's `.claude` and `.agents` from
//! the root down to the working directory, project over user only once trusted, allowed-tools
//! of an untrusted project ignored, and what a hostile project plants (links out, FIFOs, huge
//! files) refused like any file tackle reads for itself.

use std::path::{Path, PathBuf};

use super::put;
use crate::skills::{Scanned, Skills, load};

fn skill(name: &str, description: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\nbody of {description}\n")
}

struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    xdg: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(&root).unwrap();
    Dirs {
        home: base.join("home/.agents/skills"),
        xdg: base.join("xdg/tackle/skills"),
        root,
        _tmp: tmp,
    }
}

fn loaded(d: &Dirs, cwd: &Path, trusted: bool) -> Skills {
    load(&d.root, cwd, &[d.home.clone(), d.xdg.clone()], trusted)
}

fn description(s: &Skills, name: &str) -> String {
    s.set()
        .get(name)
        .map(|s| s.description.clone())
        .unwrap_or_default()
}

#[test]
fn later_scopes_win_and_the_shadowed_are_named() {
    let d = dirs();
    put(&d.home, "a/SKILL.md", &skill("a", "home a", ""));
    put(&d.xdg, "a/SKILL.md", &skill("a", "xdg a", ""));
    put(&d.home, "b/SKILL.md", &skill("b", "home b", ""));
    put(
        &d.root,
        ".claude/skills/c/SKILL.md",
        &skill("c", "claude c", ""),
    );
    put(
        &d.root,
        ".agents/skills/c/SKILL.md",
        &skill("c", "agents c", ""),
    );
    put(
        &d.root,
        "sub/.claude/skills/c/SKILL.md",
        &skill("c", "sub c", ""),
    );
    put(
        &d.root,
        ".agents/skills/b/SKILL.md",
        &skill("b", "project b", ""),
    );
    // Byte-identical copies replace each other without a word.
    put(
        &d.root,
        ".claude/skills/d/SKILL.md",
        &skill("d", "same d", ""),
    );
    put(
        &d.root,
        ".agents/skills/d/SKILL.md",
        &skill("d", "same d", ""),
    );

    let s = loaded(&d, &d.root, true);
    assert_eq!(description(&s, "a"), "xdg a");
    assert_eq!(
        description(&s, "b"),
        "project b",
        "project over user, trusted"
    );
    assert_eq!(description(&s, "c"), "agents c", ".agents over .claude");
    let shadowed: Vec<(String, String)> = s
        .shadowed()
        .iter()
        .map(|x| (x.name.clone(), x.shadowed.display().to_string()))
        .collect();
    assert_eq!(shadowed.len(), 3, "{shadowed:?}");
    assert!(
        shadowed
            .iter()
            .any(|(n, p)| n == "a" && p.contains("/home/"))
    );
    assert!(
        shadowed
            .iter()
            .any(|(n, p)| n == "b" && p.contains("/home/"))
    );
    assert!(
        shadowed
            .iter()
            .any(|(n, p)| n == "c" && p == ".claude/skills/c/SKILL.md")
    );

    // From a subdirectory, its own skills directories are nearer and win.
    let s = loaded(&d, &d.root.join("sub"), true);
    assert_eq!(description(&s, "c"), "sub c");
}

#[test]
fn an_untrusted_project_neither_pre_approves_nor_replaces_a_user_skill() {
    let d = dirs();
    put(
        &d.xdg,
        "mine/SKILL.md",
        &skill("mine", "user mine", "allowed-tools: Bash(make:*)\n"),
    );
    put(
        &d.root,
        ".agents/skills/mine/SKILL.md",
        &skill("mine", "project mine", "allowed-tools: Bash\n"),
    );
    put(
        &d.root,
        ".agents/skills/deploy/SKILL.md",
        &skill(
            "deploy",
            "project deploy",
            "allowed-tools: Bash(./deploy.sh:*) Write\n",
        ),
    );
    let untrusted = loaded(&d, &d.root, false);
    assert_eq!(description(&untrusted, "mine"), "user mine");
    assert_eq!(
        untrusted.set().get("mine").unwrap().pre_approved,
        ["tool.bash.cmd:make", "tool.bash.cmd:make *"],
        "the user's own scope is honoured"
    );
    assert!(
        untrusted
            .set()
            .get("deploy")
            .unwrap()
            .pre_approved
            .is_empty()
    );
    let notes: Vec<String> = untrusted.notes().iter().map(ToString::to_string).collect();
    assert!(
        notes.iter().any(|n| n.contains(
            "deploy/SKILL.md:4: allowed-tools pre-approves nothing until this folder is trusted"
        )),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("does not replace the user skill")),
        "{notes:?}"
    );

    // What trust would change is a widening of the trust decision.
    let handle = tackle_fs::Root::open(&d.root).unwrap();
    let scanned = Scanned::read(
        Some((&handle, &d.root, &d.root)),
        &[d.home.clone(), d.xdg.clone()],
    );
    let keys: Vec<(&str, String)> = scanned
        .widenings()
        .iter()
        .map(|w| (w.key, w.value.clone()))
        .collect();
    assert!(
        keys.contains(&(
            "skills.allowed_tools",
            "deploy: tool.bash.cmd:./deploy.sh tool.bash.cmd:./deploy.sh * write:**".into()
        )),
        "{keys:?}"
    );
    assert!(
        keys.contains(&("skills.replace", "mine".into())),
        "{keys:?}"
    );

    let trusted = loaded(&d, &d.root, true);
    assert_eq!(description(&trusted, "mine"), "project mine");
    assert_eq!(
        trusted.set().get("mine").unwrap().pre_approved,
        ["tool.bash.cmd:*"]
    );
    assert_eq!(trusted.set().get("deploy").unwrap().pre_approved.len(), 3);
}

#[test]
fn hostile_project_skills_are_refused_like_any_own_file() {
    let d = dirs();
    let outside = d.root.parent().unwrap().join("outside");
    put(&outside, "leak/SKILL.md", &skill("leak", "outside", ""));
    std::fs::create_dir_all(d.root.join(".agents/skills/fifo")).unwrap();
    let fifo = d.root.join(".agents/skills/fifo/SKILL.md");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink(outside.join("leak"), d.root.join(".agents/skills/leak")).unwrap();
    std::fs::create_dir_all(d.root.join(".agents/skills/file-link")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("leak/SKILL.md"),
        d.root.join(".agents/skills/file-link/SKILL.md"),
    )
    .unwrap();
    let huge = format!(
        "---\nname: huge\ndescription: d\n---\n{}",
        "x".repeat(300 * 1024)
    );
    put(&d.root, ".agents/skills/huge/SKILL.md", &huge);
    std::fs::create_dir_all(d.root.join(".agents/skills/empty")).unwrap();
    put(
        &d.root,
        ".agents/skills/ok/SKILL.md",
        &skill("ok", "fine", ""),
    );

    let s = loaded(&d, &d.root, true);
    let names: Vec<&str> = s.set().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"], "{:?}", s.invalid());
    let invalid: Vec<String> = s.invalid().iter().map(ToString::to_string).collect();
    let says = |path: &str, words: &str| {
        assert!(
            invalid
                .iter()
                .any(|i| i.contains(path) && i.contains(words) && i.contains("[skill-file]")),
            "{path} {words}: {invalid:#?}"
        );
    };
    says(".agents/skills/fifo/SKILL.md", "FIFO");
    says(".agents/skills/leak", "leads out of the project");
    says(
        ".agents/skills/file-link/SKILL.md",
        "leads out of the project",
    );
    says(".agents/skills/huge/SKILL.md", "over the cap");
    says(".agents/skills/empty", "holds no SKILL.md");
    assert!(
        invalid.iter().all(|i| !i.contains("outside")),
        "{invalid:#?}"
    );
}
