//! Running a recursive parser or evaluator on a thread whose stack is known.
//!
//! Owns: the stack size model input is parsed on, and the one way to run code there. The
//! callers (the shell analyzer, json_query) bound their input's nesting first, so the depth a
//! parser can reach is limited; this stack is many times what those limits need, so no input
//! that passed them can overflow it. The threads of the async runtime have small stacks whose
//! size embedders choose; running the parsers there would make the limits depend on them.
//!
//! Key decision: a scoped thread per call, not a pool. Spawning costs tens of microseconds,
//! far below what a call costs, and the memory is only touched as deep as a call recurses.

use tackle_tool::ToolError;
use tackle_tool::protocol::ErrorCode;

/// The stack of the threads input is parsed and evaluated on.
pub const PARSER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Run `f` on a thread with [`PARSER_STACK_BYTES`] of stack and return what it returns.
pub fn on_parser_stack<T: Send>(tool: &str, f: impl FnOnce() -> T + Send) -> Result<T, ToolError> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name(format!("{tool}-parse"))
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, f)
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::RESOURCE_LIMIT,
                    format!("{tool}: cannot start a thread to read the input ({e}); retry later"),
                )
            })?;
        // A panic there is the caller's panic: the runtime reports it as `tool_panicked`.
        handle
            .join()
            .map_err(|panic| std::panic::resume_unwind(panic))
    })
}
