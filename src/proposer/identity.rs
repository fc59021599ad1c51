//! The `identity` proposer: the no-revision baseline. It returns no candidates, so
//! every round keeps the parent and the trajectory's test score is the seed
//! harness's. It reads no report (the evaluator skips the feedback runs).

use super::{Proposal, ProposalRequest, Proposer, ProposerError, ProposerIdentity};

/// See the module doc.
pub struct IdentityProposer;

impl Proposer for IdentityProposer {
    fn identity(&self) -> ProposerIdentity {
        ProposerIdentity {
            spec: "identity".into(),
            kind: "identity".into(),
            label: "identity".into(),
            details: serde_json::json!({}),
        }
    }

    fn wants_report(&self) -> bool {
        false
    }

    fn propose(&self, _request: &ProposalRequest<'_>) -> Result<Proposal, ProposerError> {
        Ok(Proposal::default())
    }
}
