//! run: a pipeline of programs, stages connected without a shell. The person approves the
//! exact argv of every stage before anything runs, unless every stage is a vouched command and
//! its input is not private. Output comes back as references, (untrusted, private); a vouched
//! command's as text, (trusted, private), unless its input was untrusted.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_process::{PipelineSpec, Stage};
use tackle_protocol::{Label, Privacy, Quarantined, Trust};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use crate::errors;
use crate::reference::RefId;
use crate::tools::read_file::record_failed;
use crate::tools::{Shared, content};

/// The most stages one pipeline has.
pub const MAX_STAGES: usize = 8;
/// The most bytes of each stream kept.
pub const CAPTURE_LIMIT: usize = 4 * 1024 * 1024;
/// The most bytes of a trusted stream shown as text.
const SHOWN_LIMIT: usize = 64 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageArgs {
    /// A program name looked up on PATH, or a workspace-relative path (containing `/`).
    pub program: String,
    /// What comes after the program; each element is one argument, never split.
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The stages: each one's standard output feeds the next one's standard input.
    pub pipeline: Vec<StageArgs>,
    /// The first stage's standard input: your own text, or a reference (ref:N) whose content
    /// is supplied without you seeing it. Without it the first stage reads nothing.
    #[serde(default)]
    pub stdin: Option<String>,
}

pub struct Run(pub Arc<Shared>);

pub struct Plan {
    stages: Vec<Stage>,
    argv: Vec<Vec<String>>,
    stdin: Option<(String, Label)>,
    vouched: bool,
}

impl Tool for Run {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "run"
    }

    fn description(&self) -> Cow<'static, str> {
        "Runs a program, or a pipeline of programs whose output feeds the next, without a shell: \
         no pipes, redirection, `&&` or `$(...)`; a `;` or `|` inside an argument is just part of \
         it. The user approves the exact argv first unless they vouched for the command. You get \
         the exit status and references to stdout and stderr (ref:N), not their text: pass them \
         to read_output (the user decides whether you see it), spawn_processor or write_file."
            .into()
    }

    fn read_only(&self) -> bool {
        false
    }

    fn truncation(&self) -> tackle_protocol::Truncation {
        // Bounded here (a vouched command's streams cut at SHOWN_LIMIT each), with notes the runtime's preview could cut off and a
        // hint naming an artifact this surface cannot open.
        tackle_protocol::Truncation::OptOut
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["tool.bash.cmd"]
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        let shared = &self.0;
        if args.pipeline.is_empty() {
            return Err(errors::invalid(
                "pipeline is empty; give at least one {program, args}",
            ));
        }
        if args.pipeline.len() > MAX_STAGES {
            return Err(errors::invalid(format!(
                "pipeline has {} stages; the most is {MAX_STAGES}",
                args.pipeline.len()
            )));
        }
        let mut stages = Vec::new();
        let mut argv = Vec::new();
        let mut resources = Vec::new();
        let mut effect = String::new();
        for (i, stage) in args.pipeline.iter().enumerate() {
            let field = format!("pipeline[{i}]");
            if stage.program.is_empty() {
                return Err(errors::invalid(format!("{field}.program is empty")));
            }
            if stage.program.contains('\0') || stage.args.iter().any(|a| a.contains('\0')) {
                return Err(errors::invalid(format!(
                    "{field}: a NUL byte cannot be part of an argument"
                )));
            }
            let program = self.locate(&stage.program, &field)?;
            let mut words = vec![stage.program.clone()];
            words.extend(stage.args.iter().cloned());
            let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
            resources.push(PermissionResource {
                action: Action::Custom("tool.bash.cmd"),
                target: quoted.join(" "),
            });
            resources.push(PermissionResource {
                action: Action::Custom("sealed.run"),
                target: serde_json::to_string(&words).unwrap_or_default(),
            });
            effect.push_str(&format!(
                "stage {}: {} {}\n",
                i + 1,
                program.display(),
                quoted[1..].join(" ")
            ));
            stages.push(Stage {
                program,
                args: stage.args.iter().map(OsString::from).collect(),
            });
            argv.push(words);
        }
        let stdin = match args.stdin {
            None => {
                effect.push_str("stdin: none (the first stage reads end-of-file)\n");
                None
            }
            Some(text) if RefId::parse(&text).is_some() => {
                let (id, content) = content::of(shared, "stdin", &text)?;
                effect.push_str(&format!(
                    "stdin: the content of {id}, which the planner has not seen\n"
                ));
                if content.label.privacy == Privacy::Private {
                    resources.push(PermissionResource {
                        action: Action::Custom("sealed.stdin"),
                        target: id.to_string(),
                    });
                }
                Some((content.text, content.label))
            }
            Some(text) => {
                effect.push_str(&format!("stdin: {} bytes the planner wrote\n", text.len()));
                let label = Label {
                    trust: Trust::Trusted,
                    privacy: Privacy::Public,
                };
                Some((text, label))
            }
        };
        let vouched = argv
            .iter()
            .all(|a| shared.trust.vouches().command_vouched(a));
        Ok(Prepared::new(
            Routing { resources },
            Plan {
                stages,
                argv,
                stdin,
                vouched,
            },
        )
        .with_effect(effect.trim_end().to_owned()))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        let stdin_label = plan.stdin.as_ref().map(|(_, l)| *l);
        let spec = PipelineSpec {
            stages: plan.stages,
            cwd: shared.root.path().to_path_buf(),
            env: shared.env.clone(),
            timeout: shared.run_timeout,
            grace: std::time::Duration::from_secs(2),
            stdin: plan.stdin.map(|(text, _)| text.into_bytes()),
            capture_limit: CAPTURE_LIMIT,
        };
        let outcome = tackle_process::run_pipeline(spec, cx.cancel.clone())
            .await
            .map_err(|e| ToolError::new(errors::COMMAND_FAILED, e.to_string()))?;
        let mut label = Label {
            trust: if plan.vouched {
                Trust::Trusted
            } else {
                Trust::Untrusted
            },
            privacy: Privacy::Private,
        };
        if let Some(input) = stdin_label {
            label = label.combine(input);
        }
        let statuses: Vec<String> = outcome
            .statuses
            .iter()
            .map(|s| match (s.code, s.signal) {
                (Some(code), _) => format!("exit {code}"),
                (None, Some(signal)) => format!("signal {signal}"),
                _ => "unknown".to_owned(),
            })
            .collect();
        let noun = if plan.argv.len() == 1 {
            "status"
        } else {
            "statuses"
        };
        let mut text = format!("{noun}: {}\n", statuses.join(", "));
        match outcome.ended {
            tackle_process::Ended::TimedOut => {
                text.push_str("[timed out: the pipeline was ended]\n")
            }
            tackle_process::Ended::Cancelled => {
                text.push_str("[cancelled: the pipeline was ended]\n")
            }
            _ => {}
        }
        let streams = [("stdout", outcome.stdout), ("stderr", outcome.stderr)];
        if label.trust == Trust::Trusted {
            for (name, captured) in streams {
                let body = String::from_utf8_lossy(&captured.bytes);
                let cut = cut_at(&body, SHOWN_LIMIT);
                text.push_str(&format!("{name}:\n{cut}"));
                if !cut.ends_with('\n') && !cut.is_empty() {
                    text.push('\n');
                }
                if cut.len() < body.len() || captured.truncated {
                    text.push_str(&format!("[{name} cut: {} bytes in all]\n", captured.total));
                }
            }
            return Ok(ToolCompletion::single(text));
        }
        for (name, captured) in streams {
            let id = shared
                .state
                .add(
                    &cx.call_id,
                    Quarantined::Output {
                        stream: name.to_owned(),
                        text: String::from_utf8_lossy(&captured.bytes).into_owned(),
                        total_bytes: captured.total,
                        truncated: captured.truncated,
                    },
                    label,
                )
                .await
                .map_err(record_failed)?;
            text.push_str(&format!("{name}: {id}\n"));
        }
        text.push_str("[the output is quarantined: read_output asks the user to show it to you]\n");
        Ok(ToolCompletion::single(text))
    }
}

impl Run {
    /// A name on PATH, or a workspace-relative path to a file inside the project.
    fn locate(&self, program: &str, field: &str) -> Result<PathBuf, ToolError> {
        let shared = &self.0;
        if !program.contains('/') {
            return tackle_process::find_on_path(program.as_ref(), shared.path_var.as_deref()).ok_or_else(|| {
                ToolError::new(
                    tackle_protocol::ErrorCode::NOT_FOUND,
                    format!("{field}.program: `{program}` is not on PATH; give its workspace-relative path, e.g. ./scripts/{program}"),
                )
            });
        }
        let rel = shared
            .root
            .resolve(program)
            .map_err(|e| errors::fs(&e, &format!("{field}.program {program}")))?;
        let real = shared
            .root
            .real_path(&rel)
            .map_err(|e| errors::fs(&e, &format!("{field}.program {program}")))?;
        match shared.root.metadata(&real) {
            Ok(Some(meta)) if meta.kind == tackle_fs::EntryKind::File && meta.mode & 0o111 != 0 => {
                Ok(shared.root.path().join(real.as_path()))
            }
            Ok(Some(_)) => Err(errors::invalid(format!(
                "{field}.program {program} is not an executable regular file"
            ))),
            Ok(None) => Err(ToolError::new(
                tackle_protocol::ErrorCode::NOT_FOUND,
                format!("{field}.program {program} does not exist"),
            )),
            Err(e) => Err(errors::fs(&e, &format!("{field}.program {program}"))),
        }
    }
}

/// A word as a shell would need it quoted, for showing and for the gate's command keys.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn cut_at(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_they_need_it() {
        assert_eq!(quote("log"), "log");
        assert_eq!(quote("-n"), "-n");
        assert_eq!(quote("1,10p"), "1,10p");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("; rm -rf x | y"), "'; rm -rf x | y'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }
}
