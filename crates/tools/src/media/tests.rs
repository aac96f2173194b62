use super::fixtures as fx;
use super::*;

/// Every format family: a valid file is recognised with its MIME type, and the same file cut
/// short is a clear error.
#[test]
fn valid_files_validate_and_truncated_ones_are_refused() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("png", fx::png(), "image/png"),
        ("jpeg", fx::jpeg(), "image/jpeg"),
        ("gif", fx::gif(), "image/gif"),
        ("webp", fx::webp(), "image/webp"),
        ("pdf", fx::pdf(), "application/pdf"),
        ("mp3", fx::mp3(), "audio/mpeg"),
        ("wav", fx::wav(), "audio/wav"),
        ("ogg", fx::ogg(), "audio/ogg"),
        ("flac", fx::flac(), "audio/flac"),
        ("mp4", fx::iso(b"isom"), "video/mp4"),
        ("mov", fx::iso(b"qt  "), "video/quicktime"),
        ("3gp", fx::iso(b"3gp5"), "video/3gpp"),
        ("webm", fx::webm(), "video/webm"),
        ("avi", fx::avi(), "video/x-msvideo"),
        ("flv", fx::flv(), "video/x-flv"),
        ("mpeg", fx::mpeg_ps(), "video/mpeg"),
        ("ts", fx::mpeg_ts(), "video/mp2t"),
        ("wmv", fx::asf(), "video/x-ms-wmv"),
    ];
    for (name, data, mime) in cases {
        let format = sniff(&data).unwrap_or_else(|| panic!("{name}: not sniffed"));
        assert_eq!(validate(format, &data), Ok(mime), "{name}");
        let cut = &data[..data.len() - 3];
        match sniff(cut) {
            None => {}
            Some(f) => {
                let err = validate(f, cut).expect_err(name);
                assert!(
                    err.to_string().contains("malformed or truncated"),
                    "{name}: {err}"
                );
            }
        }
    }
}

#[test]
fn png_with_a_bad_crc_is_refused() {
    let mut data = fx::png();
    data[20] ^= 1;
    let err = validate(MediaFormat::Png, &data).unwrap_err();
    assert!(err.reason.contains("bad CRC"), "{err}");
}

#[test]
fn text_is_not_media() {
    for text in [
        &b"fn main() {}\n"[..],
        b"",
        b"GIF is a format\n",
        b"RIFF raff",
    ] {
        assert_eq!(sniff(text), None, "{:?}", String::from_utf8_lossy(text));
    }
}
