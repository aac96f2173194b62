//! PNG, JPEG, GIF and PDF validation.

use super::{MediaError, MediaFormat, bad};

/// CRC-32 (IEEE 802.3, as PNG uses it), bitwise: images are small and this runs once per read.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn be32(b: &[u8]) -> usize {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize
}

/// Every chunk's length and CRC, IHDR first, IEND last with nothing after it.
pub fn png(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Png;
    let mut pos = 8;
    let mut first = true;
    loop {
        let Some(h) = data.get(pos..pos + 8) else {
            return Err(bad(
                f,
                format!("no IEND chunk (file ends at byte {})", data.len()),
            ));
        };
        let len = be32(h);
        let kind = &h[4..8];
        let Some(body) = data.get(pos + 4..pos + 8 + len) else {
            return Err(bad(
                f,
                format!(
                    "chunk `{}` at byte {pos} runs past the end of the file",
                    String::from_utf8_lossy(kind)
                ),
            ));
        };
        let Some(crc) = data.get(pos + 8 + len..pos + 12 + len) else {
            return Err(bad(
                f,
                format!("chunk CRC at byte {} is cut off", pos + 8 + len),
            ));
        };
        if crc32(body) as usize != be32(crc) {
            return Err(bad(
                f,
                format!(
                    "chunk `{}` at byte {pos} has a bad CRC",
                    String::from_utf8_lossy(kind)
                ),
            ));
        }
        if first && (kind != b"IHDR" || len != 13) {
            return Err(bad(f, "the first chunk is not a 13-byte IHDR"));
        }
        first = false;
        pos += 12 + len;
        if kind == b"IEND" {
            if pos != data.len() {
                return Err(bad(
                    f,
                    format!("{} bytes follow the IEND chunk", data.len() - pos),
                ));
            }
            return Ok(());
        }
    }
}

/// SOI, well-formed marker segments up to the scan, and EOI as the last two bytes.
pub fn jpeg(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Jpeg;
    let mut pos = 2;
    loop {
        let Some(&[ff, marker]) = data.get(pos..pos + 2) else {
            return Err(bad(f, format!("marker expected at byte {pos}, file ended")));
        };
        if ff != 0xFF {
            return Err(bad(
                f,
                format!("marker expected at byte {pos}, found {ff:#04x}"),
            ));
        }
        match marker {
            0xFF => pos += 1,
            0xD8 | 0x01 | 0xD0..=0xD7 => pos += 2,
            0xD9 => return Err(bad(f, "EOI before any image data")),
            _ => {
                let Some(l) = data.get(pos + 2..pos + 4) else {
                    return Err(bad(f, format!("segment length at byte {pos} is cut off")));
                };
                let len = usize::from(u16::from_be_bytes([l[0], l[1]]));
                if len < 2 || pos + 2 + len > data.len() {
                    return Err(bad(
                        f,
                        format!("segment {marker:#04x} at byte {pos} runs past the end"),
                    ));
                }
                pos += 2 + len;
                if marker == 0xDA {
                    break;
                }
            }
        }
    }
    if data.len() < pos + 2 || !data.ends_with(&[0xFF, 0xD9]) {
        return Err(bad(f, "no EOI marker (FF D9) at the end of the file"));
    }
    Ok(())
}

/// Header, colour tables, every block and sub-block, and the trailer as the last byte.
pub fn gif(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Gif;
    let cut = |what: &str| bad(f, format!("{what} is cut off; the file has no trailer"));
    let Some(&packed) = data.get(10) else {
        return Err(cut("the logical screen descriptor"));
    };
    let mut pos = 13;
    if packed & 0x80 != 0 {
        pos += 3 << ((packed & 7) + 1);
    }
    let sub_blocks = |mut pos: usize| -> Result<usize, MediaError> {
        loop {
            let Some(&n) = data.get(pos) else {
                return Err(cut("a data sub-block"));
            };
            pos += 1 + usize::from(n);
            if n == 0 {
                return Ok(pos);
            }
        }
    };
    loop {
        match data.get(pos) {
            None => return Err(cut("the block list")),
            Some(0x3B) => {
                if pos + 1 != data.len() {
                    return Err(bad(f, "bytes follow the trailer"));
                }
                return Ok(());
            }
            Some(0x21) => pos = sub_blocks(pos + 2)?,
            Some(0x2C) => {
                let Some(&p) = data.get(pos + 9) else {
                    return Err(cut("an image descriptor"));
                };
                pos += 10;
                if p & 0x80 != 0 {
                    pos += 3 << ((p & 7) + 1);
                }
                // LZW minimum code size, then the image data sub-blocks.
                pos = sub_blocks(pos + 1)?;
            }
            Some(b) => return Err(bad(f, format!("unknown block {b:#04x} at byte {pos}"))),
        }
    }
}

/// `%PDF-` header and a `%%EOF` marker at the end (only whitespace after it).
pub fn pdf(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Pdf;
    let trimmed = data
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(&data[..0], |i| &data[..=i]);
    if !trimmed.ends_with(b"%%EOF") {
        return Err(bad(f, "no %%EOF marker at the end of the file"));
    }
    let tail = &data[data.len().saturating_sub(2048)..];
    if !tail.windows(9).any(|w| w == b"startxref") && !data.windows(4).any(|w| w == b"obj\n") {
        return Err(bad(f, "no cross-reference (startxref) or objects"));
    }
    Ok(())
}
