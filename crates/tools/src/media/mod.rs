//! Media reads (seed 000, "Media reads"): recognising images, PDFs, audio and video by their
//! content and validating them strictly before they are returned as attachments.
//!
//! Owns sniffing (magic bytes, never the extension) and structural validation: a truncated or
//! malformed file is an error naming what is wrong, never an attachment a provider would choke
//! on. Refuses to own delivery: which provider accepts which kind, and how, is the agent layer's
//! delivery matrix.
//!
//! Key decision: [`sniff`] looks only at the first bytes and is cheap, so read_file can decide
//! between the text path and the media path before reading a large file; [`validate`] then
//! walks the whole structure (chunks, boxes, segments, pages) with exact length accounting.
//! Rejected: trusting the extension, or accepting anything with the right magic.

mod audio;
mod image;
mod video;

use std::fmt;

/// Default largest media file read_file attaches: 20 MiB (seed 000: the inline limit of most
/// provider families for images, PDFs and audio).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// Bytes [`sniff`] needs to recognise every format (MPEG-TS looks at three packets).
pub const SNIFF_BYTES: usize = 3 * 188 + 1;

/// A media format recognised by its magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediaFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
    Pdf,
    Mp3,
    Wav,
    Ogg,
    Flac,
    /// ISO base media (MP4, MOV, 3GPP); the brand decides the MIME type.
    IsoMedia,
    /// EBML (WebM, Matroska); the DocType decides.
    Ebml,
    Avi,
    Flv,
    MpegPs,
    MpegTs,
    Asf,
}

impl MediaFormat {
    /// The family, as the delivery matrix names it.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Png | Self::Jpeg | Self::Gif | Self::Webp => "image",
            Self::Pdf => "pdf",
            Self::Mp3 | Self::Wav | Self::Ogg | Self::Flac => "audio",
            _ => "video",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Gif => "GIF",
            Self::Webp => "WebP",
            Self::Pdf => "PDF",
            Self::Mp3 => "MP3",
            Self::Wav => "WAV",
            Self::Ogg => "Ogg",
            Self::Flac => "FLAC",
            Self::IsoMedia => "MP4/MOV",
            Self::Ebml => "WebM/Matroska",
            Self::Avi => "AVI",
            Self::Flv => "FLV",
            Self::MpegPs => "MPEG program stream",
            Self::MpegTs => "MPEG transport stream",
            Self::Asf => "WMV/ASF",
        }
    }
}

/// Why a file with a media signature was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaError {
    pub format: MediaFormat,
    pub reason: String,
}

impl fmt::Display for MediaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} file is malformed or truncated: {}",
            self.format.name(),
            self.reason
        )
    }
}

impl std::error::Error for MediaError {}

pub(crate) fn bad(format: MediaFormat, reason: impl Into<String>) -> MediaError {
    MediaError {
        format,
        reason: reason.into(),
    }
}

/// Recognise a media format from the first bytes of a file ([`SNIFF_BYTES`] suffice).
pub fn sniff(head: &[u8]) -> Option<MediaFormat> {
    use MediaFormat::*;
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    if at(0, b"\x89PNG\r\n\x1a\n") {
        Some(Png)
    } else if at(0, b"\xFF\xD8\xFF") {
        Some(Jpeg)
    } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
        Some(Gif)
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        Some(Webp)
    } else if at(0, b"RIFF") && at(8, b"WAVE") {
        Some(Wav)
    } else if at(0, b"RIFF") && at(8, b"AVI ") {
        Some(Avi)
    } else if at(0, b"%PDF-") {
        Some(Pdf)
    } else if at(0, b"ID3") || audio::mp3_frame_header(head).is_some() {
        Some(Mp3)
    } else if at(0, b"OggS") {
        Some(Ogg)
    } else if at(0, b"fLaC") {
        Some(Flac)
    } else if at(4, b"ftyp") || at(4, b"moov") || at(4, b"mdat") || at(4, b"wide") {
        Some(IsoMedia)
    } else if at(0, b"\x1A\x45\xDF\xA3") {
        Some(Ebml)
    } else if at(0, b"FLV\x01") {
        Some(Flv)
    } else if at(0, b"\x00\x00\x01\xBA") {
        Some(MpegPs)
    } else if at(0, &video::ASF_GUID) {
        Some(Asf)
    } else if video::looks_like_ts(head) {
        Some(MpegTs)
    } else {
        None
    }
}

/// Validate the whole file of a sniffed format; returns its MIME type.
pub fn validate(format: MediaFormat, data: &[u8]) -> Result<&'static str, MediaError> {
    use MediaFormat::*;
    match format {
        Png => image::png(data).map(|()| "image/png"),
        Jpeg => image::jpeg(data).map(|()| "image/jpeg"),
        Gif => image::gif(data).map(|()| "image/gif"),
        Webp => riff(format, data, b"WEBP").map(|_| "image/webp"),
        Pdf => image::pdf(data).map(|()| "application/pdf"),
        Mp3 => audio::mp3(data).map(|()| "audio/mpeg"),
        Wav => {
            let chunks = riff(format, data, b"WAVE")?;
            for need in [b"fmt ", b"data"] {
                if !chunks.iter().any(|c| c == need) {
                    return Err(bad(
                        format,
                        format!("no `{}` chunk", String::from_utf8_lossy(need)),
                    ));
                }
            }
            Ok("audio/wav")
        }
        Ogg => audio::ogg(data).map(|()| "audio/ogg"),
        Flac => audio::flac(data).map(|()| "audio/flac"),
        IsoMedia => video::iso_media(data),
        Ebml => video::ebml(data),
        Avi => riff(format, data, b"AVI ").map(|_| "video/x-msvideo"),
        Flv => video::flv(data).map(|()| "video/x-flv"),
        MpegPs => video::mpeg_ps(data).map(|()| "video/mpeg"),
        MpegTs => video::mpeg_ts(data).map(|()| "video/mp2t"),
        Asf => video::asf(data).map(|()| "video/x-ms-wmv"),
    }
}

/// Walk a RIFF container exactly: the RIFF size must cover the file, and every chunk (padded to
/// an even length) must fit. Returns the top-level chunk ids.
fn riff(format: MediaFormat, data: &[u8], form: &[u8; 4]) -> Result<Vec<[u8; 4]>, MediaError> {
    if data.len() < 12 || &data[8..12] != form {
        return Err(bad(format, "RIFF header is incomplete"));
    }
    let declared = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
    if declared + 8 != data.len() {
        return Err(bad(
            format,
            format!(
                "RIFF size says {} bytes but the file has {}",
                declared + 8,
                data.len()
            ),
        ));
    }
    let mut ids = Vec::new();
    let mut pos = 12;
    while pos < data.len() {
        let Some(h) = data.get(pos..pos + 8) else {
            return Err(bad(format, format!("chunk header cut off at byte {pos}")));
        };
        let size = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as usize;
        let end = pos + 8 + size + (size & 1);
        // The final pad byte is optional in practice.
        if end > data.len() + (size & 1) {
            return Err(bad(
                format,
                format!(
                    "chunk `{}` at byte {pos} runs past the end of the file",
                    String::from_utf8_lossy(&h[..4])
                ),
            ));
        }
        ids.push([h[0], h[1], h[2], h[3]]);
        pos = end;
    }
    if ids.is_empty() {
        return Err(bad(format, "RIFF container has no chunks"));
    }
    Ok(ids)
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests;
