//! `tackle serve`'s MCP prompts: the skills, as a user of any MCP client pulls them into
//! their agent's conversation.

use crate::config::Config;

/// The skills a user may load, as MCP prompts: `prompts/get` returns the skill's instructions
/// and where its bundled files are, for the client's agent to read. A skill marked
/// `user-invocable: false` is not offered. Its `allowed-tools` pre-approve nothing here: the
/// calls of the client's agent pass this server's gate as every call does.
pub fn skill_prompts(config: &Config) -> Vec<tackle_mcp::server::ServedPrompt> {
    use tackle_agent::skills::SkillOrigin;
    config
        .skills
        .set()
        .iter()
        .filter(|s| s.user_invocable)
        .map(|s| {
            let mut text = format!(
                "Load and follow this skill for the task at hand.\n<skill_content name=\"{}\">\n{}\n</skill_content>\n",
                s.name,
                s.body.trim()
            );
            if !s.files.is_empty() {
                let dir = match &s.origin {
                    SkillOrigin::Project(dir) => format!("{} (in the project)", dir.display()),
                    SkillOrigin::User(dir) => dir.display().to_string(),
                };
                text.push_str(&format!("Files the skill bundles, in {dir}:\n"));
                for f in &s.files {
                    text.push_str(&format!("- {f}\n"));
                }
            }
            tackle_mcp::server::ServedPrompt {
                name: s.name.clone(),
                description: s.description.clone(),
                text,
            }
        })
        .collect()
}
