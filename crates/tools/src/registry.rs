//! The built-in tools this crate builds, as one table: each [`Registration`] names a tool and
//! builds it from the [`BuiltinConfig`] (or leaves it out when the settings say so). The tool
//! list ([`builtin_tools`]) and the standard catalog's names ([`BUILTIN_TOOL_NAMES`]) are both
//! derived from it, so a new tool is its file plus one entry here.
//!
//! Rejected: a names list beside a constructor list, which had to be edited together and could
//! disagree (a tool built under a name the validation of `tools.disable` did not know).

use std::sync::Arc;

use tackle_tool::{DynTool, PlanMode};

use crate::{
    Alert, Bash, BashStdin, BuiltinConfig, DeleteFile, EditFile, FetchUrl, Glob, Grep, JsonQuery,
    ListDir, ReadFile, ReadManyFiles, RecordPlan, SciontoolStatus, Stat, Todo, WaitAndVerify,
    WriteFile,
};

/// One built-in tool: its name (the one its `Tool::name` returns) and how it is built.
pub struct Registration {
    pub name: &'static str,
    /// The tool, or `None` when the configuration leaves it out.
    pub build: fn(&BuiltinConfig) -> Option<Arc<dyn DynTool>>,
}

/// Every tool this crate builds, in catalog order.
pub const REGISTRY: &[Registration] = &[
    Registration {
        name: "read_file",
        build: |c| built(ReadFile::new().with_media_limit(c.media_max_bytes)),
    },
    Registration {
        name: "read_many_files",
        build: |_| built(ReadManyFiles),
    },
    Registration {
        name: "write_file",
        build: |_| built(WriteFile),
    },
    Registration {
        name: "edit_file",
        build: |_| built(EditFile),
    },
    Registration {
        name: "delete_file",
        build: |_| built(DeleteFile),
    },
    Registration {
        name: "stat",
        build: |_| built(Stat),
    },
    Registration {
        name: "list_dir",
        build: |_| built(ListDir),
    },
    Registration {
        name: "glob",
        build: |_| built(Glob),
    },
    Registration {
        name: "grep",
        build: |_| built(Grep),
    },
    Registration {
        name: "view_file_outline",
        build: outline,
    },
    Registration {
        name: "json_query",
        build: |_| built(JsonQuery),
    },
    Registration {
        name: "todo",
        build: |_| built(Todo::new()),
    },
    Registration {
        name: "wait_and_verify",
        build: |c| built(WaitAndVerify::new(c.wait.clone())),
    },
    Registration {
        name: "bash",
        build: |c| {
            built(Bash::new(
                c.search_gate(),
                c.process_env.clone(),
                c.stdin.clone(),
                c.bash_prestart,
            ))
        },
    },
    Registration {
        name: "bash_stdin",
        // Only beside bash: without it no interactive call can exist to feed.
        build: |c| {
            let beside_bash = c.registered.is_empty() || c.registered.iter().any(|n| n == "bash");
            beside_bash.then(|| tool(BashStdin::new(c.stdin.clone())))
        },
    },
    Registration {
        name: "fetch_url",
        // Offered only when the URL scope allows something (the catalog also asks the policy).
        build: |c| {
            (!c.url_scope.is_empty()).then(|| tool(FetchUrl::new(&c.url_scope, c.fetch.clone())))
        },
    },
    Registration {
        name: "alert",
        build: |c| Alert::new(c.alert_targets.clone(), &c.fetch).map(tool),
    },
    Registration {
        name: "sciontool_status",
        // Only where the hub's binary is (seed 003): hidden, not a no-op, elsewhere.
        build: |c| {
            c.sciontool
                .clone()
                .map(|cmd| tool(SciontoolStatus::new(cmd)))
        },
    },
    Registration {
        name: "record_plan",
        // Only under plan_mode advisory or required (seed 003).
        build: |c| match (c.plan_mode, &c.plans) {
            (PlanMode::Advisory | PlanMode::Required, Some(book)) => built(RecordPlan::new(
                c.plan_mode,
                book.clone(),
                c.registered.clone(),
            )),
            _ => None,
        },
    },
];

/// Names of the standard catalog (DESIGN.md §5) that this crate does not build: tools of other
/// crates (`retrieve_raw` in the runtime, the goal tools in `tackle-goals`, the loop's tools
/// and the agentic wrappers in `tackle-agent`) and tools not implemented yet. Listed here so
/// `--disable-tools` knows them and a description sentence naming one that is absent drops.
pub const BUILT_ELSEWHERE: &[&str] = &[
    "retrieve_raw",
    "ask_user",
    "mark_task_done",
    "goal_get",
    "goal_update",
    "delegate_subagent",
    "get_subagent_result",
    "cancel_subagent",
    "send_message",
    "skill",
    "call_peer",
    "schedule_next_turn",
    "agentic_read_file",
    "agentic_grep",
    "agentic_fetch_url",
    "agentic_research",
];

/// Every built-in tool name of the standard catalog, implemented or not: [`REGISTRY`]'s names,
/// then [`BUILT_ELSEWHERE`]. Used to validate `--disable-tools`/`tools.disable` (a typo fails
/// loudly) and to drop description sentences that name a built-in this build does not register.
pub const BUILTIN_TOOL_NAMES: &[&str] = &ALL_NAMES;

const NAME_COUNT: usize = REGISTRY.len() + BUILT_ELSEWHERE.len();

const ALL_NAMES: [&str; NAME_COUNT] = {
    let mut names = [""; NAME_COUNT];
    let mut i = 0;
    while i < REGISTRY.len() {
        names[i] = REGISTRY[i].name;
        i += 1;
    }
    let mut j = 0;
    while j < BUILT_ELSEWHERE.len() {
        names[REGISTRY.len() + j] = BUILT_ELSEWHERE[j];
        j += 1;
    }
    names
};

/// The standard catalog's built-in tools that `config` leaves in, in catalog order.
pub fn builtin_tools(config: &BuiltinConfig) -> Vec<Arc<dyn DynTool>> {
    REGISTRY.iter().filter_map(|r| (r.build)(config)).collect()
}

fn tool<T: DynTool + 'static>(tool: T) -> Arc<dyn DynTool> {
    Arc::new(tool)
}

fn built<T: DynTool + 'static>(t: T) -> Option<Arc<dyn DynTool>> {
    Some(tool(t))
}

/// `view_file_outline` is built only with the `outline` feature; its name is known either way.
fn outline(_: &BuiltinConfig) -> Option<Arc<dyn DynTool>> {
    #[cfg(feature = "outline")]
    return built(crate::outline::ViewFileOutline);
    #[cfg(not(feature = "outline"))]
    None
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::{AlertTarget, PlanBook};

    /// A configuration that leaves every conditional tool in.
    fn everything(plans: &std::path::Path) -> BuiltinConfig {
        BuiltinConfig {
            url_scope: vec![tackle_gate::Pattern::parse("fetch:https://example.com/**").unwrap()],
            alert_targets: vec![AlertTarget {
                name: "ops".into(),
                url: "https://example.com/hook".parse().unwrap(),
                token: None,
            }],
            plan_mode: PlanMode::Advisory,
            plans: Some(PlanBook::new(plans)),
            sciontool: Some(crate::SciontoolCommand {
                program: "/usr/bin/sciontool".into(),
                args: vec!["status".into()],
            }),
            ..BuiltinConfig::default()
        }
    }

    #[test]
    fn names_are_the_registry_then_the_rest_and_none_repeats() {
        let registered: Vec<&str> = REGISTRY.iter().map(|r| r.name).collect();
        assert_eq!(&BUILTIN_TOOL_NAMES[..REGISTRY.len()], &registered[..]);
        assert_eq!(&BUILTIN_TOOL_NAMES[REGISTRY.len()..], BUILT_ELSEWHERE);
        let unique: HashSet<&str> = BUILTIN_TOOL_NAMES.iter().copied().collect();
        assert_eq!(
            unique.len(),
            BUILTIN_TOOL_NAMES.len(),
            "{BUILTIN_TOOL_NAMES:?}"
        );
    }

    #[test]
    fn every_built_tool_answers_to_its_registered_name() {
        let dir = tempfile::tempdir().unwrap();
        let config = everything(dir.path());
        let mut built = 0;
        for r in REGISTRY {
            if let Some(tool) = (r.build)(&config) {
                assert_eq!(tool.name(), r.name);
                built += 1;
            }
        }
        // Only view_file_outline depends on a feature rather than on settings.
        let expected = REGISTRY.len() - usize::from(cfg!(not(feature = "outline")));
        assert_eq!(built, expected);
        let names: Vec<String> = builtin_tools(&config)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let in_order: Vec<&str> = REGISTRY
            .iter()
            .map(|r| r.name)
            .filter(|n| names.iter().any(|m| m == n))
            .collect();
        assert_eq!(names, in_order);
    }

    #[test]
    fn the_default_configuration_leaves_out_what_needs_settings() {
        let names: Vec<String> = builtin_tools(&BuiltinConfig::default())
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        for absent in ["fetch_url", "alert", "record_plan", "sciontool_status"] {
            assert!(!names.iter().any(|n| n == absent), "{absent} in {names:?}");
        }
        assert!(names.iter().any(|n| n == "bash_stdin"), "{names:?}");
    }

    #[test]
    fn bash_stdin_is_built_only_beside_bash() {
        let without_bash = BuiltinConfig {
            registered: vec!["read_file".into()],
            ..BuiltinConfig::default()
        };
        let names: Vec<String> = builtin_tools(&without_bash)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert!(!names.iter().any(|n| n == "bash_stdin"), "{names:?}");
    }
}
