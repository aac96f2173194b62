//! `--posture sealed` for `tackle run` and `tackle chat`: seed 004's eleven tools over the
//! session, the sealed gate in front of the user's, and the planner's prompt that says what a
//! reference is. The project's instructions and skills reach the planner only from places the
//! user vouched for (`tackle trust --sealed DIR`).

use std::sync::Arc;

use anyhow::anyhow;
use tackle_agent::agentic::SmallModel;
use tackle_agent::prompt::{Environment, SystemPrompt};
use tackle_agent::skills::SkillOrigin;
use tackle_agent::{Answer as AgentAnswer, Prompter, Question as AgentQuestion};
use tackle_llm::Provider;
use tackle_runtime::{Approver, Catalog, GateHook, Session};
use tackle_sealed::tools::{SealedSkill, Shared};
use tackle_sealed::{
    Answer, ModelProcessor, Processor, Question, Questions, SealedGate, SealedState,
    SessionRecorder, TrustMap, Vouches,
};

use crate::commands::Failure;
use crate::config::Config;

/// What a sealed session runs on.
pub struct Sealed {
    pub gate: Arc<dyn GateHook>,
    pub vouches: Vouches,
    pub skills: Vec<SealedSkill>,
}

/// The processor model: the small model when one is configured, else the session's own.
pub struct ProcessorModel<'a> {
    pub small: Option<&'a SmallModel>,
    pub provider: Arc<dyn Provider>,
    pub model: String,
}

/// Whether `session` runs sealed: a new one as the settings say; a resumed one as it was
/// started (a sealed session stays sealed; a standard one cannot become sealed, since its
/// conversation already holds what the sealed posture would have kept from the model).
pub fn posture_of(config: &Config, session: &Session, resumed: bool) -> Result<bool, Failure> {
    use tackle_runtime::Posture;
    let recorded = session.context().posture();
    match (resumed, config.agent_loop.posture, recorded) {
        (false, wanted, _) => Ok(wanted == Posture::Sealed),
        (true, _, Posture::Sealed) => Ok(true),
        (true, Posture::Sealed, _) => Err(Failure::Usage(anyhow!(
            "session {} was started in the {recorded} posture, and its conversation already holds what the sealed posture keeps from the model; start a new session with --posture sealed",
            session.id()
        ))),
        (true, _, _) => Ok(false),
    }
}

/// The posture line of a session, sealed or not.
pub fn posture_line(config: &Config, sealed: bool) -> String {
    let line = tackle_config::posture::line(config);
    if !sealed {
        return line;
    }
    let rest = line.strip_prefix("posture: ").unwrap_or(&line);
    format!(
        "posture: sealed (seed 004's eleven tools, no shell; what nobody vouched for reaches the model only as references) · {rest}"
    )
}

/// The user's vouches for this project.
pub fn vouches(config: &Config) -> Result<Vouches, Failure> {
    let Some(path) = tackle_sealed::vouches::file_path() else {
        return Ok(Vouches::default());
    };
    Vouches::load(&path, &config.root).map_err(|e| Failure::Engine(anyhow!("sealed vouches: {e}")))
}

/// The sealed catalog and gate of `session`.
pub fn build(
    config: &Config,
    session: &Session,
    resumed: bool,
    approver: Arc<dyn Approver>,
    prompter: Option<Arc<dyn Prompter>>,
    processor: ProcessorModel<'_>,
) -> Result<(Catalog, Sealed), Failure> {
    let vouches = vouches(config)?;
    let recorder = Arc::new(SessionRecorder(Arc::new(session.clone())));
    let state = if resumed {
        SealedState::restore(&session.event_log_path(), recorder)
    } else {
        SealedState::new(recorder)
    };
    let root = tackle_fs::Root::open_shared(&config.root)
        .map_err(|e| Failure::Engine(anyhow!("opening the project root: {e}")))?;
    let skills = skills(config, &vouches);
    let processor: Arc<dyn Processor> = match processor.small {
        Some(small) => Arc::new(ModelProcessor {
            provider: small.provider.clone(),
            model: small.model.model.clone(),
            max_tokens: small.model.max_tokens,
        }),
        None => Arc::new(ModelProcessor {
            provider: processor.provider,
            model: processor.model,
            max_tokens: 8_192,
        }),
    };
    let shared = Shared {
        root,
        state: state.clone(),
        trust: match tackle_sealed::vouches::file_path() {
            Some(file) => {
                TrustMap::new(vouches.clone(), state).keeping_taints(file, config.root.clone())
            }
            None => TrustMap::new(vouches.clone(), state),
        },
        processor: Some(processor),
        questions: prompter.map(|p| Arc::new(AskOnePerLine(p)) as Arc<dyn Questions>),
        voucher: Some(approver),
        skills: skills.clone(),
        env: config.process_env.clone(),
        path_var: std::env::var_os("PATH"),
        run_timeout: config.runtime.call_timeout,
    };
    let catalog = Catalog::new(tackle_sealed::tools(shared))
        .map_err(|e| Failure::Engine(anyhow!("the sealed catalog: {e}")))?;
    let gate = Arc::new(SealedGate::new(
        crate::commands::gate(config),
        vouches.clone(),
    ));
    Ok((
        catalog,
        Sealed {
            gate,
            vouches,
            skills,
        },
    ))
}

/// The planner's system prompt: the root's instructions only when the user vouched for the root.
pub fn system(
    sealed: &Sealed,
    runtime: &tackle_runtime::Runtime,
    env: &Environment,
) -> SystemPrompt {
    let specs = runtime.catalog().specs();
    let section = tackle_sealed::prompt::section(&sealed.skills);
    tackle_agent::prompt::sealed_system_prompts(
        &specs,
        env,
        &section,
        sealed.vouches.covers("AGENTS.md"),
    )
}

/// The skills the planner may load: the user's own, and the project's only from a directory
/// the user vouched for. A skill's text is instructions; nobody vouched for the rest.
fn skills(config: &Config, vouches: &Vouches) -> Vec<SealedSkill> {
    config
        .skills
        .set()
        .for_model()
        .filter(|s| match &s.origin {
            SkillOrigin::User(_) => true,
            SkillOrigin::Project(dir) => vouches.covers(&dir.to_string_lossy()),
        })
        .map(|s| SealedSkill {
            name: s.name.clone(),
            description: s.description.clone(),
            body: s.body.clone(),
        })
        .collect()
}

/// ask_user's questions put through the front end's one-line prompter, one at a time.
struct AskOnePerLine(Arc<dyn Prompter>);

impl Questions for AskOnePerLine {
    fn ask<'a>(
        &'a self,
        question: &'a Question,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + Send + 'a>> {
        Box::pin(async move {
            let mut text = format!("{}: {}", question.header, question.question);
            if !question.options.is_empty() {
                let joiner = if question.multiple {
                    " and/or "
                } else {
                    " or "
                };
                text.push_str(&format!(
                    " ({}; or answer in your own words; empty skips)",
                    question.options.join(joiner)
                ));
            } else {
                text.push_str(" (empty skips)");
            }
            let asked = AgentQuestion {
                session: tackle_protocol::SessionId(String::new()),
                text,
                default: None,
            };
            match self.0.ask(asked).await {
                AgentAnswer::Typed { text, .. } if text.trim().is_empty() => Answer::Skipped,
                AgentAnswer::Typed { text, .. } => {
                    let chosen: Vec<String> = question
                        .options
                        .iter()
                        .filter(|o| o.eq_ignore_ascii_case(text.trim()))
                        .cloned()
                        .collect();
                    if chosen.is_empty() {
                        Answer::Wrote(text)
                    } else {
                        Answer::Chose(chosen)
                    }
                }
                AgentAnswer::Unavailable(why) => Answer::Unavailable(why),
            }
        })
    }
}
