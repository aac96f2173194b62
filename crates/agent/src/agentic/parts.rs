//! An output cut into parts a small model's window holds: whole lines where they fit, a line
//! longer than a part cut at a character boundary. Pure, so the cuts are tested as a table.
//!
//! Each part knows the lines it covers (1-based, of the whole output), which its prompt names
//! and the answer's coverage reports. At most `max_parts` are planned: what lies beyond them
//! is not read, and [`Plan::covered_bytes`] says where reading stopped, so the caller can say
//! so instead of implying the whole output was read.

/// One part: a byte range of the output and the lines it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// 0-based, in output order.
    pub index: usize,
    pub start: usize,
    pub end: usize,
    /// The 1-based line the part begins in, and the one it ends in.
    pub first_line: u64,
    pub last_line: u64,
}

impl Part {
    pub fn text<'a>(&self, output: &'a str) -> &'a str {
        &output[self.start..self.end]
    }
}

/// The parts of an output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub parts: Vec<Part>,
    /// Bytes of the output the parts cover, from its start.
    pub covered_bytes: usize,
}

impl Plan {
    /// Whether the parts cover the whole output.
    pub fn complete(&self, output: &str) -> bool {
        self.covered_bytes >= output.len()
    }
}

/// Cuts `output[from..]` (whose first byte is on line `first_line`) into parts of at most
/// `budget` bytes (at least one byte each), at most `max_parts` of them, numbered from
/// `first_index`.
pub fn plan_from(
    output: &str,
    from: usize,
    first_line: u64,
    budget: usize,
    max_parts: usize,
    first_index: usize,
) -> Plan {
    let budget = budget.max(1);
    let mut parts = Vec::new();
    let mut start = from;
    let mut line = first_line;
    while start < output.len() && parts.len() < max_parts {
        let mut limit = (start + budget).min(output.len());
        while !output.is_char_boundary(limit) {
            limit -= 1;
        }
        let end = if limit == output.len() {
            limit
        } else {
            // The last newline inside the budget ends the part; a line longer than the
            // budget is cut at the last character boundary inside it.
            match output[start..limit].rfind('\n') {
                Some(at) => start + at + 1,
                None => {
                    let mut end = limit;
                    if end == start {
                        // A budget smaller than one character: take the character whole.
                        end = start + output[start..].chars().next().map_or(1, char::len_utf8);
                    }
                    end
                }
            }
        };
        let text = &output[start..end];
        let newlines = text.matches('\n').count() as u64;
        // A part that ends with its newline ends on the line that newline closes.
        let last_line = if text.ends_with('\n') {
            line + newlines.saturating_sub(1)
        } else {
            line + newlines
        };
        parts.push(Part {
            index: first_index + parts.len(),
            start,
            end,
            first_line: line,
            last_line,
        });
        line += newlines;
        start = end;
    }
    Plan {
        parts,
        covered_bytes: start,
    }
}

/// [`plan_from`] over the whole output.
pub fn plan(output: &str, budget: usize, max_parts: usize) -> Plan {
    plan_from(output, 0, 1, budget, max_parts, 0)
}

/// `part` cut in two (or more, when a line forces it), for a part the model's window did not
/// hold after all. The pieces keep the part's index: they are read as that part.
pub fn halve(output: &str, part: &Part) -> Vec<Part> {
    let half = (part.end - part.start).div_ceil(2);
    let sub = &output[..part.end];
    let mut pieces = plan_from(sub, part.start, part.first_line, half, usize::MAX, 0).parts;
    for piece in &mut pieces {
        piece.index = part.index;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(plan: &Plan) -> Vec<(u64, u64)> {
        plan.parts
            .iter()
            .map(|p| (p.first_line, p.last_line))
            .collect()
    }

    #[test]
    fn parts_end_at_newlines_and_name_their_lines() {
        let output = "one\ntwo\nthree\nfour\n";
        type Case = (usize, usize, &'static [(u64, u64)], usize);
        let cases: &[Case] = &[
            // budget, max parts, the parts' lines, bytes covered
            (100, 8, &[(1, 4)], 19),
            (8, 8, &[(1, 2), (3, 3), (4, 4)], 19),
            (10, 8, &[(1, 2), (3, 3), (4, 4)], 19),
            (14, 8, &[(1, 3), (4, 4)], 19),
            (8, 2, &[(1, 2), (3, 3)], 14),
        ];
        for (budget, max, want, covered) in cases {
            let plan = plan(output, *budget, *max);
            assert_eq!(lines(&plan), *want, "budget {budget}");
            assert_eq!(plan.covered_bytes, *covered, "budget {budget}");
            let joined: String = plan.parts.iter().map(|p| p.text(output)).collect();
            assert_eq!(joined, output[..*covered], "budget {budget}");
            assert_eq!(plan.complete(output), *covered == output.len());
        }
    }

    #[test]
    fn a_long_line_is_cut_on_a_character_boundary() {
        let output = "é".repeat(10) + "\nend";
        let plan = plan(&output, 5, 100);
        assert!(plan.complete(&output));
        for p in &plan.parts {
            assert!(p.end - p.start <= 5);
            assert!(output.is_char_boundary(p.start) && output.is_char_boundary(p.end));
        }
        assert_eq!(plan.parts.first().unwrap().first_line, 1);
        assert_eq!(plan.parts.last().unwrap().last_line, 2);
        // A budget under one character still makes progress.
        assert!(super::plan("ééé", 1, 100).complete("ééé"));
    }

    #[test]
    fn a_halved_part_covers_exactly_what_it_did() {
        let output: String = (1..=40).map(|n| format!("line {n}\n")).collect();
        let whole = plan(&output, 200, 8);
        let second = &whole.parts[1];
        let halves = halve(&output, second);
        assert!(halves.len() >= 2);
        assert_eq!(halves.first().unwrap().start, second.start);
        assert_eq!(halves.last().unwrap().end, second.end);
        assert_eq!(halves.first().unwrap().first_line, second.first_line);
        assert_eq!(halves.last().unwrap().last_line, second.last_line);
        assert!(halves.iter().all(|h| h.index == second.index));
    }
}
