//! Running a recursive parser or evaluator on a stack whose size is known.
//!
//! Owns: the stack size model input is parsed on, and the one way to run code there. The
//! callers (the shell analyzer, json_query) bound their input's nesting first, so the depth a
//! parser can reach is limited; this stack is many times what those limits need, so no input
//! that passed them can overflow it. The threads of the async runtime have small stacks whose
//! size embedders choose; running the parsers on those would make the limits depend on them.
//!
//! Key decision: a stack segment of its own on the calling thread (`stacker::grow`: mapped,
//! switched to, unmapped), not a thread. A scoped thread per call was measured at over a tenth
//! of everything `bash true` costs through the runtime (its creation, the 64 MiB stack given
//! back with `madvise` at its exit, and two wake-ups across threads); a mapping costs a few
//! system calls, and its memory is only touched as deep as a call recurses. A panic there
//! unwinds back onto the caller's stack and on as the caller's panic.

use tackle_tool::ToolError;
use tackle_tool::protocol::ErrorCode;

/// The stack input is parsed and evaluated on.
pub const PARSER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Run `f` on a stack of [`PARSER_STACK_BYTES`] and return what it returns.
pub fn on_parser_stack<T: Send>(tool: &str, f: impl FnOnce() -> T + Send) -> Result<T, ToolError> {
    use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
    // `f`'s own panic is caught on the new stack and carried out as a value; a panic outside
    // it is `stacker` failing to map the stack. The caller sees neither half-done: `f` either
    // returned or panicked, and its panic is raised again here, where the runtime reports it
    // as `tool_panicked`.
    let ran = catch_unwind(AssertUnwindSafe(|| {
        stacker::grow(PARSER_STACK_BYTES, || catch_unwind(AssertUnwindSafe(f)))
    }));
    match ran {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(panic)) => resume_unwind(panic),
        Err(_) => Err(ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "{tool}: cannot map a {} MiB stack to read the input on; retry later",
                PARSER_STACK_BYTES >> 20
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recurses `depth` frames of a few hundred bytes each, the way a parser descends.
    fn descend(depth: usize) -> usize {
        let frame = std::hint::black_box([1u8; 512]);
        if depth == 0 {
            frame.len()
        } else {
            descend(depth - 1) + usize::from(std::hint::black_box(frame)[511])
        }
    }

    #[test]
    fn the_stack_holds_what_a_small_thread_stack_cannot() {
        // 8,000 frames of at least 512 bytes: at least 4 MiB, twice a worker thread's stack
        // and sixteen times the 256 KiB of the thread it runs from.
        let deep = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| on_parser_stack("test", || descend(8_000)).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(deep, 512 + 8_000);
    }

    #[test]
    fn a_panic_on_the_stack_is_the_callers() {
        let caught = std::panic::catch_unwind(|| {
            let _ = on_parser_stack("test", || -> usize { panic!("deep inside") });
        })
        .unwrap_err();
        assert_eq!(caught.downcast_ref::<&str>(), Some(&"deep inside"));
        // The thread goes on with its own stack.
        assert_eq!(on_parser_stack("test", || descend(10)).unwrap(), 522);
    }
}
