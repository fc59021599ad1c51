//! The batching layer of `hrl serve`: connection threads queue [`Job`]s; each batcher
//! thread takes whatever is queued (waiting at most `window` for more once the first
//! job arrives, up to `max_batch` requests) and hands it to the executor in one
//! `complete_batch` call, then gives every job its slice of the results, in order.
//! Several batchers run at once, so an executor that merges concurrent calls admits a
//! new batch while an earlier one is still generating. A panicking executor fails its
//! batch's requests (HTTP 500) and the batcher keeps serving.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::ServeStats;
use crate::executor::{Completion, Executor, ExecutorError, Request};

pub(super) type Results = Vec<Result<Completion, ExecutorError>>;

/// The requests of one HTTP request and where to send their results.
pub(super) struct Job {
    pub requests: Vec<Request>,
    pub reply: mpsc::Sender<Results>,
}

/// Gather one batch: block for the first job, then take more for up to `window` or
/// until `max_batch` requests. `None` once every sender is gone.
fn gather(rx: &Mutex<mpsc::Receiver<Job>>, max_batch: usize, window: Duration) -> Option<Vec<Job>> {
    // Holding the lock while gathering keeps batches from interleaving; the other
    // batchers are either executing or waiting for their turn to gather.
    let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
    let first = rx.recv().ok()?;
    let mut n = first.requests.len();
    let mut jobs = vec![first];
    let deadline = Instant::now() + window;
    while n < max_batch {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(job) => {
                n += job.requests.len();
                jobs.push(job);
            }
            Err(_) => break,
        }
    }
    Some(jobs)
}

/// One batcher thread's loop. Ends when the acceptor and every connection thread have
/// dropped their senders.
pub(super) fn run(
    rx: &Mutex<mpsc::Receiver<Job>>,
    executor: Arc<dyn Executor>,
    stats: &ServeStats,
    max_batch: usize,
    window: Duration,
) {
    while let Some(jobs) = gather(rx, max_batch, window) {
        let all: Vec<Request> = jobs
            .iter()
            .flat_map(|j| j.requests.iter().cloned())
            .collect();
        stats.batches.fetch_add(1, Ordering::Relaxed);
        stats
            .max_batch_seen
            .fetch_max(all.len() as u64, Ordering::Relaxed);
        let results = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            executor.complete_batch(&all)
        }));
        let mut results: Results = match results {
            Ok(r) if r.len() == all.len() => r,
            Ok(r) => {
                let msg = format!(
                    "executor returned {} results for {} requests",
                    r.len(),
                    all.len()
                );
                all.iter()
                    .map(|_| Err(ExecutorError::Model(msg.clone())))
                    .collect()
            }
            Err(_) => all
                .iter()
                .map(|_| Err(ExecutorError::Model("executor panicked".into())))
                .collect(),
        };
        stats
            .requests
            .fetch_add(all.len() as u64, Ordering::Relaxed);
        // Hand each job its slice, in order.
        for job in jobs.into_iter().rev() {
            let mine = results.split_off(results.len() - job.requests.len());
            let _ = job.reply.send(mine);
        }
    }
}
