//! A `tackle run --json` session cut into turns, and what each turn cost tackle itself.
//!
//! A turn here is one trip round the loop: from its `turn_started` line to the next turn's
//! (or to `run_finished` for the last), so it holds the model's stream, the turn's record, the
//! tool batch, the batch's record and the building of the next request. Lines carry no clock,
//! so each is stamped by the reader as it arrives ([`Stamped`]); both ends of a turn are
//! stamped the same way. Taken out of it: the execution time of the turn's tool calls, as the
//! runtime measured it (`ran_us` of their `call_finished` records in the session log), and the
//! model's time to answer, when the caller knows it. What is left is tackle's overhead.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One `--json` line and when the reader got it.
#[derive(Clone, Debug)]
pub struct Stamped {
    pub at: Instant,
    pub event: Value,
}

/// What one turn took, and how much of it was not tackle's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnCost {
    pub turn: u32,
    /// From `turn_started` to the next turn's, or to `run_finished`.
    pub wall: Duration,
    /// The turn's tool calls' execution time.
    pub tools: Duration,
    /// The model's time to answer.
    pub model: Duration,
}

impl TurnCost {
    /// The turn's wall time less its tools' and the model's.
    pub fn overhead(&self) -> Duration {
        self.wall.saturating_sub(self.tools + self.model)
    }
}

/// Execution time of every call that ran, by call id, from a session log's `call_finished`
/// records (`{"seq":…,"event":{"type":"call_finished","call_id":…,"ran_us":…},…}`).
pub fn ran_by_call(log: &str) -> Result<HashMap<String, Duration>, String> {
    let mut ran = HashMap::new();
    for (n, line) in log
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let record: Value =
            serde_json::from_str(line).map_err(|e| format!("log line {}: {e}", n + 1))?;
        let event = &record["event"];
        if event["type"] != "call_finished" {
            continue;
        }
        let (Some(id), Some(us)) = (event["call_id"].as_str(), event["ran_us"].as_u64()) else {
            continue;
        };
        ran.insert(id.to_owned(), Duration::from_micros(us));
    }
    Ok(ran)
}

/// Cuts `lines` into turns. `model` is each turn's model time, in turn order, or empty when
/// the model's share is taken to be nil (a scripted provider in the same process). Every tool
/// call must have finished `ok` and have run (be in `ran`): a refused call would make a
/// cheaper turn, not a measured one.
pub fn turn_costs(
    lines: &[Stamped],
    ran: &HashMap<String, Duration>,
    model: &[Duration],
) -> Result<Vec<TurnCost>, String> {
    let mut turns: Vec<TurnCost> = Vec::new();
    let mut open: Option<(Instant, TurnCost)> = None;
    let close = |open: &mut Option<(Instant, TurnCost)>, at: Instant, turns: &mut Vec<_>| {
        if let Some((started, mut cost)) = open.take() {
            cost.wall = at.saturating_duration_since(started);
            turns.push(cost);
        }
    };
    let mut finished = false;
    for line in lines {
        match line.event["type"].as_str() {
            Some("turn_started") => {
                close(&mut open, line.at, &mut turns);
                let turn = line.event["turn"]
                    .as_u64()
                    .and_then(|t| u32::try_from(t).ok())
                    .ok_or_else(|| format!("a turn_started without a turn: {}", line.event))?;
                let blank = TurnCost {
                    turn,
                    wall: Duration::ZERO,
                    tools: Duration::ZERO,
                    model: Duration::ZERO,
                };
                open = Some((line.at, blank));
            }
            Some("tool_call_finished") => {
                let (_, cost) = open
                    .as_mut()
                    .ok_or_else(|| format!("a call outside any turn: {}", line.event))?;
                if line.event["status"] != "ok" {
                    return Err(format!("a call did not succeed: {}", line.event));
                }
                let id = line.event["call_id"].as_str().unwrap_or_default();
                let took = ran
                    .get(id)
                    .ok_or_else(|| format!("call {id} has no ran_us in the session log"))?;
                cost.tools += *took;
            }
            Some("run_finished") => {
                if line.event["outcome"] != "finished" {
                    return Err(format!("the run did not finish: {}", line.event));
                }
                close(&mut open, line.at, &mut turns);
                finished = true;
            }
            _ => {}
        }
    }
    if !finished {
        return Err("no run_finished line".to_owned());
    }
    if !model.is_empty() {
        if model.len() != turns.len() {
            return Err(format!(
                "{} model answers for {} turns",
                model.len(),
                turns.len()
            ));
        }
        for (cost, answer) in turns.iter_mut().zip(model) {
            cost.model = *answer;
        }
    }
    Ok(turns)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn turns_run_from_one_start_to_the_next_less_tools_and_model() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        let line = |us, event| Stamped { at: at(us), event };
        let lines = [
            line(0, json!({"type": "session_started", "session": "s"})),
            line(100, json!({"type": "turn_started", "turn": 1})),
            line(150, json!({"type": "turn_finished", "turn": 1})),
            line(160, json!({"type": "tool_call_started", "call_id": "c1"})),
            line(
                400,
                json!({"type": "tool_call_finished", "call_id": "c1", "status": "ok"}),
            ),
            line(500, json!({"type": "turn_started", "turn": 2})),
            line(
                700,
                json!({"type": "run_finished", "outcome": "finished", "reason": "r"}),
            ),
        ];
        let log = concat!(
            r#"{"seq":1,"event":{"type":"call_started","call_id":"c1","at_ms":1},"crc":"0"}"#,
            "\n",
            r#"{"seq":2,"event":{"type":"call_finished","call_id":"c1","ran_us":200},"crc":"0"}"#,
            "\n"
        );
        let ran = ran_by_call(log).unwrap();
        assert_eq!(ran["c1"], Duration::from_micros(200));

        let turns = turn_costs(&lines, &ran, &[]).unwrap();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].wall, Duration::from_micros(400));
        assert_eq!(turns[0].overhead(), Duration::from_micros(200));
        assert_eq!(turns[1].wall, Duration::from_micros(200));
        assert_eq!(turns[1].tools, Duration::ZERO);

        let model = [Duration::from_micros(50), Duration::from_micros(30)];
        let turns = turn_costs(&lines, &ran, &model).unwrap();
        assert_eq!(turns[0].overhead(), Duration::from_micros(150));
        assert_eq!(turns[1].overhead(), Duration::from_micros(170));
        assert!(turn_costs(&lines, &ran, &model[..1]).is_err());
    }

    #[test]
    fn a_failed_call_or_an_unfinished_run_is_refused() {
        let t0 = Instant::now();
        let line = |event| Stamped { at: t0, event };
        let failed = [
            line(json!({"type": "turn_started", "turn": 1})),
            line(json!({"type": "tool_call_finished", "call_id": "c1", "status": "error"})),
            line(json!({"type": "run_finished", "outcome": "finished"})),
        ];
        let ran = HashMap::from([("c1".to_owned(), Duration::ZERO)]);
        assert!(turn_costs(&failed, &ran, &[]).is_err());
        let unfinished = [line(json!({"type": "turn_started", "turn": 1}))];
        assert!(turn_costs(&unfinished, &ran, &[]).is_err());
        let unknown_call = [
            line(json!({"type": "turn_started", "turn": 1})),
            line(json!({"type": "tool_call_finished", "call_id": "c9", "status": "ok"})),
            line(json!({"type": "run_finished", "outcome": "finished"})),
        ];
        assert!(turn_costs(&unknown_call, &ran, &[]).is_err());
    }
}
