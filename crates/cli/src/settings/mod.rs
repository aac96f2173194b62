//! Settings files and flags, layered with provenance.

mod file;
mod merge;

pub use file::{
    AlertSection, BashSection, FetchSection, LoadedFile, Origin, PathScopeSection,
    PermissionsSection, SafetySection, SettingsFile, Sourced, ToolOutputSection, ToolsSection,
    UrlScopeSection, WaitAndVerifySection, nearest,
};
pub use merge::{Flags, RuleEffect, Settings};
