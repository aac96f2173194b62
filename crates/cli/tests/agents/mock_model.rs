//! The scripted model (`tests/fixtures/mock_model.py`) as a running process, and what it
//! recorded: every request a client sent, from which [`ModelSaw`] reads the tool results the
//! client's model was given.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // test helper: a failure should panic loudly

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::KillOnDrop;

/// One step of the script: the model calls the offered tool whose name ends in `_<tool>`.
pub struct ScriptedCall {
    pub tool: &'static str,
    pub arguments: Value,
}

/// A running mock model on loopback; killed when dropped.
pub struct MockModel {
    _process: KillOnDrop,
    port: u16,
    record: PathBuf,
}

impl MockModel {
    /// Starts the mock with `calls`, keeping its files in `dir`, and waits until it listens.
    pub fn start(dir: &Path, calls: &[ScriptedCall]) -> Self {
        let script = dir.join("model-script.json");
        let calls: Vec<Value> = calls
            .iter()
            .map(|c| serde_json::json!({"tool": c.tool, "arguments": c.arguments}))
            .collect();
        std::fs::write(&script, serde_json::json!({"calls": calls}).to_string()).unwrap();
        let record = dir.join("model-requests.jsonl");
        let fixture =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mock_model.py");
        let mut child = Command::new("python3")
            .arg(&fixture)
            .arg(&script)
            .arg(&record)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting python3 tests/fixtures/mock_model.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the mock model did not say where it listens: {line:?}"));
        Self {
            _process: KillOnDrop(child),
            port,
            record,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                Request {
                    path: v["path"].as_str().unwrap_or_default().to_owned(),
                    body: v["body"].clone(),
                }
            })
            .collect()
    }
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
}

/// A tool result as the client put it before its model.
#[derive(Debug, Clone)]
pub struct ToolResultSeen {
    /// The text the model reads (a format's string, its text blocks joined, or for Gemini the
    /// response object's strings).
    pub text: String,
    /// The whole of what the format carried for it, for the failure message.
    pub raw: Value,
}

/// What a client's model was given, read from one wire format's requests.
pub struct ModelSaw {
    /// The tool results of the request that carried the most of them (the last turn's).
    pub results: Vec<ToolResultSeen>,
    /// Every request, for failure messages.
    pub requests: Vec<Request>,
}

/// The wire formats of the four clients.
#[derive(Debug, Clone, Copy)]
pub enum WireFormat {
    AnthropicMessages,
    OpenAiResponses,
    GeminiGenerateContent,
    ChatCompletions,
}

impl WireFormat {
    /// The tool results one request body carries, in order.
    pub fn tool_results(self, body: &Value) -> Vec<ToolResultSeen> {
        let seen = |raw: &Value, text: String| ToolResultSeen {
            text,
            raw: raw.clone(),
        };
        let items = |v: &Value| v.as_array().cloned().unwrap_or_default();
        match self {
            Self::AnthropicMessages => items(&body["messages"])
                .iter()
                .flat_map(|m| items(&m["content"]))
                .filter(|b| b["type"] == "tool_result")
                .map(|b| seen(&b, text_of(&b["content"])))
                .collect(),
            Self::OpenAiResponses => items(&body["input"])
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .map(|i| seen(i, text_of(&i["output"])))
                .collect(),
            Self::GeminiGenerateContent => items(&body["contents"])
                .iter()
                .flat_map(|c| items(&c["parts"]))
                .filter_map(|p| p.get("functionResponse").cloned())
                .map(|r| {
                    let strings: Vec<String> = r["response"]
                        .as_object()
                        .map(|o| {
                            o.values()
                                .filter_map(|v| v.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default();
                    let text = if strings.is_empty() {
                        r["response"].to_string()
                    } else {
                        strings.join("\n")
                    };
                    seen(&r, text)
                })
                .collect(),
            Self::ChatCompletions => items(&body["messages"])
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| seen(m, text_of(&m["content"])))
                .collect(),
        }
    }

    /// What the model saw, over every request recorded.
    pub fn model_saw(self, requests: Vec<Request>) -> ModelSaw {
        let results = requests
            .iter()
            .map(|r| self.tool_results(&r.body))
            .max_by_key(Vec::len)
            .unwrap_or_default();
        ModelSaw { results, requests }
    }
}

/// A string as is; text blocks joined; anything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| {
                b["text"]
                    .as_str()
                    .map_or_else(|| b.to_string(), str::to_owned)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}
