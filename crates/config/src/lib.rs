//! Configuration: settings files layered with their provenance, folder trust, the model
//! catalog the user configured, the agent types of the user's and the project's files, and the
//! wiring from settings to policy to catalog that every front end (`tackle call`, `serve`,
//! `run`, `chat`) builds its sessions with.
//!
//! The binary stays thin: it parses arguments into [`settings::Flags`], calls [`load_with`]
//! with the consent it can offer, and builds its runtime from [`host::catalog`] and
//! [`host::gate`].

pub mod agent_types;
pub mod call_peer_settings;
pub mod delegation_settings;
pub mod error;
pub(crate) mod frontmatter;
pub mod host;
pub mod load;
pub mod log_key;
pub mod loop_settings;
pub mod mcp_scope;
pub mod messaging_settings;
pub mod models;
pub mod posture;
pub mod root;
pub mod sciontool;
pub mod settings;
pub mod skills;
pub mod storage_settings;
pub mod task;
pub mod trust;
pub mod wait_settings;

pub use error::{ConfigError, Context, Result};
pub use load::{Config, load_with, project_config_path, user_config_dir, user_config_path};
pub use log_key::user_log_key;
