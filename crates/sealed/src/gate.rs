//! The sealed posture's policy layer, in front of the user's own gate.
//!
//! The user's rules still hold (a deny is a deny), and on top of them: write_file and edit_file
//! ask every time (`sealed.write:`), run asks unless every stage is a vouched command and its
//! input is not private (`sealed.run:`, `sealed.stdin:`), read_output asks (`sealed.show:`).
//! A vouch for a command's exact argv also answers the user's gate's ask about it (its default
//! for commands is to ask); a deny rule still refuses it.
//! None of these asks can be granted for the session. A call that names a file by reference
//! carries `sealed.ref:N`, and then no message the planner gets names the file.

use std::sync::Arc;

use tackle_runtime::{GateHook, GateRequest, GateVerdict, SessionContext};
use tackle_tool::{Action, PermissionResource, ReadScope};

use crate::reference::RefId;
use crate::vouches::Vouches;

/// The prefix of a command's key in the user's rules: they may deny a stage, and never make
/// one run unasked (only a vouch does).
const COMMAND_KEY: &str = "tool.bash.cmd:";

/// The prefix of the keys this layer decides.
pub const PREFIX: &str = "sealed.";

/// The key that marks a call naming a file by reference.
pub fn reference_key(id: RefId) -> PermissionResource {
    PermissionResource {
        action: Action::Custom("sealed.ref"),
        target: id.to_string(),
    }
}

/// The sealed gate over the user's.
pub struct SealedGate {
    inner: Arc<dyn GateHook>,
    vouches: Vouches,
}

impl SealedGate {
    pub fn new(inner: Arc<dyn GateHook>, vouches: Vouches) -> Self {
        Self { inner, vouches }
    }

    /// What this layer asks about, beyond the user's gate.
    fn sealed_asks(&self, keys: &[String]) -> Option<(Vec<String>, String)> {
        let mut asked = Vec::new();
        let mut why = Vec::new();
        let writes: Vec<&String> = keys
            .iter()
            .filter(|k| k.starts_with("sealed.write:"))
            .collect();
        if !writes.is_empty() {
            asked.extend(writes.into_iter().cloned());
            why.push("the sealed posture asks before every write and edit".to_owned());
        }
        let runs: Vec<&String> = keys
            .iter()
            .filter(|k| k.starts_with("sealed.run:"))
            .collect();
        let private_input: Vec<&String> = keys
            .iter()
            .filter(|k| k.starts_with("sealed.stdin:"))
            .collect();
        if !runs.is_empty() {
            let unvouched = runs.iter().any(|k| {
                let argv: Vec<String> =
                    serde_json::from_str(&k["sealed.run:".len()..]).unwrap_or_default();
                !self.vouches.command_vouched(&argv)
            });
            if unvouched {
                asked.extend(runs.iter().map(|k| (*k).clone()));
                why.push(
                    "run asks before a command nobody vouched for (vouch with `tackle trust --sealed-command \"PROGRAM ARGS\"`)"
                        .to_owned(),
                );
            } else if !private_input.is_empty() {
                asked.extend(private_input.iter().map(|k| (*k).clone()));
                why.push("its standard input is private content".to_owned());
            }
        }
        let shows: Vec<&String> = keys
            .iter()
            .filter(|k| k.starts_with("sealed.show:"))
            .collect();
        if !shows.is_empty() {
            asked.extend(shows.into_iter().cloned());
            why.push(
                "read_output shows you the output first; approve to pass it to the planner as text"
                    .to_owned(),
            );
        }
        (!asked.is_empty()).then(|| (asked, why.join("; ")))
    }
}

impl GateHook for SealedGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        let by_reference = request.keys.iter().any(|k| k.starts_with("sealed.ref:"));
        let inner_keys: Vec<String> = request
            .keys
            .iter()
            .filter(|k| !k.starts_with(PREFIX))
            .cloned()
            .collect();
        let inner_resources: Vec<PermissionResource> = request
            .resources
            .iter()
            .filter(|r| !r.action.as_str().starts_with(PREFIX))
            .cloned()
            .collect();
        let inner_request = GateRequest {
            session: request.session,
            tool: request.tool,
            keys: inner_keys,
            resources: &inner_resources,
            read_only: request.read_only,
            artifacts: request.artifacts,
        };
        let inner = match self.inner.check(&inner_request) {
            // Whether a command runs unasked is this layer's decision (vouched or not); the
            // user's command rules still deny.
            GateVerdict::Ask { keys, message } => {
                let keys: Vec<String> = keys
                    .into_iter()
                    .filter(|k| !k.starts_with(COMMAND_KEY))
                    .collect();
                if keys.is_empty() {
                    GateVerdict::Allow
                } else {
                    GateVerdict::Ask { keys, message }
                }
            }
            other => other,
        };
        let sealed = self.sealed_asks(&request.keys);
        match (inner, sealed) {
            (GateVerdict::Deny { key, rule, message }, _) => {
                if by_reference {
                    GateVerdict::Deny {
                        key: "the file behind the reference".to_owned(),
                        rule: "a rule of the user's".to_owned(),
                        message: "a rule of the user's refuses this call on the file behind the reference".to_owned(),
                    }
                } else {
                    GateVerdict::Deny { key, rule, message }
                }
            }
            (GateVerdict::Allow, None) => GateVerdict::Allow,
            (GateVerdict::Allow, Some((keys, message))) => GateVerdict::Ask { keys, message },
            (GateVerdict::Ask { keys, message }, sealed) => {
                let mut keys = keys;
                let mut message = if by_reference {
                    "a rule of the user's asks about the file behind the reference".to_owned()
                } else {
                    message
                };
                if let Some((more, why)) = sealed {
                    // This layer asks every time anyway: its reason is the one that holds
                    // (an allow rule the user's message might suggest would not stop it).
                    keys.extend(more);
                    message = why;
                }
                GateVerdict::Ask { keys, message }
            }
        }
    }

    fn grant_session(&self, session: &SessionContext, keys: &[String]) {
        let inner: Vec<String> = keys
            .iter()
            .filter(|k| !k.starts_with(PREFIX))
            .cloned()
            .collect();
        self.inner.grant_session(session, &inner);
    }

    fn session_grantable(&self, key: &str) -> bool {
        !key.starts_with(PREFIX) && self.inner.session_grantable(key)
    }

    fn read_scope(&self, session: &SessionContext) -> Arc<dyn ReadScope> {
        self.inner.read_scope(session)
    }
}
