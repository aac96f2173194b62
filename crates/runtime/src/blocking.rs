//! Blocking work from the dispatcher, through [`tackle_tool::run_blocking`], with a panic on the
//! blocking pool reported as a runtime error.

use crate::error::RuntimeError;

pub(crate) async fn run_blocking<T, F>(f: F) -> Result<T, RuntimeError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tackle_tool::run_blocking(f)
        .await
        .map_err(|e| RuntimeError::Join(e.to_string()))
}
