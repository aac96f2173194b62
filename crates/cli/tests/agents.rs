//! The four major agents driven against `tackle serve`, each with a scripted mock model on
//! loopback (`tests/fixtures/mock_model.py`), asserting on what the client put before its
//! model: the requests the mock recorded, not the client's own display.
//!
//! One run per client does three calls in turn: `read_file` of a file in the project (the model
//! must get its text, and no metadata block), `read_file` of a path outside the root (the model
//! must get the message and its fix), and `edit_file`, which tackle's gate asks about (the
//! client's own approval flow, where it has one). Agents are installed pinned by
//! `scripts/install-agents` (`tests/agents/package.json`, `package-lock.json`); see
//! `tests/agents/installed.rs` for when a test skips.
//!
//! What each client does, as of the pinned versions (found with these tests):
//!
//! - **Claude Code 2.1.332** speaks the 2026-07-28 protocol (`server/discover`, then
//!   `tools/call` with its capabilities in `_meta`). Its model gets a result's text blocks as
//!   the `tool_result` content, and an error's text (with `is_error`). A call that needs
//!   approval comes back to it as an `InputRequiredResult` holding tackle's form; Claude Code
//!   puts the form to its `Elicitation` hooks (and, in `-p` mode without one, dismisses it, which
//!   tackle reports to the model as "the user dismissed the approval request"). The test's hook
//!   answers `once` and the edit is made.
//! - **Codex 0.171.0** `initialize`s with form and URL elicitation. Its model gets
//!   `Wall time: …\nOutput:\n<text blocks>` as the `function_call_output`. It checks an MCP tool
//!   itself before calling: without `readOnlyHint` under `approval_policy=never` it refuses, so
//!   the test sets `default_tools_approval_mode = "approve"` for tackle. `codex exec` answers
//!   every `elicitation/create` with `decline` (it has nobody to ask; the TUI and the app server
//!   forward it to a person), also under `approval_policy = {granular = {mcp_elicitations =
//!   true, …}}`, so the model gets "edit_file was refused by the user" and the file is
//!   unchanged. An accepted form needs the TUI or `codex app-server`, which these tests do not
//!   drive.
//! - **Gemini CLI 0.61.0** `initialize`s without elicitation (capabilities: `roots` only), so
//!   a call tackle would ask about is `approval_unavailable`, whose message names the `--allow`
//!   rule that lets it run. It adds a boolean `wait_for_previous` to every tool's schema and the
//!   model's calls carry it; tackle takes it off at the boundary and the call runs. Its model
//!   gets a success as `{"output": "<untrusted_context>\n<text>\n</untrusted_context>"}` and an
//!   error as `{"error": "MCP tool 'read_file' reported tool error … with response: <the MCP
//!   result as JSON>"}`. In `-p` mode it drops every tool named `write_file`, `replace` or
//!   `run_shell_command` (its own tools' names, which an MCP tool's bare name matches), so
//!   tackle's `write_file` is not offered there; `edit_file` is.
//! - **opencode 1.18.33** `initialize`s without elicitation (capabilities: `roots`), so it is
//!   `approval_unavailable` too. Its model gets the text blocks as the `tool` message. It sends
//!   a title request without tools first, and tries an `npm install` of its config directory in
//!   the background (refused here by a closed registry port, which it tolerates).
//!
//! Under `tackle serve --approvals client` the client's own approval flow answers for tackle's
//! ask (the second run of Codex, Gemini CLI and opencode): Codex's
//! `default_tools_approval_mode = "approve"`, Gemini CLI's policy engine with the server not
//! trusted (in `-p` mode an `ask_user` is a deny, so the user's policy file allows tackle's
//! `read_file` and `edit_file`), opencode's `permission` rules (`"*": "ask"`, tackle's two tools
//! allowed). The edit is made. Their flows are real: with the edit left out of those settings,
//! Gemini CLI's policy engine and opencode (`permission requested: tackle_edit_file;
//! auto-rejecting`) refuse it themselves and end the run, and the file is unchanged.
//!
//! No client shows its model `_meta`, so none sees tackle's metadata (`total_lines` …) at all,
//! let alone twice. Run time: each client a few seconds, opencode about 20 s, on two loaded
//! cores; the tests of the four run in parallel.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;

#[path = "agents/client.rs"]
mod client;
#[path = "agents/installed.rs"]
mod installed;
#[path = "agents/mock_model.rs"]
mod mock_model;

use std::time::Instant;

use client::{Approvals, Client};
use harness::{Output, Project};
use installed::Installed;
use mock_model::{MockModel, ModelSaw, ScriptedCall};
use serde_json::json;

const FILE_TEXT: &str = "hello from the file\nsecond line\n";

/// What the client's approval flow does with tackle's question about `edit_file`.
#[derive(Debug, Clone, Copy)]
enum Approval {
    /// The client asks (here its hook answers `once`): the edit is made.
    Granted,
    /// The client is asked and declines by itself.
    DeclinedByClient,
    /// The client declared no elicitation, so tackle cannot ask: `approval_unavailable`.
    Unavailable,
    /// `serve --approvals client`: the client's own flow allowed the call (its settings answer
    /// ahead for the person), tackle took that for the answer, and the edit is made.
    ConfirmedByClient,
    /// `serve --approvals client`, and the client's own flow refuses the edit (its settings
    /// allow only `read_file`): tackle never runs it, and the model hears the client's refusal.
    RefusedByClientFlow,
}

struct Expect {
    client: Client,
    approval: Approval,
    /// The mock sets `wait_for_previous: true` on every call, as Gemini CLI tells its model to.
    wait_for_previous: bool,
}

/// What one client run left behind.
struct Drive {
    project: Project,
    output: Output,
    saw: ModelSaw,
}

fn drive(expect: &Expect) -> Option<Drive> {
    let agents = Installed::find()?;
    let project = Project::new();
    project.write("hello.txt", FILE_TEXT);
    project.write("notes.txt", "a draft note\n");
    let outside = project.write_outside("outside.txt", "not for the model\n");
    let with_order = |mut args: serde_json::Value| {
        if expect.wait_for_previous {
            args["wait_for_previous"] = json!(true);
        }
        args
    };
    let calls = [
        ScriptedCall {
            tool: "read_file",
            arguments: with_order(json!({"path": "hello.txt"})),
        },
        ScriptedCall {
            tool: "read_file",
            arguments: with_order(json!({"path": outside})),
        },
        ScriptedCall {
            tool: "edit_file",
            arguments: with_order(
                json!({"path": "notes.txt", "old_string": "draft", "new_string": "final"}),
            ),
        },
    ];
    let model = MockModel::start(&project.outside(""), &calls);
    let started = Instant::now();
    let approvals = match expect.approval {
        Approval::ConfirmedByClient => Approvals::Client,
        Approval::RefusedByClientFlow => Approvals::ClientRefusesEdits,
        _ => Approvals::Elicit,
    };
    let output = expect.client.run(&agents, &project, &model, approvals);
    eprintln!(
        "{:?} ran in {:.1} s",
        expect.client,
        started.elapsed().as_secs_f64()
    );
    if output.code != Some(0) {
        output.fail("the client failed");
    }
    let saw = expect.client.wire_format().model_saw(model.requests());
    // A client whose own flow refuses a call may end its run there (Gemini CLI and opencode
    // do), so the refused edit's result need not reach the model.
    let fewest = match expect.approval {
        Approval::RefusedByClientFlow => calls.len() - 1,
        _ => calls.len(),
    };
    if !(fewest..=calls.len()).contains(&saw.results.len()) {
        output.fail(&format!(
            "expected the model to receive {} tool results, it received {}: {:#?}\n\nrequests:\n{:#?}",
            calls.len(),
            saw.results.len(),
            saw.results,
            saw.requests
        ));
    }
    Some(Drive {
        project,
        output,
        saw,
    })
}

fn check(expect: &Expect) {
    let Some(d) = drive(expect) else { return };
    let fail = |why: &str| -> ! {
        d.output.fail(&format!(
            "{why}\n\nwhat the model received:\n{:#?}",
            d.saw.results
        ))
    };
    let (read, outside) = (&d.saw.results[0], &d.saw.results[1]);
    let edit = || {
        d.saw
            .results
            .get(2)
            .unwrap_or_else(|| fail("the model did not receive edit_file's result"))
    };

    // The file's text reached the model, and no metadata block did (tackle's metadata travels
    // in `_meta`, which no client shows its model).
    if !read.text.contains(FILE_TEXT) {
        fail("read_file: the model did not receive the file's text");
    }
    if read.text.contains("total_lines") {
        fail("read_file: the model received tackle's metadata");
    }

    // The published schemas use only keywords every client reads: Gemini CLI warned on each
    // `"format": "uint64"` it met, on stderr.
    if d.output.stderr.contains("uint64") || d.output.stdout.contains("uint64") {
        fail("the client complained about a schema keyword");
    }

    // An error's whole message, with its fix, reached the model.
    let message = "is outside the project root; pass a path inside it";
    if !outside.text.contains(message) || !outside.text.contains("path_outside_root") {
        fail("read_file outside the root: the model did not receive the message and its fix");
    }

    let notes = std::fs::read_to_string(d.project.join("notes.txt")).unwrap();
    match expect.approval {
        Approval::Granted => {
            if notes != "a final note\n" {
                fail(&format!(
                    "edit_file was approved but notes.txt is {notes:?}"
                ));
            }
            if edit().text.contains("error") {
                fail("edit_file was approved but the model received an error");
            }
            let shown = std::fs::read_to_string(d.project.outside("agent-home/elicitation.json"))
                .unwrap_or_else(|e| fail(&format!("the client's approval hook never ran: {e}")));
            if !shown.contains("edit_file needs approval for write:notes.txt") {
                fail(&format!(
                    "the approval form did not say what it asks about: {shown}"
                ));
            }
        }
        Approval::DeclinedByClient => {
            if notes != "a draft note\n" {
                fail(&format!(
                    "edit_file was declined but notes.txt is {notes:?}"
                ));
            }
            if !edit().text.contains("permission_denied")
                || !edit().text.contains("edit_file was refused by the user")
            {
                fail("edit_file declined: the model did not receive the refusal");
            }
        }
        Approval::ConfirmedByClient => {
            if notes != "a final note\n" {
                fail(&format!(
                    "the client confirmed edit_file but notes.txt is {notes:?}"
                ));
            }
            if edit().text.contains("approval_unavailable")
                || edit().text.contains("permission_denied")
            {
                fail("the client confirmed edit_file but the model received a refusal");
            }
        }
        Approval::RefusedByClientFlow => {
            if notes != "a draft note\n" {
                fail(&format!(
                    "the client's flow refused edit_file but notes.txt is {notes:?}"
                ));
            }
            // Whatever the client told its model, it is not tackle's: tackle never saw the call.
            if let Some(edit) = d.saw.results.get(2)
                && (edit.text.contains("approval_unavailable")
                    || edit.text.contains("permission_denied"))
            {
                fail(&format!("the refused edit reached tackle: {}", edit.text));
            }
        }
        Approval::Unavailable => {
            if notes != "a draft note\n" {
                fail(&format!(
                    "edit_file could not be approved but notes.txt is {notes:?}"
                ));
            }
            if !edit().text.contains("approval_unavailable")
                || !edit()
                    .text
                    .contains("allow it with --allow 'write:notes.txt'")
            {
                fail("edit_file: the model did not receive approval_unavailable with its fix");
            }
        }
    }

    if expect.wait_for_previous {
        // The client offered the parameter on tackle's tools (Gemini CLI adds it to every
        // schema), and the calls that carried it ran (the results above).
        let offered = d.saw.requests.iter().any(|r| {
            r.body["tools"].as_array().into_iter().flatten().any(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|f| {
                        f["name"] == "mcp_tackle_read_file"
                            && ["parametersJsonSchema", "parameters"]
                                .iter()
                                .any(|k| f[*k]["properties"].get("wait_for_previous").is_some())
                    })
            })
        });
        if !offered {
            fail("the client did not offer wait_for_previous on tackle's read_file");
        }
    }
}

#[test]
fn claude_code_model_reads_text_and_errors_and_approves_through_its_hook() {
    check(&Expect {
        client: Client::ClaudeCode,
        approval: Approval::Granted,
        wait_for_previous: false,
    });
}

#[test]
fn codex_model_reads_text_and_errors_and_exec_declines_approval() {
    check(&Expect {
        client: Client::Codex,
        approval: Approval::DeclinedByClient,
        wait_for_previous: false,
    });
}

#[test]
fn gemini_cli_model_reads_text_and_errors_with_wait_for_previous() {
    check(&Expect {
        client: Client::GeminiCli,
        approval: Approval::Unavailable,
        wait_for_previous: true,
    });
}

#[test]
fn opencode_model_reads_text_and_errors() {
    check(&Expect {
        client: Client::Opencode,
        approval: Approval::Unavailable,
        wait_for_previous: false,
    });
}

// `tackle serve --approvals client`: the clients without elicitation (and Codex, whose `exec`
// declines every form) run the call tackle's gate asks about through their own approval flow.

#[test]
fn codex_runs_an_asked_call_its_own_approval_mode_confirmed() {
    check(&Expect {
        client: Client::Codex,
        approval: Approval::ConfirmedByClient,
        wait_for_previous: false,
    });
}

#[test]
fn gemini_cli_runs_an_asked_call_its_policy_engine_allowed() {
    check(&Expect {
        client: Client::GeminiCli,
        approval: Approval::ConfirmedByClient,
        wait_for_previous: true,
    });
}

#[test]
fn opencode_runs_an_asked_call_its_permission_rules_allowed() {
    check(&Expect {
        client: Client::Opencode,
        approval: Approval::ConfirmedByClient,
        wait_for_previous: false,
    });
}

#[test]
fn gemini_cli_policy_engine_refuses_an_edit_it_was_not_told_to_allow() {
    check(&Expect {
        client: Client::GeminiCli,
        approval: Approval::RefusedByClientFlow,
        wait_for_previous: true,
    });
}

#[test]
fn opencode_permission_rules_refuse_an_edit_they_do_not_allow() {
    check(&Expect {
        client: Client::Opencode,
        approval: Approval::RefusedByClientFlow,
        wait_for_previous: false,
    });
}
