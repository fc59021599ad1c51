//! From a declarative harness and an item to chat messages.
//!
//! Layout (every part omitted when empty):
//!
//! ```text
//! system:    {system}
//!
//!            Instructions:
//!            - {instruction 1}
//!            - ...
//!
//!            Notes:
//!            - {note 1}
//! user:      {example 1 question}        (one user/assistant pair per example)
//! assistant: {example 1 response}
//! user:      {the item, see below}
//! assistant: {prefill}                   (only when `prefill` is set: the executor
//!                                          continues this turn)
//! ```
//!
//! The item: an answer item is its question as generated when `format.rule` is not
//! set, else its body, a blank line and the rendered rule. A code item is its source's
//! reference prompt when `format.code_rule` is not set, else `### Question:`, the
//! statement, a blank line and the rendered code rule.
//!
//! Everything that does not depend on the item comes first, so every item of a run
//! shares the same prompt prefix (the executor computes it once).

use super::declarative::{CODE_RULE_VARS, Declarative, RULE_VARS, render_template};
use crate::executor::Message;
use crate::task::{Item, ItemKind};

/// The system message text, or `None` when the harness has no system part.
pub fn system_text(h: &Declarative) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if !h.system.trim().is_empty() {
        parts.push(h.system.trim_end().to_string());
    }
    let bullets = |title: &str, list: &[String]| {
        let mut s = format!("{title}:");
        for x in list {
            s.push_str("\n- ");
            s.push_str(x.trim());
        }
        s
    };
    if !h.instructions.is_empty() {
        parts.push(bullets("Instructions", &h.instructions));
    }
    if !h.notes.is_empty() {
        parts.push(bullets("Notes", &h.notes));
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The user turn for `item`.
pub fn user_text(h: &Declarative, item: &Item) -> String {
    match item.kind() {
        ItemKind::Answer => match &h.format.rule {
            None => item.question(),
            Some(rule) => {
                let vars: Vec<(&str, &str)> = RULE_VARS
                    .iter()
                    .map(|k| {
                        (
                            *k,
                            match *k {
                                "format" => item.answer_format(),
                                _ => item.answer_instruction(),
                            },
                        )
                    })
                    .collect();
                let r = render_template(rule, &vars).unwrap_or_else(|_| rule.clone());
                format!("{}\n\n{}", item.body().trim_end(), r.trim())
            }
        },
        ItemKind::Code => match &h.format.code_rule {
            None => item.question(),
            Some(rule) => {
                let contract = item.contract().map(|c| c.text).unwrap_or_default();
                let vars: Vec<(&str, &str)> = CODE_RULE_VARS
                    .iter()
                    .map(|k| (*k, contract.as_str()))
                    .collect();
                let r = render_template(rule, &vars).unwrap_or_else(|_| rule.clone());
                format!("### Question:\n{}\n\n{}", item.body().trim_end(), r.trim())
            }
        },
    }
}

/// The full message list of the first executor call for `item`.
pub fn messages(h: &Declarative, item: &Item) -> Vec<Message> {
    let mut m = Vec::with_capacity(2 + 2 * h.examples.len());
    if let Some(s) = system_text(h) {
        m.push(Message::system(s));
    }
    for e in &h.examples {
        m.push(Message::user(e.question.clone()));
        m.push(Message::new("assistant", e.response.clone()));
    }
    m.push(Message::user(user_text(h, item)));
    if !h.prefill.is_empty() {
        m.push(Message::new("assistant", h.prefill.clone()));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::{self, Level};
    use crate::harness::declarative::Example;

    fn item() -> Item {
        let f = families::get("gcd").unwrap();
        Item::answer(families::generate(f, Level::new(1).unwrap(), 0, 0)).unwrap()
    }

    #[test]
    fn zero_shot_shows_the_question_as_generated() {
        let h = Declarative::default();
        let it = item();
        let m = messages(&h, &it);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].content, it.question());
    }

    #[test]
    fn a_prefill_opens_the_assistant_turn() {
        let it = item();
        let h = Declarative {
            system: "S".into(),
            prefill: "Sure:\n```python\n".into(),
            ..Declarative::default()
        };
        let m = messages(&h, &it);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].content, it.question());
        assert_eq!(
            (m[2].role.as_str(), m[2].content.as_str()),
            ("assistant", "Sure:\n```python\n")
        );
    }

    #[test]
    fn a_rule_replaces_the_question_s_own_instruction() {
        let it = item();
        let h = Declarative {
            system: "Be exact.".into(),
            instructions: vec!["one".into(), "two".into()],
            notes: vec!["n".into()],
            format: crate::harness::Format {
                rule: Some("Answer {format} in <answer></answer> tags.".into()),
                code_rule: None,
            },
            examples: vec![Example {
                question: "Q?".into(),
                response: "<answer>1</answer>".into(),
                source: None,
            }],
            ..Declarative::default()
        };
        let m = messages(&h, &it);
        assert_eq!(m.len(), 4);
        assert_eq!(
            m[0].content,
            "Be exact.\n\nInstructions:\n- one\n- two\n\nNotes:\n- n"
        );
        assert_eq!(
            (m[1].role.as_str(), m[2].role.as_str()),
            ("user", "assistant")
        );
        let u = &m[3].content;
        assert!(u.starts_with(it.body()));
        assert!(!u.contains(it.answer_instruction()));
        assert!(u.ends_with(&format!(
            "Answer {} in <answer></answer> tags.",
            it.answer_format()
        )));
    }
}
