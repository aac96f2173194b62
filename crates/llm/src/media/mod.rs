//! Media delivery (seed 000, "Media reads" and "Media delivery"): whether an attachment a tool
//! produced may reach the model, and how it travels.
//!
//! Two checks decide admission, in order, when a result arrives ([`admit`]): the model must
//! declare the modality in the catalog, then the family's wire API must take that kind from a
//! tool at all ([`DeliveryFamily::placement`]). Either refusal is an ordinary tool error
//! ([`refuse_undeliverable`]) the model can recover from. At request time, [`deliver`] turns
//! each admitted attachment into bytes where the matrix says (inside the tool result, or in
//! one user turn right after it), clamped to the smaller of the model's and the family's
//! per-item limit, within the model's per-kind counts and the family's combined budget, and
//! degrades what does not fit to an inline note naming why and where the file is kept.
//!
//! **Refuses** to read the artifact store: the caller hands [`deliver`] a loader, so this crate
//! still never touches files. Media never counts toward context-fit estimates, except video's
//! flat [`VIDEO_CONTEXT_TOKENS`].

mod admit;
mod deliver;
mod family;

pub use admit::{Refusal, admit, refuse_undeliverable};
pub use deliver::{AttachmentBytes, Delivered, deliver};
pub use family::{DeliveryFamily, Placement};

use std::fmt;

use tackle_protocol::MediaPart;

use crate::catalog::Modality;

/// The tokens a delivered video is counted as when estimating whether a request fits: a
/// conservative flat cost (about two minutes of video at the rates vendors publish), since
/// its real cost is known only after the provider has decoded it.
pub const VIDEO_CONTEXT_TOKENS: u64 = 32_768;

/// A kind of media a tool may return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MediaKind {
    Image,
    Pdf,
    Audio,
    Video,
}

impl MediaKind {
    /// The kind of a sniffed MIME type; `None` for anything that is not media a model takes.
    pub fn of_mime(mime: &str) -> Option<Self> {
        let mime = mime
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if mime == "application/pdf" {
            return Some(Self::Pdf);
        }
        match mime.split_once('/')? {
            ("image", _) => Some(Self::Image),
            ("audio", _) => Some(Self::Audio),
            ("video", _) => Some(Self::Video),
            _ => None,
        }
    }

    /// The catalog modality a model must declare for this kind.
    pub fn modality(self) -> Modality {
        match self {
            Self::Image => Modality::Image,
            Self::Pdf => Modality::Pdf,
            Self::Audio => Modality::Audio,
            Self::Video => Modality::Video,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.modality().as_str()
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a delivered media part adds to a context-fit estimate.
pub fn context_tokens(part: &MediaPart) -> u64 {
    match MediaKind::of_mime(&part.mime_type) {
        Some(MediaKind::Video) => VIDEO_CONTEXT_TOKENS,
        _ => 0,
    }
}

/// A file name for families that want one with inline file data (`report.pdf` in OpenAI's
/// shapes): the artifact's digest, shortened, with the kind's usual extension.
pub(crate) fn file_name(part: &MediaPart) -> String {
    let digest = part.artifact.rsplit('/').next().unwrap_or("attachment");
    let short: String = digest.chars().take(12).collect();
    let ext = match part.mime_type.as_str() {
        "application/pdf" => "pdf",
        m => m.rsplit('/').next().unwrap_or("bin"),
    };
    format!("{short}.{ext}")
}

/// The `data:` URL of a part, as OpenAI's shapes take inline media.
pub(crate) fn data_url(part: &MediaPart) -> String {
    format!("data:{};base64,{}", part.mime_type, part.data_base64)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod golden;
