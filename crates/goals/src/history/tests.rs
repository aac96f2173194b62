use super::*;

fn goal(status: GoalStatus, revision: u64) -> Goal {
    Goal {
        goal_id: "goal-1".into(),
        objective: "o".into(),
        status,
        revision,
        checklist: Vec::new(),
    }
}

fn item(finished: bool) -> ChecklistItem {
    ChecklistItem {
        description: "step".into(),
        finished,
    }
}

use GoalStatus::{Active, Canceled, Complete, Paused};

/// One row per (control, status): the status it leads to, or the refusal.
#[test]
fn controls_follow_the_lifecycle_table() {
    let rows: &[(Control, GoalStatus, Result<GoalStatus, &str>)] = &[
        (Control::Pause, Active, Ok(Paused)),
        (Control::Pause, Paused, Err("control_does_not_apply")),
        (Control::Pause, Complete, Err("control_does_not_apply")),
        (Control::Pause, Canceled, Err("control_does_not_apply")),
        (Control::Resume, Paused, Ok(Active)),
        (Control::Resume, Active, Err("control_does_not_apply")),
        (Control::Resume, Complete, Err("control_does_not_apply")),
        (Control::Resume, Canceled, Err("control_does_not_apply")),
        (Control::Cancel, Active, Ok(Canceled)),
        (Control::Cancel, Paused, Ok(Canceled)),
        (Control::Cancel, Complete, Err("control_does_not_apply")),
        (Control::Cancel, Canceled, Err("control_does_not_apply")),
    ];
    for (control, from, want) in rows {
        let g = goal(*from, 4);
        let got = decide_control(Some(&g), *control, "goal-1", 4, 0);
        match (got, want) {
            (
                Ok(GoalEvent::GoalStatusChanged {
                    status, revision, ..
                }),
                Ok(to),
            ) => {
                assert_eq!((status, revision), (*to, 5), "{control:?} from {from:?}");
            }
            (Err(e), Err(code)) => assert_eq!(e.code(), *code, "{control:?} from {from:?}"),
            (got, want) => panic!("{control:?} from {from:?}: {got:?}, want {want:?}"),
        }
    }
}

/// A control names the goal and the revision it was decided on.
#[test]
fn controls_are_refused_on_another_goal_or_a_stale_revision() {
    let g = goal(Active, 3);
    let rows: &[(Option<&Goal>, &str, u64, &str)] = &[
        (None, "goal-1", 3, "no_goal"),
        (Some(&g), "goal-2", 3, "not_current_goal"),
        (Some(&g), "goal-1", 2, "stale_revision"),
        (Some(&g), "goal-1", 4, "stale_revision"),
    ];
    for (current, id, revision, code) in rows {
        let e = decide_control(*current, Control::Pause, id, *revision, 0).unwrap_err();
        assert_eq!(e.code(), *code, "{id} @ {revision}");
    }
    let e = decide_control(Some(&g), Control::Pause, "goal-1", 2, 0).unwrap_err();
    assert!(e.to_string().contains("--expected-revision 3"), "{e}");
}

/// One row per (status, checklist): the status after the replacement, or the refusal.
#[test]
fn checklists_follow_the_seed() {
    let rows: &[(GoalStatus, Vec<ChecklistItem>, Result<GoalStatus, &str>)] = &[
        // An empty checklist keeps the lifecycle.
        (Active, vec![], Ok(Active)),
        (Paused, vec![], Ok(Paused)),
        (Active, vec![item(true), item(false)], Ok(Active)),
        (Paused, vec![item(false)], Ok(Paused)),
        // A non-empty, all-finished one completes the goal, even while paused.
        (Active, vec![item(true)], Ok(Complete)),
        (Paused, vec![item(true), item(true)], Ok(Complete)),
        // Terminal goals reject.
        (Complete, vec![item(false)], Err("goal_closed")),
        (Canceled, vec![], Err("goal_closed")),
    ];
    for (from, items, want) in rows {
        let g = goal(*from, 7);
        match (decide_checklist(Some(&g), items.clone(), 0), want) {
            (
                Ok(GoalEvent::ChecklistReplaced {
                    status, revision, ..
                }),
                Ok(to),
            ) => {
                assert_eq!((status, revision), (*to, 8), "{from:?} {items:?}");
            }
            (Err(e), Err(code)) => assert_eq!(e.code(), *code, "{from:?} {items:?}"),
            (got, want) => panic!("{from:?} {items:?}: {got:?}, want {want:?}"),
        }
    }
    assert_eq!(
        decide_checklist(None, vec![], 0).unwrap_err().code(),
        "no_goal"
    );
}

#[test]
fn replay_follows_the_current_goal_only() {
    let mut r = Replay::default();
    r.apply(&GoalEvent::GoalSet {
        goal_id: "goal-1".into(),
        objective: "first".into(),
        at_ms: 0,
    });
    r.apply(&GoalEvent::GoalSet {
        goal_id: "goal-2".into(),
        objective: "second".into(),
        at_ms: 1,
    });
    // An event about a goal no longer current changes nothing.
    r.apply(&GoalEvent::GoalStatusChanged {
        goal_id: "goal-1".into(),
        status: Canceled,
        revision: 2,
        at_ms: 2,
    });
    let g = r.current.clone().unwrap();
    assert_eq!(
        (g.goal_id.as_str(), g.status, g.revision),
        ("goal-2", Active, 1)
    );
    assert_eq!(r.next_goal_id(), "goal-3");
}
