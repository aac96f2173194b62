//! Live stdin of interactive calls, keyed by (session, call id).
//!
//! A running interactive call registers here; a front end (the terminal, later the MCP server
//! and the daemon's `run.tool_stdin`) sends bytes or EOF to it by the same key. The entry goes
//! away when the call ends, so input for a finished call is refused rather than lost silently.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::mpsc;

/// One piece of input for a running call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StdinInput {
    Bytes(Vec<u8>),
    /// Close the child's stdin.
    Eof,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StdinError {
    #[error(
        "no interactive call `{call}` is running in session `{session}`; stdin can be sent only while a call started with interactive: true runs"
    )]
    NotRunning { session: String, call: String },
}

type Key = (String, String);

/// The registry of live stdin handles. Cheap to clone; clones share entries.
#[derive(Clone, Debug, Default)]
pub struct StdinRegistry {
    live: Arc<Mutex<HashMap<Key, mpsc::UnboundedSender<StdinInput>>>>,
}

/// Held by the running call; dropping it unregisters the call.
#[derive(Debug)]
pub struct StdinRegistration {
    registry: StdinRegistry,
    key: Key,
}

impl Drop for StdinRegistration {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.key);
    }
}

impl StdinRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Key, mpsc::UnboundedSender<StdinInput>>> {
        // The map is always consistent between statements; a panic elsewhere cannot corrupt it.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Register a running call; the receiver is handed to the runner.
    pub fn register(
        &self,
        session: &str,
        call: &str,
    ) -> (StdinRegistration, mpsc::UnboundedReceiver<StdinInput>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let key = (session.to_owned(), call.to_owned());
        self.lock().insert(key.clone(), tx);
        (
            StdinRegistration {
                registry: self.clone(),
                key,
            },
            rx,
        )
    }

    /// Send input to a running interactive call.
    pub fn send(&self, session: &str, call: &str, input: StdinInput) -> Result<(), StdinError> {
        let key = (session.to_owned(), call.to_owned());
        let not_running = || StdinError::NotRunning {
            session: session.to_owned(),
            call: call.to_owned(),
        };
        let tx = self.lock().get(&key).cloned().ok_or_else(not_running)?;
        tx.send(input).map_err(|_| not_running())
    }

    /// Whether a call is registered (running and interactive).
    pub fn is_live(&self, session: &str, call: &str) -> bool {
        self.lock()
            .contains_key(&(session.to_owned(), call.to_owned()))
    }
}
