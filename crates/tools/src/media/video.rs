//! Video container validation: ISO media (MP4/MOV/3GPP), EBML (WebM/Matroska), FLV, MPEG
//! program and transport streams, ASF (WMV). AVI is RIFF (see the module root).

use super::{MediaError, MediaFormat, bad};

pub const ASF_GUID: [u8; 16] = [
    0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C,
];

/// Top-level boxes that tile the file exactly; the `ftyp` brand picks the MIME type.
pub fn iso_media(data: &[u8]) -> Result<&'static str, MediaError> {
    let f = MediaFormat::IsoMedia;
    let mut pos = 0;
    let mut mime = "video/quicktime";
    let mut saw_moov = false;
    while pos < data.len() {
        let Some(h) = data.get(pos..pos + 8) else {
            return Err(bad(f, format!("box header at byte {pos} is cut off")));
        };
        let kind = &h[4..8];
        let mut size = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as u64;
        if size == 1 {
            let Some(l) = data.get(pos + 8..pos + 16) else {
                return Err(bad(f, format!("large box size at byte {pos} is cut off")));
            };
            size = u64::from_be_bytes([l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]]);
        } else if size == 0 {
            size = (data.len() - pos) as u64;
        }
        if size < 8 || pos as u64 + size > data.len() as u64 {
            return Err(bad(
                f,
                format!(
                    "box `{}` at byte {pos} runs past the end of the file",
                    String::from_utf8_lossy(kind)
                ),
            ));
        }
        if kind == b"ftyp" {
            let brand = data.get(pos + 8..pos + 12).unwrap_or_default();
            mime = match brand {
                b"qt  " => "video/quicktime",
                b"M4A " | b"M4B " => "audio/mp4",
                b if b.starts_with(b"3g") => "video/3gpp",
                _ => "video/mp4",
            };
        }
        saw_moov |= kind == b"moov";
        pos += size as usize;
    }
    if !saw_moov {
        return Err(bad(
            f,
            "no `moov` box (the movie header); the file is incomplete",
        ));
    }
    Ok(mime)
}

/// Read an EBML variable-length integer; `keep_marker` for element ids.
fn vint(data: &[u8], pos: usize, keep_marker: bool) -> Option<(u64, usize, bool)> {
    let first = *data.get(pos)?;
    let len = first.leading_zeros() as usize + 1;
    if len > 8 {
        return None;
    }
    let bytes = data.get(pos..pos + len)?;
    // In u64: an 8-byte integer (first byte 0x01) shifts the mask by 8, which overflowed a u8
    // (a panic in a debug build, the marker bit kept as a value bit in a release build).
    let mask = 0xFFu64 >> len;
    let mut v = if keep_marker {
        u64::from(first)
    } else {
        u64::from(first) & mask
    };
    let mut all_ones = v == mask;
    for &b in &bytes[1..] {
        v = (v << 8) | u64::from(b);
        all_ones &= b == 0xFF;
    }
    Some((v, len, all_ones))
}

/// The EBML header (its DocType picks WebM or Matroska), then top-level elements that fit.
pub fn ebml(data: &[u8]) -> Result<&'static str, MediaError> {
    let f = MediaFormat::Ebml;
    let mut pos = 0;
    let mut mime = None;
    let mut saw_segment = false;
    while pos < data.len() {
        let Some((id, id_len, _)) = vint(data, pos, true) else {
            return Err(bad(f, format!("element id at byte {pos} is cut off")));
        };
        let Some((size, size_len, unknown)) = vint(data, pos + id_len, false) else {
            return Err(bad(f, format!("element size at byte {pos} is cut off")));
        };
        let body = pos + id_len + size_len;
        let end = if unknown {
            data.len() as u64
        } else {
            body as u64 + size
        };
        if end > data.len() as u64 {
            return Err(bad(
                f,
                format!("element {id:#x} at byte {pos} runs past the end of the file"),
            ));
        }
        let end = end as usize;
        if id == 0x1A45_DFA3 {
            let header = &data[body..end];
            mime = Some(if header.windows(4).any(|w| w == b"webm") {
                "video/webm"
            } else {
                "video/x-matroska"
            });
        } else if id == 0x1853_8067 {
            saw_segment = true;
        }
        pos = end;
    }
    match (mime, saw_segment) {
        (Some(m), true) => Ok(m),
        (None, _) => Err(bad(f, "no EBML header")),
        (_, false) => Err(bad(f, "no Segment element; the file is incomplete")),
    }
}

/// Header, then tags each followed by a matching previous-tag-size, to the end exactly.
pub fn flv(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Flv;
    let Some(h) = data.get(5..9) else {
        return Err(bad(f, "header is cut off"));
    };
    let mut pos = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize + 4;
    if pos > data.len() {
        return Err(bad(f, "header is cut off"));
    }
    let mut tags = 0;
    while pos < data.len() {
        let Some(t) = data.get(pos..pos + 11) else {
            return Err(bad(f, format!("tag header at byte {pos} is cut off")));
        };
        let size = (usize::from(t[1]) << 16) | (usize::from(t[2]) << 8) | usize::from(t[3]);
        let Some(p) = data.get(pos + 11 + size..pos + 15 + size) else {
            return Err(bad(f, format!("the tag at byte {pos} is cut off")));
        };
        if u32::from_be_bytes([p[0], p[1], p[2], p[3]]) as usize != 11 + size {
            return Err(bad(
                f,
                format!("the tag at byte {pos} has a wrong trailing size"),
            ));
        }
        pos += 15 + size;
        tags += 1;
    }
    if tags == 0 {
        return Err(bad(f, "no tags"));
    }
    Ok(())
}

/// A pack header at the start and the program end code at the end.
pub fn mpeg_ps(data: &[u8]) -> Result<(), MediaError> {
    if data.len() < 14 || !data.ends_with(&[0, 0, 1, 0xB9]) {
        return Err(bad(
            MediaFormat::MpegPs,
            "no program end code (00 00 01 B9) at the end of the file",
        ));
    }
    Ok(())
}

/// Sync bytes at the start of three consecutive 188-byte packets (or every packet of a shorter
/// file).
pub fn looks_like_ts(head: &[u8]) -> bool {
    head.len() >= 188 && head.iter().step_by(188).take(3).all(|&b| b == 0x47)
}

/// Whole 188-byte packets, each starting with the sync byte.
pub fn mpeg_ts(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::MpegTs;
    if !data.len().is_multiple_of(188) {
        return Err(bad(
            f,
            "the last packet is cut off (length is not a multiple of 188)",
        ));
    }
    if let Some(i) = data.iter().step_by(188).position(|&b| b != 0x47) {
        return Err(bad(f, format!("packet {i} has no sync byte")));
    }
    Ok(())
}

/// Top-level objects (GUID + 64-bit size) that tile the file exactly.
pub fn asf(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Asf;
    let mut pos = 0;
    while pos < data.len() {
        let Some(s) = data.get(pos + 16..pos + 24) else {
            return Err(bad(f, format!("object header at byte {pos} is cut off")));
        };
        let size = u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
        if size < 24 || pos as u64 + size > data.len() as u64 {
            return Err(bad(
                f,
                format!("object at byte {pos} runs past the end of the file"),
            ));
        }
        pos += size as usize;
    }
    Ok(())
}
