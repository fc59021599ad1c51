//! Format-varied questions, over the whole registry: every family has at least three
//! question templates; every variant renders at every level; a variant keeps the task,
//! the gold answer and the structured input of the canonical instance and changes the
//! question's wording (not only its answer instruction); `random` picks a template per
//! instance and is reproducible; no variant shows the gold answer where the canonical
//! question does not.

use harness_rl::families::{self, Family, Instance, InstanceStream, Level, Variant};

use crate::{score, tagged};

const SEEDS: [u64; 4] = [0, 7, 20240, u64::MAX];

/// The instance's metadata without the records of how its question was written.
fn task_metadata(inst: &Instance) -> serde_json::Value {
    let mut m = inst.metadata.clone();
    let o = m.as_object_mut().unwrap();
    o.remove("answer_format");
    o.remove("variant");
    m
}

/// Every variant of instance `index`, canonical first.
fn all_variants(f: &'static dyn Family, level: Level, seed: u64, index: u64) -> Vec<Instance> {
    (0..f.variant_count() as u8)
        .map(|k| {
            InstanceStream::new(f, level, seed)
                .with_variant(Variant::Fixed(k))
                .unwrap()
                .instance(index)
        })
        .collect()
}

#[test]
fn every_family_has_at_least_three_question_templates() {
    for f in families::registry() {
        assert!(
            f.variant_count() >= 3,
            "{} has {} question variants; list at least two templates (Family::templates)",
            f.name(),
            f.variant_count()
        );
        assert_eq!(f.variant_count(), 1 + f.templates().len());
    }
}

#[test]
fn variants_keep_the_task_and_change_the_wording() {
    for f in families::registry() {
        for level in Level::all() {
            for seed in SEEDS {
                for index in 0..6 {
                    let all = all_variants(*f, level, seed, index);
                    let canonical = &all[0];
                    assert_eq!(canonical.variant(), 0);
                    assert!(!canonical.id.contains("/v"), "{}", canonical.id);
                    assert!(canonical.metadata.get("variant").is_none());
                    for (k, inst) in all.iter().enumerate().skip(1) {
                        let id = &inst.id;
                        assert_eq!(*id, format!("{}/v{k}", canonical.id));
                        assert_eq!(usize::from(inst.variant()), k, "{id}");
                        assert_eq!(inst.answer, canonical.answer, "{id}: gold changed");
                        assert_eq!(
                            (inst.family.as_str(), inst.level, inst.seed, inst.index),
                            (
                                canonical.family.as_str(),
                                canonical.level,
                                canonical.seed,
                                canonical.index
                            )
                        );
                        assert_eq!(
                            task_metadata(inst),
                            task_metadata(canonical),
                            "{id}: the structured input changed"
                        );
                        assert_eq!(inst.answer_format(), canonical.answer_format(), "{id}");
                        assert_eq!(inst.answer_example(), canonical.answer_example(), "{id}");
                        assert_ne!(
                            inst.question_body(),
                            canonical.question_body(),
                            "{id}: the body is the canonical one"
                        );
                        for other in &all[1..k] {
                            assert_ne!(inst.question, other.question, "{id} = {}", other.id);
                        }
                        // The verifier is the same: the gold scores, junk does not.
                        assert_eq!(score(*f, inst, &tagged(&inst.answer)), 1.0, "{id}");
                        assert_eq!(score(*f, inst, &tagged("no idea")), 0.0, "{id}");
                        // Rendering leaves no template syntax behind.
                        assert!(!inst.question.contains("{/}"), "{id}");
                        assert!(!inst.question.contains("{#"), "{id}");
                    }
                }
            }
        }
    }
}

/// The words and numbers of a text, lower-cased, in order (`2 × 61` and `[2, 61]`
/// both give `2 61`).
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

fn contains_run(hay: &[String], needle: &[String]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A gold answer that the canonical question does not show must not appear in a
/// variant either, in any notation (its words and numbers in a row): a template must
/// never render an answer field such as a cipher's plaintext or a factor list. Golds
/// of one short token are skipped: a small number appears in many questions by chance.
#[test]
fn no_variant_shows_the_gold_answer() {
    for f in families::registry() {
        for level in Level::all() {
            for seed in SEEDS {
                for index in 0..6 {
                    let all = all_variants(*f, level, seed, index);
                    let gold = tokens(&all[0].answer);
                    if gold.is_empty()
                        || (gold.len() == 1 && gold[0].len() < 4)
                        || contains_run(&tokens(&all[0].question), &gold)
                    {
                        continue;
                    }
                    for inst in &all[1..] {
                        assert!(
                            !contains_run(&tokens(&inst.question), &gold),
                            "{}: the question shows the gold {:?}",
                            inst.id,
                            all[0].answer
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn random_picks_a_template_per_instance_reproducibly() {
    for f in families::registry() {
        let level = Level::new(2).unwrap();
        let random = InstanceStream::new(*f, level, 3)
            .with_variant(Variant::Random)
            .unwrap();
        let mut seen = vec![0usize; f.variant_count()];
        for index in 0..40 {
            let inst = random.instance(index);
            let k = inst.variant();
            assert_eq!(k, random.variant_of(index));
            seen[usize::from(k)] += 1;
            assert_eq!(inst, random.instance(index), "not reproducible");
            let fixed = InstanceStream::new(*f, level, 3)
                .with_variant(Variant::Fixed(k))
                .unwrap()
                .instance(index);
            assert_eq!(inst, fixed, "{}", inst.id);
        }
        assert!(
            seen.iter().all(|&n| n > 0),
            "{}: 40 random instances used the templates {seen:?}",
            f.name()
        );
    }
}

#[test]
fn a_variant_beyond_the_templates_is_refused() {
    let f = families::get("gcd").unwrap();
    let n = f.variant_count() as u8;
    let e = InstanceStream::new(f, Level::new(1).unwrap(), 0)
        .with_variant(Variant::Fixed(n))
        .err()
        .expect("out of range");
    assert!(
        matches!(e, families::FamilyError::VariantOutOfRange { variant, count, .. } if variant == n && count == usize::from(n)),
        "{e}"
    );
    assert!(
        families::generate_many_variant(f, Level::new(1).unwrap(), 0, 1, Variant::Fixed(n))
            .is_err()
    );
}
