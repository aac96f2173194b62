//! Shaping finished output into what the model reads: previews, headings and read hints, inside
//! the 2 MiB result bound.

use tackle_protocol::{ErrorCode, RetainedOutput};
use tackle_tool::ToolError;

use crate::config::{HEADINGS_RESERVE_BYTES, RESULT_LIMIT_BYTES};
use crate::retention::capture::{FinishedOutput, FinishedStream};

/// The model-facing text and the retained references of one call's output.
pub struct Rendered {
    pub text: String,
    pub retained: Vec<RetainedOutput>,
}

/// Render retained (bounded) output. Previews share `RESULT_LIMIT - 16 KiB`; when the configured
/// limits would exceed that, the largest previews are reduced and their hints stay truthful.
pub fn render_bounded(mut out: FinishedOutput) -> Rendered {
    fit_previews(
        &mut out.streams,
        RESULT_LIMIT_BYTES - HEADINGS_RESERVE_BYTES,
    );
    let named = out.manifest.is_some();
    let mut retained = Vec::new();
    if let Some(m) = &out.manifest {
        retained.push(RetainedOutput {
            stream: None,
            artifact: m.id.internal_uri(),
            bytes: m.bytes,
            lines: 0,
            truncated: out.streams.iter().any(|s| s.preview.truncated()),
        });
    }
    let mut text = String::new();
    for s in &out.streams {
        let Some(artifact) = &s.artifact else {
            continue;
        };
        retained.push(RetainedOutput {
            stream: s.name.clone(),
            artifact: artifact.id.internal_uri(),
            bytes: artifact.bytes,
            lines: s.preview.total_lines(),
            truncated: s.preview.truncated(),
        });
        if named && s.preview.total_bytes() == 0 {
            continue;
        }
        if let (true, Some(name)) = (named, &s.name) {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[{name}]\n"));
        }
        text.push_str(s.preview.text());
        if s.preview.truncated() {
            let uri = match (&out.manifest, &s.name) {
                (Some(m), Some(name)) => format!("artifact://{}/{name}", m.id.to_hex()),
                _ => artifact.id.public_uri(),
            };
            push_hint(&mut text, s, &uri);
        }
    }
    if named && out.streams.iter().all(|s| s.preview.total_bytes() == 0) {
        text.push_str("(no output)\n");
    }
    Rendered { text, retained }
}

fn push_hint(text: &mut String, s: &FinishedStream, uri: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let what = s
        .name
        .as_ref()
        .map_or_else(|| "output".to_owned(), |n| n.to_string());
    text.push_str(&format!(
        "[{what} truncated: showing {} of {} lines, {} of {} bytes. Read the rest with \
         read_file {{\"path\": \"{uri}\", \"offset\": {}}}]\n",
        s.preview.shown_lines(),
        s.preview.total_lines(),
        s.preview.text().len(),
        s.preview.total_bytes(),
        s.preview.continue_at_line(),
    ));
}

/// Water-fill `budget` bytes across previews: small previews keep everything, the rest share
/// what remains equally.
fn fit_previews(streams: &mut [FinishedStream], budget: usize) {
    let total: usize = streams.iter().map(|s| s.preview.text().len()).sum();
    if total <= budget {
        return;
    }
    let mut order: Vec<usize> = (0..streams.len()).collect();
    order.sort_by_key(|&i| streams[i].preview.text().len());
    let mut remaining = budget;
    for (k, &i) in order.iter().enumerate() {
        let share = remaining / (order.len() - k);
        let len = streams[i].preview.text().len();
        if len > share {
            streams[i].preview.shrink_to(share);
        }
        remaining -= streams[i].preview.text().len();
    }
}

/// Render an opt-out (self-paginating) result: the page whole, or `resource_limit`.
pub fn render_opt_out(mut out: FinishedOutput) -> Result<Rendered, ToolError> {
    let mut text = String::new();
    if let [single] = out.streams.as_mut_slice()
        && (single.name.is_none() || out.manifest.is_none())
    {
        // One page, no heading: the page is the text.
        text = single.full.take().unwrap_or_default();
    }
    for s in out.streams {
        if let (Some(name), true) = (&s.name, out.manifest.is_some()) {
            text.push_str(&format!("[{name}]\n"));
        }
        text.push_str(s.full.as_deref().unwrap_or_default());
    }
    if text.len() > RESULT_LIMIT_BYTES {
        return Err(ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "the requested page is {} bytes, over the {} byte result limit; request fewer \
                 lines with a smaller limit",
                text.len(),
                RESULT_LIMIT_BYTES
            ),
        ));
    }
    Ok(Rendered {
        text,
        retained: Vec::new(),
    })
}
