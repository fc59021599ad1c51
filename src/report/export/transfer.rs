//! A transfer run's `transfer.md`: per K, the held-out test score of every proposer
//! per task and overall (95 % intervals), and the per-round curve, from the run's
//! index (`transfer.json`) and each proposer's summary.

use crate::eval::ArmOutcome;
use crate::eval::suite::TransferKind;
use crate::eval::summary::Summary;
use crate::eval::transfer::TransferIndex;

fn curve_at(s: &Summary, task: Option<usize>, k: u32) -> String {
    let m = match task {
        Some(i) => s.tasks.get(i).map(|t| &t.metrics),
        None => Some(&s.overall),
    };
    m.and_then(|m| m.curve.get(k as usize))
        .map(super::est)
        .unwrap_or_else(|| "-".into())
}

/// `transfer.md`: per K, the held-out test score of every proposer per task and
/// overall (95 % crossed-design CIs, tasks fixed), and the per-round curve.
pub fn markdown(index: &TransferIndex, arms: &[ArmOutcome]) -> String {
    let s = &index.settings;
    let metric = if index.kind == TransferKind::Temporal {
        "pass@1 (one greedy program per problem, hidden tests)"
    } else {
        "test score"
    };
    let mut out = format!(
        "# {} transfer: {}\n\nExecutor `{}`; G = {} candidates, M = {} harness samples, selection `{}`, seed {}; K = {:?} (one run of K = {}, smaller K read off its per-round curve).\n\n",
        index.kind.as_str(),
        index.suite.name,
        arms.first()
            .map(|a| a.summary.executor_model.clone())
            .unwrap_or_else(|| s.executor.clone()),
        s.candidates,
        s.samples,
        serde_json::to_value(s.select)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        s.seed,
        index.k,
        s.rounds
    );
    out.push_str(&format!(
        "- held out (evaluated): {} — {}\n- training side (never evaluated here): {}{}\n",
        index.held_out_rule,
        index.held_out.join(", "),
        index.train.rule,
        match (&index.train.problems, &index.train.last_date) {
            (Some(n), Some(d)) => format!(" ({n} problems, the last dated {d})"),
            _ if !index.train.families.is_empty() => {
                format!(" ({} families)", index.train.families.len())
            }
            _ => String::new(),
        }
    ));
    if let Some(sh) = index.shard {
        out.push_str(&format!(
            "- **shard {sh}**: one part of the run; combine the parts with `hrl merge`\n"
        ));
    }
    if s.limit.is_some() {
        out.push_str("- **not comparable**: `--limit` cut the sets short\n");
    }
    if arms.iter().any(|a| !a.summary.complete) {
        out.push_str("- **incomplete**: some trajectories did not finish\n");
    }
    out.push('\n');
    let name = |a: &ArmOutcome| {
        let reference = index.runs.iter().any(|r| r.label == a.label && r.reference);
        if reference {
            format!("{} (reference)", a.label)
        } else {
            a.label.clone()
        }
    };
    let Some(first) = arms.first() else {
        return out;
    };
    for &k in &index.k {
        out.push_str(&format!(
            "## K = {k}: held-out {metric}, 95 % CI\n\n| task | seed harness |"
        ));
        for a in arms {
            out.push_str(&format!(" {} |", name(a)));
        }
        out.push_str("\n| --- | --- |");
        for _ in arms {
            out.push_str(" --- |");
        }
        out.push('\n');
        for (i, t) in first.summary.tasks.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {} |",
                t.task,
                curve_at(&first.summary, Some(i), 0)
            ));
            for a in arms {
                out.push_str(&format!(" {} |", curve_at(&a.summary, Some(i), k)));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "| **mean over held-out tasks** | {} |",
            curve_at(&first.summary, None, 0)
        ));
        for a in arms {
            out.push_str(&format!(" {} |", curve_at(&a.summary, None, k)));
        }
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "## Per-round curve (mean over held-out tasks, 95 % CI band)\n\n| proposer |{}\n| --- |{}\n",
        (0..=s.rounds)
            .map(|r| format!(" round {r} |"))
            .collect::<String>(),
        " --- |".repeat(s.rounds as usize + 1)
    ));
    for a in arms {
        out.push_str(&format!("| {} |", name(a)));
        for r in 0..=s.rounds {
            out.push_str(&format!(" {} |", curve_at(&a.summary, None, r)));
        }
        out.push('\n');
    }
    out.push_str("\nRun directories (one per proposer; `report.md` in each):\n\n");
    for r in &index.runs {
        out.push_str(&format!("- `{}`: `{}`\n", r.dir.display(), r.spec));
    }
    out
}
