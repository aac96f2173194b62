//! The agentic wrappers (seed 003, "Agentic wrappers (subtask-routed tools)"):
//! `agentic_read_file`, `agentic_grep`, `agentic_fetch_url` and `agentic_research`. Each takes
//! the underlying tool's arguments and a `question`, runs the underlying calls in a child
//! subtask, has the small model (`[model] small`, `--agentic-small-model`) read the bulk and
//! answer, and gives the parent the answer with the references of the raw output: the bulk
//! lands in the small model's context, never the parent's, and nothing is lost.
//!
//! The life of a wrapper call:
//! 1. [`tools`]: the wrapper is gated as `tool.agentic_<x>` like any tool; it keys nothing else.
//! 2. [`subtasks`]: a child session is opened under the caller's (its policy, nothing wider;
//!    its catalog cut to the underlying tool), and the work runs on a task of its own.
//! 3. [`gather`]: the underlying call runs through the runtime in that session (so the gate,
//!    the approver and the log see it as a plain call); read_file pages on; a Bounded tool's
//!    whole output is read from the artifact the runtime kept. A refusal ends it here, as the
//!    plain call's refusal.
//! 4. [`digest`] over [`parts`] and [`exchange`]: the small model answers from the bulk in one
//!    request, or from notes on each part when the bulk passes its window. [`research`]
//!    instead runs the agent loop itself on the small model with the read-only tools.
//! 5. [`reads`]: what the subtask's calls read, from its log, becomes the wrapper's (the
//!    label joins theirs; their `read:` keys are behind its output).
//! 6. [`ledger`]: its tokens and cost are owed to the caller's run, which settles them after
//!    the batch (`usage` events, `--max-tokens`, `--max-cost`).
//! 7. [`answer`]: the answer and a line of references, or an error that still names them.
//!
//! Key decision: the wrapper runs the underlying call itself rather than asking the small
//! model to make it. The call is exactly the one the parent's model asked for, its refusal is
//! the gate's and not a small model's guess, and the small model only reads. Rejected: a child
//! agent told to call the tool, which a small model may call with other arguments or not at
//! all.
//!
//! Offered only where the front end connected a small model (`Subtasks` holds it), and each
//! only where its underlying tool is in the catalog; the names are built-ins of the standard
//! catalog, so a description sentence naming an absent wrapper drops.

pub mod answer;
pub mod args;
pub mod digest;
pub mod exchange;
pub mod gather;
pub mod ledger;
pub mod parts;
pub mod prompt;
pub mod reads;
pub mod research;
pub mod subtasks;
pub mod tools;

pub use exchange::SmallModel;
pub use ledger::{Ledger, SubtaskSpend};
pub use subtasks::Subtasks;
pub use tools::{AgenticFetchUrl, AgenticGrep, AgenticReadFile, AgenticResearch};

/// The wrappers' names: built-ins of the standard catalog (`tackle_tools::BUILTIN_TOOL_NAMES`),
/// so `--disable-tools` knows them and a sentence naming an absent one drops.
pub const NAMES: [&str; 4] = [
    "agentic_read_file",
    "agentic_grep",
    "agentic_fetch_url",
    "agentic_research",
];

#[cfg(test)]
mod tests {
    use super::tools::{FetchUrlWrapper, GrepWrapper, ReadFileWrapper, ResearchWrapper, Wrapper};
    use super::*;

    #[test]
    fn the_wrappers_are_built_ins_of_the_standard_catalog() {
        let names = [
            ReadFileWrapper::NAME,
            GrepWrapper::NAME,
            FetchUrlWrapper::NAME,
            ResearchWrapper::NAME,
        ];
        assert_eq!(names, NAMES);
        for name in NAMES {
            assert!(tackle_tools::BUILTIN_TOOL_NAMES.contains(&name), "{name}");
        }
    }
}
