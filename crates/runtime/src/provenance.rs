//! Who produced an artifact, as far as its label goes: the labels of the calls that retained
//! it, read from the store's event logs.
//!
//! **Key decision:** a label travels with the data through the records tackle already keeps,
//! not through a new one. Every call's `call_finished` names the artifacts it retained (its
//! output streams, the manifest over them, its attachments) and the label of its result, in a
//! CRC-checked line of `sessions/<id>/events.jsonl` that tackle alone writes. An artifact read
//! back therefore carries the combination ([`Label::combine`]) of the labels of *every* call
//! that retained it, in any session, before or after a restart: content addressing makes the
//! same bytes fetched remotely and read locally one artifact, and the least trusted producer
//! wins. An artifact no record names (a manual store edit, stored arguments, a log that lost
//! the line) is [`Label::UNKNOWN`], and a log that cannot be read whole folds `UNKNOWN` into
//! every answer, since the line it lost may have named the artifact. Nothing the model sends
//! and nothing in an artifact's bytes is ever read as a label. A record planted in the store
//! can only add a producer, and adding one never makes an artifact more trusted than a real
//! producer's label, so the only way to gain trust through planting is to plant the bytes too,
//! which gives them no more than a project file has.
//!
//! Rejected: a label file beside each artifact, a second record to keep in step with the log,
//! to collect with the janitor and to trust on its own; and labels held in memory, which a
//! resumed session or another process would not see.

use std::collections::HashMap;
use std::ops::ControlFlow;

use tackle_protocol::{CallFinished, Event, Label};
use tackle_store::{ArtifactId, ArtifactStore, EventLog};

/// The producers' label of every artifact the store's logs name.
#[derive(Debug, Default)]
pub struct ProducerLabels {
    labels: HashMap<ArtifactId, Label>,
    /// Some log could not be read whole: any artifact may have lost a producer.
    damaged: bool,
}

impl ProducerLabels {
    /// Reads every session's log under `store`. Never fails: what cannot be read makes the
    /// answers less trusted, never more.
    pub fn scan(store: &ArtifactStore) -> Self {
        let mut found = Self::default();
        let sessions = match std::fs::read_dir(store.sessions_dir()) {
            Ok(sessions) => sessions,
            // No session has run here: no artifact has a known producer.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return found,
            Err(_) => {
                found.damaged = true;
                return found;
            }
        };
        for entry in sessions {
            let Ok(entry) = entry else {
                found.damaged = true;
                continue;
            };
            let Some(id) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let log = tackle_store::session_log_path(store.root(), &id);
            // A session directory whose log is not there yet (being opened) has no records.
            if std::fs::symlink_metadata(&log)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                continue;
            }
            let read = EventLog::visit_records(&log, |record| {
                if let Ok(Event::CallFinished(finished)) = serde_json::from_value(record.event) {
                    found.record(&finished);
                }
                ControlFlow::Continue(())
            });
            if read.is_err() {
                found.damaged = true;
            }
        }
        found
    }

    /// Folds one finished call's label into every artifact it retained.
    fn record(&mut self, finished: &CallFinished) {
        let retained = finished
            .retained_output
            .iter()
            .map(|r| r.artifact.as_str())
            .chain(finished.attachments.iter().map(String::as_str));
        for uri in retained {
            let Some(id) = ArtifactId::from_internal_uri(uri) else {
                continue;
            };
            self.labels
                .entry(id)
                .and_modify(|l| *l = l.combine(finished.label))
                .or_insert(finished.label);
        }
    }

    /// The label content of `id` carries: its producers' combined, [`Label::UNKNOWN`] when no
    /// record names it, and never trusted while a log is damaged.
    pub fn label_of(&self, id: ArtifactId) -> Label {
        let known = self.labels.get(&id).copied().unwrap_or(Label::UNKNOWN);
        if self.damaged {
            known.combine(Label::UNKNOWN)
        } else {
            known
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, CallStatus, Privacy, RetainedOutput, Trust};

    fn finished(
        label: Label,
        artifacts: &[ArtifactId],
        attachments: &[ArtifactId],
    ) -> CallFinished {
        CallFinished {
            call_id: CallId("c".into()),
            tool: "t".into(),
            status: CallStatus::Ok,
            code: None,
            at_ms: 0,
            queued_us: None,
            ran_us: None,
            retained_output: artifacts
                .iter()
                .map(|id| RetainedOutput {
                    stream: None,
                    artifact: id.internal_uri(),
                    bytes: 1,
                    lines: 1,
                    truncated: false,
                })
                .collect(),
            incomplete: false,
            label,
            display: None,
            digested: false,
            attachments: attachments.iter().map(|id| id.internal_uri()).collect(),
        }
    }

    fn id(byte: u8) -> ArtifactId {
        ArtifactId::from_hex(&format!("{byte:02x}").repeat(32)).unwrap()
    }

    const PUBLIC_TRUSTED: Label = Label {
        trust: Trust::Trusted,
        privacy: Privacy::Public,
    };

    #[test]
    fn an_artifact_carries_every_producer_label_combined() {
        let (a, b, c) = (id(1), id(2), id(3));
        // (calls as (label, retained, attachments), artifact asked about, damaged, answer)
        #[allow(clippy::type_complexity)]
        let table: &[(
            &[(Label, &[ArtifactId], &[ArtifactId])],
            ArtifactId,
            bool,
            Label,
        )] = &[
            (&[(Label::LOCAL, &[a], &[])], a, false, Label::LOCAL),
            (&[(Label::REMOTE, &[a], &[])], a, false, Label::REMOTE),
            // The same bytes read locally and fetched remotely: the least trusted wins, in
            // either order.
            (
                &[(Label::LOCAL, &[a], &[]), (Label::REMOTE, &[a], &[])],
                a,
                false,
                Label::REMOTE,
            ),
            (
                &[(Label::REMOTE, &[a], &[]), (Label::LOCAL, &[a], &[])],
                a,
                false,
                Label::REMOTE,
            ),
            (
                &[(PUBLIC_TRUSTED, &[a], &[]), (Label::LOCAL, &[a], &[])],
                a,
                false,
                Label::LOCAL,
            ),
            // Attachments are retained output too.
            (&[(Label::REMOTE, &[], &[b])], b, false, Label::REMOTE),
            // Another call's label does not leak onto an artifact it did not retain.
            (
                &[(Label::LOCAL, &[a], &[]), (Label::REMOTE, &[b], &[])],
                a,
                false,
                Label::LOCAL,
            ),
            // No record names it: unknown, never trusted.
            (&[(Label::LOCAL, &[a], &[])], c, false, Label::UNKNOWN),
            (&[], a, false, Label::UNKNOWN),
            // A damaged log may have lost the untrusted producer.
            (&[(Label::LOCAL, &[a], &[])], a, true, Label::UNKNOWN),
        ];
        for (calls, asked, damaged, want) in table {
            let mut labels = ProducerLabels {
                damaged: *damaged,
                ..ProducerLabels::default()
            };
            for (label, retained, attachments) in *calls {
                labels.record(&finished(*label, retained, attachments));
            }
            assert_eq!(labels.label_of(*asked), *want, "{calls:?} asked {asked:?}");
        }
    }
}
