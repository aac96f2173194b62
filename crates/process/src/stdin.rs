//! Live stdin of interactive calls, keyed by (session, call id).
//!
//! A running call registers here; a front end (the terminal, the MCP server's `bash_stdin`
//! tool, the daemon's `run.tool_stdin`) sends bytes or EOF to it by the same key. Every state
//! a sender can meet has its own error: no such call, the call finished, its stdin was already
//! closed, or it was started without `interactive: true`.
//!
//! Key decision: the key is (session, call id), never the call id alone, so one session cannot
//! feed another's call even if it learns the id. A finished call is remembered (the most recent
//! [`FINISHED_KEPT`] per registry) so that input sent just after the end is refused as "finished"
//! rather than "unknown"; older ones become unknown, which refuses them just the same.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::mpsc;

/// How many finished calls are remembered for their error message.
pub const FINISHED_KEPT: usize = 1024;

/// One piece of input for a running call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StdinInput {
    Bytes(Vec<u8>),
    /// Close the child's stdin.
    Eof,
}

/// Why input cannot be sent to a call.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StdinError {
    #[error(
        "no call `{call}` is known in this session; pass the call id of a running bash call \
         started with interactive: true (it is reported in the call's progress)"
    )]
    UnknownCall {
        /// The session asked in; kept for the caller's records, not shown.
        session: String,
        call: String,
    },
    #[error(
        "call `{call}` has finished; its stdin is gone. Start a new bash call with \
         interactive: true to send input"
    )]
    Finished { call: String },
    #[error(
        "the stdin of call `{call}` is already closed (EOF was sent); no more input can reach it"
    )]
    Closed { call: String },
    #[error(
        "call `{call}` was not started with interactive: true, so its stdin is empty and cannot \
         be written; run the command again with interactive: true"
    )]
    NotInteractive { call: String },
}

impl StdinError {
    /// A stable name of the state, for error codes and metadata.
    pub fn state(&self) -> &'static str {
        match self {
            Self::UnknownCall { .. } => "unknown_call",
            Self::Finished { .. } => "call_finished",
            Self::Closed { .. } => "stdin_closed",
            Self::NotInteractive { .. } => "not_interactive",
        }
    }
}

/// What a running interactive call registered with: who may feed it is decided by these.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallFacts {
    /// The permission keys the call was admitted under (for bash: its `tool.bash.cmd:` keys),
    /// so that input to it can be gated as the call was.
    pub keys: Vec<String>,
}

type Key = (String, String);

#[derive(Debug)]
enum Entry {
    Open {
        tx: mpsc::UnboundedSender<StdinInput>,
        facts: CallFacts,
    },
    Closed,
    NotInteractive,
}

#[derive(Debug, Default)]
struct Entries {
    running: HashMap<Key, Entry>,
    /// Finished calls, oldest first, at most [`FINISHED_KEPT`].
    finished: VecDeque<Key>,
}

impl Entries {
    fn state(&self, key: &Key) -> Result<&Entry, StdinError> {
        if let Some(entry) = self.running.get(key) {
            return Ok(entry);
        }
        if self.finished.contains(key) {
            return Err(StdinError::Finished {
                call: key.1.clone(),
            });
        }
        Err(StdinError::UnknownCall {
            session: key.0.clone(),
            call: key.1.clone(),
        })
    }
}

/// The registry of stdin handles. Cheap to clone; clones share entries.
#[derive(Clone, Debug, Default)]
pub struct StdinRegistry {
    entries: Arc<Mutex<Entries>>,
}

/// Held by the running call; dropping it marks the call finished.
#[derive(Debug)]
pub struct StdinRegistration {
    registry: StdinRegistry,
    key: Key,
}

impl Drop for StdinRegistration {
    fn drop(&mut self) {
        let mut entries = self.registry.lock();
        entries.running.remove(&self.key);
        if entries.finished.len() >= FINISHED_KEPT {
            entries.finished.pop_front();
        }
        entries.finished.push_back(self.key.clone());
    }
}

fn key(session: &str, call: &str) -> Key {
    (session.to_owned(), call.to_owned())
}

impl StdinRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        // The maps are consistent between statements; a panic elsewhere cannot corrupt them.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self, session: &str, call: &str, entry: Entry) -> StdinRegistration {
        let key = key(session, call);
        let mut entries = self.lock();
        entries.finished.retain(|k| k != &key);
        entries.running.insert(key.clone(), entry);
        StdinRegistration {
            registry: self.clone(),
            key,
        }
    }

    /// Register a running interactive call with no gate facts; the receiver goes to the runner.
    pub fn register(
        &self,
        session: &str,
        call: &str,
    ) -> (StdinRegistration, mpsc::UnboundedReceiver<StdinInput>) {
        self.register_interactive(session, call, CallFacts::default())
    }

    /// Register a running interactive call with the facts input to it is gated on.
    pub fn register_interactive(
        &self,
        session: &str,
        call: &str,
        facts: CallFacts,
    ) -> (StdinRegistration, mpsc::UnboundedReceiver<StdinInput>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (self.insert(session, call, Entry::Open { tx, facts }), rx)
    }

    /// Register a running call whose stdin is empty, so input to it is refused as such.
    pub fn register_plain(&self, session: &str, call: &str) -> StdinRegistration {
        self.insert(session, call, Entry::NotInteractive)
    }

    /// The facts of a call that can take input now, or the state that keeps it from it.
    pub fn open_call(&self, session: &str, call: &str) -> Result<CallFacts, StdinError> {
        let entries = self.lock();
        match entries.state(&key(session, call))? {
            Entry::Open { facts, .. } => Ok(facts.clone()),
            Entry::Closed => Err(StdinError::Closed {
                call: call.to_owned(),
            }),
            Entry::NotInteractive => Err(StdinError::NotInteractive {
                call: call.to_owned(),
            }),
        }
    }

    /// Send input to a running interactive call. After [`StdinInput::Eof`] the call's stdin
    /// is closed and further input is refused as [`StdinError::Closed`].
    pub fn send(&self, session: &str, call: &str, input: StdinInput) -> Result<(), StdinError> {
        let key = key(session, call);
        let mut entries = self.lock();
        let tx = match entries.state(&key)? {
            Entry::Open { tx, .. } => tx.clone(),
            Entry::Closed => {
                return Err(StdinError::Closed {
                    call: call.to_owned(),
                });
            }
            Entry::NotInteractive => {
                return Err(StdinError::NotInteractive {
                    call: call.to_owned(),
                });
            }
        };
        let eof = input == StdinInput::Eof;
        // The runner stops reading once the child's stdin is gone (the child closed it or
        // exited): from then on nothing can reach the child, so the call counts as closed.
        let sent = tx.send(input).is_ok();
        if eof || !sent {
            entries.running.insert(key, Entry::Closed);
        }
        if sent {
            Ok(())
        } else {
            Err(StdinError::Closed {
                call: call.to_owned(),
            })
        }
    }

    /// Whether a call is registered and its stdin is open.
    pub fn is_live(&self, session: &str, call: &str) -> bool {
        self.open_call(session, call).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per state a sender can meet: how the call was set up, what is sent, and the
    /// state named in the refusal (`None`: accepted).
    #[test]
    fn every_state_has_its_answer() {
        #[derive(Clone, Copy, Debug)]
        enum Setup {
            Nothing,
            Interactive,
            InteractiveEofSent,
            InteractiveFinished,
            Plain,
            PlainFinished,
            OtherSession,
            RunnerGone,
        }
        let table: &[(Setup, StdinInput, Option<&str>)] = &[
            (Setup::Nothing, StdinInput::Eof, Some("unknown_call")),
            (Setup::Interactive, StdinInput::Bytes(b"x".to_vec()), None),
            (Setup::Interactive, StdinInput::Eof, None),
            (
                Setup::InteractiveEofSent,
                StdinInput::Bytes(b"x".to_vec()),
                Some("stdin_closed"),
            ),
            (
                Setup::InteractiveEofSent,
                StdinInput::Eof,
                Some("stdin_closed"),
            ),
            (
                Setup::InteractiveFinished,
                StdinInput::Bytes(b"x".to_vec()),
                Some("call_finished"),
            ),
            (
                Setup::Plain,
                StdinInput::Bytes(b"x".to_vec()),
                Some("not_interactive"),
            ),
            (Setup::Plain, StdinInput::Eof, Some("not_interactive")),
            (Setup::PlainFinished, StdinInput::Eof, Some("call_finished")),
            (
                Setup::OtherSession,
                StdinInput::Bytes(b"x".to_vec()),
                Some("unknown_call"),
            ),
            (
                Setup::RunnerGone,
                StdinInput::Bytes(b"x".to_vec()),
                Some("stdin_closed"),
            ),
        ];
        for (setup, input, want) in table {
            let registry = StdinRegistry::new();
            let mut keep = Vec::new();
            let mut receivers = Vec::new();
            match setup {
                Setup::Nothing => {}
                Setup::Interactive => {
                    let (reg, rx) = registry.register("s", "c");
                    keep.push(reg);
                    receivers.push(rx);
                }
                Setup::InteractiveEofSent => {
                    let (reg, rx) = registry.register("s", "c");
                    keep.push(reg);
                    receivers.push(rx);
                    registry.send("s", "c", StdinInput::Eof).unwrap();
                }
                Setup::InteractiveFinished => drop(registry.register("s", "c")),
                Setup::Plain => keep.push(registry.register_plain("s", "c")),
                Setup::PlainFinished => drop(registry.register_plain("s", "c")),
                Setup::OtherSession => {
                    let (reg, rx) = registry.register("other", "c");
                    keep.push(reg);
                    receivers.push(rx);
                }
                Setup::RunnerGone => keep.push(registry.register("s", "c").0),
            }
            let sent = registry.send("s", "c", input.clone());
            assert_eq!(
                sent.as_ref().err().map(StdinError::state),
                *want,
                "{setup:?} then {input:?}: {sent:?}"
            );
            if let Some(state) = want {
                assert_eq!(
                    registry.open_call("s", "c").err().map(|e| e.state()),
                    Some(*state),
                    "{setup:?}: open_call agrees with send"
                );
            }
        }
    }

    #[test]
    fn finished_calls_are_remembered_within_a_bound() {
        let registry = StdinRegistry::new();
        for i in 0..=FINISHED_KEPT {
            drop(registry.register_plain("s", &i.to_string()));
        }
        assert_eq!(
            registry.open_call("s", "0").unwrap_err().state(),
            "unknown_call"
        );
        assert_eq!(
            registry
                .open_call("s", &FINISHED_KEPT.to_string())
                .unwrap_err()
                .state(),
            "call_finished"
        );
    }

    #[test]
    fn facts_come_back_to_the_sender() {
        let registry = StdinRegistry::new();
        let facts = CallFacts {
            keys: vec!["tool.bash.cmd:cat".to_owned()],
        };
        let (_reg, _rx) = registry.register_interactive("s", "c", facts.clone());
        assert_eq!(registry.open_call("s", "c"), Ok(facts));
    }
}
