//! `tackle run` end to end: the real binary driven by scripted turns (`--model
//! replay:<file>`), checking its `--json` lines, `--output-last-message`, the exit code of every
//! way a run ends, Ctrl-C, and a crash loop that SIGKILLs it at seeded points and resumes it
//! with `--continue`: the resumed conversation is the recorded one and no call runs twice.
//!
//! Kill points are chosen over *observed progress* (records in the session log), never over
//! time. `TACKLE_RUN_CRASH_SEED` picks another seed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::BufRead as _;
use std::time::{Duration, Instant};

use harness::Project;
use harness::replay::{json_lines as lines, model, recorded_requests, script};
use serde_json::{Value, json};

const FLAGS: [&str; 4] = ["--mode", "yolo", "--allow", "tool.bash.cmd:*"];

#[test]
fn a_task_streams_json_lines_and_writes_the_last_message() {
    let p = Project::new();
    let file = script(
        &p,
        "s.jsonl",
        &[
            json!({"turn": {"text": "Writing.", "tool_calls": [
                {"id": "c1", "name": "bash", "arguments": {"command": "echo hi >> out.txt"}}
            ]}}),
            json!({"turn": {"text": "Wrote hi.", "usage": {"input_tokens": 10, "output_tokens": 3}}}),
        ],
    );
    let last = p.outside("last.txt");
    let out = p
        .tackle(FLAGS)
        .args([
            "--model",
            &model(&file),
            "run",
            "--json",
            "--output-last-message",
        ])
        .arg(&last)
        .arg("write hi")
        .run();
    out.success();
    let events = lines(&out.stdout);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session_started",
            "window",
            "turn_started",
            "text_delta",
            "usage",
            "turn_finished",
            "tool_call_started",
            "tool_call_finished",
            "turn_started",
            "text_delta",
            "usage",
            "turn_finished",
            "run_finished"
        ]
    );
    assert!(events[0]["session"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(
        events[1]["descriptions"], "full",
        "a 200k window gets the full catalog"
    );
    assert_eq!(events[7]["status"], "ok");
    assert_eq!(
        events[6]["turn"], 1,
        "a call carries the turn it belongs to"
    );
    assert_eq!(events[7]["turn"], 1);
    assert_eq!(events[10]["total"]["input_tokens"], 10);
    assert_eq!(events[12]["outcome"], "finished");
    assert_eq!(std::fs::read_to_string(p.join("out.txt")).unwrap(), "hi\n");
    assert_eq!(std::fs::read_to_string(&last).unwrap(), "Wrote hi.");
}

/// One way a run ends: its script, its flags, and what it must exit with.
struct Ending {
    name: &'static str,
    turns: Vec<Value>,
    flags: Vec<&'static str>,
    code: i32,
    outcome: &'static str,
}

#[test]
fn every_way_a_run_ends_has_its_exit_code() {
    let p = Project::new();
    let tool_turn =
        json!({"turn": {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}});
    let ending = |name, turns, flags, code, outcome| Ending {
        name,
        turns,
        flags,
        code,
        outcome,
    };
    let cases = vec![
        ending(
            "finished",
            vec![json!({"turn": {"text": "ok"}})],
            vec![],
            0,
            "finished",
        ),
        ending(
            "refused",
            vec![json!({"turn": {"text": "no", "stop": "refusal"}})],
            vec![],
            1,
            "error",
        ),
        ending(
            "bound",
            vec![tool_turn.clone(), tool_turn.clone()],
            vec!["--max-turns", "1"],
            4,
            "bound_hit",
        ),
        ending(
            "provider",
            vec![json!({"error": {"kind": "auth", "status": 401, "message": "bad key"}})],
            vec![],
            5,
            "provider_failed",
        ),
    ];
    for Ending {
        name,
        turns,
        flags: extra,
        code,
        outcome,
    } in cases
    {
        let file = script(&p, &format!("{name}.jsonl"), &turns);
        let out = p
            .tackle(FLAGS)
            .args(["--model", &model(&file), "run", "--json"])
            .args(extra)
            .arg("go")
            .run();
        out.code(code);
        let last = lines(&out.stdout).pop().unwrap();
        assert_eq!(last["type"], "run_finished", "{name}");
        assert_eq!(last["outcome"], outcome, "{name}");
        if name == "provider" {
            assert!(
                last["reason"].as_str().unwrap().contains("bad key"),
                "{last}"
            );
        }
    }
}

#[test]
fn bad_command_lines_exit_2_and_say_how_to_fix_them() {
    let p = Project::new();
    p.tackle(["run"])
        .run()
        .code(2)
        .stderr_contains("give a task");
    p.tackle(["run", "--resume", "nope", "x"])
        .run()
        .code(2)
        .stderr_contains("no session `nope`");
    p.tackle(["run", "--continue"])
        .run()
        .code(2)
        .stderr_contains("no earlier `tackle run` session");
    // No model configured and no key in the environment.
    p.tackle(["run", "x"])
        .env_clear()
        .env("XDG_CONFIG_HOME", p.xdg())
        .env("TACKLE_HEADLESS", "1")
        .run()
        .code(2)
        .stderr_contains("no model to run")
        .stderr_contains("OpenAI-compatible");
}

#[test]
fn ctrl_c_cancels_the_running_batch_and_exits_130() {
    let p = Project::new();
    let file = script(
        &p,
        "s.jsonl",
        &[
            json!({"turn": {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 600"}}]}}),
        ],
    );
    let mut child = p
        .tackle(FLAGS)
        .args(["--model", &model(&file), "run", "--json", "wait"])
        .spawn();
    let stdout = child.0.stdout.take().unwrap();
    let mut reader = std::io::BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    for line in reader.by_ref() {
        let line = line.unwrap();
        let started = line.contains("\"tool_call_started\"");
        seen.push(line);
        if started {
            break;
        }
    }
    let pid = child.0.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    for line in reader {
        seen.push(line.unwrap());
    }
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen:#?}");
    let last: Value = serde_json::from_str(seen.last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "cancelled", "{last}");
    let finished: Value = serde_json::from_str(
        seen.iter()
            .find(|l| l.contains("tool_call_finished"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(finished["status"], "cancelled");
}

/// splitmix64: small, seeded, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

fn log_lines(p: &Project) -> usize {
    let dir = p.join(".agents/store/sessions");
    let Ok(mut entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let Some(Ok(entry)) = entries.next() else {
        return 0;
    };
    std::fs::read(entry.path().join("events.jsonl"))
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

#[test]
fn a_run_killed_at_random_points_resumes_the_recorded_conversation_and_never_reruns_a_call() {
    let seed = std::env::var("TACKLE_RUN_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(23);
    eprintln!("crash loop seed: {seed} (TACKLE_RUN_CRASH_SEED)");
    let mut rng = Rng(seed);
    const CALLS: usize = 10;
    let p = Project::new();
    let mut turns: Vec<Value> = (0..CALLS)
        .map(|i| {
            json!({"turn": {"text": format!("step {i}"), "tool_calls": [{
                "id": format!("c{i}"), "name": "bash",
                "arguments": {"command": format!("echo {i} >> lines.txt")}
            }]}})
        })
        .collect();
    turns.push(json!({"turn": {"text": "all steps done"}}));
    let file = script(&p, "crash.jsonl", &turns);
    let mut recordings = Vec::new();
    let mut finished = false;
    for attempt in 0..40 {
        let record = p.outside(format!("requests-{attempt}.jsonl"));
        recordings.push(record.clone());
        let mut cmd = p.tackle(FLAGS);
        cmd.args(["--model", &model(&file), "run", "--json"])
            .env("TACKLE_REPLAY_RECORD", &record);
        if attempt == 0 {
            cmd.arg("run every step");
        } else {
            cmd.arg("--continue");
        }
        let before = log_lines(&p);
        // The first run is left to record its task before a kill can land.
        let at = before.max(3) + 1 + rng.below(6) as usize;
        let kill = attempt < 25;
        let mut child = cmd.spawn();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.0.try_wait().unwrap() {
                break Some(status);
            }
            if kill && log_lines(&p) >= at {
                child.0.kill().unwrap();
                child.0.wait().unwrap();
                break None;
            }
            assert!(Instant::now() < deadline, "attempt {attempt} hung");
            std::thread::yield_now();
        };
        if let Some(status) = status {
            assert_eq!(status.code(), Some(0), "attempt {attempt}");
            finished = true;
            break;
        }
    }
    assert!(finished, "the task never finished");

    let sessions = std::fs::read_dir(p.join(".agents/store/sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 1, "every attempt continued the one session");
    let log = std::fs::read_dir(p.join(".agents/store/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("events.jsonl");
    let rebuilt = tackle_agent::rebuild(&log).unwrap();
    assert_eq!(rebuilt.interrupted, None);
    let messages = serde_json::to_value(&rebuilt.conversation.messages).unwrap();
    let messages = messages.as_array().unwrap();

    // Every request any process made is the recorded conversation up to that point.
    let mut requests = 0;
    for record in &recordings {
        for request in recorded_requests(record) {
            let sent = request["messages"].as_array().unwrap();
            assert_eq!(
                sent.as_slice(),
                &messages[..sent.len()],
                "{}",
                record.display()
            );
            requests += 1;
        }
    }
    assert!(requests > CALLS, "{requests} requests");
    assert_eq!(
        messages.last().unwrap()["content"][0]["text"],
        "all steps done"
    );

    // No call ran twice: each line at most once, and only calls the log started.
    let text = std::fs::read_to_string(p.join("lines.txt")).unwrap_or_default();
    let mut seen: Vec<&str> = text.lines().collect();
    let total = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), total, "a call ran twice: {text}");
    let started: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["event"]["type"] == "call_started")
        .map(|r| r["event"]["call_id"].as_str().unwrap().to_owned())
        .collect();
    let mut unique = started.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        started.len(),
        "a call was started twice: {started:?}"
    );
    assert!(total <= started.len());
    eprintln!(
        "crash loop: {} attempts, {requests} requests, {total} of {CALLS} calls ran",
        recordings.len()
    );
}

#[test]
fn a_resumed_session_never_takes_a_scripted_model_from_its_log() {
    let p = Project::new();
    let file = script(
        &p,
        "once.jsonl",
        &[json!({"turn": {"text": "first answer"}})],
    );
    p.tackle(FLAGS)
        .args(["--model", &model(&file), "run", "--json", "go"])
        .run()
        .success();
    // The log records `replay:<file>` as the model; a log a repository ships could name any
    // file, so continuing without --model must not read turns from it.
    let record = p.outside("asked.jsonl");
    p.tackle(FLAGS)
        .args(["run", "--continue", "go on"])
        .env("TACKLE_REPLAY_RECORD", &record)
        .run()
        .code(2)
        .stderr_contains("no provider `replay`");
    assert!(!record.exists(), "no scripted model was asked");
}

/// The model's text reaches the terminal with every bidirectional override, isolate, mark and
/// invisible format character escaped, as ESC is, in the plain output and the `--json` lines.
#[test]
fn model_text_never_prints_a_bidi_override_raw() {
    let hidden = [
        '\u{1b}', '\u{061c}', '\u{200b}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}',
        '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        '\u{feff}',
    ];
    let text: String = hidden.iter().map(|c| format!("[{c}]")).collect();
    let p = Project::new();
    let file = script(&p, "bidi.jsonl", &[json!({"turn": {"text": text}})]);
    for json in [false, true] {
        let mut cmd = p.tackle(["--model", &model(&file), "run"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.arg("show it").run();
        out.success();
        let raw: Vec<char> = out.stdout.chars().filter(|c| hidden.contains(c)).collect();
        assert!(raw.is_empty(), "json={json}: {raw:?} printed raw");
        if json {
            let delta = lines(&out.stdout)
                .into_iter()
                .find(|l| l["type"] == "text_delta")
                .unwrap();
            assert_eq!(delta["text"], text.as_str(), "the JSON still says the same");
        } else {
            assert!(out.stdout.contains("[\\u{202e}]"), "{}", out.stdout);
        }
    }
}
