//! The gate hook backed by a [`tackle_gate::Policy`], answering with the session's own
//! approval grants.
//!
//! An artifact read is asked about twice over: its own key (`read:artifact://<digest>`, allowed
//! by possession unless a rule says otherwise) and the `read:` keys of what produced it
//! ([`ArtifactRead`]), evaluated as today's policy sees them. A deny on a source denies the
//! read, naming the source; an ask asks about the source key; an artifact in the store no
//! record vouches for is denied, since the record that would name its source may be the one
//! lost. Rejected: denying every artifact read while some log is damaged, which would stop all
//! paging of retained output for a fault in one unrelated session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tackle_gate::{Decision, Effect, Pattern, Policy, Request, Rule, RuleSource};
use tackle_tool::ReadScope;

use crate::gate::{ArtifactRead, GateHook, GateRequest, GateVerdict, ProducedBy};
use crate::session_context::{Narrowing, SessionContext};

/// Evaluates every call against a compiled policy and the grants of the call's session; "for
/// this session" approvals are kept by that session ([`SessionContext::grant`]), as exact keys:
/// a server's clients each have their own, and the gate holds no per-session state.
pub struct PolicyGate {
    policy: Arc<Policy>,
    /// The policy plus a session's added rules, compiled once per distinct list.
    narrowed: Mutex<HashMap<Vec<Narrowing>, Arc<Policy>>>,
}

impl PolicyGate {
    pub fn new(policy: Policy) -> Self {
        Self {
            policy: Arc::new(policy),
            narrowed: Mutex::new(HashMap::new()),
        }
    }

    /// The policy `session` is answered by: the gate's, with the session's added deny and ask
    /// rules after its own. Rules that do not compile (a session opened with a pattern the
    /// gate refuses) leave a policy that denies every key, so a broken narrowing never
    /// becomes a wider one.
    fn policy_for(&self, session: &SessionContext) -> Arc<Policy> {
        let narrowing = session.narrowing();
        if narrowing.is_empty() {
            return self.policy.clone();
        }
        let mut cache = self.narrowed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(policy) = cache.get(narrowing) {
            return policy.clone();
        }
        let policy = Arc::new(narrowed(&self.policy, narrowing));
        cache.insert(narrowing.to_vec(), policy.clone());
        policy
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

impl GateHook for PolicyGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        let req = Request {
            tool: request.tool,
            keys: &request.keys,
            mutating: !request.read_only,
        };
        let policy = self.policy_for(request.session);
        let decision = request
            .session
            .with_grants(|granted| policy.evaluate(&req, granted));
        let mut asks = match &decision {
            Decision::Allow { .. } => Vec::new(),
            Decision::Ask { keys } => vec![(
                keys.iter().map(|k| k.key.clone()).collect(),
                decision.message(),
            )],
            Decision::Deny { verdict } => {
                return GateVerdict::Deny {
                    key: verdict.key.clone(),
                    rule: because(&verdict.because),
                    message: decision.message(),
                };
            }
        };
        for read in request.artifacts {
            match self.sources(&policy, request, read) {
                GateVerdict::Allow => {}
                GateVerdict::Ask { keys, message } => asks.push((keys, message)),
                deny @ GateVerdict::Deny { .. } => return deny,
            }
        }
        if asks.is_empty() {
            return GateVerdict::Allow;
        }
        let (keys, messages): (Vec<Vec<String>>, Vec<String>) = asks.into_iter().unzip();
        let mut keys: Vec<String> = keys.into_iter().flatten().collect();
        let mut seen = std::collections::HashSet::new();
        keys.retain(|k| seen.insert(k.clone()));
        GateVerdict::Ask {
            keys,
            message: messages.join("; "),
        }
    }

    fn session_grantable(&self, key: &str) -> bool {
        !self.policy.is_protected(key)
    }

    fn read_scope(&self, session: &SessionContext) -> Arc<dyn ReadScope> {
        Arc::new(WalkedReads(self.policy_for(session)))
    }

    fn grant_session(&self, session: &SessionContext, keys: &[String]) {
        // A protected path asks every time: it never becomes a standing grant.
        for k in keys.iter().filter(|k| !self.policy.is_protected(k)) {
            session.grant(k);
        }
    }
}

/// `base` with `narrowing` added after its rules; a policy denying everything if they do not
/// compile.
fn narrowed(base: &Policy, narrowing: &[Narrowing]) -> Policy {
    let mut rules = base.rules().to_vec();
    let source = RuleSource::Narrowing {
        by: "the subagent's type".to_owned(),
    };
    for rule in narrowing {
        let effect = match rule {
            Narrowing::Deny(_) => Effect::Deny,
            Narrowing::Ask(_) => Effect::Ask,
        };
        match Pattern::parse(rule.pattern()) {
            Ok(pattern) => rules.push(Rule::new(effect, pattern, source.clone())),
            Err(_) => return deny_all(base),
        }
    }
    Policy::new(
        rules,
        base.mode(),
        base.path_scope().clone(),
        base.url_scope().clone(),
    )
    .unwrap_or_else(|_| deny_all(base))
}

/// `base` with one more rule, `deny *`.
fn deny_all(base: &Policy) -> Policy {
    let mut rules = base.rules().to_vec();
    if let Ok(all) = Pattern::parse("*") {
        rules.push(Rule::new(
            Effect::Deny,
            all,
            RuleSource::Flag {
                flag: "a subagent rule that did not compile".to_owned(),
            },
        ));
    }
    Policy::new(
        rules,
        base.mode(),
        base.path_scope().clone(),
        base.url_scope().clone(),
    )
    .unwrap_or_else(|_| base.clone())
}

impl PolicyGate {
    /// Today's policy on what produced an artifact the call reads.
    fn sources(
        &self,
        policy: &Policy,
        request: &GateRequest<'_>,
        read: &ArtifactRead,
    ) -> GateVerdict {
        let artifact = format!("artifact sha256:{}", read.digest);
        let keys = match &read.produced_by {
            ProducedBy::Reads(keys) => keys,
            ProducedBy::Unknown { damaged } => {
                let lost = if *damaged {
                    "a session log could not be read whole, and"
                } else {
                    "the store's logs do not name it (a log was removed, or the file was put \
                     there by hand), and"
                };
                return GateVerdict::Deny {
                    key: read.key.clone(),
                    rule: "unknown producer".to_owned(),
                    message: format!(
                        "{} is denied: no record says what produced {artifact}; {lost} a deny \
                         on what it copies cannot be honoured without it; see it yourself \
                         with `tackle artifacts cat artifact://{}`",
                        read.key, read.digest
                    ),
                };
            }
        };
        if keys.is_empty() {
            return GateVerdict::Allow;
        }
        let req = Request {
            tool: request.tool,
            keys,
            mutating: false,
        };
        let decision = request
            .session
            .with_grants(|granted| policy.evaluate(&req, granted));
        match &decision {
            Decision::Allow { .. } => GateVerdict::Allow,
            Decision::Ask { keys } => GateVerdict::Ask {
                keys: keys.iter().map(|k| k.key.clone()).collect(),
                message: format!(
                    "{artifact} was produced by a read of {}: {}",
                    sources_named(keys.iter().map(|k| k.key.as_str())),
                    decision.message()
                ),
            },
            Decision::Deny { verdict } => GateVerdict::Deny {
                key: verdict.key.clone(),
                rule: because(&verdict.because),
                message: format!(
                    "{artifact} was produced by a read of {}, which is now denied: {}",
                    sources_named(std::iter::once(verdict.key.as_str())),
                    decision.message()
                ),
            },
        }
    }
}

/// `read:` keys as the things read: `.env and src/a.rs`.
fn sources_named<'a>(keys: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = keys.map(|k| k.strip_prefix("read:").unwrap_or(k)).collect();
    names.join(" and ")
}

/// Files a walking tool finds are read only if their own `read:<path>` key is allowed outright
/// ([`Policy::admits_walked_read`]).
struct WalkedReads(Arc<Policy>);

impl ReadScope for WalkedReads {
    fn admits(&self, path: &str) -> bool {
        self.0.admits_walked_read(path)
    }
}

/// A short, stable description of what decided a key, for the structured `tool_denied` reason.
fn because(b: &tackle_gate::Because) -> String {
    use tackle_gate::Because::*;
    match b {
        Rule { pattern, source } => format!("rule \"{pattern}\" ({source})"),
        Default { action } => format!("default for {action}"),
        PathScope { detail } => format!("path scope: {detail}"),
        UrlScope => "url scope".to_owned(),
        Mode(m) => format!("mode {m}"),
        Grant => "session grant".to_owned(),
        Protected { .. } => "protected path".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_gate::{Mode, PathScope, UrlScope};
    use tackle_protocol::SessionId;

    use crate::session_context::SessionOptions;

    fn ask(gate: &PolicyGate, session: &SessionContext) -> bool {
        let keys = vec!["tool.write_file".to_owned(), "write:src/a.rs".to_owned()];
        let request = GateRequest {
            session,
            tool: "write_file",
            keys,
            resources: &[],
            read_only: false,
            artifacts: &[],
        };
        matches!(gate.check(&request), GateVerdict::Ask { .. })
    }

    /// Issue 13 §9: an approval "for this session" given to one client of a server is not a
    /// grant for another.
    #[test]
    fn a_session_grant_applies_to_its_own_session_only() {
        let policy = Policy::new(
            Vec::new(),
            Mode::Ask,
            PathScope::default(),
            UrlScope::default(),
        )
        .unwrap();
        let gate = PolicyGate::new(policy);
        let context =
            |id: &str| SessionContext::new(SessionId(id.into()), SessionOptions::default());
        let (a, b) = (context("a"), context("b"));
        assert!(ask(&gate, &a) && ask(&gate, &b));
        gate.grant_session(&a, &["write:src/a.rs".to_owned()]);
        assert!(!ask(&gate, &a), "granted where it was approved");
        assert!(ask(&gate, &b), "not granted in another session");
    }

    /// Issue 37 §5: reading an artifact asks today's policy about what produced it. One case a
    /// row: (rules, mode, what produced it, verdict, words the message must hold).
    #[test]
    fn an_artifact_read_asks_about_its_sources() {
        use tackle_gate::{Effect, Pattern, Rule, RuleSource};

        #[derive(Clone, Copy, Debug, PartialEq)]
        enum Want {
            Allow,
            Ask,
            Deny,
        }
        let rule = |effect: Effect, pattern: &str| {
            Rule::new(
                effect,
                Pattern::parse(pattern).unwrap(),
                RuleSource::Flag {
                    flag: "--deny".into(),
                },
            )
        };
        let reads = |keys: &[&str]| ProducedBy::Reads(keys.iter().map(|k| k.to_string()).collect());
        let digest = "ab".repeat(32);
        const ENV_DENIED: &str = "artifact sha256:abab";
        #[allow(clippy::type_complexity)]
        let table: Vec<(Vec<Rule>, Mode, ProducedBy, Want, &[&str])> = vec![
            // Possession: nothing denies the source.
            (vec![], Mode::Ask, reads(&["read:.env"]), Want::Allow, &[]),
            (vec![], Mode::Ask, reads(&[]), Want::Allow, &[]),
            // A deny on the source, literal or wildcard, covers the copy.
            (
                vec![rule(Effect::Deny, "read:.env")],
                Mode::Ask,
                reads(&["read:.env"]),
                Want::Deny,
                &[
                    ENV_DENIED,
                    "produced by a read of .env, which is now denied",
                ],
            ),
            (
                vec![rule(Effect::Deny, "read:**/.env")],
                Mode::Yolo,
                reads(&["read:src/a.rs", "read:app/.env"]),
                Want::Deny,
                &["read of app/.env"],
            ),
            (
                vec![rule(Effect::Deny, "read:*.env")],
                Mode::Ask,
                reads(&["read:.env"]),
                Want::Deny,
                &["read of .env"],
            ),
            // A deny elsewhere does not touch it.
            (
                vec![rule(Effect::Deny, "read:.env")],
                Mode::Ask,
                reads(&["read:src/a.rs"]),
                Want::Allow,
                &[],
            ),
            // An ask on the source asks, and yolo lets an ask through but never a deny.
            (
                vec![rule(Effect::Ask, "read:secrets/**")],
                Mode::Ask,
                reads(&["read:secrets/key"]),
                Want::Ask,
                &["produced by a read of secrets/key"],
            ),
            (
                vec![rule(Effect::Ask, "read:secrets/**")],
                Mode::Yolo,
                reads(&["read:secrets/key"]),
                Want::Allow,
                &[],
            ),
            // A source that has left the path scope or become the store is denied.
            (
                vec![],
                Mode::Yolo,
                reads(&["read:.agents/store/artifacts/00"]),
                Want::Deny,
                &["tackle's record"],
            ),
            // A copy of a copy: the artifact key of the first read is a source too.
            (
                vec![rule(Effect::Deny, "read:artifact://cd*")],
                Mode::Ask,
                reads(&["read:artifact://cd"]),
                Want::Deny,
                &["read of artifact://cd"],
            ),
            // No record vouches for it: denied whatever the mode.
            (
                vec![],
                Mode::Yolo,
                ProducedBy::Unknown { damaged: false },
                Want::Deny,
                &["no record says what produced", "tackle artifacts cat"],
            ),
            (
                vec![],
                Mode::Ask,
                ProducedBy::Unknown { damaged: true },
                Want::Deny,
                &["could not be read whole"],
            ),
        ];
        let session = SessionContext::new(SessionId("s".into()), SessionOptions::default());
        for (rules, mode, produced_by, want, words) in table {
            let row = format!("{rules:?} {mode:?} {produced_by:?}");
            let gate = PolicyGate::new(
                Policy::new(rules, mode, PathScope::default(), UrlScope::default()).unwrap(),
            );
            let key = format!("read:artifact://{digest}");
            let artifacts = [ArtifactRead {
                key: key.clone(),
                digest: digest.clone(),
                produced_by,
            }];
            let verdict = gate.check(&GateRequest {
                session: &session,
                tool: "read_file",
                keys: vec!["tool.read_file".into(), key],
                resources: &[],
                read_only: true,
                artifacts: &artifacts,
            });
            let (got, message) = match &verdict {
                GateVerdict::Allow => (Want::Allow, String::new()),
                GateVerdict::Ask { message, .. } => (Want::Ask, message.clone()),
                GateVerdict::Deny { message, .. } => (Want::Deny, message.clone()),
            };
            assert_eq!(got, want, "{row}: {verdict:?}");
            for w in words {
                assert!(message.contains(w), "{row}: {message:?} lacks {w:?}");
            }
        }
    }
}
