//! The compact stochastic policy: a log-linear model over a fixed vocabulary of
//! typed edits ([`Vocabulary`]), conditioned on the task-agnostic features of
//! [`super::features`].
//!
//! - **Actions.** Every fixed edit of the edit library (`harness::edit`): add each
//!   instruction and note snippet, set each strategy and verification of the grid,
//!   set each format-rule snippet or the original rule, set the temperature (0, 0.3,
//!   0.7) or `max_tokens` (256 … 2048), reset sampling; plus four edits resolved
//!   against the harness being edited (remove the last instruction / note / example,
//!   add a worked example from the feedback set: the first feedback item, in order,
//!   that is not an example yet and can be shown), and `stop`.
//! - **A revision** is a sequence of at most `max_edits` actions sampled one at a time:
//!   each step recomputes the features on the parent with the edits so far applied
//!   (`edits_so_far` among them) and samples from softmax(W·x + b) over the actions
//!   that are valid there (masking: an action that does not apply, leaves the harness
//!   unchanged, or was already chosen in this revision gets probability 0; `stop` is
//!   always valid). Without masking (`mask_invalid = false`), only repeats are
//!   masked and an edit that does not apply makes the revision invalid.
//! - **Parameters** are one flat vector θ = (W row-major by action, then b). The
//!   gradient of the training objective ([`objective_gradient`]) is analytic and
//!   checked against finite differences in the tests.
//! - **Seeded:** a revision is a function of (θ, context, seed); greedy decoding
//!   (argmax, ties to the lower index) needs no seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::features::ContextFeatures;
use crate::harness::edit::{self, Edit, EditContext};
use crate::harness::{Declarative, Harness};

/// What an action does.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionKind {
    /// A fixed edit.
    Fixed(Edit),
    RemoveLastInstruction,
    RemoveLastNote,
    RemoveLastExample,
    /// `add_example` of the first feedback item that is not an example yet and can
    /// be shown.
    AddFeedbackExample,
    Stop,
}

/// One action: a stable name (a fixed edit's JSON, or a word) and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub name: String,
    pub kind: ActionKind,
}

/// The action vocabulary (fixed order: a checkpoint's weights follow it).
#[derive(Debug, Clone, PartialEq)]
pub struct Vocabulary {
    pub actions: Vec<Action>,
}

impl Vocabulary {
    /// The built-in vocabulary (see the module doc).
    pub fn builtin() -> Vocabulary {
        let mut fixed = edit::fixed_edits();
        fixed.push(Edit::ResetSampling);
        let mut actions: Vec<Action> = fixed
            .into_iter()
            .map(|e| Action {
                name: serde_json::to_string(&e).expect("edits serialise"),
                kind: ActionKind::Fixed(e),
            })
            .collect();
        for (name, kind) in [
            ("remove_last_instruction", ActionKind::RemoveLastInstruction),
            ("remove_last_note", ActionKind::RemoveLastNote),
            ("remove_last_example", ActionKind::RemoveLastExample),
            ("add_feedback_example", ActionKind::AddFeedbackExample),
            ("stop", ActionKind::Stop),
        ] {
            actions.push(Action {
                name: name.into(),
                kind,
            });
        }
        Vocabulary { actions }
    }

    pub fn len(&self) -> usize {
        self.actions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    pub fn names(&self) -> Vec<String> {
        self.actions.iter().map(|a| a.name.clone()).collect()
    }

    /// The index of `stop`.
    pub fn stop(&self) -> usize {
        self.actions
            .iter()
            .position(|a| a.kind == ActionKind::Stop)
            .expect("the vocabulary has stop")
    }
}

/// The concrete edit an action makes on `h` (`None`: not applicable, e.g. removing
/// the last note of a harness without notes; `stop` is `None` too).
pub fn resolve(a: &Action, h: &Declarative, ctx: &EditContext) -> Option<Edit> {
    match &a.kind {
        ActionKind::Fixed(e) => Some(e.clone()),
        ActionKind::RemoveLastInstruction => h
            .instructions
            .len()
            .checked_sub(1)
            .map(|index| Edit::RemoveInstruction { index }),
        ActionKind::RemoveLastNote => h
            .notes
            .len()
            .checked_sub(1)
            .map(|index| Edit::RemoveNote { index }),
        ActionKind::RemoveLastExample => h
            .examples
            .len()
            .checked_sub(1)
            .map(|index| Edit::RemoveExample { index }),
        ActionKind::AddFeedbackExample => ctx.feedback.iter().find_map(|f| {
            let id = f.item.id();
            let e = Edit::AddExample { from_feedback: id };
            edit::apply(h, std::slice::from_ref(&e), ctx)
                .ok()
                .map(|_| e)
        }),
        ActionKind::Stop => None,
    }
}

/// One sampled step: the features, the valid actions and the choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub x: Vec<f64>,
    pub mask: Vec<bool>,
    pub action: usize,
}

/// A sampled revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub steps: Vec<Step>,
    /// The concrete edits (without `stop`).
    pub edits: Vec<Edit>,
    /// The revised harness, or why the revision is invalid.
    pub result: Result<Harness, String>,
}

/// How to decode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decode {
    Sample(u64),
    Greedy,
}

/// How to revise: the longest revision, masking, decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Revise {
    pub max_edits: usize,
    pub mask_invalid: bool,
    pub decode: Decode,
}

/// The log-linear policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub actions: usize,
    pub features: usize,
    /// θ = (W row-major by action, then b).
    pub theta: Vec<f64>,
}

impl Policy {
    /// All weights zero: the uniform policy over valid actions.
    pub fn uniform(actions: usize, features: usize) -> Policy {
        Policy {
            actions,
            features,
            theta: vec![0.0; actions * features + actions],
        }
    }

    pub fn logits(&self, x: &[f64]) -> Vec<f64> {
        let f = self.features;
        (0..self.actions)
            .map(|a| {
                let w = &self.theta[a * f..(a + 1) * f];
                w.iter().zip(x).map(|(w, x)| w * x).sum::<f64>() + self.theta[self.actions * f + a]
            })
            .collect()
    }

    /// Masked softmax (masked actions get 0).
    pub fn probs(&self, x: &[f64], mask: &[bool]) -> Vec<f64> {
        softmax(&self.logits(x), mask)
    }

    /// Sample (or decode greedily) a revision of `parent` (see the module doc).
    pub fn revise(
        &self,
        vocab: &Vocabulary,
        ctx_features: &ContextFeatures,
        parent: &Harness,
        edit_ctx: &EditContext,
        how: Revise,
    ) -> Sampled {
        let Revise {
            max_edits,
            mask_invalid,
            decode,
        } = how;
        let mut rng = match decode {
            Decode::Sample(seed) => Some(ChaCha8Rng::seed_from_u64(seed)),
            Decode::Greedy => None,
        };
        let Harness::Declarative(d0) = parent else {
            return Sampled {
                steps: vec![],
                edits: vec![],
                result: Err("the compact policy edits declarative harnesses only".into()),
            };
        };
        let stop = vocab.stop();
        let mut current = d0.clone();
        let mut steps = Vec::new();
        let mut edits = Vec::new();
        let mut chosen = vec![false; vocab.len()];
        for k in 0..max_edits {
            let h = Harness::Declarative(current.clone());
            let x = ctx_features.vector(&h, k, max_edits);
            let hash = h.hash();
            let mut concrete: Vec<Option<Result<Declarative, String>>> = vec![None; vocab.len()];
            let mask: Vec<bool> = vocab
                .actions
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    if i == stop {
                        return true;
                    }
                    if chosen[i] {
                        return false;
                    }
                    let Some(e) = resolve(a, &current, edit_ctx) else {
                        return !mask_invalid;
                    };
                    let r = edit::apply(&current, std::slice::from_ref(&e), edit_ctx)
                        .map_err(|err| err.to_string());
                    let ok = match &r {
                        Ok(d) => Harness::Declarative(d.clone()).hash() != hash,
                        Err(_) => false,
                    };
                    concrete[i] = Some(r);
                    ok || !mask_invalid
                })
                .collect();
            let p = self.probs(&x, &mask);
            let action = match rng.as_mut() {
                Some(r) => sample(&p, r.random::<f64>()),
                None => argmax(&p),
            };
            steps.push(Step { x, mask, action });
            if action == stop {
                break;
            }
            chosen[action] = true;
            let a = &vocab.actions[action];
            match concrete[action].take() {
                Some(Ok(d)) => {
                    edits.push(resolve(a, &current, edit_ctx).expect("resolved above"));
                    current = d;
                }
                Some(Err(e)) => {
                    if let Some(e2) = resolve(a, &current, edit_ctx) {
                        edits.push(e2);
                    }
                    return Sampled {
                        steps,
                        edits,
                        result: Err(e),
                    };
                }
                None => {
                    return Sampled {
                        steps,
                        edits,
                        result: Err(format!(
                            "action `{}` does not apply to this harness",
                            a.name
                        )),
                    };
                }
            }
        }
        Sampled {
            steps,
            edits,
            result: Ok(Harness::Declarative(current)),
        }
    }
}

/// Masked softmax.
pub fn softmax(z: &[f64], mask: &[bool]) -> Vec<f64> {
    let m = z
        .iter()
        .zip(mask)
        .filter(|(_, k)| **k)
        .map(|(z, _)| *z)
        .fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z
        .iter()
        .zip(mask)
        .map(|(z, k)| if *k { (z - m).exp() } else { 0.0 })
        .collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

fn sample(p: &[f64], u: f64) -> usize {
    let mut acc = 0.0;
    let mut last = 0;
    for (i, &q) in p.iter().enumerate() {
        if q > 0.0 {
            acc += q;
            last = i;
            if u < acc {
                return i;
            }
        }
    }
    last
}

fn argmax(p: &[f64]) -> usize {
    let mut best = 0;
    for (i, &q) in p.iter().enumerate() {
        if q > p[best] {
            best = i;
        }
    }
    best
}

/// One revision's part in a training batch: its steps and advantage.
#[derive(Debug, Clone)]
pub struct Trajectory {
    pub steps: Vec<Step>,
    pub advantage: f64,
}

/// Coefficients of the objective.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coefficients {
    pub entropy: f64,
    pub kl: f64,
}

/// Per-batch statistics of the objective.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObjectiveStats {
    pub objective: f64,
    /// Mean entropy per step (nats).
    pub entropy: f64,
    /// Mean KL to the initial policy per step.
    pub kl: f64,
}

/// The objective J(θ) and its gradient (to be **maximised**): over the N
/// trajectories, the mean of A_i · (1/T_i) Σ_t log π(a_t | s_t)  +  c_H · (1/T_i) Σ_t
/// H(π(·|s_t))  −  c_KL · (1/T_i) Σ_t KL(π(·|s_t) ‖ π₀(·|s_t)), where π₀ is `initial`
/// (GRPO with one update per batch: the importance ratio is 1, so the clipped
/// surrogate's gradient is this one; the per-sequence length normalisation follows
/// the published recipe).
pub fn objective_gradient(
    policy: &Policy,
    initial: &Policy,
    batch: &[Trajectory],
    c: Coefficients,
) -> (ObjectiveStats, Vec<f64>) {
    let (na, nf) = (policy.actions, policy.features);
    let mut g = vec![0.0; policy.theta.len()];
    let mut stats = ObjectiveStats::default();
    let mut n_steps = 0usize;
    let n = batch.len().max(1) as f64;
    for tr in batch {
        let t_len = tr.steps.len().max(1) as f64;
        let scale = 1.0 / (n * t_len);
        for st in &tr.steps {
            let p = policy.probs(&st.x, &st.mask);
            let q = if c.kl != 0.0 {
                initial.probs(&st.x, &st.mask)
            } else {
                p.clone()
            };
            let logp: Vec<f64> = p
                .iter()
                .map(|v| if *v > 0.0 { v.ln() } else { 0.0 })
                .collect();
            let logq: Vec<f64> = q
                .iter()
                .map(|v| if *v > 0.0 { v.ln() } else { 0.0 })
                .collect();
            let h: f64 = -p.iter().zip(&logp).map(|(p, l)| p * l).sum::<f64>();
            let kl: f64 = p
                .iter()
                .zip(logp.iter().zip(&logq))
                .map(|(p, (lp, lq))| p * (lp - lq))
                .sum();
            stats.objective += scale * (tr.advantage * logp[st.action] + c.entropy * h - c.kl * kl);
            stats.entropy += h;
            stats.kl += kl;
            n_steps += 1;
            for j in 0..na {
                if !st.mask[j] {
                    continue;
                }
                let d_logp = f64::from(j == st.action) - p[j];
                let d_h = -p[j] * (logp[j] + h);
                let d_kl = p[j] * (logp[j] - logq[j] - kl);
                let gz = scale * (tr.advantage * d_logp + c.entropy * d_h - c.kl * d_kl);
                if gz == 0.0 {
                    continue;
                }
                let row = &mut g[j * nf..(j + 1) * nf];
                for (gw, x) in row.iter_mut().zip(&st.x) {
                    *gw += gz * x;
                }
                g[na * nf + j] += gz;
            }
        }
    }
    if n_steps > 0 {
        stats.entropy /= n_steps as f64;
        stats.kl /= n_steps as f64;
    }
    (stats, g)
}

/// Adam state (maximising).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adam {
    pub m: Vec<f64>,
    pub v: Vec<f64>,
    pub t: u64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
}

impl Adam {
    pub fn new(n: usize) -> Adam {
        Adam {
            m: vec![0.0; n],
            v: vec![0.0; n],
            t: 0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }
    }

    /// One ascent step of size `lr` along `g`.
    pub fn step(&mut self, theta: &mut [f64], g: &[f64], lr: f64) {
        self.t += 1;
        let b1t = 1.0 - self.beta1.powi(self.t as i32);
        let b2t = 1.0 - self.beta2.powi(self.t as i32);
        for i in 0..theta.len() {
            self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * g[i];
            self.v[i] = self.beta2 * self.v[i] + (1.0 - self.beta2) * g[i] * g[i];
            let mh = self.m[i] / b1t;
            let vh = self.v[i] / b2t;
            theta[i] += lr * mh / (vh.sqrt() + self.eps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::edit::EditContext;
    use crate::task::ItemKind;

    fn random_policy(seed: u64, na: usize, nf: usize) -> Policy {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let mut p = Policy::uniform(na, nf);
        for t in p.theta.iter_mut() {
            *t = r.random::<f64>() * 2.0 - 1.0;
        }
        p
    }

    #[test]
    fn the_analytic_gradient_matches_finite_differences() {
        let (na, nf) = (6, 4);
        let policy = random_policy(1, na, nf);
        let initial = random_policy(2, na, nf);
        let mut r = ChaCha8Rng::seed_from_u64(3);
        let mut batch = Vec::new();
        for i in 0..5 {
            let steps = (0..(1 + i % 3))
                .map(|_| {
                    let x: Vec<f64> = (0..nf).map(|_| r.random::<f64>()).collect();
                    let mut mask: Vec<bool> = (0..na).map(|_| r.random::<f64>() < 0.7).collect();
                    mask[na - 1] = true;
                    let valid: Vec<usize> = (0..na).filter(|&j| mask[j]).collect();
                    let action = valid[(r.random::<f64>() * valid.len() as f64) as usize];
                    Step { x, mask, action }
                })
                .collect();
            batch.push(Trajectory {
                steps,
                advantage: r.random::<f64>() * 2.0 - 1.0,
            });
        }
        let c = Coefficients {
            entropy: 0.3,
            kl: 0.7,
        };
        let (_, g) = objective_gradient(&policy, &initial, &batch, c);
        let eps = 1e-6;
        let mut worst: f64 = 0.0;
        for (i, gi) in g.iter().enumerate() {
            let mut a = policy.clone();
            a.theta[i] += eps;
            let mut b = policy.clone();
            b.theta[i] -= eps;
            let fa = objective_gradient(&a, &initial, &batch, c).0.objective;
            let fb = objective_gradient(&b, &initial, &batch, c).0.objective;
            let num = (fa - fb) / (2.0 * eps);
            worst = worst.max((num - gi).abs());
        }
        assert!(worst < 1e-7, "largest gradient error {worst}");
        assert!(g.iter().any(|v| v.abs() > 1e-3), "a non-trivial gradient");
    }

    #[test]
    fn sampling_is_seeded_and_masks_invalid_actions() {
        let vocab = Vocabulary::builtin();
        let nf = super::super::features::FEATURES.len();
        let policy = random_policy(7, vocab.len(), nf);
        let cf = ContextFeatures::new(None, &EditContext::default(), ItemKind::Answer);
        let parent = Harness::Declarative(Declarative::default());
        let ctx = EditContext::default();
        let run = |seed| {
            policy.revise(
                &vocab,
                &cf,
                &parent,
                &ctx,
                Revise {
                    max_edits: 4,
                    mask_invalid: true,
                    decode: Decode::Sample(seed),
                },
            )
        };
        let a = run(11);
        assert_eq!(a, run(11));
        let differs = (12..40).any(|s| run(s).edits != a.edits);
        assert!(differs, "other seeds give other revisions");
        for s in 0..40 {
            let r = run(s);
            assert!(r.result.is_ok(), "{:?}", r.result);
            for (k, st) in r.steps.iter().enumerate() {
                assert!(st.mask[st.action]);
                if k > 0 {
                    continue;
                }
                // Nothing to remove on the blank harness; no example without feedback.
                for (i, act) in vocab.actions.iter().enumerate() {
                    if matches!(
                        act.kind,
                        ActionKind::RemoveLastNote | ActionKind::AddFeedbackExample
                    ) {
                        assert!(!st.mask[i]);
                    }
                }
            }
        }
        // The uniform policy picks uniformly among the valid actions.
        let u = Policy::uniform(vocab.len(), nf);
        let x = cf.vector(&parent, 0, 4);
        let mask: Vec<bool> = (0..vocab.len()).map(|i| i % 2 == 0).collect();
        let p = u.probs(&x, &mask);
        let k = mask.iter().filter(|m| **m).count() as f64;
        for (i, q) in p.iter().enumerate() {
            assert!((q - if mask[i] { 1.0 / k } else { 0.0 }).abs() < 1e-12);
        }
    }
}
