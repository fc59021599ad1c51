//! A small built-in library of task-agnostic texts that edits can name by id
//! (`add_instruction { snippet = "no-input" }`), so a compact policy picks among a few
//! discrete choices instead of writing text. An edit that uses a snippet stores the
//! resolved text in the harness, so a harness never depends on this table.
//!
//! Changing a snippet's text changes what future edits write, not existing harnesses;
//! ids are never reused for a different meaning.

/// Where a snippet may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SnippetKind {
    Instruction,
    Note,
    /// A `format.rule` template (uses `{format}`).
    FormatRule,
}

/// One snippet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Snippet {
    pub id: &'static str,
    pub kind: SnippetKind,
    pub text: &'static str,
}

const fn s(id: &'static str, kind: SnippetKind, text: &'static str) -> Snippet {
    Snippet { id, kind, text }
}

use SnippetKind::{FormatRule, Instruction, Note};

/// Every snippet, in a fixed order (the policy's action indices follow it).
pub const SNIPPETS: &[Snippet] = &[
    s(
        "step-by-step",
        Instruction,
        "Think step by step before you give the final answer.",
    ),
    s(
        "answer-only",
        Instruction,
        "Reply with the final answer only, without any explanation.",
    ),
    s("brief", Instruction, "Keep your reasoning short."),
    s(
        "check-work",
        Instruction,
        "Before you answer, check your result against the question once more.",
    ),
    s(
        "follow-format",
        Instruction,
        "Write the final answer exactly in the format the question asks for.",
    ),
    s(
        "track-values",
        Instruction,
        "Keep track of every intermediate value; write each one down.",
    ),
    s(
        "count-explicitly",
        Instruction,
        "When you count things, list each one as you count it.",
    ),
    s(
        "write-program",
        Instruction,
        "Solve the problem by writing a Python program instead of computing by hand.",
    ),
    s(
        "no-input",
        Instruction,
        "Your program must not read input: all the data is in the question, so write it into the program.",
    ),
    s(
        "print-only-answer",
        Instruction,
        "Your program must print only the final answer, with no other text.",
    ),
    s(
        "use-tool",
        Instruction,
        "Use the Python tool to compute anything you are not sure of.",
    ),
    s(
        "test-solution",
        Instruction,
        "Check your solution against the examples in the problem statement before you answer.",
    ),
    s(
        "tags-required",
        Note,
        "The final answer must be inside <answer></answer> tags; text outside the tags is ignored.",
    ),
    s(
        "last-tag-wins",
        Note,
        "Only the last <answer></answer> pair in your reply counts.",
    ),
    s(
        "stdout-is-answer",
        Note,
        "The program's standard output is taken as the answer.",
    ),
    s(
        "no-example-copy",
        Note,
        "The examples in the instructions show the format only; their values are not the answer.",
    ),
    s(
        "tagged",
        FormatRule,
        "Give your final answer {format} inside <answer></answer> tags.",
    ),
    s(
        "tagged-at-end",
        FormatRule,
        "Think it through, then end your reply with the final answer {format} inside <answer></answer> tags.",
    ),
    s(
        "program-print",
        FormatRule,
        "Write a Python program that computes the answer and prints only the answer, {format}. Put the whole program in one ```python code block. The program must not read input.",
    ),
    s(
        "tool-then-answer",
        FormatRule,
        "You may run Python: write code in a ```python block and you will be shown its output. When you know the answer, give it {format} inside <answer></answer> tags.",
    ),
];

/// Look a snippet up by id.
pub fn get(id: &str) -> Option<&'static Snippet> {
    SNIPPETS.iter().find(|s| s.id == id)
}

/// The snippets of one kind.
pub fn of_kind(kind: SnippetKind) -> impl Iterator<Item = &'static Snippet> {
    SNIPPETS.iter().filter(move |s| s.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_rules_are_valid_templates() {
        let mut ids: Vec<_> = SNIPPETS.iter().map(|s| s.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SNIPPETS.len());
        for r in of_kind(FormatRule) {
            super::super::declarative::check_template(r.text, super::super::declarative::RULE_VARS)
                .unwrap();
            assert!(r.text.contains("{format}"), "{}", r.id);
        }
    }
}
