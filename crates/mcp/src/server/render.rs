//! A tackle [`ToolResult`] as an MCP `CallToolResult`.
//!
//! Text content is the model-facing rendering, unchanged, and it is the whole result: a success
//! carries the text a model needs, an error the message with its fix. No built-in tool declares
//! an `outputSchema`, so no result carries `structuredContent`: MCP reserves it for tools that
//! declare one, and clients that find it show their model only that (Claude Code and Codex drop
//! `content` then), while others show both. Structured metadata (next_offset, exists, the error
//! code, …) travels in `_meta` under [`RESULT_META_KEY`], for programs, and is never repeated as
//! a text block the model would read twice. A survey tool's listing is metadata only for a call
//! that asks for it ([`Listing`]). Every truncated stream adds a `resource_link` to its
//! `artifact://<digest>` so a client can page the rest (`resources/read` or read_file).
//! Attachments (media a tool retained as an artifact) travel as MCP image or audio blocks, or as
//! an embedded blob resource for other types (PDF, video), with the bytes loaded from the store.

use rmcp::model::{CallToolResult, ContentBlock as McpBlock, MetaObject, Resource};
use tackle_protocol::{ContentBlock, ToolResult};

/// The `_meta` key of a result's metadata: an object with the tool's metadata fields and, for a
/// failed call, its stable `code`.
pub const RESULT_META_KEY: &str = "tackle.dev/result";

/// The request `_meta` key a call sets to `true` to have its survey listing in the result's
/// `_meta` (see [`Listing`]).
pub const LISTING_REQUEST_KEY: &str = "tackle.dev/listing";

/// Whether a survey tool's listing (grep's `matches`, glob's and read_many_files' `files`,
/// list_dir's `entries`) travels in the result's `_meta`.
///
/// Left out unless the call asks (request `_meta` `{"tackle.dev/listing": true}`): it is the
/// result itself in structured form, which the text already carries line for line, or, once a
/// large result is digested, what the model was spared. MCP clients show their model the text
/// and drop `_meta`, so by default the listing only doubled every answer (a digested grep of
/// 1,000 matches: 1 KB of text and 79 KB of listing) for each client to parse and discard. A
/// program that wants the structure asks for it; the counts and flags travel either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listing {
    Omitted,
    Included,
}

/// `load` returns the bytes of a stored artifact (`artifact://sha256/<hex>`), verified.
pub(crate) fn call_tool_result(
    mut result: ToolResult,
    load: &dyn Fn(&str) -> Option<Vec<u8>>,
    listing: Listing,
) -> CallToolResult {
    use base64::Engine as _;
    let mut content = Vec::with_capacity(result.content.len() + 2);
    let metadata = metadata_object(&mut result, listing);
    // Taken, not copied: a page of a file is often 100 KiB of text.
    for block in result.content {
        match block {
            ContentBlock::Text { text } => content.push(McpBlock::text(text)),
            ContentBlock::Attachment {
                mime_type,
                bytes,
                artifact,
            } => match load(&artifact) {
                Some(data) => {
                    let data = base64::engine::general_purpose::STANDARD.encode(data);
                    let public = artifact.replace("artifact://sha256/", "artifact://");
                    content.push(if mime_type.starts_with("image/") {
                        McpBlock::image(data, mime_type.clone())
                    } else if mime_type.starts_with("audio/") {
                        McpBlock::audio(data, mime_type.clone())
                    } else {
                        McpBlock::resource(
                            rmcp::model::ResourceContents::blob(data, public)
                                .with_mime_type(mime_type.clone()),
                        )
                    });
                }
                None => content.push(McpBlock::text(format!(
                    "[attachment {mime_type}, {bytes} bytes, {artifact}: no longer in the store]"
                ))),
            },
        }
    }
    for retained in result.retained_output.iter().filter(|r| r.truncated) {
        let Some(hex) = retained.artifact.strip_prefix("artifact://sha256/") else {
            continue;
        };
        let name = retained
            .stream
            .as_ref()
            .map_or_else(|| "output".to_owned(), |s| s.as_str().to_owned());
        let link = Resource::new(format!("artifact://{hex}"), name)
            .with_mime_type("text/plain")
            .with_size(retained.bytes)
            .with_description(format!(
                "the whole output ({} lines); page it with read_file {{\"path\": \"artifact://{hex}\", \"offset\": N}}",
                retained.lines
            ));
        content.push(McpBlock::resource_link(link));
    }
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Some(metadata) = metadata {
        let mut meta = MetaObject::new();
        meta.insert(RESULT_META_KEY.to_owned(), metadata);
        out.meta = Some(meta);
    }
    out
}

/// The result's metadata as one object, plus the error code of a failed call; a survey's
/// listing only when `listing` includes it. `None` when there is none. Taken, not copied: a
/// survey's metadata holds its whole listing.
fn metadata_object(result: &mut ToolResult, listing: Listing) -> Option<serde_json::Value> {
    let mut object = match std::mem::take(&mut result.metadata) {
        serde_json::Value::Null => serde_json::Map::new(),
        serde_json::Value::Object(m) => m,
        other => {
            let mut m = serde_json::Map::new();
            m.insert("value".to_owned(), other);
            m
        }
    };
    if listing == Listing::Omitted
        && let Some(key) = result.listing_key
    {
        object.remove(key);
    }
    if let Some(code) = &result.code {
        object.insert(
            "code".to_owned(),
            serde_json::Value::String(code.to_string()),
        );
    }
    (!object.is_empty()).then_some(serde_json::Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, CallStatus, ErrorCode, Label, RetainedOutput};

    fn result(is_error: bool, metadata: serde_json::Value) -> ToolResult {
        ToolResult {
            call_id: CallId("c".into()),
            tool: "t".into(),
            status: if is_error {
                CallStatus::Error
            } else {
                CallStatus::Ok
            },
            is_error,
            code: is_error.then_some(ErrorCode::INVALID_ARGUMENTS),
            content: vec![ContentBlock::Text {
                text: "hello".into(),
            }],
            metadata,
            retained_output: vec![],
            incomplete: false,
            label: Label::LOCAL,
            display: None,
            digested: false,
            listing_key: None,
        }
    }

    #[test]
    fn attachments_travel_as_media_blocks_with_their_bytes() {
        let mut r = result(false, serde_json::Value::Null);
        r.content.push(ContentBlock::Attachment {
            mime_type: "image/png".into(),
            bytes: 3,
            artifact: "artifact://sha256/ab".into(),
        });
        r.content.push(ContentBlock::Attachment {
            mime_type: "application/pdf".into(),
            bytes: 3,
            artifact: "artifact://sha256/cd".into(),
        });
        let out = call_tool_result(
            r.clone(),
            &|uri| (uri == "artifact://sha256/ab").then(|| b"png".to_vec()),
            Listing::Omitted,
        );
        let v = serde_json::to_value(&out).unwrap();
        let content = v["content"].as_array().unwrap();
        assert_eq!(content[1]["type"], "image");
        assert_eq!(content[1]["mimeType"], "image/png");
        assert_eq!(content[1]["data"], "cG5n");
        // Gone from the store: said so, never silently dropped.
        assert!(
            content[2]["text"]
                .as_str()
                .unwrap()
                .contains("no longer in the store")
        );
    }

    #[test]
    fn plain_text_has_no_structure() {
        let r = call_tool_result(
            result(false, serde_json::Value::Null),
            &|_| None,
            Listing::Omitted,
        );
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.content.len(), 1);
        assert!(r.structured_content.is_none());
        assert!(r.meta.is_none());
    }

    #[test]
    fn metadata_travels_in_meta_and_the_text_is_the_only_content() {
        let r = call_tool_result(
            result(true, serde_json::json!({"path": "$.x"})),
            &|_| None,
            Listing::Omitted,
        );
        assert_eq!(r.is_error, Some(true));
        assert!(r.structured_content.is_none());
        let meta = r.meta.clone().unwrap();
        let s = &meta[RESULT_META_KEY];
        assert_eq!(s["path"], "$.x");
        assert_eq!(s["code"], "invalid_arguments");
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.content[0].as_text().unwrap().text, "hello");
    }

    #[test]
    fn a_survey_listing_is_in_meta_only_when_asked_for() {
        let mut res = result(
            false,
            serde_json::json!({"total_matches": 1, "matches": [{"path": "a", "line": 1, "text": "x"}]}),
        );
        res.listing_key = Some("matches");
        let omitted = call_tool_result(res.clone(), &|_| None, Listing::Omitted);
        let meta = &omitted.meta.unwrap()[RESULT_META_KEY];
        assert_eq!(meta["total_matches"], 1);
        assert!(meta.get("matches").is_none(), "{meta}");
        let included = call_tool_result(res, &|_| None, Listing::Included);
        let meta = &included.meta.unwrap()[RESULT_META_KEY];
        assert_eq!(meta["matches"][0]["path"], "a");
    }

    #[test]
    fn truncated_streams_become_resource_links() {
        let mut res = result(false, serde_json::Value::Null);
        let hex = "a".repeat(64);
        res.retained_output = vec![
            RetainedOutput {
                stream: None,
                artifact: format!("artifact://sha256/{hex}"),
                bytes: 10,
                lines: 2,
                truncated: true,
            },
            RetainedOutput {
                stream: None,
                artifact: format!("artifact://sha256/{}", "b".repeat(64)),
                bytes: 1,
                lines: 1,
                truncated: false,
            },
        ];
        let r = call_tool_result(res, &|_| None, Listing::Omitted);
        let links: Vec<_> = r
            .content
            .iter()
            .filter_map(|c| c.as_resource_link())
            .collect();
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].uri, format!("artifact://{hex}"));
    }
}
