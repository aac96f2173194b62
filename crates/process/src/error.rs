//! Why a program could not be run or watched.

/// A failure of the runner itself; a program that runs and fails is a [`crate::RunOutcome`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    #[error("cannot start `{program}`: {source}; check that it exists and is executable")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the script is {bytes} bytes, more than the {limit} bytes the kernel lets one argument \
         have (`{program} -c <script>`); write it to a file and run the file instead"
    )]
    ScriptTooLong {
        program: String,
        bytes: usize,
        limit: usize,
    },
    #[error("reading the output of `{program}`: {source}")]
    Read {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("writing to the input of `{program}`: {source}")]
    Write {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("a pipeline needs at least one stage")]
    EmptyPipeline,
    #[error(
        "`{program}` is not an absolute path; a pipeline stage names its program by absolute \
         path (look a bare name up with `find_on_path`)"
    )]
    RelativeProgram { program: String },
    #[error("waiting for `{program}`: {source}")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
}
