//! Golden request bodies for the media matrix: one conversation whose tool results carry an
//! image, a PDF and a video (and an image too large for any family), delivered for each family
//! with an adapter and lowered by that adapter. `TACKLE_BLESS=1` rewrites the files.

use serde_json::Value;
use tackle_protocol::{
    CallId, ContentBlock, Message, Part, Role, ToolArguments, ToolCallPart, ToolResultPart,
};

use super::{DeliveryFamily, deliver};
use crate::catalog::{MediaLimit, Modality, ModelEntry};
use crate::openai_chat::OpenAiChatConfig;
use crate::openai_responses::OpenAiResponsesConfig;
use crate::request::TurnRequest;
use crate::tool_names::ToolNameMap;

const MIB: u64 = 1 << 20;

fn model() -> ModelEntry {
    let limit = |max_bytes| MediaLimit {
        max_bytes,
        max_count: 10,
    };
    ModelEntry {
        id: "test:every-kind".parse().unwrap(),
        context_window: 200_000,
        max_output: 8_192,
        input: vec![
            Modality::Text,
            Modality::Image,
            Modality::Pdf,
            Modality::Video,
        ],
        media: vec![
            (Modality::Image, limit(20 * MIB)),
            (Modality::Pdf, limit(32 * MIB)),
            (Modality::Video, limit(100 * MIB)),
        ],
        prices: None,
    }
}

fn artifact(n: u8) -> String {
    format!("artifact://sha256/{}", format!("{n:02x}").repeat(32))
}

fn conversation() -> Vec<Message> {
    let attachment = |mime: &str, bytes, n| ContentBlock::Attachment {
        mime_type: mime.into(),
        bytes,
        artifact: artifact(n),
    };
    vec![
        Message::user_text("What do these files show?"),
        Message {
            role: Role::Assistant,
            content: vec![Part::ToolCall(ToolCallPart {
                id: CallId("call_1".into()),
                name: "read_many_files".into(),
                arguments: ToolArguments::Valid {
                    value: serde_json::json!({"pattern": "media/*"}),
                },
            })],
        },
        Message {
            role: Role::User,
            content: vec![Part::ToolResult(ToolResultPart {
                call_id: CallId("call_1".into()),
                content: vec![
                    ContentBlock::Text {
                        text: "4 files".into(),
                    },
                    attachment("image/png", 4, 1),
                    attachment("application/pdf", 5, 2),
                    attachment("video/mp4", 6, 3),
                    attachment("image/jpeg", 30 * MIB, 4),
                ],
                is_error: false,
                media: Vec::new(),
            })],
        },
    ]
}

fn bytes(artifact: &str) -> Result<Vec<u8>, String> {
    let n = u8::from_str_radix(&artifact[artifact.len() - 2..], 16).map_err(|e| e.to_string())?;
    Ok(match n {
        1 => b"\x89PNG".to_vec(),
        2 => b"%PDF-".to_vec(),
        3 => b"\0\0\0\x18ft".to_vec(),
        _ => return Err(format!("{artifact} is not in this store")),
    })
}

fn body(family: DeliveryFamily) -> Value {
    let delivered = deliver(&conversation(), &model(), family, &bytes);
    let request = TurnRequest::new("every-kind", delivered.messages, 1024);
    let names = ToolNameMap::default();
    match family {
        DeliveryFamily::Anthropic | DeliveryFamily::AnthropicCompatible => {
            crate::anthropic::request::request_body(&request, &names)
        }
        DeliveryFamily::Responses => crate::openai_responses::request::request_body(
            &OpenAiResponsesConfig::compatible("test", "http://127.0.0.1:1/v1"),
            &request,
            &names,
        ),
        DeliveryFamily::Cohere => crate::cohere::request::request_body(&request, &names),
        DeliveryFamily::BedrockConverse => crate::bedrock::request::request_body(&request, &names),
        DeliveryFamily::Gemini | DeliveryFamily::VertexGemini => {
            crate::gemini::request::request_body(&request, &names).expect("the golden tools lower")
        }
        DeliveryFamily::OpenAiChat | DeliveryFamily::AzureChat | DeliveryFamily::CompatibleChat => {
            crate::openai_chat::request::request_body(
                &OpenAiChatConfig::compatible("test", "http://127.0.0.1:1/v1"),
                &request,
                &names,
            )
        }
    }
}

#[test]
fn every_family_with_an_adapter_lays_media_out_as_its_golden_body() {
    let families = [
        ("anthropic", DeliveryFamily::Anthropic),
        ("anthropic_compatible", DeliveryFamily::AnthropicCompatible),
        ("responses", DeliveryFamily::Responses),
        ("openai_chat", DeliveryFamily::OpenAiChat),
        ("azure_chat", DeliveryFamily::AzureChat),
        ("compatible_chat", DeliveryFamily::CompatibleChat),
        ("bedrock", DeliveryFamily::BedrockConverse),
        ("gemini", DeliveryFamily::Gemini),
        ("vertex_gemini", DeliveryFamily::VertexGemini),
        ("cohere", DeliveryFamily::Cohere),
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media");
    let bless = std::env::var_os("TACKLE_BLESS").is_some();
    for (name, family) in families {
        let got = body(family);
        let path = dir.join(format!("{name}.request.json"));
        if bless {
            let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let want: Value = serde_json::from_str(
            &std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e} (TACKLE_BLESS=1 writes it)", path.display())),
        )
        .unwrap();
        assert_eq!(
            got,
            want,
            "{name}: the body differs from {}",
            path.display()
        );
    }
}
