//! Skills in the shapes published skills take (a quoted description with a colon, a folded
//! one, Claude Code's list of allowed tools and its extra fields, Codex's metadata and
//! `agents/openai.yaml`, a licence file, bundled scripts and references) load unchanged.

use std::path::Path;

fn published() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/skills/tests/fixtures/published")
}

#[test]
fn published_shapes_load_unchanged() {
    let skills = crate::skills::load(
        Path::new("/nonexistent-project"),
        Path::new("/nonexistent-project"),
        &[published()],
        false,
    );
    let invalid: Vec<_> = skills
        .invalid()
        .iter()
        .filter(|i| !i.path.starts_with("/nonexistent-project"))
        .collect();
    assert!(invalid.is_empty(), "{invalid:?}");
    let names: Vec<&str> = skills.set().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "api-review",
            "browser-check",
            "changelog-entry",
            "commit-style",
            "pdf-forms",
            "release-notes"
        ]
    );
    let get = |n: &str| skills.set().get(n).unwrap();
    assert!(
        get("api-review")
            .description
            .starts_with("Reviews a public API change")
    );
    assert!(
        get("api-review")
            .description
            .contains("signatures, new required")
    );
    assert!(
        get("pdf-forms")
            .description
            .starts_with("Fills in PDF forms: reads")
    );
    assert_eq!(
        get("pdf-forms").files,
        ["LICENSE.txt", "references/fields.md"]
    );
    assert_eq!(get("release-notes").files, ["scripts/since_tag.sh"]);
    assert_eq!(get("changelog-entry").files, ["agents/openai.yaml"]);
    assert!(get("release-notes").body.starts_with("# Release notes"));
    // A user skill: its allowed-tools apply, its invocation flag is honoured.
    let commit = get("commit-style");
    assert_eq!(
        commit.pre_approved,
        [
            "tool.bash.cmd:git diff",
            "tool.bash.cmd:git diff *",
            "tool.bash.cmd:git commit",
            "tool.bash.cmd:git commit *",
            "read:**"
        ]
    );
    assert!(!commit.model_invocable && commit.user_invocable);
    // Only Claude Code's argument-hint is warned about.
    let warned: Vec<String> = skills.notes().iter().map(|n| n.message.clone()).collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("argument-hint"), "{warned:?}");
}
