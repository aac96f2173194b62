use super::book::{ARCHIVE_DIR, PLANS_DIR};
use super::*;

fn author(agent: Option<&str>, session: &str) -> PlanAuthor {
    PlanAuthor {
        agent: agent.map(str::to_owned),
        session: SessionId(session.to_owned()),
    }
}

fn plan_file(root: &std::path::Path, dir: &str, seq: u64) -> Option<String> {
    std::fs::read_to_string(root.join(dir).join(format!("plan-{seq}.md"))).ok()
}

/// One step of a row: who calls, in which turn, with what text — or a revocation.
enum Step {
    Call {
        agent: Option<&'static str>,
        session: &'static str,
        turn: &'static str,
        text: &'static str,
    },
    Revoke {
        session: &'static str,
    },
}

fn call(
    agent: Option<&'static str>,
    session: &'static str,
    turn: &'static str,
    text: &'static str,
) -> Step {
    Step::Call {
        agent,
        session,
        turn,
        text,
    }
}

/// A row: its name, its steps, the last call's outcome and sequence, the files left.
type Row = (&'static str, Vec<Step>, PlanOutcome, u64, &'static [u64]);

/// Seed 003, "record_plan repeats don't mint plan files": one row per row of its table. Each
/// row runs its steps on a fresh directory; the last call must have the row's outcome and
/// sequence, and `files` lists the plan files then in `.agents/plans/`.
#[test]
fn the_seeds_repeat_table() {
    use PlanOutcome::*;
    let rows: Vec<Row> = vec![
        (
            "first plan of a turn",
            vec![call(None, "s1", "t1", "1. read\n")],
            Recorded,
            1,
            &[1],
        ),
        (
            "a new plan in a later turn",
            vec![
                call(None, "s1", "t1", "1. read\n"),
                call(None, "s1", "t2", "1. read\n2. fix\n"),
            ],
            Recorded,
            2,
            &[1, 2],
        ),
        (
            "same author, same turn, revised text: overwritten in place",
            vec![
                call(Some("cluster"), "s1", "t1", "1. read\n"),
                call(Some("cluster"), "s1", "t1", "1. read\n2. fix\n"),
            ],
            Updated,
            1,
            &[1],
        ),
        (
            "same author, identical text: nothing written (in a later turn too)",
            vec![
                call(None, "s1", "t1", "1. read\n"),
                call(None, "s1", "t2", "1. read\n"),
            ],
            Unchanged,
            1,
            &[1],
        ),
        (
            "a different agent or session, same turn: its own file",
            vec![
                call(Some("parent"), "s1", "t1", "1. read\n"),
                call(Some("child"), "s1", "t1", "1. read\n"),
                call(None, "s2", "t1", "1. read\n"),
            ],
            Recorded,
            3,
            &[1, 2, 3],
        ),
        (
            "after a revocation: a new sequence, never the revoked one",
            vec![
                call(None, "s1", "t1", "1. read\n"),
                Step::Revoke { session: "s1" },
                call(None, "s1", "t1", "1. read\n"),
            ],
            Recorded,
            2,
            &[2],
        ),
    ];
    for (name, steps, outcome, seq, files) in rows {
        let dir = tempfile::tempdir().unwrap();
        let book = PlanBook::new(dir.path());
        let mut last = None;
        for step in steps {
            match step {
                Step::Call {
                    agent,
                    session,
                    turn,
                    text,
                } => last = Some(book.record(&author(agent, session), turn, text).unwrap()),
                Step::Revoke { session } => {
                    book.revoke(None, Some(&SessionId(session.into()))).unwrap();
                }
            }
        }
        let last = last.unwrap();
        assert_eq!((last.outcome, last.seq), (outcome, seq), "{name}");
        let on_disk: Vec<u64> = (1..=5)
            .filter(|n| plan_file(dir.path(), PLANS_DIR, *n).is_some())
            .collect();
        assert_eq!(on_disk, files, "{name}");
    }
}

#[test]
fn the_file_says_who_wrote_it_and_an_update_keeps_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let book = PlanBook::new(dir.path());
    book.record(&author(Some("cluster"), "s-8f21"), "t1", "old\n")
        .unwrap();
    let filed = book
        .record(&author(Some("cluster"), "s-8f21"), "t1", "new\n")
        .unwrap();
    assert_eq!(filed.path, ".agents/plans/plan-1.md");
    assert_eq!(
        plan_file(dir.path(), PLANS_DIR, 1).unwrap(),
        "---\nplan: 1\nagent: \"cluster\"\nsession: \"s-8f21\"\nturn: \"t1\"\n---\nnew\n"
    );
    // No agent: the key is omitted, not written empty.
    book.record(&author(None, "s2"), "t1", "x\n").unwrap();
    assert!(
        !plan_file(dir.path(), PLANS_DIR, 2)
            .unwrap()
            .contains("agent")
    );
}

/// The gate flag is per session, opens on the first plan only, and clears on revocation.
#[test]
fn a_plan_on_file_is_per_session_and_said_once() {
    use tackle_tool::PlanRecords;
    let dir = tempfile::tempdir().unwrap();
    let book = PlanBook::new(dir.path());
    let (a, b) = (SessionId("a".into()), SessionId("b".into()));
    assert!(!book.on_file(&a));
    assert!(book.record(&author(None, "a"), "t1", "p\n").unwrap().opened);
    assert!(!book.record(&author(None, "a"), "t2", "q\n").unwrap().opened);
    assert!(book.on_file(&a) && !book.on_file(&b));
    // Another process (a fresh book) sees the file.
    assert!(PlanBook::new(dir.path()).on_file(&a));
    // Revoked elsewhere: this book's remembered answer is re-checked.
    let other = PlanBook::new(dir.path());
    assert_eq!(
        other.revoke(None, Some(&a)).unwrap(),
        Revoked::Own { seqs: vec![1, 2] }
    );
    assert!(!book.on_file(&a));
    assert!(plan_file(dir.path(), ARCHIVE_DIR, 2).is_some());
}

/// Seed 003, "/replan archives the operator's own plan": the caller's own, else the newest
/// if it is unattributed; another author's is left alone and named.
#[test]
fn revocation_takes_only_what_is_yours() {
    let dir = tempfile::tempdir().unwrap();
    let plans = dir.path().join(PLANS_DIR);
    std::fs::create_dir_all(&plans).unwrap();
    std::fs::write(plans.join("plan-1.md"), "an old plan without a header\n").unwrap();
    let book = PlanBook::new(dir.path());
    let mine = SessionId("mine".into());
    assert_eq!(
        book.revoke(None, Some(&mine)).unwrap(),
        Revoked::Unattributed { seq: 1 }
    );
    book.record(&author(Some("child"), "theirs"), "t", "p\n")
        .unwrap();
    assert_eq!(
        book.revoke(None, Some(&mine)).unwrap(),
        Revoked::NotYours {
            seq: 2,
            agent: Some("child".into()),
            session: Some("theirs".into()),
        }
    );
    assert!(plan_file(dir.path(), PLANS_DIR, 2).is_some(), "left alone");
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        PlanBook::new(empty.path())
            .revoke(None, Some(&mine))
            .unwrap(),
        Revoked::NothingOnFile
    );
}

/// A plans directory that leads out of the project is refused, not followed.
#[test]
fn a_symlinked_plans_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".agents")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(PLANS_DIR)).unwrap();
    let book = PlanBook::new(dir.path());
    assert!(book.record(&author(None, "s"), "t", "p\n").is_err());
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn descriptions_are_mode_aware() {
    let dir = tempfile::tempdir().unwrap();
    let book = PlanBook::new(dir.path());
    let required = RecordPlan::new(
        PlanMode::Required,
        book.clone(),
        vec!["write_file".into(), "record_plan".into()],
    );
    let d = required.description();
    assert!(
        d.contains("call this BEFORE any mutating call (any write_file call)"),
        "{d}"
    );
    let advisory = RecordPlan::new(PlanMode::Advisory, book, Vec::new()).description();
    assert!(advisory.contains("record it and proceed"), "{advisory}");
    assert!(!advisory.contains("BEFORE"), "{advisory}");
}
