//! Property tests of declarative harnesses and edits: parse(render(h)) == h for TOML
//! and JSON, hashes do not move under re-rendering or reformatting, and applying any
//! sequence of edits from the action space (or with arbitrary text) either gives a
//! valid harness or an error naming the edit.

use harness_rl::harness::declarative::{Declarative, Example, Format, SamplingOverrides};
use harness_rl::harness::edit::{self, Edit, EditContext, FeedbackExample};
use harness_rl::harness::{Harness, Strategy as HStrategy, TextFormat, Verification, Vote};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// Text with the characters TOML and JSON escape: quotes, backslashes, newlines,
/// triple quotes, tabs, non-ASCII, braces (doubled, so templates stay valid).
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("word".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("\"".to_string()),
            Just("'''".to_string()),
            Just("\"\"\"".to_string()),
            Just("\\".to_string()),
            Just("\t".to_string()),
            Just("é☃".to_string()),
            Just("{{x}}".to_string()),
            Just("<answer>7</answer>".to_string()),
            "[a-z]{1,6}".prop_map(String::from),
        ],
        1..12,
    )
    .prop_map(|v| v.concat())
    .prop_filter("not blank", |s| !s.trim().is_empty())
}

fn strategy() -> impl Strategy<Value = HStrategy> {
    prop_oneof![
        Just(HStrategy::Direct {}),
        Just(HStrategy::ReasonThenAnswer {}),
        any::<bool>().prop_map(|repl_print| HStrategy::Program { repl_print }),
        (1u32..=16).prop_map(|max_calls| HStrategy::PythonTool { max_calls }),
    ]
}

fn harness() -> impl Strategy<Value = Declarative> {
    (
        ("[a-z-]{0,12}", prop::option::of(text())),
        prop::collection::vec(text(), 0..4),
        prop::collection::vec(text(), 0..3),
        strategy(),
        prop_oneof![
            Just(Verification::None {}),
            (1u32..=5).prop_map(|max_retries| Verification::ReRunOnError { max_retries }),
            (2u32..=16, any::<bool>()).prop_map(|(n, first)| Verification::SelfConsistency {
                n,
                vote: if first {
                    Vote::FirstAnswer
                } else {
                    Vote::Majority
                },
            }),
        ],
        (
            prop::option::of(text().prop_map(|t| format!("{t} {{format}}"))),
            prop::option::of(text().prop_map(|t| format!("{{contract}}\n{t}"))),
        ),
        (
            prop::option::of(1u32..=2000),
            prop::option::of(0.05f32..=1.0f32),
            prop::option::of(0.01f32..=1.0f32),
            prop::option::of(prop::collection::vec("[a-z<>/]{1,8}", 0..3)),
            prop::option::of(0u64..=i64::MAX as u64),
        ),
        prop::collection::vec((text(), text(), prop::option::of("[a-z/0-9]{1,12}")), 0..3),
    )
        .prop_map(
            |(
                (name, system),
                instructions,
                notes,
                strategy,
                verification,
                (rule, code_rule),
                (max_tokens, temperature, top_p, stop, seed),
                examples,
            )| {
                let mut d = Declarative {
                    name,
                    description: String::new(),
                    system: system.unwrap_or_default(),
                    instructions,
                    notes,
                    prefill: String::new(),
                    strategy,
                    verification,
                    format: Format { rule, code_rule },
                    sampling: SamplingOverrides {
                        temperature,
                        top_p,
                        max_tokens,
                        stop,
                        seed,
                        ..SamplingOverrides::default()
                    },
                    examples: examples
                        .into_iter()
                        .map(|(question, response, source)| Example {
                            question,
                            response,
                            source,
                        })
                        .collect(),
                };
                // Self-consistency is only valid with sampled decoding.
                if matches!(d.verification, Verification::SelfConsistency { .. })
                    && d.sampling.temperature.is_none()
                {
                    d.sampling.temperature = Some(0.5);
                }
                d
            },
        )
}

fn edits() -> impl Strategy<Value = Vec<(usize, Option<String>)>> {
    prop::collection::vec((0usize..200, prop::option::of(text())), 0..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn canonical_forms_round_trip_and_hashes_are_stable(d in harness()) {
        prop_assert_eq!(d.validate(), Ok(()));
        let h = Harness::Declarative(d.clone());
        let toml = h.canonical();
        let back = Harness::parse_declarative(&toml, TextFormat::Toml, "p.toml").unwrap();
        prop_assert_eq!(&back, &h, "{}", toml);
        prop_assert_eq!(back.hash(), h.hash());
        prop_assert_eq!(back.canonical(), toml);
        let json = serde_json::to_string(&d).unwrap();
        let from_json = Harness::parse_declarative(&json, TextFormat::Json, "p.json").unwrap();
        prop_assert_eq!(&from_json, &h);
        // Reformatting (here: pretty JSON, i.e. other whitespace) keeps the hash.
        let pretty = serde_json::to_string_pretty(&d).unwrap();
        let again = Harness::parse_declarative(&pretty, TextFormat::Json, "p.json").unwrap();
        prop_assert_eq!(again.hash(), h.hash());
        // Labels are not content.
        let mut renamed = d.clone();
        renamed.name = format!("{}-x", d.name);
        renamed.description = "other".into();
        prop_assert_eq!(Harness::Declarative(renamed).hash(), h.hash());
    }

    #[test]
    fn applied_edits_give_valid_harnesses(d in harness(), picks in edits()) {
        let feedback_items = super::util::items(&["families:gcd,maze:n=2:seed=77"]).items;
        let ids: Vec<String> = feedback_items.iter().map(|i| i.id()).collect();
        let ctx = EditContext {
            feedback: feedback_items
                .into_iter()
                .enumerate()
                .map(|(k, item)| FeedbackExample {
                    successful_response: (k % 2 == 0).then(|| "<answer>1</answer>".to_string()),
                    item,
                })
                .collect(),
        };
        let mut current = d.clone();
        for (pick, text) in picks {
            let space = edit::action_space(&current, &ids);
            let e = match text {
                // Free-text edits too: they must never break validity silently.
                Some(t) if pick % 3 == 0 => Edit::AddInstruction { text: Some(t), snippet: None },
                Some(t) if pick % 3 == 1 => Edit::SetSystem { text: t },
                _ => space[pick % space.len()].clone(),
            };
            // The edit itself round-trips through JSON and TOML.
            let json = serde_json::to_string(&e).unwrap();
            prop_assert_eq!(&edit::parse_edits(&format!("[{json}]"), "e").unwrap()[0], &e);
            match edit::apply(&current, std::slice::from_ref(&e), &ctx) {
                Ok(next) => {
                    prop_assert_eq!(next.validate(), Ok(()));
                    let h = Harness::Declarative(next.clone());
                    let back = Harness::parse_declarative(&h.canonical(), TextFormat::Toml, "x").unwrap();
                    prop_assert_eq!(back.hash(), h.hash());
                    // Applying the same edit to the same parent is deterministic.
                    let twice = edit::apply(&current, std::slice::from_ref(&e), &ctx).unwrap();
                    prop_assert_eq!(Harness::Declarative(twice).hash(), h.hash());
                    current = next;
                }
                Err(err) => {
                    let s = err.to_string();
                    prop_assert!(s.starts_with("edit 0 ("), "{}", s);
                    prop_assert!(s.contains(e.op()), "{}", s);
                }
            }
        }
    }
}
