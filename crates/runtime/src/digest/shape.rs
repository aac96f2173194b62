//! Building the digest text from a survey tool's typed listing ([`SurveyListing`]), or from
//! its metadata, pruned, when it gave none.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;
use tackle_tool::{LineMatch, SurveyListing};

/// How many items of a list a digest shows.
const SHOWN_ITEMS: usize = 20;
/// How many array items JSON pruning keeps.
const PRUNED_ITEMS: usize = 3;
/// Strings longer than this are cut by JSON pruning.
const PRUNED_STRING_CHARS: usize = 120;

/// The model-facing digest of one survey call's output of `raw_bytes` bytes and `raw_lines`
/// lines, from the tool's `listing`, else from its `metadata`.
pub fn digest_text(
    tool: &str,
    call_id: &str,
    listing: Option<&SurveyListing>,
    metadata: &Value,
    raw_bytes: u64,
    raw_lines: u64,
) -> String {
    let mut out = format!(
        "[digest of {tool} output: {raw_bytes} bytes, {raw_lines} lines; the full output was \
         not shown]\n"
    );
    let narrow = match listing {
        Some(SurveyListing::Entries(entries)) => {
            directory_digest(&mut out, entries);
            "list a subdirectory, or use glob with a pattern"
        }
        Some(SurveyListing::Matches(matches)) => {
            matches_digest(&mut out, matches);
            "pass a narrower path or a more specific pattern"
        }
        Some(SurveyListing::Paths(paths)) => {
            paths_digest(&mut out, paths);
            "pass a narrower path or pattern"
        }
        Some(SurveyListing::Files(files)) => {
            let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
            paths_digest(&mut out, &paths);
            "pass a narrower path or pattern"
        }
        None => {
            out.push_str("structure (arrays cut to a few items, long strings cut):\n");
            let pruned = prune(metadata);
            out.push_str(&serde_json::to_string_pretty(&pruned).unwrap_or_default());
            out.push('\n');
            "narrow the query"
        }
    };
    let _ = writeln!(
        out,
        "[to see less, {narrow}. This digest is authoritative for what it shows; only if you \
         need what it left out, call retrieve_raw {{\"call_id\": \"{call_id}\"}} for the whole \
         output]"
    );
    out
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

fn matches_digest(out: &mut String, matches: &[LineMatch]) {
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    for m in matches {
        *per_file.entry(m.path.as_str()).or_default() += 1;
    }
    let _ = writeln!(out, "{} matches in {} files", matches.len(), per_file.len());
    let mut files: Vec<(&str, usize)> = per_file.into_iter().collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    out.push_str("top files:\n");
    for (f, n) in files.iter().take(10) {
        let _ = writeln!(out, "  {f}: {n}");
    }
    out.push_str("first matches:\n");
    for m in matches.iter().take(10) {
        let _ = writeln!(out, "  {}:{}: {}", m.path, m.line, cut(m.text.trim_end()));
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
        let listing = SurveyListing::Entries(entries);
        let d = digest_text("list_dir", "c1", Some(&listing), &Value::Null, 9000, 32);
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
        let m: Vec<LineMatch> = (0..25)
            .map(|i| LineMatch {
                path: if i < 20 { "a.rs" } else { "b.rs" }.into(),
                line: i + 1,
                text: "x".into(),
            })
            .collect();
        let listing = SurveyListing::Matches(m);
        let d = digest_text("grep", "c2", Some(&listing), &Value::Null, 9000, 25);
        assert!(d.contains("25 matches in 2 files"), "{d}");
        assert!(d.contains("  a.rs: 20\n  b.rs: 5"), "{d}");
        assert!(d.contains("a.rs:1: x"), "{d}");
    }

    #[test]
    fn batch_reads_are_digested_by_path_skipped_or_not() {
        use tackle_tool::{FileRead, FileReadOutcome};
        let files: Vec<FileRead> = (0..30)
            .map(|i| FileRead {
                path: format!("{}/f{i:02}.rs", if i < 25 { "src" } else { "tests" }),
                outcome: if i % 2 == 0 {
                    FileReadOutcome::Read {
                        lines: 1,
                        bytes: 1,
                        truncated: false,
                    }
                } else {
                    FileReadOutcome::Skipped {
                        skipped: "binary".into(),
                    }
                },
            })
            .collect();
        let listing = SurveyListing::Files(files);
        let d = digest_text(
            "read_many_files",
            "c3",
            Some(&listing),
            &Value::Null,
            9000,
            30,
        );
        assert!(d.contains("30 paths"), "{d}");
        assert!(d.contains("top directories: src: 25, tests: 5"), "{d}");
        assert!(d.contains("src/f01.rs"), "{d}");
    }

    #[test]
    fn without_a_listing_the_metadata_is_pruned() {
        let metadata = json!({"items": (0..50).collect::<Vec<u32>>()});
        let d = digest_text("other", "c4", None, &metadata, 9000, 50);
        assert!(d.contains("structure (arrays cut"), "{d}");
        assert!(d.contains("… 47 more"), "{d}");
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
