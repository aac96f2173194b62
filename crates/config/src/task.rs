//! `--task`: the investigation-shaped task classes (seed 003, "The bash search gate": "the
//! blunt alternative is to not register bash at all").
//!
//! A class only removes tools; `--enable-tools` puts any of them back, since both are flags and
//! within one layer an enable wins (`--task=debug --enable-tools=bash` keeps the shell, and the
//! bash search gate still refuses `bash grep`).

/// What kind of work the session is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TaskClass {
    /// Find the cause of a failure: no shell.
    Debug,
    /// Read and understand: no shell.
    Research,
    /// Read and judge a change: no shell and no writes.
    Review,
}

impl TaskClass {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Research => "research",
            Self::Review => "review",
        }
    }

    /// The tools the class drops (`bash_stdin` goes with `bash`: it is built only beside it).
    pub fn drops(self) -> &'static [&'static str] {
        const SHELL: &[&str] = &["bash"];
        const SHELL_AND_WRITES: &[&str] = &["bash", "write_file", "edit_file", "delete_file"];
        match self {
            Self::Debug | Self::Research => SHELL,
            Self::Review => SHELL_AND_WRITES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dropped_name_is_a_builtin() {
        for class in [TaskClass::Debug, TaskClass::Research, TaskClass::Review] {
            for name in class.drops() {
                assert!(tackle_tools::BUILTIN_TOOL_NAMES.contains(name), "{name}");
            }
        }
    }
}
