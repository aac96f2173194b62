//! `/goal`: the user's controls over the project's goal, as `tackle goal` has them. A control
//! names the goal and the revision it was decided on: the one named on the line, else the one
//! this chat last showed, so a goal that changed since (the model's goal_update, another
//! terminal's `tackle goal`) is refused rather than changed blind.

use tackle_goals::{Goal, GoalBook, GoalError};
use tackle_runtime::Session;

use super::Chat;
use super::slash::GoalSlash;
use super::view::NoticeKind;

impl Chat {
    pub(super) fn goal(&mut self, command: GoalSlash) {
        let book = GoalBook::new(&Session::store_dir_for(&self.config.root));
        let outcome = match command {
            GoalSlash::Bad(text) => return self.app.view.notice(NoticeKind::Warning, text),
            GoalSlash::Show => book.current(),
            GoalSlash::Set(objective) if objective.is_empty() => {
                return self.app.view.notice(
                    NoticeKind::Warning,
                    "say what the goal is: /goal set <objective>",
                );
            }
            GoalSlash::Set(objective) => book.set(&objective).map(Some),
            GoalSlash::Control { control, named } => {
                let Some((id, revision)) = named.or_else(|| self.app.goal_seen.clone()) else {
                    return self.app.view.notice(
                        NoticeKind::Warning,
                        format!(
                            "a control names the goal as you saw it: type /goal to see it, then /goal {}",
                            control.as_str()
                        ),
                    );
                };
                book.control(control, &id, revision).map(Some)
            }
        };
        match outcome {
            Ok(goal) => self.show_goal(goal.as_ref()),
            Err(e) => {
                let hint = match e {
                    GoalError::StaleRevision { .. } | GoalError::NotCurrent { .. } => {
                        " (in chat, /goal shows it as it is now)"
                    }
                    _ => "",
                };
                let kind = match e.code() {
                    "goal_store" => NoticeKind::Error,
                    _ => NoticeKind::Warning,
                };
                self.app.view.notice(kind, format!("goal: {e}{hint}"));
            }
        }
    }

    /// Before a run starts: when the goal's lifecycle changed what the catalog should hold
    /// (goal_get and goal_update are offered while the goal is active or paused, seed 000),
    /// the runtime is built again and the agent goes on in the same session with it.
    pub(super) fn goal_tools_follow(&mut self) {
        // The sealed surface is its eleven tools; the goal tools never join it.
        if self.sealed.is_some() {
            return;
        }
        let offered = self.runtime.catalog().get("goal_get").is_some();
        let book = GoalBook::new(&Session::store_dir_for(&self.config.root));
        let open = book
            .current()
            .ok()
            .flatten()
            .is_some_and(|g| g.status.offers_tools());
        if offered == open {
            return;
        }
        let rebuilt = super::setup::runtime(
            &self.config,
            self.approver.clone(),
            self.prompter.clone(),
            self.observer.clone(),
            self.small.as_ref(),
        )
        .and_then(|(runtime, boundaries, tree)| {
            self.runtime = runtime;
            self.boundaries = boundaries;
            self.tree = tree;
            self.rebuild(None, None)
        });
        let text = match rebuilt {
            Ok(_) if open => "the goal is open: the model is offered goal_get and goal_update",
            Ok(_) => "the goal is closed: goal_get and goal_update are no longer offered",
            Err(e) => {
                let text = format!("the goal tools could not follow the goal: {e:#}");
                return self.app.view.notice(NoticeKind::Error, text);
            }
        };
        self.app.view.notice(NoticeKind::Info, text);
    }

    fn show_goal(&mut self, goal: Option<&Goal>) {
        self.app.goal_seen = goal.map(|g| (g.goal_id.clone(), g.revision));
        let text = crate::goal::describe(goal, "/goal set");
        self.app.view.notice(NoticeKind::Info, text);
    }
}
