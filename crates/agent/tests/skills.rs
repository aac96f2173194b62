//! The skill tool through the runtime: a name selects from the run's set and never becomes a
//! path, a bundled file is read only when the skill lists it (through the root for a project
//! skill, so a link out planted after the listing is refused), and a skill's pre-approved
//! patterns reach the calling session's grants until its run ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use tackle_agent::Unobserved;
use tackle_agent::delegate::{Limits, Tree};
use tackle_agent::skills::{Skill, SkillOrigin, SkillSet, SkillTool};
use tackle_protocol::{CallId, ContentBlock, ToolCall, ToolResult};
use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig, Session};

fn skill(name: &str, origin: SkillOrigin, files: &[&str], pre_approved: &[&str]) -> Skill {
    Skill {
        name: name.into(),
        description: format!("The {name} skill."),
        body: format!("Instructions of {name}."),
        files: files.iter().map(|f| (*f).to_owned()).collect(),
        origin,
        pre_approved: pre_approved.iter().map(|p| (*p).to_owned()).collect(),
        model_invocable: true,
        user_invocable: true,
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    runtime: Runtime,
    session: Session,
    root: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("proj");
    let user = base.join("user/skills/mine");
    std::fs::create_dir_all(root.join(".agents/skills/forms/references")).unwrap();
    std::fs::write(
        root.join(".agents/skills/forms/references/a.md"),
        "project file\n",
    )
    .unwrap();
    std::fs::create_dir_all(user.join("scripts")).unwrap();
    std::fs::write(user.join("scripts/run.sh"), "echo user file\n").unwrap();
    std::fs::write(base.join("secret"), "outside secret\n").unwrap();
    let session = Session::open(&root).unwrap();
    let set = SkillSet::new([
        skill(
            "forms",
            SkillOrigin::Project(".agents/skills/forms".into()),
            &["references/a.md", "references/gone.md"],
            &["tool.bash.cmd:git *"],
        ),
        skill("mine", SkillOrigin::User(user), &["scripts/run.sh"], &[]),
        Skill {
            model_invocable: false,
            ..skill(
                "by-hand",
                SkillOrigin::Project(".agents/skills/by-hand".into()),
                &[],
                &[],
            )
        },
    ]);
    let tree = Tree::new(Limits::default(), Vec::new(), Arc::new(Unobserved));
    tree.add_root(session.clone());
    let tool = SkillTool::new(Arc::new(set), Some(tree));
    let runtime = Runtime::new(
        Catalog::new(vec![Arc::new(tool)]).unwrap(),
        Arc::new(AllowAll),
        RuntimeConfig::default(),
    );
    Fixture {
        _dir: dir,
        runtime,
        session,
        root,
    }
}

async fn call(f: &Fixture, arguments: Value) -> ToolResult {
    f.runtime
        .run_batch(
            &f.session,
            vec![ToolCall {
                id: CallId("k".into()),
                name: "skill".into(),
                arguments,
            }],
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .remove(0)
}

fn text(r: &ToolResult) -> String {
    match &r.content[0] {
        ContentBlock::Text { text } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn code(r: &ToolResult) -> &str {
    r.code.as_ref().map_or("ok", |c| c.as_str())
}

#[tokio::test(flavor = "multi_thread")]
async fn names_select_from_the_set_and_never_become_paths() {
    let f = fixture();
    let cases: &[(Value, &str, &str)] = &[
        (
            json!({"name": "../forms"}),
            "invalid_arguments",
            "never a path",
        ),
        (
            json!({"name": ".agents/skills/forms"}),
            "invalid_arguments",
            "never a path",
        ),
        (
            json!({"name": "form"}),
            "not_found",
            "the nearest are `forms`",
        ),
        (
            json!({"name": "FORMS"}),
            "not_found",
            "no skill is named `FORMS`",
        ),
        (
            json!({"name": "by-hand"}),
            "not_found",
            "only the user loads",
        ),
        (json!({"name": " "}), "invalid_arguments", "`name` is empty"),
        (
            json!({"name": "forms", "file": "../../secret"}),
            "not_found",
            "lists no file",
        ),
        (
            json!({"name": "forms", "file": "references/b.md"}),
            "not_found",
            "the nearest are `references/a.md`",
        ),
        (
            json!({"name": "forms", "file": "references/gone.md"}),
            "not_found",
            "no longer there",
        ),
    ];
    for (arguments, want_code, says) in cases {
        let r = call(&f, arguments.clone()).await;
        assert_eq!(code(&r), *want_code, "{arguments}: {}", text(&r));
        assert!(text(&r).contains(says), "{arguments}: {}", text(&r));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bundled_files_are_read_through_the_root_or_at_the_users_path() {
    let f = fixture();
    let r = call(&f, json!({"name": "forms", "file": "references/a.md"})).await;
    assert_eq!(text(&r), "project file\n");
    let r = call(&f, json!({"name": "mine", "file": "scripts/run.sh"})).await;
    assert_eq!(text(&r), "echo user file\n");
    // A listed file swapped for a link out of the project after the listing is refused.
    let listed = f.root.join(".agents/skills/forms/references/a.md");
    std::fs::remove_file(&listed).unwrap();
    std::os::unix::fs::symlink(f.root.parent().unwrap().join("secret"), &listed).unwrap();
    let r = call(&f, json!({"name": "forms", "file": "references/a.md"})).await;
    assert_eq!(code(&r), "io_error", "{}", text(&r));
    assert!(text(&r).contains("leads out of the project") && !text(&r).contains("outside secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn loading_a_skill_grants_its_patterns_to_the_session_until_the_run_ends() {
    let f = fixture();
    let granted = |key: &str| f.session.context().with_grants(|g| g.is_granted(key));
    assert!(!granted("tool.bash.cmd:git status"));
    let r = call(&f, json!({"name": "forms"})).await;
    let t = text(&r);
    assert!(
        t.starts_with("<skill_content name=\"forms\">\nInstructions of forms.\n</skill_content>"),
        "{t}"
    );
    assert!(
        t.contains("- references/a.md")
            && t.contains("Pre-approved by this skill until the task ends"),
        "{t}"
    );
    assert_eq!(r.metadata["pre_approved"], json!(["tool.bash.cmd:git *"]));
    assert!(granted("tool.bash.cmd:git status"));
    assert!(!granted("tool.bash.cmd:rm -rf /"));
    f.session.context().end_run();
    assert!(!granted("tool.bash.cmd:git status"));
}
