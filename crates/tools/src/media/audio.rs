//! MP3, Ogg and FLAC validation.

use super::{MediaError, MediaFormat, bad};

const BITRATES_V1: [[u32; 16]; 3] = [
    [
        0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0,
    ],
    [
        0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0,
    ],
    [
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0,
    ],
];
const BITRATES_V2: [[u32; 16]; 3] = [
    [
        0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0,
    ],
    [
        0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0,
    ],
    [
        0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0,
    ],
];

/// The length of the MPEG audio frame whose header starts `b`, if it is a valid header.
pub fn mp3_frame_header(b: &[u8]) -> Option<usize> {
    let h = b.get(..4)?;
    if h[0] != 0xFF || h[1] & 0xE0 != 0xE0 {
        return None;
    }
    let version = (h[1] >> 3) & 3; // 0: 2.5, 2: 2, 3: 1
    let layer = (h[1] >> 1) & 3; // 1: III, 2: II, 3: I
    let br_index = usize::from(h[2] >> 4);
    let sr_index = usize::from((h[2] >> 2) & 3);
    if version == 1 || layer == 0 || br_index == 0 || br_index == 15 || sr_index == 3 {
        return None;
    }
    let pad = u32::from((h[2] >> 1) & 1);
    let layer_row = usize::from(3 - layer); // 0: I, 1: II, 2: III
    let (kbps, base_rate) = if version == 3 {
        (
            BITRATES_V1[layer_row][br_index],
            [44100, 48000, 32000][sr_index],
        )
    } else {
        let rate = [22050, 24000, 16000][sr_index];
        (
            BITRATES_V2[layer_row][br_index],
            if version == 0 { rate / 2 } else { rate },
        )
    };
    let bps = kbps * 1000;
    let len = match layer_row {
        0 => (12 * bps / base_rate + pad) * 4,
        2 if version != 3 => 72 * bps / base_rate + pad,
        _ => 144 * bps / base_rate + pad,
    };
    Some(len as usize)
}

/// An optional ID3v2 tag, then whole MPEG frames to the end (an ID3v1 tag may follow).
pub fn mp3(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Mp3;
    let mut pos = 0;
    if data.starts_with(b"ID3") {
        let Some(s) = data.get(6..10) else {
            return Err(bad(f, "ID3 header is cut off"));
        };
        let size = s
            .iter()
            .fold(0usize, |acc, &b| (acc << 7) | usize::from(b & 0x7F));
        pos = 10 + size;
        if pos > data.len() {
            return Err(bad(f, "ID3 tag runs past the end of the file"));
        }
    }
    let mut frames = 0;
    while pos < data.len() {
        if data.len() - pos == 128 && data[pos..].starts_with(b"TAG") {
            break;
        }
        let Some(len) = mp3_frame_header(&data[pos..]) else {
            return Err(bad(f, format!("no MPEG frame header at byte {pos}")));
        };
        if pos + len > data.len() {
            return Err(bad(f, format!("the frame at byte {pos} is cut off")));
        }
        pos += len;
        frames += 1;
    }
    if frames == 0 {
        return Err(bad(f, "no audio frames"));
    }
    Ok(())
}

/// Whole pages to the end of the file, the last one flagged end-of-stream.
pub fn ogg(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Ogg;
    let mut pos = 0;
    let mut last_flags = 0;
    while pos < data.len() {
        let Some(h) = data.get(pos..pos + 27) else {
            return Err(bad(f, format!("page header at byte {pos} is cut off")));
        };
        if &h[..4] != b"OggS" || h[4] != 0 {
            return Err(bad(f, format!("no page at byte {pos}")));
        }
        let segments = usize::from(h[26]);
        let Some(table) = data.get(pos + 27..pos + 27 + segments) else {
            return Err(bad(f, format!("segment table at byte {pos} is cut off")));
        };
        let body: usize = table.iter().map(|&b| usize::from(b)).sum();
        let end = pos + 27 + segments + body;
        if end > data.len() {
            return Err(bad(f, format!("the page at byte {pos} is cut off")));
        }
        last_flags = h[5];
        pos = end;
    }
    if last_flags & 4 == 0 {
        return Err(bad(f, "the last page is not marked end-of-stream"));
    }
    Ok(())
}

/// STREAMINFO first, every metadata block whole, then a frame sync code.
pub fn flac(data: &[u8]) -> Result<(), MediaError> {
    let f = MediaFormat::Flac;
    let mut pos = 4;
    let mut first = true;
    loop {
        let Some(h) = data.get(pos..pos + 4) else {
            return Err(bad(
                f,
                format!("metadata block header at byte {pos} is cut off"),
            ));
        };
        let last = h[0] & 0x80 != 0;
        let kind = h[0] & 0x7F;
        let len = (usize::from(h[1]) << 16) | (usize::from(h[2]) << 8) | usize::from(h[3]);
        if first && (kind != 0 || len != 34) {
            return Err(bad(f, "the first metadata block is not STREAMINFO"));
        }
        first = false;
        pos += 4 + len;
        if pos > data.len() {
            return Err(bad(f, "a metadata block runs past the end of the file"));
        }
        if last {
            break;
        }
    }
    match data.get(pos..pos + 2) {
        Some(&[0xFF, b]) if b & 0xFE == 0xF8 => Ok(()),
        _ => Err(bad(
            f,
            format!("no audio frame after the metadata (byte {pos})"),
        )),
    }
}
