//! Building the digest text from a survey tool's structured metadata.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

/// How many items of a list a digest shows.
const SHOWN_ITEMS: usize = 20;
/// How many array items JSON pruning keeps.
const PRUNED_ITEMS: usize = 3;
/// Strings longer than this are cut by JSON pruning.
const PRUNED_STRING_CHARS: usize = 120;

/// The model-facing digest of one survey call's output of `raw_bytes` bytes and `raw_lines`
/// lines, from the tool's `metadata`.
pub fn digest_text(
    tool: &str,
    call_id: &str,
    metadata: &Value,
    raw_bytes: u64,
    raw_lines: u64,
) -> String {
    let mut out = format!(
        "[digest of {tool} output: {raw_bytes} bytes, {raw_lines} lines; the full output was \
         not shown]\n"
    );
    let narrow = if let Some(entries) = string_list(metadata, "entries") {
        directory_digest(&mut out, &entries);
        "list a subdirectory, or use glob with a pattern"
    } else if let Some(matches) = metadata.get("matches").and_then(Value::as_array) {
        matches_digest(&mut out, matches);
        "pass a narrower path or a more specific pattern"
    } else if let Some(files) =
        string_list(metadata, "files").or_else(|| string_list(metadata, "paths"))
    {
        paths_digest(&mut out, &files);
        "pass a narrower path or pattern"
    } else {
        out.push_str("structure (arrays cut to a few items, long strings cut):\n");
        let pruned = prune(metadata);
        out.push_str(&serde_json::to_string_pretty(&pruned).unwrap_or_default());
        out.push('\n');
        "narrow the query"
    };
    let _ = writeln!(
        out,
        "[to see less, {narrow}. This digest is authoritative for what it shows; only if you \
         need what it left out, call retrieve_raw {{\"call_id\": \"{call_id}\"}} for the whole \
         output]"
    );
    out
}

fn string_list(metadata: &Value, key: &str) -> Option<Vec<String>> {
    let items = metadata.get(key)?.as_array()?;
    items
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .or_else(|| v.get("path").and_then(Value::as_str).map(str::to_owned))
        })
        .collect()
}

fn directory_digest(out: &mut String, entries: &[String]) {
    let dirs = entries.iter().filter(|e| e.ends_with('/')).count();
    let links = entries.iter().filter(|e| e.ends_with('@')).count();
    let files = entries.len() - dirs - links;
    let _ = writeln!(
        out,
        "{} entries: {files} files, {dirs} directories, {links} symlinks",
        entries.len()
    );
    let mut by_ext: BTreeMap<&str, usize> = BTreeMap::new();
    for e in entries
        .iter()
        .filter(|e| !e.ends_with('/') && !e.ends_with('@'))
    {
        let ext = e.rsplit_once('.').map_or("(none)", |(_, x)| x);
        *by_ext.entry(ext).or_default() += 1;
    }
    if !by_ext.is_empty() {
        let mut exts: Vec<(&str, usize)> = by_ext.into_iter().collect();
        exts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = exts
            .iter()
            .take(10)
            .map(|(x, n)| format!("{x}: {n}"))
            .collect();
        let _ = writeln!(out, "files by extension: {}", shown.join(", "));
    }
    list_head(out, "entries", entries);
}

fn paths_digest(out: &mut String, paths: &[String]) {
    let _ = writeln!(out, "{} paths", paths.len());
    let mut by_dir: BTreeMap<&str, usize> = BTreeMap::new();
    for p in paths {
        let dir = p.rsplit_once('/').map_or(".", |(d, _)| d);
        *by_dir.entry(dir).or_default() += 1;
    }
    let mut dirs: Vec<(&str, usize)> = by_dir.into_iter().collect();
    dirs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = dirs
        .iter()
        .take(10)
        .map(|(d, n)| format!("{d}: {n}"))
        .collect();
    let _ = writeln!(out, "top directories: {}", shown.join(", "));
    list_head(out, "paths", paths);
}

fn matches_digest(out: &mut String, matches: &[Value]) {
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    for m in matches {
        let path = m.get("path").and_then(Value::as_str).unwrap_or("?");
        *per_file.entry(path.to_owned()).or_default() += 1;
    }
    let _ = writeln!(out, "{} matches in {} files", matches.len(), per_file.len());
    let mut files: Vec<(String, usize)> = per_file.into_iter().collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out.push_str("top files:\n");
    for (f, n) in files.iter().take(10) {
        let _ = writeln!(out, "  {f}: {n}");
    }
    out.push_str("first matches:\n");
    for m in matches.iter().take(10) {
        let path = m.get("path").and_then(Value::as_str).unwrap_or("?");
        let line = m.get("line").map(Value::to_string).unwrap_or_default();
        let text = m.get("text").and_then(Value::as_str).unwrap_or("");
        let _ = writeln!(out, "  {path}:{line}: {}", cut(text.trim_end()));
    }
}

fn list_head(out: &mut String, what: &str, items: &[String]) {
    let _ = writeln!(out, "first {} {what}:", items.len().min(SHOWN_ITEMS));
    for i in items.iter().take(SHOWN_ITEMS) {
        let _ = writeln!(out, "  {i}");
    }
    if items.len() > SHOWN_ITEMS {
        let _ = writeln!(out, "  … {} more", items.len() - SHOWN_ITEMS);
    }
}

fn cut(s: &str) -> String {
    if s.chars().count() <= PRUNED_STRING_CHARS {
        return s.to_owned();
    }
    let head: String = s.chars().take(PRUNED_STRING_CHARS).collect();
    format!("{head}… ({} chars)", s.chars().count())
}

/// Keep every key; cut arrays to a few items plus a "… N more" marker and long strings.
pub fn prune(v: &Value) -> Value {
    match v {
        Value::Array(items) => {
            let mut kept: Vec<Value> = items.iter().take(PRUNED_ITEMS).map(prune).collect();
            if items.len() > PRUNED_ITEMS {
                kept.push(Value::String(format!(
                    "… {} more",
                    items.len() - PRUNED_ITEMS
                )));
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), prune(v))).collect())
        }
        Value::String(s) => Value::String(cut(s)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directory_digest_counts_kinds_and_names_retrieve_raw() {
        let mut entries: Vec<String> = (0..30).map(|i| format!("f{i:02}.rs")).collect();
        entries.push("src/".into());
        entries.push("link@".into());
        let d = digest_text("list_dir", "c1", &json!({ "entries": entries }), 9000, 32);
        assert!(
            d.contains("32 entries: 30 files, 1 directories, 1 symlinks"),
            "{d}"
        );
        assert!(d.contains("rs: 30"), "{d}");
        assert!(d.contains("f00.rs") && !d.contains("f25.rs"), "{d}");
        assert!(d.contains("… 12 more"), "{d}");
        assert!(d.contains(r#"retrieve_raw {"call_id": "c1"}"#), "{d}");
    }

    #[test]
    fn matches_digest_groups_by_file() {
        let m: Vec<Value> = (0..25)
            .map(|i| json!({"path": if i < 20 { "a.rs" } else { "b.rs" }, "line": i + 1, "text": "x"}))
            .collect();
        let d = digest_text("grep", "c2", &json!({ "matches": m }), 9000, 25);
        assert!(d.contains("25 matches in 2 files"), "{d}");
        assert!(d.contains("  a.rs: 20\n  b.rs: 5"), "{d}");
        assert!(d.contains("a.rs:1: x"), "{d}");
    }

    #[test]
    fn generic_pruning_keeps_keys_and_cuts_arrays_and_strings() {
        let v = json!({"items": [1, 2, 3, 4, 5], "s": "y".repeat(500), "n": {"k": true}});
        let p = prune(&v);
        assert_eq!(p["items"], json!([1, 2, 3, "… 2 more"]));
        assert!(p["s"].as_str().unwrap().ends_with("… (500 chars)"));
        assert_eq!(p["n"], json!({"k": true}));
    }
}
