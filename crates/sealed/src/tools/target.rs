//! The file a call names, by `path` or by `path_ref`, and how it may be shown.

use tackle_fs::RelPath;
use tackle_protocol::Quarantined;
use tackle_tool::ToolError;

use crate::errors;
use crate::reference::RefId;
use crate::tools::Shared;

/// A file of the workspace as a call named it.
#[derive(Clone, Debug)]
pub struct Target {
    pub rel: RelPath,
    /// The in-root path it resolves to, links followed: whose trust counts.
    pub real: RelPath,
    /// How the planner knows it: its path, or the reference it holds.
    pub shown: String,
    /// Named by a reference: its name must never reach the planner.
    pub reference: Option<RefId>,
}

impl Target {
    /// `path` or `path_ref`, exactly one. A missing file is fine here when `may_be_new`.
    pub fn of(
        shared: &Shared,
        path: Option<&str>,
        path_ref: Option<&str>,
        may_be_new: bool,
    ) -> Result<Target, ToolError> {
        let (input, shown, reference) = match (path, path_ref) {
            (Some(_), Some(_)) => {
                return Err(errors::invalid("give path or path_ref, not both"));
            }
            (None, None) => {
                return Err(errors::invalid(
                    "give path (or path_ref, a reference to a file)",
                ));
            }
            (Some(path), None) => (path.to_owned(), path.to_owned(), None),
            (None, Some(text)) => {
                let id = RefId::parse_arg("path_ref", text).map_err(errors::invalid)?;
                let held = shared
                    .state
                    .get(id)
                    .ok_or_else(|| errors::unknown_reference(text))?;
                match held.held {
                    Quarantined::File { path } => (path, id.to_string(), Some(id)),
                    _ => {
                        return Err(ToolError::new(
                            errors::NOT_A_DESTINATION,
                            format!(
                                "{id} names no file; path_ref takes a reference list_files or read_file handed you"
                            ),
                        ));
                    }
                }
            }
        };
        let rel = shared
            .root
            .resolve(&input)
            .map_err(|e| errors::fs(&e, &shown))?;
        let real = match shared.root.real_path(&rel) {
            Ok(real) => real,
            Err(tackle_fs::FsError::NotFound { .. }) if may_be_new => rel.clone(),
            Err(e) => return Err(errors::fs(&e, &shown)),
        };
        Ok(Target {
            rel,
            real,
            shown,
            reference,
        })
    }

    /// The gate's keys for reading it: the name and the real path, and the reference marker
    /// that keeps the gate's messages from naming a file the planner holds only by reference.
    pub fn keys(&self, action: tackle_tool::Action) -> Vec<tackle_tool::PermissionResource> {
        let mut keys = vec![tackle_tool::PermissionResource {
            action: action.clone(),
            target: self.rel.as_str().to_owned(),
        }];
        if self.real != self.rel {
            keys.push(tackle_tool::PermissionResource {
                action,
                target: self.real.as_str().to_owned(),
            });
        }
        if let Some(id) = self.reference {
            keys.push(crate::gate::reference_key(id));
        }
        keys
    }
}
