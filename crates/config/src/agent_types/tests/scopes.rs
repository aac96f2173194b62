//! Scopes, folder trust, the model catalog's check and hostile directories, through
//! [`load`] on a project and a user config directory on disk.

use std::path::Path;

use tackle_agent::delegate::agent_type::{ModelChoice, Origin};

use super::{nest, summary};
use crate::agent_types::{AgentTypes, Scanned, load};
use crate::models::ModelCatalog;

/// A project and a user config directory on disk.
struct Dirs {
    _temp: tempfile::TempDir,
    root: std::path::PathBuf,
    user: std::path::PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir(temp.path().join("proj")).unwrap();
        let root = temp.path().join("proj").canonicalize().unwrap();
        let user = temp.path().join("xdg/tackle");
        Dirs {
            _temp: temp,
            root,
            user,
        }
    }

    fn write(&self, at: &Path, text: impl AsRef<[u8]>) {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }

    fn project(&self, rel: &str, text: impl AsRef<[u8]>) {
        self.write(&self.root.join(rel), text);
    }

    fn user(&self, name: &str, text: impl AsRef<[u8]>) {
        self.write(&self.user.join("agents").join(name), text);
    }

    fn load(&self, trusted: bool) -> AgentTypes {
        load(&self.root, Some(&self.user), trusted, &catalog())
    }
}

fn catalog() -> ModelCatalog {
    crate::models::resolve(&crate::settings::Settings::defaults(1, 1)).unwrap()
}

fn file(name: &str, description: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\nprompt of {description}\n")
}

fn descriptions(types: &AgentTypes) -> Vec<String> {
    types
        .iter()
        .map(|t| format!("{} {}: {}", t.name, t.origin.scope(), t.description))
        .collect()
}

fn said(types: &AgentTypes) -> Vec<String> {
    types
        .notes()
        .iter()
        .map(ToString::to_string)
        .chain(types.refused().iter().map(|r| format!("refused {r}")))
        .collect()
}

#[test]
fn later_scopes_win_by_name() {
    let d = Dirs::new();
    d.user("explore.md", file("explore", "user explore", ""));
    d.user("mine.md", file("mine", "user mine", ""));
    d.user("both.md", file("both", "user both", ""));
    d.project(
        ".claude/agents/review.md",
        file("review", "claude review", ""),
    );
    d.project(
        ".claude/agents/claude-only.md",
        file("claude-only", "claude only", ""),
    );
    d.project(
        ".agents/agents/review.md",
        file("review", "agents review", ""),
    );
    d.project(".agents/agents/both.md", file("both", "agents both", ""));
    let types = d.load(true);
    assert_eq!(
        descriptions(&types),
        [
            "both project: agents both",
            "claude-only project: claude only",
            "explore user: user explore",
            "general built-in: A general-purpose agent with the same tools as you, for a self-contained piece of work.",
            "mine user: user mine",
            "review project: agents review",
        ]
    );
    assert_eq!(
        types.get("review").unwrap().origin,
        Origin::Project(".agents/agents/review.md".into())
    );
    assert_eq!(
        types.get("review").unwrap().prompt,
        "prompt of agents review"
    );
    assert_eq!(
        said(&types),
        [
            ".claude/agents/review.md is not used: .agents/agents/review.md defines `review` too, and wins"
        ]
    );
}

#[test]
fn an_untrusted_project_type_only_narrows() {
    let d = Dirs::new();
    d.user("mine.md", file("mine", "user mine", ""));
    let wide = "tools: Read, Bash\nmodel: anthropic:claude-sonnet-4-5\npermissions:\n  allow: [\"tool.bash.cmd:*\"]\n  ask: [\"write:**\"]\n  deny: [\"read:.env\"]\n";
    d.project(".claude/agents/wide.md", file("wide", "wide", wide));
    d.project(".agents/agents/mine.md", file("mine", "project mine", ""));
    d.project(
        ".agents/agents/explore.md",
        file("explore", "project explore", ""),
    );

    let untrusted = d.load(false);
    let wide_type = untrusted.get("wide").unwrap();
    assert_eq!(
        summary(wide_type),
        "wide | read_file,bash |  | inherit | - | ; write:**; read:.env | prompt of wide"
    );
    assert_eq!(untrusted.get("mine").unwrap().description, "user mine");
    assert_eq!(untrusted.get("explore").unwrap().origin, Origin::BuiltIn);
    let user_mine = d.user.join("agents/mine.md");
    assert_eq!(
        said(&untrusted),
        [
            ".claude/agents/wide.md:5: model anthropic:claude-sonnet-4-5 is ignored until this folder is trusted (tackle trust); the child runs its parent's model".to_owned(),
            ".claude/agents/wide.md:7: permissions.allow tool.bash.cmd:* is ignored until this folder is trusted (tackle trust)".to_owned(),
            ".agents/agents/explore.md:2: `explore` does not replace the built-in type of that name until this folder is trusted (tackle trust); that one is used".to_owned(),
            format!(".agents/agents/mine.md:2: `mine` does not replace the user type at {} of that name until this folder is trusted (tackle trust); that one is used", user_mine.display()),
        ]
    );

    let trusted = d.load(true);
    assert_eq!(
        summary(trusted.get("wide").unwrap()),
        "wide | read_file,bash |  | anthropic:claude-sonnet-4-5 | - | tool.bash.cmd:*; write:**; read:.env | prompt of wide"
    );
    assert_eq!(trusted.get("mine").unwrap().description, "project mine");
    assert_eq!(
        trusted.get("explore").unwrap().description,
        "project explore"
    );
    assert!(said(&trusted).is_empty(), "{:?}", said(&trusted));

    // What trust changes, per file and as widenings for the trust decision.
    let changes: Vec<(String, Vec<String>)> = trusted
        .project_files()
        .iter()
        .map(|f| (f.path.display().to_string(), f.trust_would.clone()))
        .collect();
    assert_eq!(changes.len(), 3, "{changes:#?}");
    assert_eq!(changes[0].0, ".claude/agents/wide.md");
    assert_eq!(
        changes[0].1,
        [
            "the `wide` type runs anthropic:claude-sonnet-4-5 instead of its parent's model",
            "the `wide` type adds the allow rule tool.bash.cmd:*",
        ]
    );
    let handle = tackle_fs::Root::open(&d.root).unwrap();
    let widenings = Scanned::read(Some(&handle), Some(&d.user)).widenings();
    let keys: Vec<(&str, String)> = widenings
        .iter()
        .map(|w| (w.key, w.origin.to_string()))
        .collect();
    assert_eq!(
        keys,
        [
            ("agent_types.model", ".claude/agents/wide.md:5".to_owned()),
            (
                "agent_types.permissions.allow",
                ".claude/agents/wide.md:7".to_owned()
            ),
            (
                "agent_types.replace",
                ".agents/agents/explore.md:2".to_owned()
            ),
            ("agent_types.replace", ".agents/agents/mine.md:2".to_owned()),
        ]
    );
    for w in &widenings {
        assert!(
            crate::trust::classify::rule(w.key).is_some(),
            "{} has no row",
            w.key
        );
    }
}

#[test]
fn a_model_the_user_has_not_configured_refuses_its_file() {
    let d = Dirs::new();
    d.user("a.md", file("a", "a", "model: local:qwen\n"));
    d.project(
        ".agents/agents/b.md",
        file("b", "b", "model: anthropic:no-such-model\n"),
    );
    d.project(".agents/agents/c.md", file("c", "c", "model: opus\n"));
    let types = d.load(true);
    assert!(types.get("a").is_none() && types.get("b").is_none());
    assert_eq!(types.get("c").unwrap().model, ModelChoice::Inherit);
    let said = said(&types);
    assert!(
        said[1].contains("a.md:4: model local:qwen names the provider `local`, which your configuration does not have; add a [providers.local] table"),
        "{said:#?}"
    );
    assert!(said[1].contains("or write model: inherit"), "{said:#?}");
    assert!(
        said.iter().any(|s| s.starts_with("refused .agents/agents/b.md:4: model anthropic:no-such-model is not in your model catalog")),
        "{said:#?}"
    );
}

#[test]
fn hostile_files_are_refused_and_the_rest_load() {
    let d = Dirs::new();
    d.project(".agents/agents/good.md", file("good", "good", ""));
    let huge = format!(
        "---\nname: huge\ndescription: d\n---\n{}",
        "x".repeat(10 << 20)
    );
    let huge_len = huge.len();
    d.project(".agents/agents/huge.md", huge);
    d.project(
        ".agents/agents/deep.md",
        format!(
            "---\nname: deep\ndescription: d\ntools: {}\n---\n",
            nest("[", "a", "]", 100_000)
        ),
    );
    let outside = d.root.parent().unwrap().join("outside.md");
    std::fs::write(&outside, file("outside", "outside", "")).unwrap();
    std::os::unix::fs::symlink(&outside, d.root.join(".agents/agents/link.md")).unwrap();
    d.project(".agents/agents/.#lock.md", "not read");
    d.project(".agents/agents/notes.txt", "not read");
    let types = d.load(false);
    assert!(types.get("good").is_some());
    assert_eq!(types.iter().count(), 3, "{:?}", descriptions(&types));
    let said = said(&types);
    assert_eq!(said.len(), 3, "{said:#?}");
    // Files that cannot be read are refused as they are read, the others once parsed.
    assert_eq!(
        said[0],
        format!(
            "refused .agents/agents/huge.md is {huge_len} bytes, over the cap of 262144 bytes read of it; make it smaller or remove it"
        )
    );
    assert!(
        said[1].starts_with(
            "refused .agents/agents/link.md leads out of the project through a symbolic link"
        ),
        "{said:#?}"
    );
    assert!(
        said[2]
            .starts_with("refused .agents/agents/deep.md:4: the frontmatter runs past 65536 bytes"),
        "{said:#?}"
    );
}

#[test]
fn a_directory_reads_at_most_two_hundred_files() {
    let d = Dirs::new();
    for i in 0..205 {
        d.user(&format!("t{i:03}.md"), file(&format!("t{i:03}"), "d", ""));
    }
    let types = d.load(false);
    assert_eq!(types.iter().count(), 200 + 2);
    assert!(types.get("t199").is_some() && types.get("t200").is_none());
    let said = said(&types);
    assert_eq!(
        said,
        [format!(
            "{} holds 205 agent type files; only the first 200 by name are read",
            d.user.join("agents").display()
        )]
    );
}

#[test]
fn one_directory_linked_as_both_is_read_once_and_names_are_one_a_directory() {
    let d = Dirs::new();
    d.project(".agents/agents/a.md", file("a", "first a", ""));
    d.project(".agents/agents/b.md", file("a", "second a", ""));
    std::fs::create_dir_all(d.root.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../.agents/agents", d.root.join(".claude/agents")).unwrap();
    let types = d.load(true);
    assert_eq!(types.get("a").unwrap().description, "first a");
    assert_eq!(
        said(&types),
        [
            "refused .agents/agents/b.md:2: `a` is already the name of .agents/agents/a.md in this directory; give each type its own name"
        ]
    );
}
