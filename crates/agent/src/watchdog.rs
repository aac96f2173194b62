//! The watchdog (seed 003, record_plan's "A repeat is also visible to the watchdog"): two
//! detectors over the results of every batch, in order, across turns and runs.
//!
//! - **No-op streak.** Results whose reserved `no_op` boolean is set (an unchanged plan, a
//!   repeated task boundary) count up; any other result resets the count. The detector reads
//!   only that boolean, so rewording a tool's `outcome` cannot switch it off. At
//!   [`NO_OP_STREAK`] in a row, `warn` tells the operator; `enforce` cuts the run (the user's
//!   turn) carrying the third, and [`CUT_STREAK`] runs cut in a row halt the agent for the
//!   operator: it takes no further turn until the user says something.
//! - **Repeated identical calls.** The same tool with the same arguments `repeat_limit` times
//!   in a row is reported *to the model*, in that call's result, before anything is halted;
//!   under `enforce`, a model that goes on to twice the limit has its run cut like a no-op
//!   streak. A limit of 0 turns this detector off.
//!
//! Both counts are rebuilt from the session log on resume ([`Watchdog::observe`] runs over the
//! recorded batches), so a streak survives a process boundary as it survives a turn boundary.

use serde_json::Value;
use tackle_protocol::{ContentBlock, Message, ToolArguments, ToolBatchFinished};

/// No-op results in a row that trip the streak detector.
pub const NO_OP_STREAK: u32 = 3;
/// Runs cut in a row that halt the agent for the operator.
pub const CUT_STREAK: u32 = 3;
/// The default for identical calls in a row that are reported to the model.
pub const DEFAULT_REPEAT_LIMIT: u32 = 3;

/// `--watchdog`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WatchdogMode {
    Off,
    /// Report, never cut.
    Warn,
    /// Cut the run carrying a trip; halt after [`CUT_STREAK`] cut runs in a row (the default:
    /// a model that writes the same file with the same text thirty times is not told a
    /// thirty-first time).
    #[default]
    Enforce,
}

impl std::str::FromStr for WatchdogMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Self::Off),
            "warn" => Ok(Self::Warn),
            "enforce" => Ok(Self::Enforce),
            other => Err(format!(
                "`{other}` is not a watchdog mode; use off, warn or enforce"
            )),
        }
    }
}

impl WatchdogMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Warn => "warn",
            Self::Enforce => "enforce",
        }
    }
}

/// The watchdog's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchdogSettings {
    pub mode: WatchdogMode,
    /// Identical calls in a row reported to the model; 0: never.
    pub repeat_limit: u32,
}

impl Default for WatchdogSettings {
    fn default() -> Self {
        Self {
            mode: WatchdogMode::Enforce,
            repeat_limit: DEFAULT_REPEAT_LIMIT,
        }
    }
}

/// What one batch tripped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trips {
    /// The no-op streak reached [`NO_OP_STREAK`] (or more) in this batch: the tools of the
    /// streak's last results.
    pub no_op_streak: Option<Vec<String>>,
    /// A call was repeated `repeat_limit` times (or a multiple) in a row: the tool and count.
    pub repeated: Option<(String, u32)>,
}

/// What the loop does about a batch's trips.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Nothing,
    /// Tell the operator; the run goes on.
    Warn(String),
    /// End the run with this reason; `halted` when cut runs in a row reached [`CUT_STREAK`].
    Cut {
        reason: String,
        halted: bool,
    },
}

/// The detectors' counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Watchdog {
    settings: WatchdogSettings,
    no_op_streak: u32,
    no_op_tools: Vec<String>,
    last_call: Option<(String, Value)>,
    repeats: u32,
    cut_runs: u32,
}

impl Watchdog {
    pub fn new(settings: WatchdogSettings) -> Self {
        Self {
            settings,
            ..Self::default()
        }
    }

    pub fn settings(&self) -> WatchdogSettings {
        self.settings
    }

    /// Takes over the counts of `recorded` (rebuilt from a log), keeping these settings.
    pub fn resume_from(&mut self, recorded: &Watchdog) {
        let settings = self.settings;
        *self = recorded.clone();
        self.settings = settings;
    }

    /// Counts `batch`, the results of `turn`'s calls, and tells the model of a repeat in the
    /// result of the call that reached the limit (the batch is changed before it is recorded).
    pub fn observe(&mut self, turn: &Message, batch: &mut ToolBatchFinished) -> Trips {
        let mut trips = Trips::default();
        for result in &mut batch.results {
            if result.no_op {
                self.no_op_streak += 1;
                self.no_op_tools.push(result.tool.clone());
                if self.no_op_tools.len() > NO_OP_STREAK as usize {
                    self.no_op_tools.remove(0);
                }
                if self.no_op_streak >= NO_OP_STREAK {
                    trips.no_op_streak = Some(self.no_op_tools.clone());
                }
            } else {
                self.no_op_streak = 0;
                self.no_op_tools.clear();
            }
            let arguments = turn
                .tool_calls()
                .find(|c| c.id == result.result.call_id)
                .map(|c| match &c.arguments {
                    ToolArguments::Valid { value } => value.clone(),
                    ToolArguments::Invalid { raw, .. } => Value::String(raw.clone()),
                })
                .unwrap_or(Value::Null);
            let call = (result.tool.clone(), arguments);
            if self.last_call.as_ref() == Some(&call) {
                self.repeats += 1;
            } else {
                self.repeats = 1;
                self.last_call = Some(call);
            }
            let limit = self.settings.repeat_limit;
            if self.settings.mode != WatchdogMode::Off
                && limit > 0
                && self.repeats >= limit
                && self.repeats.is_multiple_of(limit)
            {
                result.result.content.push(ContentBlock::Text {
                    text: format!(
                        "\n[watchdog: this is call {} in a row to {} with the same arguments; \
                         its result will not change. Do something else, or end your turn if the \
                         task is done.]",
                        self.repeats, result.tool
                    ),
                });
                trips.repeated = Some((result.tool.clone(), self.repeats));
            }
        }
        trips
    }

    /// What the loop does about `trips`; counts a cut run.
    pub fn act(&mut self, trips: &Trips) -> Action {
        let mode = self.settings.mode;
        let limit = self.settings.repeat_limit;
        let mut why = Vec::new();
        let mut cut = false;
        if let Some(tools) = &trips.no_op_streak {
            why.push(format!(
                "{} results in a row changed nothing ({})",
                self.no_op_streak,
                tools.join(", ")
            ));
            cut = true;
        }
        if let Some((tool, n)) = &trips.repeated {
            why.push(format!(
                "{n} identical calls in a row to {tool} (reported to the model)"
            ));
            cut |= *n >= limit.saturating_mul(2);
        }
        if why.is_empty() || mode == WatchdogMode::Off {
            return Action::Nothing;
        }
        let why = why.join("; ");
        if mode == WatchdogMode::Warn || !cut {
            return Action::Warn(format!("watchdog: {why}"));
        }
        self.cut_runs += 1;
        self.no_op_streak = 0;
        self.no_op_tools.clear();
        let halted = self.cut_runs >= CUT_STREAK;
        let reason = if halted {
            format!(
                "watchdog: {why}; the run was cut, the {}th in a row: the agent is halted until \
                 the user gives new input",
                self.cut_runs
            )
        } else {
            format!("watchdog: {why}; the run was cut (`--watchdog warn` only reports)")
        };
        Action::Cut { reason, halted }
    }

    /// A run ended without a cut: cut runs are no longer in a row.
    pub fn run_ended_uncut(&mut self) {
        self.cut_runs = 0;
    }

    /// Whether the agent is halted for the operator.
    pub fn halted(&self) -> bool {
        self.cut_runs >= CUT_STREAK
    }

    /// The user spoke: a halted agent may go on.
    pub fn operator_input(&mut self) {
        self.cut_runs = 0;
    }
}

#[cfg(test)]
#[path = "watchdog_tests.rs"]
mod tests;
