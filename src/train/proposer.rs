//! The `policy:CKPT` proposer: a loaded checkpoint returning G revisions sampled from
//! the compact policy (candidate `i` with seed `candidate_seed(request.seed, i)`), each
//! the parent with the sampled typed edits applied (form `edits`; the raw output is the
//! edit list as JSON). A revision that stops at once is the parent itself (the
//! evaluator records it as unchanged). Program harnesses are not edited: every
//! candidate is then invalid, with that reason. Its [`Proposer::training`] is the
//! checkpoint's `trained_on` record (nothing for an untrained, 0-step checkpoint).

use std::path::Path;
use std::sync::Arc;

use super::checkpoint::Checkpoint;
use super::features::ContextFeatures;
use super::policy::{Decode, Policy, Revise, Vocabulary};
use crate::proposer::{
    Candidate, OpenContext, Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity,
    Revision, RevisionForm, TokenUse, Training, candidate_seed, sha256_hex,
};

/// See the module doc.
pub struct PolicyProposer {
    spec: String,
    checkpoint_sha256: String,
    steps: u64,
    policy: Policy,
    vocab: Vocabulary,
    max_edits: usize,
    mask_invalid: bool,
    trained_on: Option<crate::proposer::TrainedOn>,
}

impl PolicyProposer {
    pub fn new(spec: String, ckpt: &Checkpoint, checkpoint_sha256: String) -> PolicyProposer {
        PolicyProposer {
            spec,
            checkpoint_sha256,
            steps: ckpt.metadata.steps,
            policy: ckpt.policy(),
            vocab: Vocabulary::builtin(),
            max_edits: ckpt.max_edits,
            mask_invalid: ckpt.mask_invalid,
            trained_on: ckpt.metadata.trained_on.clone(),
        }
    }

    /// Open a checkpoint file.
    pub fn open(path: &Path) -> Result<PolicyProposer, ProposerError> {
        let spec = format!("policy:{}", path.display());
        let unavailable = |message: String| ProposerError::Unavailable {
            spec: spec.clone(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| unavailable(e.to_string()))?;
        let text = String::from_utf8(bytes.clone()).map_err(|e| unavailable(e.to_string()))?;
        let ckpt = Checkpoint::parse(&text, &path.display().to_string())
            .map_err(|e| unavailable(e.to_string()))?;
        Ok(PolicyProposer::new(spec, &ckpt, sha256_hex(&bytes)))
    }
}

/// The opener registered with `proposer::register_policy_opener`.
pub fn opener(path: &Path, _ctx: &OpenContext) -> Result<Arc<dyn Proposer>, ProposerError> {
    Ok(Arc::new(PolicyProposer::open(path)?))
}

impl Proposer for PolicyProposer {
    fn identity(&self) -> ProposerIdentity {
        let spec = crate::proposer::ProposerSpec::parse(&self.spec);
        ProposerIdentity {
            spec: self.spec.clone(),
            kind: "policy".into(),
            label: spec.map(|s| s.label()).unwrap_or_else(|_| "policy".into()),
            details: serde_json::json!({
                "checkpoint_sha256": self.checkpoint_sha256,
                "steps": self.steps,
                "max_edits": self.max_edits,
                "mask_invalid": self.mask_invalid,
                "actions": self.vocab.len(),
                "features": self.policy.features,
            }),
        }
    }

    /// An untrained checkpoint (0 steps) saw nothing; a trained one without the
    /// record is [`Training::Unrecorded`].
    fn training(&self) -> Training {
        match (&self.trained_on, self.steps) {
            (_, 0) => Training::NotTrained,
            (Some(t), _) => Training::Recorded(t.clone()),
            (None, _) => Training::Unrecorded,
        }
    }

    fn propose(&self, request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        let cf = ContextFeatures::new(request.report, request.feedback, request.task.kind);
        let candidates = (0..request.candidates)
            .map(|i| {
                let s = self.policy.revise(
                    &self.vocab,
                    &cf,
                    request.harness,
                    request.feedback,
                    Revise {
                        max_edits: self.max_edits,
                        mask_invalid: self.mask_invalid,
                        decode: Decode::Sample(candidate_seed(request.seed, i)),
                    },
                );
                let raw = serde_json::to_string(&s.edits).ok();
                match s.result {
                    Ok(harness) => Candidate {
                        revision: Revision::Harness {
                            harness,
                            form: RevisionForm::Edits,
                        },
                        raw,
                        tokens: TokenUse::default(),
                        cached: false,
                    },
                    Err(reason) => Candidate::invalid(reason, raw),
                }
            })
            .collect();
        Ok(Proposal {
            candidates,
            prompt: None,
        })
    }
}
