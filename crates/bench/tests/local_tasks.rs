//! The local-model benchmark's tasks, judged without a model: for every task, its check fails
//! on the untouched fixture (with a `fail:` line, so the check judged rather than crashed) and
//! passes once the reference solution is applied. A task an agent fails in the benchmark is
//! then the agent's failure, not the fixture's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use tackle_bench::local_tasks::{Task, Verdict, tasks, tool_path};

/// The suite's tasks by name, so one cannot vanish unnoticed.
const TASKS: &[&str] = &[
    "add-function-with-test",
    "add-missing-import",
    "answer-port",
    "change-config-value",
    "explain-stack-trace",
    "fix-failing-test",
    "fix-off-by-one",
    "rename-function",
    "update-json-value",
    "write-script",
];

fn judge(task: &Task, solved: bool) -> Verdict {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let last_message = dir.path().join("last-message.txt");
    task.copy_fixture(&project).unwrap();
    std::fs::write(&last_message, "").unwrap();
    if solved {
        task.apply_solution(&project, &last_message).unwrap();
    }
    task.check(
        &project,
        &last_message,
        &tool_path(),
        &dir.path().join("check.log"),
    )
    .unwrap()
}

#[test]
fn every_task_fails_untouched_and_passes_with_its_solution() {
    let tasks = tasks().unwrap();
    let names: BTreeSet<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, TASKS.iter().copied().collect());
    for task in &tasks {
        assert!(!task.prompt.is_empty(), "{}: task.md is empty", task.name);
        let untouched = judge(task, false);
        assert!(
            !untouched.passed,
            "{}: the check passes on the untouched fixture:\n{}",
            task.name, untouched.output
        );
        assert!(
            untouched.summary().starts_with("fail:"),
            "{}: the check failed without saying why:\n{}",
            task.name,
            untouched.output
        );
        let solved = judge(task, true);
        assert!(
            solved.passed,
            "{}: the check fails on the reference solution:\n{}",
            task.name, solved.output
        );
        assert!(
            solved.summary().starts_with("ok:"),
            "{}: the check passed without an ok line:\n{}",
            task.name,
            solved.output
        );
    }
}
