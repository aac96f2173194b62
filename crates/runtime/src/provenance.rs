//! Who produced an artifact: the labels of the calls that retained it, and the `read:` keys
//! behind it, read from the store's event logs.
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
//! The same records carry the `read:` keys behind each artifact (`call_finished.read_keys`),
//! and the same rule combines them: an artifact's sources are the union over every call that
//! retained it, so a deny on any of them covers the copy (a planted record can only add a key,
//! which can only deny more). [`Producers::produced_by`] answers for the gate: an artifact in
//! the store that no record vouches for is [`ProducedBy::Unknown`], which the policy gate
//! denies, since the record that would have named its source (a `.env` now denied) may be the
//! one lost. Arguments a `call_started` stored are vouched for with no key: they are text the
//! model sent. Records written before `read_keys` existed vouch with no key (possession, as
//! then). A damaged log leaves a vouched-for artifact vouched for: the lost line could add a
//! key only if the same bytes also came from another read, whose file then holds them too.
//!
//! Rejected: a label file beside each artifact, a second record to keep in step with the log,
//! to collect with the janitor and to trust on its own; and labels held in memory, which a
//! resumed session or another process would not see. Rejected for the keys: "any producer
//! whose keys are allowed vouches for the bytes", under which one planted or forged record
//! without keys would undo every deny.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::ControlFlow;

use tackle_protocol::{ArtifactUri, CallFinished, Event, Label};
use tackle_store::{ArtifactId, ArtifactStore, EventLog};
use tackle_tool::{Action, PermissionResource};

use crate::gate::{ArtifactRead, ProducedBy};

/// The producers' label and read keys of every artifact the store's logs name.
#[derive(Debug, Default)]
pub struct Producers {
    labels: HashMap<ArtifactId, Label>,
    /// The `read:` keys behind each artifact a `call_finished` names (possibly none).
    reads: HashMap<ArtifactId, BTreeSet<String>>,
    /// Artifacts a `call_started` stored the arguments of a call in.
    arguments: HashSet<ArtifactId>,
    /// Some log could not be read whole: any artifact may have lost a producer.
    damaged: bool,
}

impl Producers {
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
                match serde_json::from_value(record.event) {
                    Ok(Event::CallFinished(finished)) => found.record(&finished),
                    Ok(Event::CallStarted(started)) => {
                        if let Some(id) = started
                            .stored_arguments
                            .and_then(|s| ArtifactId::from_internal_uri(&s.artifact))
                        {
                            found.arguments.insert(id);
                        }
                    }
                    _ => {}
                }
                ControlFlow::Continue(())
            });
            if read.is_err() {
                found.damaged = true;
            }
        }
        found
    }

    /// Folds one finished call's label and read keys into every artifact it retained.
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
            self.reads
                .entry(id)
                .or_default()
                .extend(finished.read_keys.iter().cloned());
        }
    }

    /// The `read:` keys behind `id` when a record vouches for it: `None` when none does.
    pub fn reads_of(&self, id: ArtifactId) -> Option<&BTreeSet<String>> {
        static NONE: BTreeSet<String> = BTreeSet::new();
        match self.reads.get(&id) {
            Some(keys) => Some(keys),
            None if self.arguments.contains(&id) => Some(&NONE),
            None => None,
        }
    }

    /// Whether some log could not be read whole.
    pub fn damaged(&self) -> bool {
        self.damaged
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

/// What produced each artifact `resources` read (one entry per `read:artifact://` resource),
/// for the gate. A manifest's answer covers the streams it lists as well, whatever stream the
/// call names: a manifest is an artifact anyone's output can be, and one listing another
/// call's output must not make that output readable under its own producers' keys.
pub(crate) fn artifact_reads(
    store: &ArtifactStore,
    resources: &[PermissionResource],
) -> Vec<ArtifactRead> {
    let mut producers = None;
    let mut reads = Vec::new();
    for resource in resources {
        if resource.action != Action::Read {
            continue;
        }
        let Ok(uri) = ArtifactUri::parse(&resource.target) else {
            continue;
        };
        let Some(id) = ArtifactId::from_hex(uri.digest_hex()) else {
            continue;
        };
        let producers = producers.get_or_insert_with(|| Producers::scan(store));
        reads.push(ArtifactRead {
            key: resource.key(),
            digest: id.to_hex(),
            produced_by: producers.produced_by(store, id),
        });
    }
    reads
}

impl Producers {
    /// What produced `id` and, when it is a manifest, the streams it lists.
    pub(crate) fn produced_by(&self, store: &ArtifactStore, id: ArtifactId) -> ProducedBy {
        let mut keys = BTreeSet::new();
        for id in std::iter::once(id).chain(listed_streams(store, id)) {
            match self.reads_of(id) {
                Some(more) => keys.extend(more.iter().cloned()),
                // Not in the store: nothing to copy (the read reports it missing).
                None if !store.contains(id) => {}
                None => {
                    return ProducedBy::Unknown {
                        damaged: self.damaged,
                    };
                }
            }
        }
        ProducedBy::Reads(keys.into_iter().collect())
    }
}

/// The artifacts `id` lists as its streams, when it is a manifest no larger than
/// [`tackle_store::MANIFEST_READ_LIMIT`]. Read unverified, as the janitor reads it: a corrupt
/// copy then lists what it lists, and the verified read at execute, which opens only what was
/// declared here, refuses anything else.
pub(crate) fn listed_streams(store: &ArtifactStore, id: ArtifactId) -> Vec<ArtifactId> {
    store
        .unverified_manifest(id)
        .map(|m| m.streams.iter().map(|s| s.artifact).collect())
        .unwrap_or_default()
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
            read_keys: Vec::new(),
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
            let mut labels = Producers {
                damaged: *damaged,
                ..Producers::default()
            };
            for (label, retained, attachments) in *calls {
                labels.record(&finished(*label, retained, attachments));
            }
            assert_eq!(labels.label_of(*asked), *want, "{calls:?} asked {asked:?}");
        }
    }

    /// Issue 37 §5: an artifact's sources are the union over every record that retained it
    /// (and, for a manifest, over the streams it lists); an artifact in the store no record
    /// vouches for is unknown; one not in the store has nothing to copy.
    #[test]
    fn an_artifact_is_produced_by_every_read_behind_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let put = |bytes: &[u8]| store.put(bytes).unwrap().id;
        let secret = put(b"TOKEN=1\n");
        let public = put(b"hello\n");
        let planted = put(b"nobody made me\n");
        let arguments = put(b"{\"content\":\"...\"}");
        let missing = id(9);
        // A manifest made by a command that read nothing, listing the secret's artifact.
        let forged = store
            .put_manifest(&tackle_store::Manifest::new(vec![
                tackle_store::ManifestStream {
                    name: "x".into(),
                    artifact: secret,
                    bytes: 8,
                    lines: 1,
                },
            ]))
            .unwrap()
            .id;
        let with_keys = |retained: &[ArtifactId], keys: &[&str]| CallFinished {
            read_keys: keys.iter().map(|k| k.to_string()).collect(),
            ..finished(Label::LOCAL, retained, &[])
        };
        let mut producers = Producers::default();
        producers.record(&with_keys(&[secret], &["read:.env"]));
        producers.record(&with_keys(&[secret], &["read:copy/.env", "read:.env"]));
        producers.record(&with_keys(&[public], &["read:README"]));
        producers.record(&with_keys(&[forged], &[]));
        producers.arguments.insert(arguments);
        let reads = |keys: &[&str]| ProducedBy::Reads(keys.iter().map(|k| k.to_string()).collect());
        let table: &[(ArtifactId, ProducedBy)] = &[
            (secret, reads(&["read:.env", "read:copy/.env"])),
            (public, reads(&["read:README"])),
            (forged, reads(&["read:.env", "read:copy/.env"])),
            (arguments, reads(&[])),
            (missing, reads(&[])),
            (planted, ProducedBy::Unknown { damaged: false }),
        ];
        for (asked, want) in table {
            assert_eq!(&producers.produced_by(&store, *asked), want, "{asked:?}");
        }
        producers.damaged = true;
        assert_eq!(
            producers.produced_by(&store, planted),
            ProducedBy::Unknown { damaged: true }
        );
        // Only keys from records: a record without them (every older log) vouches with none.
        assert_eq!(producers.produced_by(&store, forged), table[2].1);
    }
}
