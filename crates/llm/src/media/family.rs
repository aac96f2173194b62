//! The delivery matrix of seed 000 ("Media delivery") as data: for each effective adaptor
//! family, where tool-origin media of each kind may travel, how large one item may be inline,
//! and how much media one request may carry in all.

use std::fmt;

use crate::catalog::{ANTHROPIC_API, OPENAI_API, ProviderKind, ProviderSpec};

use super::MediaKind;

const MIB: u64 = 1 << 20;

/// The wire family a request is written for, as far as media is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeliveryFamily {
    /// Anthropic's own Messages API.
    Anthropic,
    /// A Messages-compatible endpoint (MiniMax and others).
    AnthropicCompatible,
    BedrockConverse,
    /// OpenAI, compatible and Azure Responses.
    Responses,
    /// OpenAI's own Chat Completions.
    OpenAiChat,
    AzureChat,
    /// An OpenAI-compatible Chat endpoint (llama.cpp, vLLM, Ollama, Kimi, Qwen, …).
    CompatibleChat,
    /// The Gemini API.
    Gemini,
    /// Gemini on Vertex AI.
    VertexGemini,
    Cohere,
}

/// Where an item travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Inside the tool result that produced it.
    ToolResult,
    /// In one user turn emitted right after the message holding the tool result.
    UserTurn,
}

impl DeliveryFamily {
    /// The family of a configured provider: its kind, and for the two kinds that vendors and
    /// compatible servers share, whether the base URL is the vendor's own.
    pub fn of(spec: &ProviderSpec) -> Self {
        match spec.kind {
            ProviderKind::Anthropic if spec.is_at(ANTHROPIC_API) => Self::Anthropic,
            ProviderKind::Anthropic => Self::AnthropicCompatible,
            ProviderKind::OpenAiChat if spec.is_at(OPENAI_API) => Self::OpenAiChat,
            ProviderKind::OpenAiChat => Self::CompatibleChat,
            ProviderKind::OpenAiResponses | ProviderKind::AzureResponses => Self::Responses,
            ProviderKind::AzureChat => Self::AzureChat,
            ProviderKind::Gemini => Self::Gemini,
            ProviderKind::Vertex => Self::VertexGemini,
            ProviderKind::Bedrock => Self::BedrockConverse,
            ProviderKind::Cohere => Self::Cohere,
        }
    }

    /// The matrix row. Video on Anthropic-compatible, Bedrock and compatible Chat endpoints is
    /// for the models that take it (MiniMax, Nova, Kimi and Qwen): the catalog entry declaring
    /// `video` is that check, made before this one.
    pub fn placement(self, kind: MediaKind) -> Option<Placement> {
        use MediaKind::{Audio, Image, Pdf, Video};
        use Placement::{ToolResult, UserTurn};
        match (self, kind) {
            (Self::Anthropic, Image | Pdf) => Some(ToolResult),
            (Self::Anthropic, Video | Audio) => None,
            (Self::AnthropicCompatible, Image | Pdf) => Some(ToolResult),
            (Self::AnthropicCompatible, Video) => Some(UserTurn),
            (Self::AnthropicCompatible, Audio) => None,
            (Self::BedrockConverse, Image | Pdf | Video) => Some(ToolResult),
            (Self::BedrockConverse, Audio) => None,
            (Self::Responses, Image | Pdf) => Some(ToolResult),
            (Self::Responses, Video | Audio) => None,
            (Self::OpenAiChat, Image | Pdf) => Some(UserTurn),
            (Self::OpenAiChat, Video | Audio) => None,
            (Self::AzureChat, Image) => Some(UserTurn),
            (Self::AzureChat, Pdf | Video | Audio) => None,
            (Self::CompatibleChat, Image | Pdf | Video) => Some(UserTurn),
            (Self::CompatibleChat, Audio) => None,
            (Self::Gemini | Self::VertexGemini, _) => Some(UserTurn),
            (Self::Cohere, Image) => Some(UserTurn),
            (Self::Cohere, Pdf | Video | Audio) => None,
        }
    }

    /// Whether this build's adapter writes `kind` where [`Self::placement`] puts it. One cell
    /// of the matrix is not written: video on Anthropic-compatible endpoints (MiniMax), whose
    /// inline shape in the Messages format is not documented; such video becomes a note.
    pub fn written(self, kind: MediaKind) -> bool {
        !matches!((self, kind), (Self::AnthropicCompatible, MediaKind::Video))
    }

    /// The largest single item the family's wire API takes inline, in raw bytes (seed 000:
    /// Anthropic 7.5 MiB raw images (10 MiB once base64-encoded); Bedrock 3.75 MiB images,
    /// 4.5 MiB documents, about 18.7 MiB raw video; Vertex 7 MiB images; the Gemini API 14 MiB
    /// for any media; every other case 20 MiB, or 25 MiB for video).
    pub fn inline_limit(self, kind: MediaKind) -> u64 {
        match (self, kind) {
            (Self::Anthropic | Self::AnthropicCompatible, MediaKind::Image) => 15 * MIB / 2,
            (Self::BedrockConverse, MediaKind::Image) => 15 * MIB / 4,
            (Self::BedrockConverse, MediaKind::Pdf) => 9 * MIB / 2,
            (Self::BedrockConverse, MediaKind::Video) => 187 * MIB / 10,
            (Self::VertexGemini, MediaKind::Image) => 7 * MIB,
            (Self::Gemini, _) => 14 * MIB,
            (_, MediaKind::Video) => 25 * MIB,
            (_, _) => 20 * MIB,
        }
    }

    /// The combined attachment budget of one request, in raw bytes: what keeps the base64
    /// request under the family's request cap with room for the conversation's text
    /// (Anthropic 32 MB; Bedrock and Vertex less; the Gemini API 20 MiB, whose 14 MiB per item
    /// is already the whole budget; OpenAI and Azure 50 MB; Cohere 20 MB).
    pub fn request_budget(self) -> u64 {
        match self {
            Self::Anthropic | Self::AnthropicCompatible => 22 * MIB,
            Self::BedrockConverse => 187 * MIB / 10,
            Self::Gemini | Self::VertexGemini => 14 * MIB,
            Self::Responses | Self::OpenAiChat | Self::AzureChat | Self::CompatibleChat => 36 * MIB,
            Self::Cohere => 14 * MIB,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "Anthropic Messages",
            Self::AnthropicCompatible => "Anthropic-compatible Messages",
            Self::BedrockConverse => "Bedrock Converse",
            Self::Responses => "Responses",
            Self::OpenAiChat => "OpenAI Chat Completions",
            Self::AzureChat => "Azure Chat Completions",
            Self::CompatibleChat => "OpenAI-compatible Chat Completions",
            Self::Gemini => "Gemini",
            Self::VertexGemini => "Vertex Gemini",
            Self::Cohere => "Cohere Chat",
        }
    }
}

impl fmt::Display for DeliveryFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
