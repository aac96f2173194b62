//! A session's tool filter: the part of the catalog it is offered (a subagent's narrower
//! toolset). A call to a tool outside it is answered exactly like a call to an unknown tool.

use std::collections::BTreeSet;

/// Which of the catalog's tools a session may see and call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolFilter {
    /// The whole catalog.
    #[default]
    All,
    /// Only these names (names the catalog lacks are simply never offered).
    Only(BTreeSet<String>),
}

impl ToolFilter {
    /// Exactly `names`.
    pub fn only<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::Only(names.into_iter().map(Into::into).collect())
    }

    pub fn allows(&self, tool: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.contains(tool),
        }
    }

    /// What both filters allow: a child session is never offered more than its parent.
    pub fn within(self, outer: &ToolFilter) -> Self {
        match (self, outer) {
            (inner, Self::All) => inner,
            (Self::All, outer) => outer.clone(),
            (Self::Only(inner), Self::Only(outer)) => {
                Self::Only(inner.intersection(outer).cloned().collect())
            }
        }
    }

    /// The names as `session_started` records them: `None` for the whole catalog.
    pub fn recorded(&self) -> Option<Vec<String>> {
        match self {
            Self::All => None,
            Self::Only(names) => Some(names.iter().cloned().collect()),
        }
    }

    /// The filter a `session_started` recorded.
    pub fn from_recorded(names: Option<Vec<String>>) -> Self {
        names.map_or(Self::All, Self::only)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_filter_never_widens_its_parent() {
        let parent = ToolFilter::only(["read_file", "grep"]);
        let child = ToolFilter::only(["grep", "bash"]).within(&parent);
        assert_eq!(child, ToolFilter::only(["grep"]));
        assert_eq!(ToolFilter::All.within(&parent), parent);
        assert!(ToolFilter::All.within(&ToolFilter::All).allows("anything"));
        assert!(!child.allows("bash"));
    }

    #[test]
    fn the_recorded_form_round_trips() {
        for filter in [ToolFilter::All, ToolFilter::only(["a", "b"])] {
            assert_eq!(ToolFilter::from_recorded(filter.recorded()), filter);
        }
    }
}
