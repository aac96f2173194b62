//! Settings files and flags, layered with provenance.

mod file;
mod merge;
mod models_file;

pub use file::{
    AlertSection, ArtifactsSection, BashSection, CallPeerSection, CheckpointSection,
    DelegationSection, FetchSection, LoadedFile, MessagingSection, Origin, PathScopeSection,
    PermissionsSection, PostureSection, SafetySection, SciontoolStatusSection, SettingsFile,
    Sourced, StoreSection, ToolOutputSection, ToolsSection, UrlScopeSection, WaitAndVerifySection,
    WatchdogSection, nearest,
};
pub use merge::{Flags, RuleEffect, Settings};
pub use models_file::{
    MediaSection, ModelEntrySection, ModelSection, PricesSection, ProviderSection,
};
