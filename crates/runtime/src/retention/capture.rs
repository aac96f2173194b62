//! One call's output while it runs: every accepted chunk goes to a locked temp file (hashed as it
//! is written) and to a bounded preview; at completion the temp files become artifacts.

use std::sync::{Arc, Mutex, MutexGuard};

use tackle_protocol::{ErrorCode, OutputDeclaration, StreamName, Truncation};
use tackle_store::{ArtifactInfo, ArtifactStore, Capture, Durability, Manifest, ManifestStream};
use tackle_tool::{CompletionOutput, ProgressReceiver, ToolError, ToolProgress};

use crate::config::{LIVE_DISPLAY_BUDGET_BYTES, PreviewLimits, RESULT_LIMIT_BYTES};
use crate::progress::ProgressObserver;
use crate::retention::preview::{Preview, floor_char_boundary};
use tackle_protocol::CallId;

struct StreamSlot {
    name: Option<StreamName>,
    /// `None` for truncation opt-out tools, whose page is returned whole and not retained.
    capture: Option<Capture>,
    preview: Preview,
    /// The whole text, kept only for opt-out tools (bounded by the result limit).
    full: Option<String>,
}

struct State {
    slots: Vec<StreamSlot>,
    streamed: bool,
    closed: bool,
    live_budget_used: usize,
    /// The first failure writing a capture; the call is failed with it.
    write_error: Option<ToolError>,
}

/// Receives one call's output. Shared between the tool (through its `OutputSink`) and the
/// runtime, which finishes it.
pub struct CallOutput {
    call_id: CallId,
    state: Mutex<State>,
    observer: Option<Arc<dyn ProgressObserver>>,
    /// How the call's artifacts are published: synced at once for a call with effects, synced
    /// before the log's next sync for a read-only one.
    durability: Durability,
}

/// A stream after completion.
pub struct FinishedStream {
    pub name: Option<StreamName>,
    pub preview: Preview,
    pub artifact: Option<ArtifactInfo>,
    pub full: Option<String>,
}

/// All of a call's streams after completion.
pub struct FinishedOutput {
    pub streams: Vec<FinishedStream>,
    pub manifest: Option<ArtifactInfo>,
}

impl CallOutput {
    pub fn new(
        call_id: CallId,
        declaration: &OutputDeclaration,
        truncation: Truncation,
        store: &ArtifactStore,
        limits: PreviewLimits,
        observer: Option<Arc<dyn ProgressObserver>>,
        durability: Durability,
    ) -> Result<Self, ToolError> {
        let names: Vec<Option<StreamName>> = match declaration {
            OutputDeclaration::Single => vec![None],
            OutputDeclaration::Named(names) => names.iter().cloned().map(Some).collect(),
        };
        let mut slots = Vec::with_capacity(names.len());
        for name in names {
            let (capture, full) = match truncation {
                Truncation::Bounded => (
                    Some(store.begin_capture_with(durability).map_err(store_error)?),
                    None,
                ),
                Truncation::OptOut => (None, Some(String::new())),
            };
            slots.push(StreamSlot {
                name,
                capture,
                preview: Preview::new(limits),
                full,
            });
        }
        Ok(Self {
            call_id,
            state: Mutex::new(State {
                slots,
                streamed: false,
                closed: false,
                live_budget_used: 0,
                write_error: None,
            }),
            observer,
            durability,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock can only come from a bug in this module; the state is
        // still consistent enough to finish the call, so recover rather than propagate.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether every stream is still held in memory (none has spilled into a temp file).
    pub fn in_memory(&self) -> bool {
        self.lock().slots.iter().all(|slot| {
            slot.capture
                .as_ref()
                .is_none_or(|c| c.temp_path().is_none())
        })
    }

    /// Stop accepting output (after timeout or cancellation a detached writer may still try).
    pub fn close(&self) {
        self.lock().closed = true;
    }

    /// Supply terminal output and publish every stream as an artifact. Blocking (fsync).
    pub fn finish(
        &self,
        terminal: Option<CompletionOutput>,
        store: &ArtifactStore,
    ) -> Result<FinishedOutput, ToolError> {
        let mut st = self.lock();
        st.closed = true;
        if let Some(e) = st.write_error.take() {
            return Err(e);
        }
        match terminal {
            None | Some(CompletionOutput::Streamed) => {}
            Some(_) if st.streamed => {
                return Err(ToolError::new(
                    ErrorCode::PROTOCOL,
                    "tool streamed output and then resupplied terminal output; complete with \
                     Streamed after streaming",
                ));
            }
            Some(CompletionOutput::Single(text)) => {
                if st.slots.len() != 1 || st.slots[0].name.is_some() {
                    return Err(ToolError::new(
                        ErrorCode::PROTOCOL,
                        "tool declared named streams but completed with single output",
                    ));
                }
                write_terminal(&mut st.slots[0], text)?;
            }
            Some(CompletionOutput::Named(streams)) => {
                for (name, text) in streams {
                    let Some(slot) = st.slots.iter_mut().find(|s| s.name.as_ref() == Some(&name))
                    else {
                        return Err(ToolError::new(
                            ErrorCode::PROTOCOL,
                            format!("tool completed with undeclared stream `{name}`"),
                        ));
                    };
                    write_terminal(slot, text)?;
                }
            }
        }
        let slots = std::mem::take(&mut st.slots);
        drop(st);
        let mut streams = Vec::with_capacity(slots.len());
        for slot in slots {
            let artifact = match slot.capture {
                Some(c) => Some(c.finish().map_err(store_error)?),
                None => None,
            };
            streams.push(FinishedStream {
                name: slot.name,
                preview: slot.preview,
                artifact,
                full: slot.full,
            });
        }
        let manifest = if streams
            .iter()
            .any(|s| s.name.is_some() && s.artifact.is_some())
        {
            let manifest = Manifest::new(
                streams
                    .iter()
                    .filter_map(|s| {
                        let a = s.artifact.as_ref()?;
                        Some(ManifestStream {
                            name: s.name.as_ref()?.as_str().to_owned(),
                            artifact: a.id,
                            bytes: a.bytes,
                            lines: s.preview.total_lines(),
                        })
                    })
                    .collect(),
            );
            Some(
                store
                    .put_manifest_with(&manifest, self.durability)
                    .map_err(store_error)?,
            )
        } else {
            None
        };
        Ok(FinishedOutput { streams, manifest })
    }
}

/// A tool's terminal output for `slot`. An opt-out slot takes the text itself when it holds
/// nothing yet (a page of a file is often the whole result: no copy of it is made here).
fn write_terminal(slot: &mut StreamSlot, text: String) -> Result<(), ToolError> {
    match &mut slot.full {
        Some(full) if full.is_empty() => {
            check_result_limit(text.len())?;
            *full = text;
            Ok(())
        }
        _ => write_slot(slot, &text),
    }
}

fn write_slot(slot: &mut StreamSlot, text: &str) -> Result<(), ToolError> {
    if let Some(full) = &mut slot.full {
        // An opt-out page is returned whole (see `render_opt_out`): no preview is shown.
        check_result_limit(full.len() + text.len())?;
        full.push_str(text);
        return Ok(());
    }
    match &mut slot.capture {
        // The capture already counts newlines as it hashes; the preview reuses that count
        // instead of scanning every byte a second time.
        Some(capture) => {
            let before = capture.newlines();
            capture.write(text.as_bytes()).map_err(store_error)?;
            slot.preview.push_counted(text, capture.newlines() - before);
        }
        None => slot.preview.push(text),
    }
    Ok(())
}

fn check_result_limit(bytes: usize) -> Result<(), ToolError> {
    if bytes > RESULT_LIMIT_BYTES {
        return Err(ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "the requested page is over the {} MiB result limit; request fewer lines \
                 with a smaller limit",
                RESULT_LIMIT_BYTES / (1024 * 1024)
            ),
        ));
    }
    Ok(())
}

pub(crate) fn store_error(e: tackle_store::StoreError) -> ToolError {
    use tackle_store::StoreError;
    let code = match &e {
        StoreError::ArtifactMissing { .. } => ErrorCode::ARTIFACT_MISSING,
        StoreError::ArtifactCorrupt { .. } => ErrorCode::ARTIFACT_CORRUPT,
        _ => ErrorCode::IO,
    };
    ToolError::new(code, e.to_string())
}

/// Replace control characters other than newline and tab, and bound the length.
fn sanitize_display(s: &str, limit: usize) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                ' '
            } else {
                c
            }
        })
        .collect();
    cleaned[..floor_char_boundary(&cleaned, limit)].to_owned()
}

pub(crate) fn sanitize_final_display(s: &str) -> String {
    sanitize_display(s, crate::config::FINAL_DISPLAY_LIMIT_BYTES)
}

impl ProgressReceiver for CallOutput {
    fn accept(&self, progress: ToolProgress) -> Result<(), ToolError> {
        if progress.output.len() > ToolProgress::MAX_CHUNKS {
            return Err(ToolError::new(
                ErrorCode::PROTOCOL,
                format!(
                    "progress delta carries {} chunks; the limit is {}",
                    progress.output.len(),
                    ToolProgress::MAX_CHUNKS
                ),
            ));
        }
        let text_bytes: usize = progress.output.iter().map(|c| c.text.len()).sum();
        if text_bytes > ToolProgress::MAX_OUTPUT_BYTES {
            return Err(ToolError::new(
                ErrorCode::PROTOCOL,
                format!("progress delta carries {text_bytes} bytes of output; the limit is 64 KiB"),
            ));
        }
        for (field, value, limit) in [
            (
                "message",
                &progress.message,
                ToolProgress::MAX_MESSAGE_BYTES,
            ),
            (
                "display",
                &progress.display,
                ToolProgress::MAX_DISPLAY_BYTES,
            ),
        ] {
            if value.as_ref().is_some_and(|v| v.len() > limit) {
                return Err(ToolError::new(
                    ErrorCode::PROTOCOL,
                    format!("progress {field} is over its {limit}-byte limit"),
                ));
            }
        }
        let mut st = self.lock();
        if st.closed {
            return Err(ToolError::new(
                ErrorCode::CANCELLED,
                "the call has already finished",
            ));
        }
        for chunk in &progress.output {
            st.write_chunk(chunk.stream.as_ref(), &chunk.text)?;
        }
        // Live presentation is best effort within its budget; output is never stopped by it.
        let live = progress.message.as_ref().map_or(0, String::len)
            + progress.display.as_ref().map_or(0, String::len);
        if live > 0 && st.live_budget_used + live <= LIVE_DISPLAY_BUDGET_BYTES {
            st.live_budget_used += live;
            drop(st);
            if let Some(obs) = &self.observer {
                let message = progress
                    .message
                    .as_deref()
                    .map(|m| sanitize_display(m, usize::MAX));
                let display = progress
                    .display
                    .as_deref()
                    .map(|d| sanitize_display(d, usize::MAX));
                obs.on_progress(&self.call_id, message.as_deref(), display.as_deref());
            }
        }
        Ok(())
    }

    fn accept_output(&self, stream: Option<&StreamName>, text: &str) -> Result<(), ToolError> {
        if text.is_empty() {
            return Ok(());
        }
        let mut st = self.lock();
        if st.closed {
            return Err(ToolError::new(
                ErrorCode::CANCELLED,
                "the call has already finished",
            ));
        }
        st.write_chunk(stream, text)
    }
}

impl State {
    /// Appends one chunk of output to its stream; the first capture failure is kept for finish.
    fn write_chunk(&mut self, stream: Option<&StreamName>, text: &str) -> Result<(), ToolError> {
        let Some(slot) = self.slots.iter_mut().find(|s| s.name.as_ref() == stream) else {
            let name = stream.map_or("<single>", StreamName::as_str);
            return Err(ToolError::new(
                ErrorCode::PROTOCOL,
                format!("output chunk for undeclared stream `{name}`"),
            ));
        };
        self.streamed = true;
        if let Err(e) = write_slot(slot, text) {
            if self.write_error.is_none() {
                self.write_error = Some(e.clone());
            }
            return Err(e);
        }
        Ok(())
    }
}
