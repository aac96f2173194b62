//! The policy: rules, mode and scopes compiled once, evaluated per call.

use std::collections::HashMap;

use globset::{Candidate, GlobSet, GlobSetBuilder};

use crate::command::{COMMAND_PREFIX, CommandWords};
use crate::decision::{Because, Decision, KeyVerdict};
use crate::error::PolicyError;
use crate::key::{self, UNPARSEABLE_BASH};
use crate::pattern::Dialect;
use crate::protected::{ProtectedPath, ProtectedSet, Protection};
use crate::{Effect, Grants, Mode, PathScope, Pattern, Rule, UrlScope};

use command_index::{CommandHead, CommandRules};

/// What the gate is asked about one call.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The tool's gate name (`bash`, `write_file`, `mcp.github.create_issue`).
    pub tool: &'a str,
    /// The call's permission keys, `tool.<name>` first, then its resources.
    pub keys: &'a [String],
    /// Whether the call changes anything (plan mode denies it).
    pub mutating: bool,
}

/// Rules, mode and scopes, with every pattern compiled into per-effect glob sets.
#[derive(Clone, Debug)]
pub struct Policy {
    rules: Vec<Rule>,
    mode: Mode,
    path_scope: PathScope,
    url_scope: UrlScope,
    index: RuleIndex,
    scope_allow: GlobSet,
    scope_deny: GlobSet,
    url_allow: GlobSet,
    protected: ProtectedSet,
}

/// Every rule compiled once, bucketed by the action its pattern fixes, so a key is only
/// matched against the rules that could match it (plus the few with a wildcard action).
#[derive(Clone, Debug)]
struct RuleIndex {
    by_action: HashMap<String, Bucket>,
    any_action: Bucket,
}

/// One glob set for the key-dialect rules (matched on the whole key) and one for the path
/// rules (matched on the key's resource), each with the policy index of its rules, and the
/// command rules, matched word by word. A deny or ask command rule is in the key set too (it
/// also matches the key as written); an allow command rule is only matched word by word.
#[derive(Clone, Debug)]
struct Bucket {
    keys: GlobSet,
    key_rules: Vec<usize>,
    paths: GlobSet,
    path_rules: Vec<usize>,
    commands: CommandRules,
}

/// The strongest matching rules for one key: the first deny and first ask in rule order,
/// and whether any allow rule matched.
#[derive(Clone, Copy, Debug, Default)]
struct Matched {
    deny: Option<usize>,
    ask: Option<usize>,
    allow: bool,
}

/// Why a path fell outside the path scope; turned into text only when reported.
#[derive(Clone, Copy, Debug)]
enum ScopeViolation {
    LeavesRoot,
    OutsideAllow,
    InsideDeny(usize),
}

/// A key's verdict before it is reported: indices instead of cloned strings.
#[derive(Clone, Copy, Debug)]
enum Reason {
    Rule(usize),
    AllowRule,
    Default,
    PathScope(ScopeViolation),
    UrlScope,
    /// A built-in protected path ([`crate::protected::PROTECTED`]); no mode or grant lifts it.
    Protected(&'static ProtectedPath),
}

impl Policy {
    /// Compiles a policy. Fails on an allow rule for `tool.bash.cmd:?`, on path scope patterns
    /// that are absolute or climb out with `..`, and on patterns the glob compiler rejects.
    pub fn new(
        rules: Vec<Rule>,
        mode: Mode,
        path_scope: PathScope,
        url_scope: UrlScope,
    ) -> Result<Policy, PolicyError> {
        if let Some(rule) = rules
            .iter()
            .find(|r| r.effect == Effect::Allow && r.pattern.as_str() == UNPARSEABLE_BASH)
        {
            return Err(PolicyError::AllowsUnparseable {
                rule_source: rule.source.clone(),
            });
        }
        let index = RuleIndex::build(&rules)?;
        let scope_allow = scope_set("allow", &path_scope.allow)?;
        let scope_deny = scope_set("deny", &path_scope.deny)?;
        let mut urls = GlobSetBuilder::new();
        for pattern in &url_scope.allow {
            // `fetch:https://x/*` and `https://x/*` mean the same URL scope entry.
            let text = pattern.as_str();
            let text = text.strip_prefix("fetch:").unwrap_or(text);
            urls.add(Pattern::parse(text)?.glob().clone());
        }
        let url_allow = urls.build().map_err(compile_error)?;
        let protected = ProtectedSet::build()?;
        Ok(Policy {
            rules,
            mode,
            path_scope,
            url_scope,
            index,
            scope_allow,
            scope_deny,
            url_allow,
            protected,
        })
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches mode (no recompilation: modes do not change the rules).
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// The path scope.
    pub fn path_scope(&self) -> &PathScope {
        &self.path_scope
    }

    /// The URL scope.
    pub fn url_scope(&self) -> &UrlScope {
        &self.url_scope
    }

    /// Decides a call: any denied key denies it, else any asking key asks (listing them all),
    /// else it is allowed. Per key: scopes first (a path or URL outside its scope is denied
    /// whatever the rules say), then the matching rules with deny > ask > allow regardless of
    /// source, then the action's default; plan mode denies `write:` keys and mutating calls;
    /// an ask is then allowed by a session grant, by accept-edits (writes inside the path
    /// scope) or by yolo. `tool.bash.cmd:?` is never matched by an allow rule nor granted, and
    /// a `write:` or `read:` key on a protected path (see [`crate::PROTECTED`]) is denied or
    /// asks whatever the mode, the allow rules and the grants say.
    pub fn evaluate(&self, req: &Request<'_>, grants: &Grants) -> Decision {
        let mut scratch = Vec::new();
        let mut asks = Vec::new();
        let mut overrides = Vec::new();
        let plan = self.mode == Mode::Plan;
        let mut saw_tool_key = false;
        for key in req.keys {
            let (effect, reason) = self.key_verdict(key, &mut scratch);
            let is_tool_key = key
                .strip_prefix("tool.")
                .is_some_and(|name| name == req.tool);
            saw_tool_key |= is_tool_key;
            if effect == Effect::Deny {
                return Decision::Deny {
                    verdict: self.report(key, effect, reason),
                };
            }
            if plan && (key::action(key) == "write" || (req.mutating && is_tool_key)) {
                return Decision::Deny {
                    verdict: mode_verdict(key, Effect::Deny, Mode::Plan),
                };
            }
            if effect == Effect::Ask {
                let unparseable = key == UNPARSEABLE_BASH;
                // A child's narrowing asks a person: a run's pre-approved patterns (a
                // skill's allowed-tools) do not answer it, a person's session grant does.
                let narrowing = matches!(reason, Reason::Rule(i)
                    if matches!(self.rules[i].source, crate::RuleSource::Narrowing { .. }));
                let granted = if narrowing {
                    grants.is_granted_for_session(key)
                } else {
                    grants.is_granted(key)
                };
                if matches!(reason, Reason::Protected(_)) {
                    asks.push(self.report(key, effect, reason));
                } else if !unparseable && granted {
                    overrides.push(KeyVerdict {
                        key: key.clone(),
                        effect: Effect::Allow,
                        because: Because::Grant,
                    });
                } else if self.mode == Mode::AcceptEdits
                    && key::path_key(key).is_some_and(|(action, _)| action == "write")
                {
                    overrides.push(mode_verdict(key, Effect::Allow, Mode::AcceptEdits));
                } else if self.mode == Mode::Yolo {
                    overrides.push(mode_verdict(key, Effect::Allow, Mode::Yolo));
                } else {
                    asks.push(self.report(key, effect, reason));
                }
            }
        }
        if plan && req.mutating && !saw_tool_key {
            let key = format!("tool.{}", req.tool);
            return Decision::Deny {
                verdict: mode_verdict(&key, Effect::Deny, Mode::Plan),
            };
        }
        if asks.is_empty() {
            Decision::Allow { overrides }
        } else {
            Decision::Ask { keys: asks }
        }
    }

    /// Whether a path a tool found by walking (beneath a directory the call was allowed to
    /// read) may be read as part of that call: only when `read:<path>` is allowed outright by
    /// the scope, the rules and the defaults. A path whose key would be denied *or would ask*
    /// is left out: the approval covered the directory, not files a rule singles out, and the
    /// model can still read such a file by name, which asks. Grants and modes do not widen it.
    pub fn admits_walked_read(&self, path: &str) -> bool {
        // A walk asks this of every file it finds, from its walker threads: each thread builds
        // the key in, and matches with, buffers of its own instead of allocating per file.
        thread_local! {
            static BUFFERS: std::cell::RefCell<(String, Vec<usize>)> =
                const { std::cell::RefCell::new((String::new(), Vec::new())) };
        }
        BUFFERS.with(|buffers| match buffers.try_borrow_mut() {
            Ok(mut buffers) => {
                let (key, scratch) = &mut *buffers;
                key.clear();
                key.push_str("read:");
                key.push_str(path);
                self.key_verdict(key, scratch).0 == Effect::Allow
            }
            // Re-entered on this thread (a rule's matcher never calls back, but nothing here
            // relies on that): fresh buffers.
            Err(_) => self.key_verdict(&format!("read:{path}"), &mut Vec::new()).0 == Effect::Allow,
        })
    }

    /// Whether `key` is a `write:` or `read:` key on a protected path, which a session grant
    /// never covers (a front end need not offer "for this session" for it).
    pub fn is_protected(&self, key: &str) -> bool {
        self.protection(key).is_some()
    }

    fn protection(&self, key: &str) -> Option<&'static ProtectedPath> {
        let (action, path) = key::path_key(key)?;
        self.protected.find(action, path)
    }

    /// The effect of one key from protections, scopes, rules and defaults (modes and grants
    /// come after). A protected path that asks still yields to a deny rule or the path scope.
    fn key_verdict(&self, key: &str, scratch: &mut Vec<usize>) -> (Effect, Reason) {
        let protection = self.protection(key);
        if let Some(p) = protection
            && p.protection == Protection::Deny
        {
            return (Effect::Deny, Reason::Protected(p));
        }
        let (effect, reason) = self.unprotected_verdict(key, scratch);
        match protection {
            Some(p) if effect != Effect::Deny => (Effect::Ask, Reason::Protected(p)),
            _ => (effect, reason),
        }
    }

    fn unprotected_verdict(&self, key: &str, scratch: &mut Vec<usize>) -> (Effect, Reason) {
        if let Some((_, path)) = key::path_key(key)
            && let Some(violation) = self.path_violation(path)
        {
            return (Effect::Deny, Reason::PathScope(violation));
        }
        if let Some(url) = key.strip_prefix("fetch:")
            && !self
                .url_allow
                .is_match_candidate(&Candidate::from_bytes(url))
        {
            return (Effect::Deny, Reason::UrlScope);
        }
        let matched = self.index.matching(&self.rules, key, scratch);
        if let Some(rule) = matched.deny {
            return (Effect::Deny, Reason::Rule(rule));
        }
        if let Some(rule) = matched.ask {
            return (Effect::Ask, Reason::Rule(rule));
        }
        if matched.allow && key != UNPARSEABLE_BASH {
            return (Effect::Allow, Reason::AllowRule);
        }
        (key::default_effect(key), Reason::Default)
    }

    fn path_violation(&self, path: &str) -> Option<ScopeViolation> {
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|s| s == "..") {
            return Some(ScopeViolation::LeavesRoot);
        }
        let candidate = Candidate::from_bytes(path);
        if !self.scope_allow.is_match_candidate(&candidate) {
            return Some(ScopeViolation::OutsideAllow);
        }
        if self.scope_deny.is_match_candidate(&candidate) {
            let first = self.scope_deny.matches_candidate(&candidate);
            return Some(ScopeViolation::InsideDeny(
                first.first().copied().unwrap_or(0),
            ));
        }
        None
    }

    /// Turns an internal reason into the reported verdict (the only place strings are cloned).
    fn report(&self, key: &str, effect: Effect, reason: Reason) -> KeyVerdict {
        let because = match reason {
            Reason::Rule(index) => {
                let rule = &self.rules[index];
                Because::Rule {
                    pattern: rule.pattern.as_str().to_owned(),
                    source: rule.source.clone(),
                }
            }
            // Allows by rule are not reported one by one; name the action for completeness.
            Reason::AllowRule | Reason::Default => Because::Default {
                action: key::action(key).to_owned(),
            },
            Reason::PathScope(violation) => Because::PathScope {
                detail: self.scope_detail(key, violation),
            },
            Reason::UrlScope => Because::UrlScope,
            Reason::Protected(p) => Because::Protected {
                why: p.why.to_owned(),
            },
        };
        KeyVerdict {
            key: key.to_owned(),
            effect,
            because,
        }
    }

    fn scope_detail(&self, key: &str, violation: ScopeViolation) -> String {
        let path = key::resource(key).unwrap_or(key);
        match violation {
            ScopeViolation::LeavesRoot => format!(
                "\"{path}\" leaves the project root; name paths relative to the root, without '..'"
            ),
            ScopeViolation::OutsideAllow => format!(
                "\"{path}\" is outside path_scope.allow; add a pattern covering it to path_scope.allow"
            ),
            ScopeViolation::InsideDeny(index) => {
                let pattern = self.path_scope.deny.get(index).map_or("?", |p| p.as_str());
                format!(
                    "\"{path}\" is inside path_scope.deny (\"{pattern}\"); remove that pattern from path_scope.deny to allow it"
                )
            }
        }
    }

    /// Whether a tool should be in the catalog at all: false when a deny rule matches its
    /// `tool.<name>` key, when it is `fetch` with an empty `url_scope.allow`, or when all its
    /// actions default to deny (`fetch`, `message`) and no allow or ask rule could match any
    /// of its keys. A tool no rule could ever allow is not advertised.
    pub fn advertises(&self, tool: &str, actions: &[&str]) -> bool {
        let tool_key = format!("tool.{tool}");
        if self
            .index
            .matching(&self.rules, &tool_key, &mut Vec::new())
            .deny
            .is_some()
        {
            return false;
        }
        if actions.contains(&"fetch") && self.url_scope.allow.is_empty() {
            return false;
        }
        let denied_by_default = !actions.is_empty()
            && actions
                .iter()
                .all(|action| key::default_for_action(action) == Effect::Deny);
        if !denied_by_default {
            return true;
        }
        self.rules
            .iter()
            .filter(|rule| rule.effect != Effect::Deny)
            .any(|rule| {
                rule.pattern.matches(&tool_key) || could_match_action(&rule.pattern, actions)
            })
    }
}

/// True when the pattern could match some key of one of these actions: its literal prefix
/// starts with `<action>:`, or is itself a prefix of it (`*`, `**`, `fe*`).
fn could_match_action(pattern: &Pattern, actions: &[&str]) -> bool {
    let prefix = pattern.literal_prefix();
    actions.iter().any(|action| {
        let head = format!("{action}:");
        prefix.starts_with(&head) || head.starts_with(prefix)
    })
}

fn mode_verdict(key: &str, effect: Effect, mode: Mode) -> KeyVerdict {
    KeyVerdict {
        key: key.to_owned(),
        effect,
        because: Because::Mode(mode),
    }
}

impl RuleIndex {
    fn build(rules: &[Rule]) -> Result<RuleIndex, PolicyError> {
        let mut by_action: HashMap<String, BucketBuilder> = HashMap::new();
        let mut any_action = BucketBuilder::default();
        for (index, rule) in rules.iter().enumerate() {
            let bucket = match rule.pattern.fixed_action() {
                Some(action) => by_action.entry(action.to_owned()).or_default(),
                None => &mut any_action,
            };
            bucket.add(index, rule);
        }
        Ok(RuleIndex {
            by_action: by_action
                .into_iter()
                .map(|(action, bucket)| Ok((action, bucket.build()?)))
                .collect::<Result<_, PolicyError>>()?,
            any_action: any_action.build()?,
        })
    }

    /// The rules matching `key`, as far as they decide it: once a deny or ask rule matched, no
    /// allow rule is matched word by word. `scratch` is reused between keys to avoid allocating.
    fn matching<'k>(&self, rules: &[Rule], key: &'k str, scratch: &mut Vec<usize>) -> Matched {
        let mut matched = Matched::default();
        let key_candidate = Candidate::from_bytes(key);
        let path_candidate = key::path_pattern_resource(key).map(Candidate::from_bytes);
        let buckets = [self.by_action.get(key::action(key)), Some(&self.any_action)];
        let command = key.strip_prefix(COMMAND_PREFIX);
        let head = command.map(CommandHead::of);
        // Split and read only when some rule is to be matched word by word.
        let mut words = None;
        let matches_words = |i: usize, words: &mut Option<CommandWords<'k>>| {
            let command = command.unwrap_or_default();
            let words = words.get_or_insert_with(|| CommandWords::split(command));
            rules[i].pattern.matches_command(words, rules[i].effect)
        };
        // Guards match word by word only where a word has a normal form (command_index.rs).
        let guards_by_word = command.is_some_and(|c| c.contains('/'));
        for bucket in buckets.into_iter().flatten() {
            if let Some(head) = &head
                && guards_by_word
            {
                bucket.commands.guards(head, |i| {
                    if matches_words(i, &mut words) {
                        matched.add(rules, std::iter::once(i));
                    }
                    false
                });
            }
            if !bucket.key_rules.is_empty() {
                bucket.keys.matches_candidate_into(&key_candidate, scratch);
                matched.add(rules, scratch.iter().map(|&i| bucket.key_rules[i]));
            }
            if let Some(path) = &path_candidate
                && !bucket.path_rules.is_empty()
            {
                bucket.paths.matches_candidate_into(path, scratch);
                matched.add(rules, scratch.iter().map(|&i| bucket.path_rules[i]));
            }
        }
        if let Some(head) = &head
            && matched.deny.is_none()
            && matched.ask.is_none()
            && !matched.allow
        {
            matched.allow = buckets.into_iter().flatten().any(|bucket| {
                bucket
                    .commands
                    .allows(head, |i| matches_words(i, &mut words))
            });
        }
        matched
    }
}

impl Matched {
    fn add(&mut self, rules: &[Rule], indices: impl Iterator<Item = usize>) {
        for index in indices {
            let slot = match rules[index].effect {
                Effect::Deny => &mut self.deny,
                Effect::Ask => &mut self.ask,
                Effect::Allow => {
                    self.allow = true;
                    continue;
                }
            };
            if slot.is_none_or(|first| index < first) {
                *slot = Some(index);
            }
        }
    }
}

struct BucketBuilder {
    keys: GlobSetBuilder,
    key_rules: Vec<usize>,
    paths: GlobSetBuilder,
    path_rules: Vec<usize>,
    commands: CommandRules,
}

impl Default for BucketBuilder {
    fn default() -> BucketBuilder {
        BucketBuilder {
            keys: GlobSetBuilder::new(),
            key_rules: Vec::new(),
            paths: GlobSetBuilder::new(),
            path_rules: Vec::new(),
            commands: CommandRules::default(),
        }
    }
}

impl BucketBuilder {
    fn add(&mut self, index: usize, rule: &Rule) {
        let pattern = &rule.pattern;
        match pattern.dialect() {
            Dialect::Command => {
                self.commands.add(index, pattern, rule.effect);
                if rule.effect != Effect::Allow {
                    self.keys.add(pattern.glob().clone());
                    self.key_rules.push(index);
                }
            }
            Dialect::Key => {
                self.keys.add(pattern.glob().clone());
                self.key_rules.push(index);
            }
            Dialect::Path { .. } => {
                self.paths.add(pattern.glob().clone());
                self.path_rules.push(index);
            }
        }
    }

    fn build(self) -> Result<Bucket, PolicyError> {
        Ok(Bucket {
            keys: self.keys.build().map_err(compile_error)?,
            key_rules: self.key_rules,
            paths: self.paths.build().map_err(compile_error)?,
            path_rules: self.path_rules,
            commands: self.commands,
        })
    }
}

fn scope_set(list: &'static str, patterns: &[Pattern]) -> Result<GlobSet, PolicyError> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let text = pattern.as_str();
        let problem = if text.starts_with('/') {
            Some("is absolute")
        } else if text.split('/').any(|s| s == "..") {
            Some("climbs out with '..'")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(PolicyError::ScopePattern {
                list,
                pattern: text.to_owned(),
                problem,
            });
        }
        // Scope patterns are bare paths whichever way they were parsed.
        set.add(Pattern::parse_path(text)?.glob().clone());
    }
    set.build().map_err(compile_error)
}

fn compile_error(err: globset::Error) -> PolicyError {
    PolicyError::Compile {
        reason: err.to_string(),
    }
}

mod command_index;
#[cfg(test)]
mod command_tests;
#[cfg(test)]
mod tests;
