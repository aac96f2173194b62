//! The built-in catalog: current models of each family, one row each.
//!
//! Limits are the vendors' documented per-request limits for the model (the smaller inline
//! limit of the provider is applied at delivery, not here); prices are list prices per million
//! tokens. A user entry with the same id overrides any field.

use super::{MediaLimit, Modality, ModelEntry, ModelId, Prices};

const MIB: u64 = 1 << 20;

/// One row: `provider:model`, window, max output, media limits (`(kind, max MiB, max count)`,
/// which also declares the modality) and prices `[input, output, cache read, cache write]`.
struct Row {
    id: &'static str,
    context_window: u64,
    max_output: u64,
    media: &'static [(Modality, u64, u32)],
    prices: [f64; 4],
}

use Modality::{Audio, Image, Pdf, Video};

/// Anthropic's API: 5 MiB per image and 100 images; PDFs up to 32 MiB (100 pages).
const ANTHROPIC_MEDIA: &[(Modality, u64, u32)] = &[(Image, 5, 100), (Pdf, 32, 5)];
/// OpenAI: images up to 20 MiB each and 500 a request; files (PDF) up to 32 MiB in context.
const OPENAI_MEDIA: &[(Modality, u64, u32)] = &[(Image, 20, 500), (Pdf, 32, 100)];
/// Gemini 2.5: 3,000 images and 3,000 documents a prompt, 10 videos, one audio track; the
/// sizes are those of the Files API (inline delivery is clamped to the provider's limit).
const GEMINI_MEDIA: &[(Modality, u64, u32)] = &[
    (Image, 20, 3000),
    (Pdf, 50, 3000),
    (Audio, 100, 1),
    (Video, 2048, 10),
];
/// Bedrock Converse: 20 images of 3.75 MiB, 5 documents of 4.5 MiB (rounded down here).
const BEDROCK_CLAUDE_MEDIA: &[(Modality, u64, u32)] = &[(Image, 3, 20), (Pdf, 4, 5)];
/// Nova Pro also takes one video.
const BEDROCK_NOVA_MEDIA: &[(Modality, u64, u32)] = &[(Image, 3, 20), (Pdf, 4, 5), (Video, 25, 1)];
const COHERE_VISION_MEDIA: &[(Modality, u64, u32)] = &[(Image, 20, 20)];

const ROWS: &[Row] = &[
    Row {
        id: "anthropic:claude-opus-4-5",
        context_window: 200_000,
        max_output: 64_000,
        media: ANTHROPIC_MEDIA,
        prices: [5.0, 25.0, 0.5, 6.25],
    },
    Row {
        id: "anthropic:claude-sonnet-4-5",
        context_window: 200_000,
        max_output: 64_000,
        media: ANTHROPIC_MEDIA,
        prices: [3.0, 15.0, 0.3, 3.75],
    },
    Row {
        id: "anthropic:claude-haiku-4-5",
        context_window: 200_000,
        max_output: 64_000,
        media: ANTHROPIC_MEDIA,
        prices: [1.0, 5.0, 0.1, 1.25],
    },
    Row {
        id: "openai:gpt-5",
        context_window: 400_000,
        max_output: 128_000,
        media: OPENAI_MEDIA,
        prices: [1.25, 10.0, 0.125, 0.0],
    },
    Row {
        id: "openai:gpt-5-mini",
        context_window: 400_000,
        max_output: 128_000,
        media: OPENAI_MEDIA,
        prices: [0.25, 2.0, 0.025, 0.0],
    },
    Row {
        id: "openai:gpt-5-nano",
        context_window: 400_000,
        max_output: 128_000,
        media: OPENAI_MEDIA,
        prices: [0.05, 0.4, 0.005, 0.0],
    },
    Row {
        id: "openai:gpt-4.1",
        context_window: 1_047_576,
        max_output: 32_768,
        media: OPENAI_MEDIA,
        prices: [2.0, 8.0, 0.5, 0.0],
    },
    Row {
        id: "gemini:gemini-2.5-pro",
        context_window: 1_048_576,
        max_output: 65_536,
        media: GEMINI_MEDIA,
        prices: [1.25, 10.0, 0.125, 0.0],
    },
    Row {
        id: "gemini:gemini-2.5-flash",
        context_window: 1_048_576,
        max_output: 65_536,
        media: GEMINI_MEDIA,
        prices: [0.3, 2.5, 0.03, 0.0],
    },
    Row {
        id: "vertex:gemini-2.5-pro",
        context_window: 1_048_576,
        max_output: 65_536,
        media: GEMINI_MEDIA,
        prices: [1.25, 10.0, 0.125, 0.0],
    },
    Row {
        id: "bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0",
        context_window: 200_000,
        max_output: 64_000,
        media: BEDROCK_CLAUDE_MEDIA,
        prices: [3.0, 15.0, 0.3, 3.75],
    },
    Row {
        id: "bedrock:amazon.nova-pro-v1:0",
        context_window: 300_000,
        max_output: 10_000,
        media: BEDROCK_NOVA_MEDIA,
        prices: [0.8, 3.2, 0.2, 0.0],
    },
    Row {
        id: "cohere:command-a-03-2025",
        context_window: 256_000,
        max_output: 8_000,
        media: &[],
        prices: [2.5, 10.0, 0.0, 0.0],
    },
    Row {
        id: "cohere:command-a-vision-07-2025",
        context_window: 128_000,
        max_output: 8_000,
        media: COHERE_VISION_MEDIA,
        prices: [2.5, 10.0, 0.0, 0.0],
    },
];

/// Every built-in entry, in table order.
pub fn builtin_models() -> Vec<ModelEntry> {
    ROWS.iter().map(entry).collect()
}

fn entry(row: &Row) -> ModelEntry {
    let id: ModelId = match row.id.parse() {
        Ok(id) => id,
        // The table is checked by `every_builtin_entry_is_consistent`; a bad row is a bug there.
        Err(e) => unreachable!("built-in catalog row: {e}"),
    };
    let mut input = vec![Modality::Text];
    input.extend(row.media.iter().map(|(m, _, _)| *m));
    let [input_price, output, cache_read, cache_write] = row.prices;
    ModelEntry {
        id,
        context_window: row.context_window,
        max_output: row.max_output,
        input,
        media: row
            .media
            .iter()
            .map(|(m, mib, count)| {
                (
                    *m,
                    MediaLimit {
                        max_bytes: mib * MIB,
                        max_count: *count,
                    },
                )
            })
            .collect(),
        prices: Some(Prices {
            input: input_price,
            output,
            cache_read,
            cache_write,
        }),
    }
}
