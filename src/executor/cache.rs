//! Persistent completion cache: a [`CachedExecutor`] answers a request it has seen
//! before from an SQLite file instead of calling the model.
//!
//! Key: SHA-256 over a domain tag and the length-prefixed fields that decide the output —
//! the executor's `model_id` (for a GGUF, its sha256), the exact prompt (raw text, or
//! every message's role and content in order), and the sampling parameters. Greedy
//! decoding ignores `seed`, `top_p`, `top_k` and `min_p` (see [`Sampling`]), so those
//! are left out of greedy keys; a sampled request keys on all of them, seed included.
//! Floats are keyed by their exact bit patterns.
//!
//! Store: one SQLite database (bundled SQLite) in WAL mode with a busy timeout, so any
//! number of readers and several writing processes can share it. Completions are
//! written as they finish, not when the whole batch has: a writer thread collects them
//! and commits small `INSERT OR REPLACE` transactions, at the latest after
//! [`WritePolicy::max_pending`] completions or [`WritePolicy::max_delay`] after the
//! oldest unwritten one, so a run that is killed keeps (nearly) everything it computed
//! and the rerun resumes from there. A committed transaction survives the process
//! being killed (WAL, `synchronous=NORMAL`). A row that no longer decodes is treated as
//! a miss and overwritten by the fresh completion. Only successful completions are
//! stored. A cache that cannot be read or written never discards a
//! completion: the model is called (or its result returned) and the failure is counted
//! in [`CacheCounters::errors`] with the last message kept for the caller to show.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Completion, Executor, ExecutorError, OnDone, Prompt, Request, Sampling};

/// Version of the key derivation and row format. Bumping it makes old rows unreachable.
pub const CACHE_FORMAT: u32 = 1;
const KEY_TAG: &[u8] = b"harness-rl/completion-cache/v1";
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Run `f` again while SQLite answers "busy" or "locked" without waiting (as it does
/// to a connection that loses the race to set up a new database), for up to
/// [`BUSY_TIMEOUT`]; any other result is returned at once.
fn retry_while_locked<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Cache failures (opening, reading or writing the database).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("completion cache {path}: {detail}")]
    Open { path: PathBuf, detail: String },
    #[error("completion cache {path}: {detail}")]
    Sql { path: PathBuf, detail: String },
    #[error(
        "completion cache {path}: format {found} is not supported by this build (expects {expected}); use another --cache file"
    )]
    Format {
        path: PathBuf,
        found: String,
        expected: u32,
    },
}

impl crate::error::Classify for CacheError {
    fn kind(&self) -> crate::error::ErrorKind {
        match self {
            CacheError::Open { .. } | CacheError::Sql { .. } | CacheError::Format { .. } => {
                crate::error::ErrorKind::Runtime
            }
        }
    }
}

impl From<CacheError> for ExecutorError {
    fn from(e: CacheError) -> Self {
        ExecutorError::Cache(e.to_string())
    }
}

/// A cache key: SHA-256 of the fields that decide a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    /// Derive the key of `request` on the model identified by `model_id`.
    pub fn new(model_id: &str, request: &Request) -> CacheKey {
        let mut h = Sha256::new();
        field(&mut h, KEY_TAG);
        field(&mut h, model_id.as_bytes());
        match &request.prompt {
            Prompt::Raw(text) => {
                field(&mut h, b"raw");
                field(&mut h, text.as_bytes());
            }
            Prompt::Chat(messages) => {
                field(&mut h, b"chat");
                h.update((messages.len() as u64).to_le_bytes());
                for m in messages {
                    field(&mut h, m.role.as_bytes());
                    field(&mut h, m.content.as_bytes());
                }
            }
        }
        sampling_fields(&mut h, &request.sampling);
        CacheKey(h.finalize().into())
    }

    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Length-prefixed field, so that ("ab","c") and ("a","bc") never collide.
fn field(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

fn sampling_fields(h: &mut Sha256, s: &Sampling) {
    h.update(s.max_tokens.to_le_bytes());
    h.update((s.stop.len() as u64).to_le_bytes());
    for stop in &s.stop {
        field(h, stop.as_bytes());
    }
    match &s.grammar {
        None => h.update([0u8]),
        Some(g) => {
            h.update([1u8]);
            field(h, g.as_bytes());
        }
    }
    // Hashed only when present, so keys of requests without a schema are unchanged.
    if let Some(schema) = &s.json_schema {
        h.update(b"json_schema");
        field(h, schema.to_string().as_bytes());
    }
    if s.is_greedy() {
        h.update(b"greedy");
    } else {
        h.update(b"sampled");
        h.update(s.temperature.to_bits().to_le_bytes());
        h.update(s.top_p.to_bits().to_le_bytes());
        h.update(s.top_k.to_le_bytes());
        h.update(s.min_p.to_bits().to_le_bytes());
        h.update(s.seed.to_le_bytes());
    }
}

/// Where the cache lives unless `--cache PATH` says otherwise:
/// `$HRL_HOME/cache/completions.sqlite` (see [`crate::home::hrl_home`]).
pub fn default_cache_path() -> PathBuf {
    crate::home::hrl_home()
        .join("cache")
        .join("completions.sqlite")
}

/// Summary of a cache file for `hrl cache stats`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheStats {
    pub path: PathBuf,
    pub entries: u64,
    /// Size of the database file plus its write-ahead log, in bytes.
    pub bytes: u64,
    pub models: Vec<ModelStats>,
}

/// Entries of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelStats {
    pub model_id: String,
    pub entries: u64,
    pub completion_tokens: u64,
    /// Unix seconds of the oldest and newest entry.
    pub oldest: i64,
    pub newest: i64,
}

/// An open completion cache. Cheap to share behind an `Arc`; one connection per value,
/// serialised by a mutex (lookups take microseconds).
pub struct CompletionCache {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for CompletionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionCache")
            .field("path", &self.path)
            .finish()
    }
}

impl CompletionCache {
    /// Open (creating if needed, with its parent directories) the cache at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<CompletionCache, CacheError> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| CacheError::Open {
                path: path.clone(),
                detail: format!("cannot create directory {}: {e}", parent.display()),
            })?;
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| CacheError::Open {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        let cache = CompletionCache {
            path,
            conn: Mutex::new(conn),
        };
        cache.init()?;
        Ok(cache)
    }

    /// Open only if the file exists (for `hrl cache stats|clear`), without creating it.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Option<CompletionCache>, CacheError> {
        if path.as_ref().exists() {
            Self::open(path).map(Some)
        } else {
            Ok(None)
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql_err(&self, what: &str, e: impl std::fmt::Display) -> CacheError {
        CacheError::Sql {
            path: self.path.clone(),
            detail: format!("{what}: {e}"),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection half-updated
        // (every write is one transaction), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn init(&self) -> Result<(), CacheError> {
        let conn = self.lock();
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.sql_err("setting busy timeout", e))?;
        // journal_mode returns a row; a file that is not a database fails here. Several
        // processes opening a new cache at once (two `hrl run`s started together) race
        // to switch it to WAL, and the loser gets "database is locked" at once, without
        // the busy handler: retry that (only that) until the busy timeout.
        let mode: String =
            retry_while_locked(|| conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)))
                .map_err(|e| self.sql_err("not a usable SQLite database", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(self.sql_err("enabling WAL", format!("journal mode is {mode}")));
        }
        retry_while_locked(|| {
            conn.execute_batch(
                "PRAGMA synchronous=NORMAL;
             PRAGMA cache_size=-32768;
             PRAGMA mmap_size=268435456;
             CREATE TABLE IF NOT EXISTS meta (
                 name  TEXT PRIMARY KEY,
                 value TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS completions (
                 key        BLOB PRIMARY KEY,
                 model_id   TEXT NOT NULL,
                 request    TEXT NOT NULL,
                 completion TEXT NOT NULL,
                 completion_tokens INTEGER NOT NULL,
                 created_at INTEGER NOT NULL
             ) WITHOUT ROWID;
             CREATE INDEX IF NOT EXISTS completions_model ON completions(model_id);",
            )
        })
        .map_err(|e| self.sql_err("creating tables", e))?;
        // Opening an existing cache writes nothing: the format row is inserted only when
        // it is missing. (An unconditional insert made every open a write transaction,
        // so a process polling the cache starved the run writing it.)
        let read_format = || {
            conn.query_row("SELECT value FROM meta WHERE name = 'format'", [], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .map_err(|e| self.sql_err("reading format", e))
        };
        let found = match read_format()? {
            Some(f) => f,
            None => {
                conn.execute(
                    "INSERT OR IGNORE INTO meta(name, value) VALUES ('format', ?1)",
                    params![CACHE_FORMAT.to_string()],
                )
                .map_err(|e| self.sql_err("writing format", e))?;
                read_format()?.ok_or_else(|| self.sql_err("reading format", "no format row"))?
            }
        };
        if found != CACHE_FORMAT.to_string() {
            return Err(CacheError::Format {
                path: self.path.clone(),
                found,
                expected: CACHE_FORMAT,
            });
        }
        Ok(())
    }

    /// Look up many keys in one read transaction. `None` for a miss or for a row that
    /// no longer decodes (it will be overwritten by the next `put`).
    pub fn get_many(&self, keys: &[CacheKey]) -> Result<Vec<Option<Completion>>, CacheError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction()
            .map_err(|e| self.sql_err("begin read", e))?;
        let mut out = Vec::with_capacity(keys.len());
        {
            let mut stmt = tx
                .prepare_cached("SELECT completion FROM completions WHERE key = ?1")
                .map_err(|e| self.sql_err("prepare lookup", e))?;
            for key in keys {
                let row: Option<String> = stmt
                    .query_row(params![&key.0[..]], |r| r.get(0))
                    .optional()
                    .map_err(|e| self.sql_err("lookup", e))?;
                out.push(row.and_then(|json| serde_json::from_str::<Completion>(&json).ok()));
            }
        }
        tx.commit().map_err(|e| self.sql_err("end read", e))?;
        Ok(out)
    }

    pub fn get(&self, key: &CacheKey) -> Result<Option<Completion>, CacheError> {
        Ok(self.get_many(std::slice::from_ref(key))?.pop().flatten())
    }

    /// Store completions in one write transaction.
    pub fn put_many(
        &self,
        model_id: &str,
        entries: &[(CacheKey, &Request, &Completion)],
    ) -> Result<(), CacheError> {
        if entries.is_empty() {
            return Ok(());
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self.sql_err("begin write", e))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO completions
                     (key, model_id, request, completion, completion_tokens, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| self.sql_err("prepare insert", e))?;
            for (key, request, completion) in entries {
                let mut stored = (*completion).clone();
                stored.cached = false;
                let request_json = serde_json::to_string(request)
                    .map_err(|e| self.sql_err("encoding request", e))?;
                let completion_json = serde_json::to_string(&stored)
                    .map_err(|e| self.sql_err("encoding completion", e))?;
                stmt.execute(params![
                    &key.0[..],
                    model_id,
                    request_json,
                    completion_json,
                    stored.usage.completion_tokens as i64,
                    now
                ])
                .map_err(|e| self.sql_err("insert", e))?;
            }
        }
        tx.commit().map_err(|e| self.sql_err("commit", e))
    }

    pub fn put(
        &self,
        model_id: &str,
        key: CacheKey,
        request: &Request,
        completion: &Completion,
    ) -> Result<(), CacheError> {
        self.put_many(model_id, &[(key, request, completion)])
    }

    /// Entry counts per model and the file size.
    pub fn stats(&self) -> Result<CacheStats, CacheError> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare(
                "SELECT model_id, COUNT(*), SUM(completion_tokens), MIN(created_at), MAX(created_at)
                 FROM completions GROUP BY model_id ORDER BY model_id",
            )
            .map_err(|e| self.sql_err("prepare stats", e))?;
        let models = stmt
            .query_map([], |r| {
                Ok(ModelStats {
                    model_id: r.get(0)?,
                    entries: r.get::<_, i64>(1)? as u64,
                    completion_tokens: r.get::<_, Option<i64>>(2)?.unwrap_or(0) as u64,
                    oldest: r.get(3)?,
                    newest: r.get(4)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sql_err("stats", e))?;
        let entries = models.iter().map(|m| m.entries).sum();
        let mut bytes = 0;
        for suffix in ["", "-wal"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            bytes += std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        }
        Ok(CacheStats {
            path: self.path.clone(),
            entries,
            bytes,
            models,
        })
    }

    /// Delete the entries of one model (`Some(model_id)`) or all entries (`None`).
    /// Returns how many were deleted. Space is returned to the file system.
    pub fn clear(&self, model_id: Option<&str>) -> Result<u64, CacheError> {
        let conn = self.lock();
        let n = match model_id {
            Some(m) => conn.execute("DELETE FROM completions WHERE model_id = ?1", params![m]),
            None => conn.execute("DELETE FROM completions", []),
        }
        .map_err(|e| self.sql_err("delete", e))?;
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
            .map_err(|e| self.sql_err("vacuum", e))?;
        Ok(n as u64)
    }
}

/// Hit/miss counts of one [`CachedExecutor`] (this process only).
#[derive(Debug, Default)]
pub struct CacheCounters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    /// Cache reads or writes that failed (the completion was still returned).
    pub errors: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl CacheCounters {
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
    /// The most recent cache failure, if any.
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
    fn record_error(&self, e: CacheError) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
    }
}

/// When a [`CachedExecutor`] commits the completions that have finished: a completion
/// that arrives `max_delay` or more after the previous commit (the first one of a
/// batch, or any one when completions are slow) is committed at once; otherwise it
/// waits, with the others that arrive, until `max_delay` after the previous commit or
/// until `max_pending` are waiting. So a killed run loses at most `max_delay` worth of
/// completions, and a fast stream of completions costs at most one small transaction
/// per `max_delay` (or per `max_pending` completions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WritePolicy {
    pub max_pending: usize,
    pub max_delay: Duration,
}

impl Default for WritePolicy {
    /// 32 completions or 1 second.
    fn default() -> Self {
        WritePolicy {
            max_pending: 32,
            max_delay: Duration::from_secs(1),
        }
    }
}

/// Wraps any executor with the persistent cache. Hits are returned with
/// `cached: true` and the usage and timings of the original run; misses go to the
/// inner executor in one `complete_batch_progress` call (identical requests in one
/// batch are computed once), and each successful completion is stored as it finishes
/// (see [`WritePolicy`]).
pub struct CachedExecutor {
    inner: Arc<dyn Executor>,
    cache: Arc<CompletionCache>,
    counters: CacheCounters,
    policy: WritePolicy,
}

impl CachedExecutor {
    pub fn new(inner: Arc<dyn Executor>, cache: Arc<CompletionCache>) -> CachedExecutor {
        CachedExecutor {
            inner,
            cache,
            counters: CacheCounters::default(),
            policy: WritePolicy::default(),
        }
    }

    /// Replace the default [`WritePolicy`] (`max_pending` 0 is taken as 1).
    pub fn with_write_policy(mut self, policy: WritePolicy) -> CachedExecutor {
        self.policy = WritePolicy {
            max_pending: policy.max_pending.max(1),
            ..policy
        };
        self
    }

    pub fn counters(&self) -> &CacheCounters {
        &self.counters
    }

    pub fn cache(&self) -> &Arc<CompletionCache> {
        &self.cache
    }

    pub fn inner(&self) -> &Arc<dyn Executor> {
        &self.inner
    }

    /// The writer thread of one batch: commits what arrives on `rx` under the policy,
    /// then whatever is left once every sender is gone.
    fn write_loop(
        &self,
        rx: mpsc::Receiver<Vec<(CacheKey, usize, Completion)>>,
        requests: &[Request],
        model_id: &str,
    ) {
        let mut pending: Vec<(CacheKey, usize, Completion)> = Vec::new();
        // When the next commit may happen without waiting; `None`: right away.
        let mut next_commit: Option<Instant> = None;
        let commit = |pending: &mut Vec<(CacheKey, usize, Completion)>| -> Option<Instant> {
            let entries: Vec<(CacheKey, &Request, &Completion)> = pending
                .iter()
                .map(|(k, slot, c)| (*k, &requests[*slot], c))
                .collect();
            if let Err(e) = self.cache.put_many(model_id, &entries) {
                self.counters.record_error(e);
            }
            pending.clear();
            Some(Instant::now() + self.policy.max_delay)
        };
        loop {
            let next = match next_commit {
                Some(t) if !pending.is_empty() => {
                    rx.recv_timeout(t.saturating_duration_since(Instant::now()))
                }
                _ => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            };
            match next {
                Ok(entries) => {
                    pending.extend(entries);
                    // A burst of reports goes into one transaction.
                    while pending.len() < self.policy.max_pending {
                        match rx.try_recv() {
                            Ok(entries) => pending.extend(entries),
                            Err(_) => break,
                        }
                    }
                    let due = next_commit.is_none_or(|t| Instant::now() >= t);
                    if due || pending.len() >= self.policy.max_pending {
                        next_commit = commit(&mut pending);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => next_commit = commit(&mut pending),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if !pending.is_empty() {
                        commit(&mut pending);
                    }
                    return;
                }
            }
        }
    }
}

impl Executor for CachedExecutor {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn complete_batch(&self, requests: &[Request]) -> Vec<Result<Completion, ExecutorError>> {
        self.complete_batch_progress(requests, &|_, _| {})
    }

    /// Hits are reported at once; misses as the inner executor finishes them.
    fn complete_batch_progress(
        &self,
        requests: &[Request],
        on_done: &OnDone<'_>,
    ) -> Vec<Result<Completion, ExecutorError>> {
        let model_id = self.inner.model_id();
        let keys: Vec<CacheKey> = requests
            .iter()
            .map(|r| CacheKey::new(model_id, r))
            .collect();
        let found = match self.cache.get_many(&keys) {
            Ok(found) => found,
            Err(e) => {
                self.counters.record_error(e);
                vec![None; keys.len()]
            }
        };

        let mut out: Vec<Option<Result<Completion, ExecutorError>>> =
            Vec::with_capacity(requests.len());
        // Distinct missing keys, in first-seen order, and every position waiting on each.
        let mut miss_index: HashMap<CacheKey, usize> = HashMap::new();
        let mut miss_requests: Vec<Request> = Vec::new();
        let mut miss_keys: Vec<CacheKey> = Vec::new();
        let mut positions: Vec<Vec<usize>> = Vec::new();
        for (i, hit) in found.into_iter().enumerate() {
            match hit {
                Some(mut c) => {
                    c.cached = true;
                    let r = Ok(c);
                    on_done(i, &r);
                    out.push(Some(r));
                }
                None => {
                    let slot = *miss_index.entry(keys[i]).or_insert_with(|| {
                        miss_requests.push(requests[i].clone());
                        miss_keys.push(keys[i]);
                        positions.push(Vec::new());
                        miss_requests.len() - 1
                    });
                    positions[slot].push(i);
                    out.push(None);
                }
            }
        }
        let waiting: usize = positions.iter().map(Vec::len).sum();
        let hits = (requests.len() - waiting) as u64;
        self.counters.hits.fetch_add(hits, Ordering::Relaxed);
        self.counters
            .misses
            .fetch_add(miss_requests.len() as u64, Ordering::Relaxed);

        if !miss_requests.is_empty() {
            let mut results = std::thread::scope(|scope| {
                let (tx, rx) = mpsc::channel::<Vec<(CacheKey, usize, Completion)>>();
                let writer = scope.spawn(|| self.write_loop(rx, &miss_requests, model_id));
                let stored: Vec<AtomicBool> = miss_requests
                    .iter()
                    .map(|_| AtomicBool::new(false))
                    .collect();
                // The entry of a finished request, unless it was already sent.
                let entry = |slot: usize, r: &Result<Completion, ExecutorError>| match (
                    r,
                    stored.get(slot),
                ) {
                    (Ok(c), Some(done)) if !done.swap(true, Ordering::Relaxed) => {
                        Some((miss_keys[slot], slot, c.clone()))
                    }
                    _ => None,
                };
                let store = |slot: usize, r: &Result<Completion, ExecutorError>| {
                    if let Some(e) = entry(slot, r) {
                        let _ = tx.send(vec![e]);
                    }
                };
                let report = |slot: usize, r: &Result<Completion, ExecutorError>| {
                    store(slot, r);
                    for &i in positions.get(slot).map(Vec::as_slice).unwrap_or(&[]) {
                        on_done(i, r);
                    }
                };
                let mut results = self.inner.complete_batch_progress(&miss_requests, &report);
                if results.len() != miss_requests.len() {
                    let msg = format!(
                        "executor returned {} results for {} requests",
                        results.len(),
                        miss_requests.len()
                    );
                    results.resize_with(miss_requests.len(), || {
                        Err(ExecutorError::Model(msg.clone()))
                    });
                }
                // Anything the inner executor did not report is stored now, in one
                // transaction.
                let rest: Vec<_> = results
                    .iter()
                    .enumerate()
                    .filter_map(|(slot, r)| entry(slot, r))
                    .collect();
                if !rest.is_empty() {
                    let _ = tx.send(rest);
                }
                drop(tx);
                let _ = writer.join();
                results
            });
            // Positions sharing a key get the same completion; the first gets the
            // original result, later ones a copy (an error is copied by its message).
            let mut error_msgs: HashMap<usize, String> = HashMap::new();
            let mut copies: Vec<Option<Completion>> = vec![None; miss_requests.len()];
            let mut taken: Vec<Option<Result<Completion, ExecutorError>>> =
                results.drain(..).map(Some).collect();
            for (slot, waiting) in positions.iter().enumerate() {
                for &i in waiting {
                    let res = if let Some(r) = taken[slot].take() {
                        match &r {
                            Ok(c) => copies[slot] = Some(c.clone()),
                            Err(e) => {
                                error_msgs.insert(slot, e.to_string());
                            }
                        }
                        r
                    } else if let Some(c) = &copies[slot] {
                        Ok(c.clone())
                    } else {
                        Err(ExecutorError::Model(
                            error_msgs.get(&slot).cloned().unwrap_or_default(),
                        ))
                    };
                    out[i] = Some(res);
                }
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(ExecutorError::Cache("request left unanswered".into())))
            })
            .collect()
    }
}
