//! The user's session log key, `$XDG_CONFIG_HOME/tackle/log-key` (else
//! `~/.config/tackle/log-key`), beside the trust store and never in a project: a session log
//! counts as the user's own only when its lines are tagged with it ([`tackle_store::LogKey`]
//! says how the file is made and read).

use tackle_store::LogKey;

use crate::config_error;

/// The user's log key, created on first need. Fails when no config directory can be named
/// (`$XDG_CONFIG_HOME` or `$HOME`) or the key file is not one this user alone holds.
pub fn user_log_key() -> crate::Result<LogKey> {
    let dir = crate::load::user_config_dir().ok_or_else(|| {
        config_error!(
            "no user config directory to keep the session log key in; set XDG_CONFIG_HOME or HOME"
        )
    })?;
    LogKey::load_or_create(&dir).map_err(|e| config_error!("{e}"))
}
