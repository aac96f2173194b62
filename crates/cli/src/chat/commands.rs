//! What the slash commands do: `/compact` and `/done` run like a turn, `/model` and `/resume`
//! go on with another agent, `/replan` archives the session's plan, `/goal` is in
//! [`super::goal`], the rest answer on screen.

use anyhow::anyhow;
use tackle_runtime::Session;

use crate::commands::Failure;
use tackle_tool::protocol::SessionId;
use tokio_util::sync::CancellationToken;

use super::slash::{self, Slash};
use super::view::NoticeKind;
use super::worker::Work;
use super::{Chat, setup};

impl Chat {
    /// `/compact`: the model summarises the conversation before its last turn; later requests
    /// start from the summary. `/done <note>` writes the completion record of a finished task
    /// the same way. Either runs like a turn (Ctrl-C cancels it).
    fn compact(&mut self, done: Option<String>) {
        let name = if done.is_some() { "/done" } else { "/compact" };
        if self.app.running.is_some() {
            self.app.view.notice(
                NoticeKind::Info,
                format!("a turn is running; {name} once it has ended"),
            );
            return;
        }
        let cancel = CancellationToken::new();
        self.app.running = Some(cancel.clone());
        self.app.run_seq += 1;
        let seq = self.app.run_seq;
        let what = if done.is_some() {
            "marking the task done: the model writes its completion record…"
        } else {
            "compacting: the model writes a summary…"
        };
        self.app.view.notice(NoticeKind::Info, what);
        if self.work.send(Work::Compact { cancel, seq, done }).is_err() {
            self.app.running = None;
            self.app.view.notice(
                NoticeKind::Error,
                "the agent loop has stopped; restart tackle chat",
            );
        }
    }

    pub(super) fn slash(&mut self, command: Slash) {
        let view = &mut self.app.view;
        match command {
            Slash::Help => view.notice(NoticeKind::Info, slash::help().join("\n")),
            Slash::Unknown(name) => view.notice(NoticeKind::Warning, slash::unknown(&name)),
            Slash::Quit => self.quit(),
            Slash::Stats => {
                let s = view.stats;
                let t = s.total;
                let cost = s.cost().map_or(
                    "unknown (the model has no prices in the catalog)".to_owned(),
                    |c| format!("${c:.4}"),
                );
                view.notice(
                    NoticeKind::Info,
                    format!(
                        "{} model turn(s) · input {} tokens (cache read {}, cache write {}) · output {} tokens · cost {cost}",
                        s.turns, t.input_tokens, t.cache_read_tokens, t.cache_write_tokens, t.output_tokens
                    ),
                );
            }
            Slash::Todo => {
                if self.work.send(Work::Todo).is_err() {
                    view.notice(NoticeKind::Error, "the agent loop has stopped");
                } else if self.app.running.is_some() {
                    view.notice(NoticeKind::Info, "the todo list follows when the turn ends");
                }
            }
            Slash::Replan => self.replan(),
            Slash::Skills => {
                let text = skills_list(&self.config.skills);
                view.notice(NoticeKind::Info, text);
            }
            Slash::Skill { name, task } => self.load_skill(&name, &task),
            Slash::Goal(command) => self.goal(command),
            Slash::Compact => self.compact(None),
            Slash::Done(None) => view.notice(
                NoticeKind::Warning,
                "say what was finished: /done <what the task was and how it ended>",
            ),
            Slash::Done(Some(note)) => self.compact(Some(note)),
            Slash::Model(None) => {
                let text = format!(
                    "model {} (window {} tokens)",
                    self.app.model, self.app.window
                );
                view.notice(NoticeKind::Info, text);
            }
            Slash::Model(Some(id)) => self.switch(Some(id), None),
            Slash::Resume(None) => {
                let text = sessions(&self.config.root);
                self.app.view.notice(NoticeKind::Info, text);
            }
            Slash::Resume(Some(id)) => self.switch(None, Some(id)),
        }
    }

    /// `/skill <name> [task]`: the skill's instructions (as the skill tool would return them)
    /// sent as the user's message, with the task after them. Its `allowed-tools` pre-approve
    /// only when the model loads it with the skill tool, whose call the gate and the log see.
    fn load_skill(&mut self, name: &str, task: &str) {
        let set = self.config.skills.set();
        let skill = match set.get(name).filter(|s| s.user_invocable) {
            Some(skill) => skill,
            None => {
                let names = set
                    .iter()
                    .filter(|s| s.user_invocable)
                    .map(|s| s.name.as_str());
                let near = tackle_agent::skills::SkillSet::nearest(name, names);
                let text = if name.is_empty() {
                    "say which: /skill <name> [task]; /skills lists them".to_owned()
                } else if set.get(name).is_some() {
                    format!(
                        "`{}` is not for loading by hand (user-invocable: false)",
                        crate::safe_text::safe_line(name)
                    )
                } else if near.is_empty() {
                    format!(
                        "no skill is named `{}`; /skills lists them",
                        crate::safe_text::safe_line(name)
                    )
                } else {
                    format!(
                        "no skill is named `{}`; did you mean {}?",
                        crate::safe_text::safe_line(name),
                        near.join(", ")
                    )
                };
                return self.app.view.notice(NoticeKind::Warning, text);
            }
        };
        let mut message = format!(
            "I am loading the skill `{}` for this task:\n{}",
            skill.name,
            tackle_agent::skills::tool::rendered(skill, &[])
        );
        message.push_str(if task.is_empty() {
            "\nFollow this skill for what comes next."
        } else {
            "\n"
        });
        message.push_str(task);
        self.submit_message(message);
    }

    /// `/replan`: archives this session's plan (seed 003), falling back to the newest plan
    /// that names no author; another author's is left alone. Either way the session has no
    /// plan on file afterwards, so under `plan_mode = "required"` its mutating calls wait for a
    /// new record_plan.
    fn replan(&mut self) {
        let session = SessionId(self.app.session.clone());
        let (kind, text) = match self.config.plans.revoke(None, Some(&session)) {
            Ok(revoked) => (
                NoticeKind::Info,
                crate::plan::describe(
                    &revoked,
                    Some(&session),
                    "`tackle plan revoke --session <its session>` revokes it",
                ),
            ),
            Err(e) => (
                NoticeKind::Error,
                format!("revoking the plan: {e}; the plan gate of this session is closed"),
            ),
        };
        self.app.view.notice(kind, text);
    }

    /// Goes on with another model, or in another session (the conversation its log holds).
    fn switch(&mut self, model: Option<String>, session: Option<String>) {
        if self.app.running.is_some() {
            self.app.view.notice(
                NoticeKind::Warning,
                "a turn is running; wait for it to end (or Ctrl-C) first",
            );
            return;
        }
        match self.rebuild(model.as_deref(), session.as_deref()) {
            Ok(text) => self.app.view.notice(NoticeKind::Info, text),
            Err(e) => self.app.view.notice(NoticeKind::Error, format!("{e:#}")),
        }
    }

    pub(super) fn rebuild(
        &mut self,
        model: Option<&str>,
        session: Option<&str>,
    ) -> anyhow::Result<String> {
        let choice = match model {
            Some(m) => Some(setup::choose(&self.config.models, Some(m))?),
            None => None,
        };
        let id = session.unwrap_or(&self.app.session).to_owned();
        let opened = crate::own_sessions::resume(&self.config.root, &id, "/resume", false)
            .map_err(|(Failure::Usage(e) | Failure::Engine(e))| e)?;
        let sealed = crate::run::sealed::posture_of(&self.config, &opened, true)
            .map_err(|(Failure::Usage(e) | Failure::Engine(e))| e)?;
        if sealed {
            // A sealed session's references are its own: its runtime is built for it.
            let (runtime, boundaries, tree, parts) = setup::sealed_runtime(
                &self.config,
                self.approver.clone(),
                self.prompter.clone(),
                self.observer.clone(),
                self.small.as_ref(),
                &opened,
                choice.as_ref().unwrap_or(&self.choice),
                true,
            )?;
            self.runtime = runtime;
            self.boundaries = boundaries;
            self.tree = tree;
            self.sealed = Some(parts);
        } else if self.sealed.take().is_some() {
            let (runtime, boundaries, tree) = setup::runtime(
                &self.config,
                self.approver.clone(),
                self.prompter.clone(),
                self.observer.clone(),
                self.small.as_ref(),
            )?;
            self.runtime = runtime;
            self.boundaries = boundaries;
            self.tree = tree;
        }
        let agent = setup::agent(
            &self.config,
            self.runtime.clone(),
            self.boundaries.clone(),
            self.tree.clone(),
            opened,
            choice.as_ref().unwrap_or(&self.choice),
            self.observer.clone(),
            true,
            self.sealed.as_ref(),
        )?;
        self.steering = agent.steering();
        self.work
            .send(Work::Replace(Box::new(agent)))
            .map_err(|_| anyhow!("the agent loop has stopped"))?;
        let mut notes = String::new();
        if let Some(choice) = choice {
            self.app.model = choice.setup.id();
            self.app.window = choice.setup.entry.context_window;
            for note in &choice.notes {
                notes.push('\n');
                notes.push_str(note);
            }
            self.choice = choice;
        }
        self.app.session = id.clone();
        Ok(format!("session {id} with model {}{notes}", self.app.model))
    }
}

/// What `/skills` shows: each skill's name, scope and description, then how to load one.
fn skills_list(skills: &tackle_config::skills::Skills) -> String {
    use crate::safe_text::{one_line, safe_line};
    if skills.set().is_empty() {
        return "no skills: put one in .agents/skills/<name>/SKILL.md; tackle skills --help shows the format".to_owned();
    }
    let mut lines = vec!["skills (load one with /skill <name> [task]):".to_owned()];
    for s in skills.set().iter() {
        lines.push(format!(
            "  {} ({}) — {}",
            safe_line(&s.name),
            s.origin.scope(),
            one_line(&s.description, 160)
        ));
    }
    if !skills.invalid().is_empty() {
        lines.push(format!(
            "  {} invalid skill(s) not loaded: tackle skills --check names the rule each breaks",
            skills.invalid().len()
        ));
    }
    lines.join("\n")
}

/// The ten most recent sessions of the project, newest first.
fn sessions(root: &std::path::Path) -> String {
    let dir = Session::store_dir_for(root).join("sessions");
    let mut found: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((modified, e.file_name().to_string_lossy().into_owned()))
        })
        .collect();
    if found.is_empty() {
        return "no sessions yet".to_owned();
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut text = "recent sessions (/resume <id> continues one):".to_owned();
    for (_, id) in found.into_iter().take(10) {
        text.push_str(&format!("\n  {}", crate::safe_text::safe_line(&id)));
    }
    text
}
