//! The session modes an editor offers (ask, accept-edits, plan) as one gate whose mode can
//! change between calls: one gate per mode, built from the configuration once, and the
//! session's choice among them. Grants are the session's own (`SessionContext`), so an
//! "allow for the session" outlives a change of mode.

use std::sync::{Arc, OnceLock, RwLock};

use tackle_config::Config;
use tackle_gate::Mode;
use tackle_runtime::{GateHook, GateRequest, GateVerdict, SessionContext};
use tackle_tool::ReadScope;

/// The modes an editor may switch to. `yolo` is offered only when the configuration already
/// runs in it: an editor's menu is no place to widen what runs unasked.
pub fn offered(configured: Mode) -> Vec<Mode> {
    let mut modes = vec![Mode::Ask, Mode::AcceptEdits, Mode::Plan];
    if configured == Mode::Yolo {
        modes.push(Mode::Yolo);
    }
    modes
}

/// What each mode is, for the editor's menu.
pub fn describe(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "Asks before every write, command and fetch the rules do not allow",
        Mode::AcceptEdits => "Writes inside the project go ahead; commands and fetches still ask",
        Mode::Plan => "Read-only: every write and every mutating command is refused",
        Mode::Yolo => "Every ask is allowed; deny rules still hold",
    }
}

/// Builds the configuration's gate in a mode.
type Maker = Box<dyn Fn(Mode) -> Arc<dyn GateHook> + Send + Sync>;

/// The gate of one editor session: each offered mode's gate built when first used.
pub struct ModeGate {
    make: Maker,
    gates: Vec<(Mode, OnceLock<Arc<dyn GateHook>>)>,
    current: RwLock<Mode>,
}

impl ModeGate {
    /// The configuration's gate in each offered mode, starting in the configured one.
    pub fn new(config: &Config) -> ModeGate {
        let configured = config.policy.mode();
        ModeGate {
            make: Box::new(tackle_config::host::gate_maker(config)),
            gates: offered(configured)
                .into_iter()
                .map(|mode| (mode, OnceLock::new()))
                .collect(),
            current: RwLock::new(configured),
        }
    }

    pub fn current(&self) -> Mode {
        *self.current.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn modes(&self) -> Vec<Mode> {
        self.gates.iter().map(|(m, _)| *m).collect()
    }

    /// Switches to `name`; an error naming the modes there are when it is not one of them.
    pub fn set(&self, name: &str) -> Result<Mode, String> {
        let mode = self
            .gates
            .iter()
            .map(|(m, _)| *m)
            .find(|m| m.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self.gates.iter().map(|(m, _)| m.as_str()).collect();
                format!(
                    "`{name}` is not a mode of this session; use one of {}",
                    names.join(", ")
                )
            })?;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = mode;
        Ok(mode)
    }

    fn gate(&self) -> &Arc<dyn GateHook> {
        let mode = self.current();
        // `current` only ever holds a mode of `gates`, and `gates` is never empty.
        let (mode, slot) = self
            .gates
            .iter()
            .find(|(m, _)| *m == mode)
            .unwrap_or(&self.gates[0]);
        slot.get_or_init(|| (self.make)(*mode))
    }
}

impl GateHook for ModeGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        self.gate().check(request)
    }

    fn grant_session(&self, session: &SessionContext, keys: &[String]) {
        self.gate().grant_session(session, keys);
    }

    fn session_grantable(&self, key: &str) -> bool {
        self.gate().session_grantable(key)
    }

    fn read_scope(&self, session: &SessionContext) -> Arc<dyn ReadScope> {
        self.gate().read_scope(session)
    }
}
