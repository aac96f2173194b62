use serde_json::json;
use tackle_protocol::{BatchResult, CallId, CallStatus, Part, Role, ToolCallPart, ToolResultPart};

use super::*;

/// One model turn calling `calls` (tool, arguments), and its batch with `no_op` per call.
fn turn(calls: &[(&str, Value, bool)]) -> (Message, ToolBatchFinished) {
    let message = Message {
        role: Role::Assistant,
        content: calls
            .iter()
            .enumerate()
            .map(|(i, (tool, args, _))| {
                Part::ToolCall(ToolCallPart {
                    id: CallId(format!("c{i}")),
                    name: (*tool).into(),
                    arguments: ToolArguments::Valid {
                        value: args.clone(),
                    },
                })
            })
            .collect(),
    };
    let batch = ToolBatchFinished {
        turn: 1,
        results: calls
            .iter()
            .enumerate()
            .map(|(i, (tool, _, no_op))| BatchResult {
                tool: (*tool).into(),
                status: CallStatus::Ok,
                code: None,
                result: ToolResultPart {
                    call_id: CallId(format!("c{i}")),
                    content: vec![ContentBlock::Text { text: "ok".into() }],
                    is_error: false,
                    media: Vec::new(),
                },
                artifacts: Vec::new(),
                no_op: *no_op,
            })
            .collect(),
        notes: Vec::new(),
        cancelled: false,
        interrupted: false,
        at_ms: 0,
    };
    (message, batch)
}

fn observe(w: &mut Watchdog, calls: &[(&str, Value, bool)]) -> (Trips, ToolBatchFinished) {
    let (m, mut b) = turn(calls);
    let trips = w.observe(&m, &mut b);
    (trips, b)
}

fn enforce() -> Watchdog {
    Watchdog::new(WatchdogSettings {
        mode: WatchdogMode::Enforce,
        repeat_limit: 3,
    })
}

#[test]
fn three_no_ops_in_a_row_across_turns_cut_the_run_carrying_the_third() {
    let mut w = enforce();
    let plan = |n: u32| ("record_plan", json!({"plan": format!("v{n}")}), true);
    for n in 0..2 {
        let (trips, _) = observe(&mut w, &[plan(n)]);
        assert_eq!(w.act(&trips), Action::Nothing);
    }
    let (trips, _) = observe(&mut w, &[plan(2)]);
    match w.act(&trips) {
        Action::Cut { reason, halted } => {
            assert!(!halted);
            assert!(
                reason.contains("3 results in a row changed nothing"),
                "{reason}"
            );
            assert!(reason.contains("record_plan"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn any_productive_result_resets_the_streak() {
    let mut w = enforce();
    let noop = ("mark_task_done", json!({"task": "a"}), true);
    observe(&mut w, &[noop.clone(), noop.clone()]);
    let (trips, _) = observe(
        &mut w,
        &[("read_file", json!({"path": "x"}), false), noop.clone()],
    );
    assert_eq!(w.act(&trips), Action::Nothing);
    let (trips, _) = observe(&mut w, std::slice::from_ref(&noop));
    assert_eq!(w.act(&trips), Action::Nothing);
}

#[test]
fn warn_reports_and_never_cuts_and_off_does_nothing() {
    for (mode, warns) in [(WatchdogMode::Warn, true), (WatchdogMode::Off, false)] {
        let mut w = Watchdog::new(WatchdogSettings {
            mode,
            repeat_limit: 3,
        });
        let noop = ("record_plan", json!({"plan": "p"}), true);
        let (trips, batch) = observe(&mut w, &[noop.clone(), noop.clone(), noop.clone()]);
        match w.act(&trips) {
            Action::Warn(text) => assert!(warns && text.starts_with("watchdog: "), "{text}"),
            Action::Nothing => assert!(!warns),
            other => panic!("{mode:?}: {other:?}"),
        }
        // Off tells the model nothing either.
        let told = batch.results[2].result.content.len() > 1;
        assert_eq!(told, warns, "{mode:?}");
    }
}

#[test]
fn three_cut_runs_in_a_row_halt_until_the_operator_speaks() {
    let mut w = enforce();
    let noop = ("record_plan", json!({"plan": "p"}), true);
    for run in 1..=3 {
        let (trips, _) = observe(&mut w, &[noop.clone(), noop.clone(), noop.clone()]);
        let Action::Cut { halted, reason } = w.act(&trips) else {
            panic!("run {run} was not cut")
        };
        assert_eq!(halted, run == 3, "{reason}");
    }
    assert!(w.halted());
    w.operator_input();
    assert!(!w.halted());
    // An uncut run between two cut ones breaks the row.
    let (trips, _) = observe(&mut w, &[noop.clone(), noop.clone(), noop.clone()]);
    assert!(matches!(w.act(&trips), Action::Cut { halted: false, .. }));
    w.run_ended_uncut();
    for _ in 0..2 {
        let (trips, _) = observe(&mut w, &[noop.clone(), noop.clone(), noop.clone()]);
        assert!(matches!(w.act(&trips), Action::Cut { halted: false, .. }));
    }
}

#[test]
fn identical_calls_are_reported_to_the_model_at_the_limit_and_cut_at_twice_it() {
    let mut w = enforce();
    let same = ("grep", json!({"pattern": "todo"}), false);
    for _ in 0..2 {
        let (trips, batch) = observe(&mut w, std::slice::from_ref(&same));
        assert_eq!(trips.repeated, None);
        assert_eq!(batch.results[0].result.content.len(), 1);
    }
    let (trips, batch) = observe(&mut w, std::slice::from_ref(&same));
    assert_eq!(trips.repeated, Some(("grep".into(), 3)));
    let told = match &batch.results[0].result.content[1] {
        ContentBlock::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(told.contains("call 3 in a row to grep"), "{told}");
    // Reported, not cut.
    assert!(matches!(w.act(&trips), Action::Warn(_)));
    // Other arguments restart the count.
    let (trips, _) = observe(&mut w, &[("grep", json!({"pattern": "fixme"}), false)]);
    assert_eq!(trips.repeated, None);
    for n in 2..=6 {
        let (trips, _) = observe(&mut w, &[("grep", json!({"pattern": "fixme"}), false)]);
        let action = w.act(&trips);
        match n {
            3 => assert!(matches!(action, Action::Warn(_)), "{n}: {action:?}"),
            6 => assert!(matches!(action, Action::Cut { .. }), "{n}: {action:?}"),
            _ => assert_eq!(action, Action::Nothing, "{n}"),
        }
    }
}

#[test]
fn a_repeat_limit_of_zero_turns_the_repeat_detector_off() {
    let mut w = Watchdog::new(WatchdogSettings {
        mode: WatchdogMode::Enforce,
        repeat_limit: 0,
    });
    for _ in 0..10 {
        let (trips, _) = observe(&mut w, &[("stat", json!({"path": "a"}), false)]);
        assert_eq!(w.act(&trips), Action::Nothing);
    }
}

#[test]
fn modes_parse_and_name_themselves() {
    for m in [WatchdogMode::Off, WatchdogMode::Warn, WatchdogMode::Enforce] {
        assert_eq!(m.as_str().parse::<WatchdogMode>(), Ok(m));
    }
    let e = "strict".parse::<WatchdogMode>().unwrap_err();
    assert!(e.contains("off, warn or enforce"), "{e}");
}
