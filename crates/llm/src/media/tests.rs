use tackle_protocol::{CallId, ContentBlock, MediaPart, Message, Part, Role, ToolResultPart};

use super::deliver::size_text;
use super::*;
use crate::catalog::{MediaLimit, ModelEntry};

const MIB: u64 = 1 << 20;

/// Seed 000's matrix, as the seed writes it: family, then images, PDF, video, audio.
const SEED_MATRIX: &str = "\
Anthropic\tTool result\tTool result\tNo\tNo
Anthropic-compatible\tTool result\tTool result\tUser turn on capable MiniMax models\tNo
Bedrock Converse\tTool result\tTool result\tTool result on capable Nova models\tNo
OpenAI/compatible Responses, Azure Responses\tTool result\tTool result\tNo\tNo
OpenAI Chat\tUser turn\tUser turn\tNo\tNo
Azure Chat\tUser turn\tNo\tNo\tNo
OpenAI-compatible Chat\tUser turn\tUser turn\tUser turn on capable Kimi/Qwen models\tNo
Gemini, Vertex Gemini\tUser turn\tUser turn\tUser turn\tUser turn
Cohere\tUser turn\tNo\tNo\tNo";

fn families_of_row(row: &str) -> Vec<DeliveryFamily> {
    use DeliveryFamily::*;
    match row {
        "Anthropic" => vec![Anthropic],
        "Anthropic-compatible" => vec![AnthropicCompatible],
        "Bedrock Converse" => vec![BedrockConverse],
        "OpenAI/compatible Responses, Azure Responses" => vec![Responses],
        "OpenAI Chat" => vec![OpenAiChat],
        "Azure Chat" => vec![AzureChat],
        "OpenAI-compatible Chat" => vec![CompatibleChat],
        "Gemini, Vertex Gemini" => vec![Gemini, VertexGemini],
        "Cohere" => vec![Cohere],
        other => panic!("a matrix row this test does not know: {other}"),
    }
}

#[test]
fn placement_is_the_seed_matrix() {
    let kinds = [
        MediaKind::Image,
        MediaKind::Pdf,
        MediaKind::Video,
        MediaKind::Audio,
    ];
    let mut rows = 0;
    for line in SEED_MATRIX.lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        for family in families_of_row(cells[0]) {
            for (kind, cell) in kinds.iter().zip(&cells[1..]) {
                let want = if cell.starts_with("Tool result") {
                    Some(Placement::ToolResult)
                } else if cell.starts_with("User turn") {
                    Some(Placement::UserTurn)
                } else {
                    None
                };
                assert_eq!(family.placement(*kind), want, "{family} {kind}");
            }
            rows += 1;
        }
    }
    assert_eq!(rows, 10, "every family is a row");
}

#[test]
fn inline_limits_are_the_seeds_numbers() {
    use DeliveryFamily::*;
    use MediaKind::*;
    let cases = [
        (Anthropic, Image, 7.5),
        (BedrockConverse, Image, 3.75),
        (BedrockConverse, Pdf, 4.5),
        (BedrockConverse, Video, 18.7),
        (VertexGemini, Image, 7.0),
        (Gemini, Image, 14.0),
        (Gemini, Video, 14.0),
        (Gemini, Audio, 14.0),
        (OpenAiChat, Image, 20.0),
        (Responses, Pdf, 20.0),
        (CompatibleChat, Video, 25.0),
        (VertexGemini, Audio, 20.0),
    ];
    for (family, kind, mib) in cases {
        let want = (mib * MIB as f64) as u64;
        let got = family.inline_limit(kind);
        assert!(got.abs_diff(want) <= 1, "{family} {kind}: {got} vs {want}");
    }
}

#[test]
fn the_family_follows_the_kind_and_whether_the_url_is_the_vendors() {
    use crate::catalog::{ProviderKind, ProviderSpec};
    let spec = |kind, url: &str| ProviderSpec {
        name: "p".into(),
        kind,
        base_url: Some(url.into()),
        api_key_env: None,
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
        api_version: None,
    };
    let cases = [
        (
            ProviderKind::Anthropic,
            "https://api.anthropic.com/",
            DeliveryFamily::Anthropic,
        ),
        (
            ProviderKind::Anthropic,
            "https://api.minimax.io/anthropic",
            DeliveryFamily::AnthropicCompatible,
        ),
        (
            ProviderKind::OpenAiChat,
            "https://api.openai.com/v1",
            DeliveryFamily::OpenAiChat,
        ),
        (
            ProviderKind::OpenAiChat,
            "http://127.0.0.1:8095/v1",
            DeliveryFamily::CompatibleChat,
        ),
        (
            ProviderKind::OpenAiResponses,
            "http://127.0.0.1:8095/v1",
            DeliveryFamily::Responses,
        ),
        (
            ProviderKind::AzureResponses,
            "https://x.openai.azure.com",
            DeliveryFamily::Responses,
        ),
        (
            ProviderKind::AzureChat,
            "https://x.openai.azure.com",
            DeliveryFamily::AzureChat,
        ),
    ];
    for (kind, url, want) in cases {
        assert_eq!(DeliveryFamily::of(&spec(kind, url)), want, "{kind} {url}");
    }
}

#[test]
fn kinds_come_from_the_sniffed_mime_type() {
    assert_eq!(MediaKind::of_mime("image/png"), Some(MediaKind::Image));
    assert_eq!(MediaKind::of_mime("application/pdf"), Some(MediaKind::Pdf));
    assert_eq!(MediaKind::of_mime("Audio/MPEG"), Some(MediaKind::Audio));
    assert_eq!(
        MediaKind::of_mime("video/mp4; codecs=avc1"),
        Some(MediaKind::Video)
    );
    assert_eq!(MediaKind::of_mime("text/plain"), None);
    assert_eq!(MediaKind::of_mime("garbage"), None);
}

fn model(media: &[(Modality, u64, u32)]) -> ModelEntry {
    let mut input = vec![Modality::Text];
    input.extend(media.iter().map(|(m, _, _)| *m));
    ModelEntry {
        id: "local:test-model".parse().unwrap(),
        context_window: 100_000,
        max_output: 4_096,
        input,
        media: media
            .iter()
            .map(|(m, b, c)| {
                (
                    *m,
                    MediaLimit {
                        max_bytes: *b,
                        max_count: *c,
                    },
                )
            })
            .collect(),
        prices: None,
    }
}

fn attachment(mime: &str, bytes: u64, n: u32) -> ContentBlock {
    ContentBlock::Attachment {
        mime_type: mime.into(),
        bytes,
        artifact: format!("artifact://sha256/{n:064x}"),
    }
}

fn result_message(call: &str, blocks: Vec<ContentBlock>) -> Message {
    Message {
        role: Role::User,
        content: vec![Part::ToolResult(ToolResultPart {
            call_id: CallId(call.into()),
            content: blocks,
            is_error: false,
            media: Vec::new(),
        })],
    }
}

/// A store holding, for each artifact, as many bytes as its reference says (`size` in the
/// artifact's last hex digits is not needed: the test gives sizes per artifact).
fn store(sizes: &[(u32, usize)]) -> impl Fn(&str) -> Result<Vec<u8>, String> + use<> {
    let sizes: Vec<(String, usize)> = sizes
        .iter()
        .map(|(n, s)| (format!("artifact://sha256/{n:064x}"), *s))
        .collect();
    move |artifact: &str| {
        sizes
            .iter()
            .find(|(a, _)| a == artifact)
            .map(|(_, s)| vec![7u8; *s])
            .ok_or_else(|| format!("{artifact} is not in the store"))
    }
}

fn result_of(message: &Message) -> &ToolResultPart {
    match &message.content[0] {
        Part::ToolResult(r) => r,
        other => panic!("not a result: {other:?}"),
    }
}

fn texts(result: &ToolResultPart) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.as_str(),
            ContentBlock::Attachment { .. } => panic!("an attachment block was left: {b:?}"),
        })
        .collect()
}

#[test]
fn capability_then_family_refuse_with_the_names_seed_000_asks_for() {
    let text_only = model(&[]);
    let e = admit(&text_only, DeliveryFamily::Anthropic, "image/png").unwrap_err();
    assert!(matches!(e, Refusal::Capability { .. }), "{e:?}");
    let shown = e.to_string();
    assert!(
        shown.contains("local:test-model") && shown.contains("image"),
        "{shown}"
    );

    // The capability is checked first: a model without audio on a family without audio is
    // refused for the model.
    let e = admit(&text_only, DeliveryFamily::Anthropic, "audio/mpeg").unwrap_err();
    assert!(matches!(e, Refusal::Capability { .. }), "{e:?}");

    let audio = model(&[(Modality::Audio, 20 * MIB, 1)]);
    let e = admit(&audio, DeliveryFamily::Anthropic, "audio/mpeg").unwrap_err();
    assert!(e.to_string().contains("Anthropic Messages"), "{e}");
    assert_eq!(
        admit(&audio, DeliveryFamily::Gemini, "audio/mpeg"),
        Ok(MediaKind::Audio)
    );
}

#[test]
fn an_undeliverable_result_becomes_a_tool_error() {
    let mut result = ToolResultPart {
        call_id: CallId("c1".into()),
        content: vec![
            ContentBlock::Text {
                text: "read 1 file".into(),
            },
            attachment("application/pdf", 1_000, 1),
        ],
        is_error: false,
        media: Vec::new(),
    };
    let image_only = model(&[(Modality::Image, 5 * MIB, 10)]);
    assert!(
        refuse_undeliverable(&mut result.clone(), &image_only, DeliveryFamily::Gemini).is_some()
    );
    let refusal = refuse_undeliverable(&mut result, &image_only, DeliveryFamily::Gemini).unwrap();
    assert!(result.is_error);
    assert_eq!(texts(&result), vec![refusal.to_string().as_str()]);

    let mut fine = ToolResultPart {
        call_id: CallId("c2".into()),
        content: vec![attachment("image/png", 10, 2)],
        is_error: false,
        media: Vec::new(),
    };
    let before = fine.clone();
    assert_eq!(
        refuse_undeliverable(&mut fine, &image_only, DeliveryFamily::Anthropic),
        None
    );
    assert_eq!(fine, before);
}

#[test]
fn tool_result_families_attach_inside_the_result() {
    let m = model(&[(Modality::Image, 5 * MIB, 10), (Modality::Pdf, 32 * MIB, 5)]);
    let messages = vec![
        Message::user_text("look"),
        result_message(
            "c1",
            vec![
                ContentBlock::Text {
                    text: "2 files".into(),
                },
                attachment("image/png", 300, 1),
                attachment("application/pdf", 2_000, 2),
            ],
        ),
    ];
    let out = deliver(
        &messages,
        &m,
        DeliveryFamily::Anthropic,
        &store(&[(1, 300), (2, 2_000)]),
    );
    assert_eq!((out.delivered, out.degraded), (2, 0));
    assert_eq!(out.messages.len(), 2, "no user turn is emitted");
    let r = result_of(&out.messages[1]);
    assert_eq!(r.media.len(), 2);
    assert_eq!(r.media[0].mime_type, "image/png");
    assert_eq!(r.media[0].data_base64.len(), 400, "300 bytes, base64");
    let t = texts(r);
    assert_eq!(t[0], "2 files");
    assert!(
        t[1].contains("attachment 1: image/png, 300 bytes")
            && t[1].ends_with("attached to this result]"),
        "{}",
        t[1]
    );
}

#[test]
fn user_turn_families_emit_one_user_turn_right_after_the_results() {
    let m = model(&[(Modality::Image, 5 * MIB, 10)]);
    let messages = vec![
        result_message(
            "call_a",
            vec![
                attachment("image/png", 10, 1),
                attachment("image/jpeg", 20, 2),
            ],
        ),
        Message::user_text("and now?"),
    ];
    let out = deliver(
        &messages,
        &m,
        DeliveryFamily::OpenAiChat,
        &store(&[(1, 10), (2, 20)]),
    );
    assert_eq!(out.messages.len(), 3);
    assert!(result_of(&out.messages[0]).media.is_empty());
    let t = texts(result_of(&out.messages[0]));
    assert!(
        t[0].contains("follows in the next user message as [attachment 1 of call call_a]"),
        "{}",
        t[0]
    );
    let turn = &out.messages[1];
    assert_eq!(turn.role, Role::User);
    let kinds: Vec<&str> = turn
        .content
        .iter()
        .map(|p| match p {
            Part::Text { .. } => "text",
            Part::Media(_) => "media",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["text", "media", "text", "media"]);
    assert_eq!(out.messages[2], messages[1]);
}

#[test]
fn items_are_clamped_to_the_smaller_of_the_model_and_the_family_limit() {
    // The family is smaller: Bedrock takes 3.75 MiB images though the model says 20 MiB.
    let m = model(&[(Modality::Image, 20 * MIB, 10)]);
    let big = 4 * MIB;
    let messages = vec![result_message("c", vec![attachment("image/png", big, 1)])];
    let out = deliver(
        &messages,
        &m,
        DeliveryFamily::BedrockConverse,
        &store(&[(1, big as usize)]),
    );
    assert_eq!((out.delivered, out.degraded), (0, 1));
    let t = texts(result_of(&out.messages[0]));
    assert!(
        t[0].contains("not delivered") && t[0].contains("3.8 MiB") || t[0].contains("3.75"),
        "{}",
        t[0]
    );
    // The model is smaller.
    let small_model = model(&[(Modality::Image, MIB, 10)]);
    let out = deliver(
        &messages,
        &small_model,
        DeliveryFamily::Gemini,
        &store(&[(1, big as usize)]),
    );
    assert!(texts(result_of(&out.messages[0]))[0].contains("larger than the 1 MiB"));
    // A store whose bytes disagree with the recorded size is judged by the bytes.
    let lying = vec![result_message("c", vec![attachment("image/png", 10, 1)])];
    let out = deliver(
        &lying,
        &small_model,
        DeliveryFamily::Gemini,
        &store(&[(1, 2 * MIB as usize)]),
    );
    assert_eq!(out.degraded, 1);
}

#[test]
fn counts_per_kind_keep_the_newest_results() {
    let m = model(&[(Modality::Image, MIB, 2), (Modality::Pdf, MIB, 5)]);
    let messages = vec![
        result_message(
            "old",
            vec![
                attachment("image/png", 10, 1),
                attachment("application/pdf", 10, 4),
            ],
        ),
        result_message("mid", vec![attachment("image/png", 10, 2)]),
        result_message("new", vec![attachment("image/png", 10, 3)]),
    ];
    let out = deliver(
        &messages,
        &m,
        DeliveryFamily::Responses,
        &store(&[(1, 10), (2, 10), (3, 10), (4, 10)]),
    );
    assert_eq!((out.delivered, out.degraded), (3, 1));
    let old = result_of(&out.messages[0]);
    assert_eq!(old.media.len(), 1, "the PDF still fits its own count");
    assert!(
        texts(old)[0].contains("already carries the 2 image items"),
        "{:?}",
        texts(old)
    );
    assert_eq!(result_of(&out.messages[1]).media.len(), 1);
    assert_eq!(result_of(&out.messages[2]).media.len(), 1);
}

#[test]
fn the_combined_budget_keeps_what_fits_and_notes_the_rest() {
    let m = model(&[(Modality::Image, 14 * MIB, 100)]);
    let item = 5 * MIB;
    let messages = vec![result_message(
        "c",
        vec![
            attachment("image/png", item, 1),
            attachment("image/png", item, 2),
            attachment("image/png", item, 3),
        ],
    )];
    let s = store(&[(1, item as usize), (2, item as usize), (3, item as usize)]);
    let out = deliver(&messages, &m, DeliveryFamily::Gemini, &s);
    assert_eq!(
        (out.delivered, out.degraded),
        (2, 1),
        "14 MiB holds two of 5 MiB"
    );
    let t = texts(result_of(&out.messages[0]));
    assert!(
        t[2].contains("media budget for Gemini (14 MiB)"),
        "{}",
        t[2]
    );
}

#[test]
fn unreadable_and_no_longer_admissible_attachments_become_notes() {
    let m = model(&[(Modality::Image, MIB, 10)]);
    let messages = vec![result_message(
        "c",
        vec![
            attachment("image/png", 10, 1),
            attachment("video/mp4", 10, 2),
        ],
    )];
    let out = deliver(&messages, &m, DeliveryFamily::CompatibleChat, &store(&[]));
    assert_eq!((out.delivered, out.degraded), (0, 2));
    let t = texts(result_of(&out.messages[0]));
    assert!(
        t[0].contains("could not be read back") && t[0].contains("not in the store"),
        "{}",
        t[0]
    );
    assert!(t[1].contains("does not take video"), "{}", t[1]);
}

#[test]
fn only_video_counts_toward_context_estimates() {
    let part = |mime: &str| MediaPart {
        mime_type: mime.into(),
        data_base64: "AAAA".into(),
        artifact: "artifact://sha256/ab".into(),
    };
    assert_eq!(context_tokens(&part("image/png")), 0);
    assert_eq!(context_tokens(&part("application/pdf")), 0);
    assert_eq!(context_tokens(&part("video/mp4")), VIDEO_CONTEXT_TOKENS);
}

#[test]
fn sizes_read_as_people_write_them() {
    assert_eq!(size_text(300), "300 bytes");
    assert_eq!(size_text(2048), "2 KiB");
    assert_eq!(size_text(15 * MIB / 2), "7.5 MiB");
    assert_eq!(size_text(14 * MIB), "14 MiB");
    assert_eq!(size_text(15 * MIB / 4), "3.75 MiB");
}
