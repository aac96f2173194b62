//! Tiny, valid media files built by hand for tests.

use super::image::crc32;

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
}

/// A 1×1 grey PNG.
pub fn png() -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    png_chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
    // zlib stream of one filter byte and one pixel (stored block).
    png_chunk(
        &mut out,
        b"IDAT",
        &[
            0x78, 0x01, 0x01, 0x02, 0x00, 0xFD, 0xFF, 0x00, 0x80, 0x00, 0x81, 0x00, 0x81,
        ],
    );
    png_chunk(&mut out, b"IEND", &[]);
    out
}

pub fn jpeg() -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    out.extend_from_slice(&[0xFF, 0xE0, 0x00, 0x10]);
    out.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    out.extend_from_slice(&[0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0]);
    out.extend_from_slice(&[0x12, 0x34, 0x56]);
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

/// A 1×1 GIF with a two-colour table.
pub fn gif() -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend_from_slice(&[1, 0, 1, 0, 0x80, 0, 0]);
    out.extend_from_slice(&[0, 0, 0, 255, 255, 255]);
    out.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
    out.extend_from_slice(&[2, 2, 0x4C, 0x01, 0]);
    out.push(0x3B);
    out
}

fn riff(form: &[u8; 4], chunks: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
    let mut body = form.to_vec();
    for (id, data) in chunks {
        body.extend_from_slice(*id);
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(data);
        if !data.len().is_multiple_of(2) {
            body.push(0);
        }
    }
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

pub fn wav() -> Vec<u8> {
    let fmt = [1, 0, 1, 0, 0x40, 0x1F, 0, 0, 0x40, 0x1F, 0, 0, 1, 0, 8, 0];
    riff(
        b"WAVE",
        &[(b"fmt ", &fmt), (b"data", &[128, 128, 128, 128])],
    )
}

pub fn webp() -> Vec<u8> {
    riff(b"WEBP", &[(b"VP8L", &[0x2F, 0, 0, 0, 0])])
}

pub fn avi() -> Vec<u8> {
    riff(b"AVI ", &[(b"LIST", b"hdrlavih")])
}

pub fn pdf() -> Vec<u8> {
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\nstartxref\n9\n%%EOF\n".to_vec()
}

/// One MPEG-1 Layer III frame at 32 kbps, 32 kHz: 144 bytes.
pub fn mp3() -> Vec<u8> {
    let mut out = b"ID3\x03\0\0\0\0\0\0".to_vec();
    let mut frame = vec![0xFF, 0xFB, 0x18, 0xC4];
    frame.resize(144, 0);
    out.extend_from_slice(&frame);
    out
}

pub fn ogg() -> Vec<u8> {
    let mut out = b"OggS\0".to_vec();
    out.push(0x06); // beginning and end of stream
    out.extend_from_slice(&[0; 20]);
    out.push(1);
    out.push(3);
    out.extend_from_slice(b"abc");
    out
}

pub fn flac() -> Vec<u8> {
    let mut out = b"fLaC".to_vec();
    out.extend_from_slice(&[0x80, 0, 0, 34]);
    out.extend_from_slice(&[0; 34]);
    out.extend_from_slice(&[0xFF, 0xF8, 0x69, 0x08]);
    out
}

fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out
}

pub fn iso(brand: &[u8; 4]) -> Vec<u8> {
    let mut out = boxed(b"ftyp", &[&brand[..], &[0, 0, 0, 0], &brand[..]].concat());
    out.extend(boxed(b"moov", &boxed(b"mvhd", &[0; 12])));
    out.extend(boxed(b"mdat", &[1, 2, 3]));
    out
}

pub fn webm() -> Vec<u8> {
    let mut out = vec![0x1A, 0x45, 0xDF, 0xA3, 0x87, 0x42, 0x82, 0x84];
    out.extend_from_slice(b"webm");
    out.extend_from_slice(&[0x18, 0x53, 0x80, 0x67, 0x83, 1, 2, 3]);
    out
}

pub fn flv() -> Vec<u8> {
    let mut out = b"FLV\x01\x05\0\0\0\x09".to_vec();
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&[18, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0xAB, 0xCD]);
    out.extend_from_slice(&13u32.to_be_bytes());
    out
}

pub fn mpeg_ps() -> Vec<u8> {
    let mut out = vec![0, 0, 1, 0xBA, 0x44, 0, 4, 0, 4, 1, 1, 0x89, 0xC3, 0xF8];
    out.extend_from_slice(&[0, 0, 1, 0xB9]);
    out
}

pub fn mpeg_ts() -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..3 {
        let mut p = vec![0xFFu8; 188];
        p[0] = 0x47;
        out.extend(p);
    }
    out
}

pub fn asf() -> Vec<u8> {
    let mut out = super::video::ASF_GUID.to_vec();
    out.extend_from_slice(&30u64.to_le_bytes());
    out.extend_from_slice(&[0; 6]);
    out
}
