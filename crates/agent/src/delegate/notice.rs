//! The notices a parent's model reads about its children, in the seed's exact form:
//! `Subagent started. [subagent session explore_1a2b3c4d]` when one starts, and at its end
//! `[subagent session explore_1a2b3c4d; completed; 79 lines; use get_subagent_result with
//! session_id "explore_1a2b3c4d" for the full output]` followed by a preview of at most
//! [`PREVIEW_LINES`] lines and [`PREVIEW_BYTES`] bytes, or `…; full output shown]` when the
//! preview is the whole output.

/// The most lines a completion notice previews.
pub const PREVIEW_LINES: usize = 20;
/// The most bytes a completion notice previews.
pub const PREVIEW_BYTES: usize = 2048;

/// The id a delivered completion notice is recorded under (`notice_<16 hex>`): a
/// `message_consumed` that no `message_accepted` names, so a rebuilt mailbox owes nothing.
pub fn new_id() -> String {
    use rand::RngExt as _;
    let n: u64 = rand::rng().random();
    format!("notice_{n:016x}")
}

/// What a model reads when a child starts.
pub fn started(handle: &str) -> String {
    format!("Subagent started. [subagent session {handle}]")
}

/// What a parent's model reads when a child ends: the header, then the preview.
pub fn completion(handle: &str, status: &str, output: &str) -> String {
    let lines = line_count(output);
    let preview = Preview::of(output);
    let plural = if lines == 1 { "line" } else { "lines" };
    let tail = if preview.cut {
        format!("use get_subagent_result with session_id \"{handle}\" for the full output")
    } else {
        "full output shown".to_owned()
    };
    let header = format!("[subagent session {handle}; {status}; {lines} {plural}; {tail}]");
    if preview.text.is_empty() {
        header
    } else {
        format!("{header}\n{}", preview.text)
    }
}

/// The lines of `output` as get_subagent_result pages them.
pub fn line_count(output: &str) -> usize {
    output.lines().count()
}

/// The front of an output, shown in a completion notice.
#[derive(Debug, PartialEq, Eq)]
pub struct Preview {
    pub text: String,
    /// Whether anything of the output is left out.
    pub cut: bool,
}

impl Preview {
    /// At most [`PREVIEW_LINES`] lines and [`PREVIEW_BYTES`] bytes of `output` (cut at a
    /// character boundary), line breaks and tabs kept, every other control character a space.
    pub fn of(output: &str) -> Self {
        let output = output.trim_end_matches(['\n', '\r']);
        let mut text = String::new();
        let mut cut = false;
        for (n, line) in output.split('\n').enumerate() {
            if n == PREVIEW_LINES {
                cut = true;
                break;
            }
            if n > 0 {
                if text.len() + 1 > PREVIEW_BYTES {
                    cut = true;
                    break;
                }
                text.push('\n');
            }
            for c in line.chars() {
                let c = if c == '\t' || !c.is_control() { c } else { ' ' };
                if text.len() + c.len_utf8() > PREVIEW_BYTES {
                    cut = true;
                    break;
                }
                text.push(c);
            }
            if cut {
                break;
            }
        }
        Self { text, cut }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_notice_wraps_the_handle() {
        assert_eq!(
            started("explore_1a2b3c4d"),
            "Subagent started. [subagent session explore_1a2b3c4d]"
        );
    }

    #[test]
    fn a_long_output_is_previewed_in_twenty_lines_and_pointed_at() {
        let output: String = (1..=79).map(|n| format!("line {n}\n")).collect();
        let notice = completion("explore_1a2b3c4d", "completed", &output);
        let mut lines = notice.lines();
        assert_eq!(
            lines.next().unwrap(),
            "[subagent session explore_1a2b3c4d; completed; 79 lines; use get_subagent_result \
             with session_id \"explore_1a2b3c4d\" for the full output]"
        );
        let preview: Vec<&str> = lines.collect();
        assert_eq!(preview.len(), PREVIEW_LINES);
        assert_eq!(preview[19], "line 20");
    }

    #[test]
    fn a_short_output_is_shown_whole() {
        let notice = completion("general_00ff00ff", "completed", "done: 3 files\n");
        assert_eq!(
            notice,
            "[subagent session general_00ff00ff; completed; 1 line; full output shown]\ndone: 3 files"
        );
    }

    #[test]
    fn the_preview_keeps_breaks_and_tabs_and_folds_other_controls() {
        let p = Preview::of("a\tb\x1b[2Jc\r\nd\x07");
        assert_eq!(p.text, "a\tb [2Jc \nd ");
        assert!(!p.cut);
    }

    #[test]
    fn the_preview_stops_at_2048_bytes_on_a_character_boundary() {
        let output = "é".repeat(3000);
        let p = Preview::of(&output);
        assert!(p.cut);
        assert!(p.text.len() <= PREVIEW_BYTES);
        assert_eq!(p.text.len(), PREVIEW_BYTES);
        let one_long_line = "x".repeat(PREVIEW_BYTES);
        assert!(!Preview::of(&one_long_line).cut);
        assert!(Preview::of(&format!("{one_long_line}y")).cut);
    }

    #[test]
    fn twenty_lines_exactly_are_whole() {
        let output: String = (1..=20).map(|n| format!("{n}\n")).collect();
        assert!(!Preview::of(&output).cut);
        assert!(completion("h_00000000", "completed", &output).contains("full output shown"));
    }
}
