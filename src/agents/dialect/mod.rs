//! The agents' hook dialects, both ways: an agent's hook input read as a fire ([`input`]), and a
//! verdict written back as the agent reads it ([`answer`]). What differs per agent is read from its row
//! ([`crate::agent::AGENTS`]: its names, its tools, its [`Dialect`](crate::agents::Dialect)) and the
//! moment's row ([`crate::moment::KNOWN`]: its [`Shape`](crate::moment::Shape)). Pure: `hookd relay`
//! and the HTTP listener both read and answer through here, so the two cannot drift apart.

pub mod answer;
pub mod input;

pub use answer::{
    Answer, Transport, advisory_message, advisory_refusal, answer, answer_to, answer_verdict,
    in_agents_terms, model_text, refusal,
};
pub use input::{
    CarryBack, Translated, agent_input, another_agents_event, head_scanner, read_translated,
    translate, translate_as, translate_head, translate_head_as, unknown_event,
};
