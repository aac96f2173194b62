//! Request build: a 200-message conversation (user text, assistant tool calls, tool results)
//! with 30 tools and 5 images in its newest results, delivered for the family
//! (`tackle_llm::media::deliver`: checks, clamps, base64) and lowered to the JSON body each
//! adapter posts, then serialized. Target: at most 2 ms at the median.
//!
//! No peer runs this step on its own, so the figure is tackle's alone; the JSON serialization
//! of the finished body is printed beside it as the floor any client pays.
//!
//! Run: `cargo bench -p tackle-bench --bench request_build`.

use std::time::{Duration, Instant};

use tackle_bench::Stats;
use tackle_llm::anthropic::{Anthropic, AnthropicConfig};
use tackle_llm::catalog::{MediaLimit, Modality, ModelEntry};
use tackle_llm::media::{DeliveryFamily, deliver};
use tackle_llm::openai_chat::{OpenAiChat, OpenAiChatConfig};
use tackle_llm::openai_responses::{OpenAiResponses, OpenAiResponsesConfig};
use tackle_llm::{Transport, TransportLimits, TurnRequest};
use tackle_protocol::{
    CallId, ContentBlock, Message, Part, Role, ToolArguments, ToolCallPart, ToolResultPart,
    ToolSpec,
};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const MESSAGES: usize = 200;
const TOOLS: usize = 30;
const IMAGES: usize = 5;
const IMAGE_BYTES: usize = 64 * 1024;
const SAMPLES: usize = 101;

fn tools() -> Vec<ToolSpec> {
    (0..TOOLS)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: format!("Tool number {i}: reads, lists and searches things in the project. ").repeat(4),
            input_schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A path under the root."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "mode": {"type": "string", "enum": ["a", "b", "c"]},
                    "flags": {"type": "array", "items": {"type": "string"}},
                    "nested": {"type": ["object", "null"], "properties": {"x": {"type": "boolean"}}, "additionalProperties": false},
                },
                "required": ["path"],
                "additionalProperties": false,
            }),
        })
        .collect()
}

fn conversation() -> Vec<Message> {
    let mut messages = vec![Message::user_text("Work through the project.")];
    let mut images_left = IMAGES;
    let mut n = 0;
    while messages.len() < MESSAGES - 1 {
        n += 1;
        let id = CallId(format!("call_{n}"));
        messages.push(Message {
            role: Role::Assistant,
            content: vec![
                Part::Text { text: format!("Step {n}: looking at the next file.") },
                Part::ToolCall(ToolCallPart {
                    id: id.clone(),
                    name: format!("tool_{}", n % TOOLS),
                    arguments: ToolArguments::Valid {
                        value: serde_json::json!({"path": format!("src/module_{n}.rs"), "limit": 200}),
                    },
                }),
            ],
        });
        let mut content = vec![ContentBlock::Text {
            text: "fn example() -> u32 {\n    42\n}\n".repeat(40),
        }];
        // The images are in the newest results, where an agent reading screenshots has them.
        if messages.len() > MESSAGES - 2 * IMAGES - 2 && images_left > 0 {
            images_left -= 1;
            content.push(ContentBlock::Attachment {
                mime_type: "image/png".into(),
                bytes: IMAGE_BYTES as u64,
                artifact: format!("artifact://sha256/{n:064x}"),
            });
        }
        messages.push(Message {
            role: Role::User,
            content: vec![Part::ToolResult(ToolResultPart {
                call_id: id,
                content,
                is_error: false,
                media: Vec::new(),
            })],
        });
    }
    messages.push(Message::user_text("Now summarize what you found."));
    messages
}

fn model() -> BenchResult<ModelEntry> {
    Ok(ModelEntry {
        id: "bench:model".parse()?,
        context_window: 200_000,
        max_output: 8_192,
        input: vec![Modality::Text, Modality::Image],
        media: vec![(
            Modality::Image,
            MediaLimit {
                max_bytes: 5 << 20,
                max_count: 100,
            },
        )],
        prices: None,
    })
}

fn time(mut f: impl FnMut() -> usize) -> (Stats, usize) {
    let mut samples = Vec::with_capacity(SAMPLES);
    let mut size = 0;
    for _ in 0..SAMPLES {
        let start = Instant::now();
        size = f();
        samples.push(start.elapsed());
    }
    (Stats::of(&mut samples), size)
}

fn main() -> BenchResult<()> {
    let messages = conversation();
    let model = model()?;
    let image = vec![0x5au8; IMAGE_BYTES];
    let store = |_: &str| -> Result<Vec<u8>, String> { Ok(image.clone()) };
    let transport = Transport::new(TransportLimits::default())?;
    let anthropic = Anthropic::new(
        AnthropicConfig {
            key: None,
            ..AnthropicConfig::official()
        },
        transport.clone(),
    )?;
    let chat = OpenAiChat::new(
        OpenAiChatConfig::compatible("bench", "http://127.0.0.1:1/v1"),
        transport.clone(),
    )?;
    let responses = OpenAiResponses::new(
        OpenAiResponsesConfig::compatible("bench", "http://127.0.0.1:1/v1"),
        transport,
    )?;
    let tools = tools();
    println!(
        "conversation: {} messages, {TOOLS} tools, {IMAGES} images of {} KiB",
        messages.len(),
        IMAGE_BYTES / 1024
    );
    let mut worst = Duration::ZERO;
    for (name, family) in [
        ("anthropic", DeliveryFamily::Anthropic),
        ("openai chat", DeliveryFamily::OpenAiChat),
        ("responses", DeliveryFamily::Responses),
    ] {
        let build = || {
            let delivered = deliver(&messages, &model, family, &store);
            assert_eq!(delivered.delivered, IMAGES, "every image delivered");
            let mut request = TurnRequest::new("model", delivered.messages, 4096);
            request.system = Some("You are a coding agent.".into());
            request.tools = tools.clone();
            let body = match family {
                DeliveryFamily::Anthropic => anthropic.body(&request),
                DeliveryFamily::OpenAiChat => chat.body(&request),
                _ => responses.body(&request),
            };
            serde_json::to_vec(&body).map(|v| v.len()).unwrap_or(0)
        };
        let (stats, bytes) = time(build);
        worst = worst.max(stats.median);
        println!(
            "{name:>12}: deliver + lower + serialize: {stats}  ({} KiB body)",
            bytes / 1024
        );
        // Where the time goes: each stage on its own, on the same input.
        let (delivered_stats, _) = time(|| deliver(&messages, &model, family, &store).delivered);
        let delivered = deliver(&messages, &model, family, &store);
        let mut request = TurnRequest::new("model", delivered.messages, 4096);
        request.system = Some("You are a coding agent.".into());
        request.tools = tools.clone();
        let lower = || match family {
            DeliveryFamily::Anthropic => anthropic.body(&request),
            DeliveryFamily::OpenAiChat => chat.body(&request),
            _ => responses.body(&request),
        };
        let (lower_stats, _) = time(|| lower().as_object().map_or(0, |o| o.len()));
        let body = lower();
        let (ser_stats, _) = time(|| serde_json::to_vec(&body).map(|v| v.len()).unwrap_or(0));
        println!(
            "{:>12}  deliver {:.0?}, lower {:.0?}, serialize {:.0?} (medians)",
            "", delivered_stats.median, lower_stats.median, ser_stats.median
        );
    }
    let finished = serde_json::to_value(&messages)?;
    let (floor, _) = time(|| serde_json::to_vec(&finished).map(|v| v.len()).unwrap_or(0));
    println!("serializing the neutral conversation alone (the floor): {floor}");
    println!(
        "request build, slowest family at the median: {:.3} ms (target ≤ 2 ms)",
        worst.as_secs_f64() * 1000.0
    );
    Ok(())
}
