//! What the small model is told. Short and plain on purpose: the small model is often a small
//! one (a 1.5B local model answers these), and every token of instruction is a token less of
//! bulk in its window. The question is given before the output and again after it, because
//! small models answer the last thing they read.

use crate::agentic::parts::Part;

/// The system prompt of every exchange of a digest (one answer, or one part's notes).
pub const DIGEST_SYSTEM: &str = "You read the output of a tool call on behalf of another \
agent, which will read only your reply. Answer its question from the output alone: quote \
exact names, values, paths and line numbers; say plainly when the output does not answer it; \
never guess. Be brief. Do not ask questions and do not call tools.";

/// The reply a part's exchange gives when nothing in the part bears on the question.
pub const NOTHING: &str = "NOTHING RELEVANT";

/// The prompt of agentic_research's subtask (an agent type's prompt: the tools, project
/// instructions and environment follow it).
pub const RESEARCH: &str = "You research a question for another agent, which will read \
only your final message. Use your read-only tools to find what answers it: search with grep \
and glob, read the files that matter. You have few turns, so go straight at the question. End \
with a short, self-contained answer that names the files and lines it rests on; say what you \
could not find.";

/// The request of a digest whose output fits one exchange.
pub fn whole(question: &str, call: &str, output: &str) -> String {
    format!(
        "Question: {question}\n\nThe output of `{call}` follows.\n\n<output>\n{output}\n</output>\n\n\
         Answer the question from this output: {question}"
    )
}

/// The request for one part's notes, when the output needs several exchanges.
pub fn part(question: &str, call: &str, part: &Part, parts: usize, text: &str) -> String {
    format!(
        "Question: {question}\n\nThe output of `{call}` is too long to read at once; this is \
         part {} of {parts} (lines {}–{} of the output).\n\n<output>\n{text}\n</output>\n\n\
         Write down everything in this part that helps answer the question, with exact names, \
         values and line numbers. If nothing in it does, reply exactly: {NOTHING}\n\n\
         The question: {question}",
        part.index + 1,
        part.first_line,
        part.last_line,
    )
}

/// The request that turns the parts' notes into the answer.
pub fn reduce(question: &str, call: &str, parts: usize, notes: &[(usize, String)]) -> String {
    let mut out = format!(
        "Question: {question}\n\nThe output of `{call}` was read in {parts} parts; these are \
         the notes taken from the parts that bear on the question (parts not listed had \
         nothing).\n"
    );
    for (index, note) in notes {
        out.push_str(&format!(
            "\n<notes part=\"{}\">\n{note}\n</notes>\n",
            index + 1
        ));
    }
    out.push_str(&format!(
        "\nAnswer the question from these notes: {question}"
    ));
    out
}

/// The first request of agentic_research's subtask.
pub fn research(question: &str, path: Option<&str>) -> String {
    match path {
        Some(path) => format!("{question}\n\nStart from `{path}`."),
        None => question.to_owned(),
    }
}
