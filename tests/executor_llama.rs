//! Real inference with the default SmolLM2-135M model through the llama.cpp executor:
//! determinism, batch/single agreement, prefix reuse, continuous batching, seeded
//! sampling, stop strings, max tokens, grammars, token accounting, bad model files.
//!
//! Needs the model installed (`make test` runs `hrl models fetch smollm2-135m` first).
//! Inference runs on one thread: on a shared 2-core machine OpenMP's spinning barriers
//! make two threads far slower than one whenever another process is busy.
#![cfg(feature = "llama")]

use std::collections::BTreeSet;

use harness_rl::executor::llama::{LlamaExecutor, LlamaOptions};
use harness_rl::executor::{
    Completion, Executor, ExecutorError, FinishReason, Message, Prompt, Request, Sampling,
};
use harness_rl::models;

fn options() -> LlamaOptions {
    let model = models::known(models::DEFAULT_MODEL).expect("default model is known");
    assert!(
        model.is_installed(),
        "{} is not installed at {}: run `hrl models fetch {}` (make test does)",
        model.name,
        model.path().display(),
        model.name
    );
    let mut o = LlamaOptions::for_model(model.name).expect("installed model resolves");
    o.n_threads = 1;
    o.n_ctx_per_seq = 512;
    o
}

fn load(f: impl FnOnce(&mut LlamaOptions)) -> LlamaExecutor {
    let mut o = options();
    f(&mut o);
    LlamaExecutor::load(o).expect("model loads")
}

fn chat(user: &str) -> Prompt {
    Prompt::Chat(vec![Message::user(user)])
}

fn greedy(prompt: Prompt, max_tokens: u32) -> Request {
    Request {
        prompt,
        sampling: Sampling {
            max_tokens,
            ..Sampling::default()
        },
    }
}

fn ok(results: Vec<Result<Completion, ExecutorError>>) -> Vec<Completion> {
    results
        .into_iter()
        .map(|r| r.expect("completion"))
        .collect()
}

/// 56 distinct short prompts (arithmetic, words, facts) for agreement measurements.
fn many_prompts() -> Vec<Prompt> {
    let mut v = Vec::new();
    for i in 0..20 {
        v.push(chat(&format!("What is {} plus {}?", 3 * i + 1, 7 * i + 2)));
    }
    for w in [
        "apple", "river", "mountain", "violin", "teacher", "planet", "garden", "winter", "bridge",
        "candle", "ocean", "pencil", "rocket", "forest", "castle", "dragon", "harbor", "island",
    ] {
        v.push(chat(&format!("Write one sentence about a {w}.")));
    }
    for t in [
        "Name a color.",
        "Count from 1 to 5.",
        "What is the capital of Italy?",
        "Say hello in French.",
        "List three fruits.",
        "What is 10 times 10?",
        "Who wrote Hamlet?",
        "Spell the word cat.",
        "What day comes after Monday?",
        "Give me a synonym for happy.",
        "What is water made of?",
        "How many legs has a spider?",
        "Translate 'thank you' to Spanish.",
        "What is the opposite of hot?",
        "Name a planet.",
        "What is 9 minus 4?",
        "Describe the sky.",
        "What do bees make?",
    ] {
        v.push(chat(t));
    }
    v
}

#[test]
fn greedy_output_is_deterministic_across_runs_and_executors() {
    let reqs: Vec<Request> = [
        "What is 2+2?",
        "Name three animals.",
        "Write a haiku about rain.",
    ]
    .iter()
    .map(|p| greedy(chat(p), 24))
    .collect();
    let a = ok(load(|_| {}).complete_batch(&reqs));
    let exec = load(|_| {});
    let b = ok(exec.complete_batch(&reqs));
    let c = ok(exec.complete_batch(&reqs));
    for ((x, y), z) in a.iter().zip(&b).zip(&c) {
        assert!(!x.text.is_empty());
        assert_eq!(x.text, y.text);
        assert_eq!(y.text, z.text);
        assert_eq!(x.usage, y.usage);
    }
    // The texts differ between prompts (the executor is not returning a constant).
    let distinct: BTreeSet<&str> = a.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(distinct.len(), 3);
}

/// Greedy texts of a batch of 56 prompts (8 decoded together) against the same prompts
/// run one at a time. With one KV stream per sequence (the default) llama.cpp's CPU
/// kernels compute each sequence's rows independently of its batch neighbours, so the
/// texts must be identical. (With `kv_unified` they are not: see docs/PERFORMANCE.md.)
#[test]
fn batch_matches_single_runs_under_greedy() {
    let prompts = many_prompts();
    assert!(prompts.len() >= 50);
    let reqs: Vec<Request> = prompts.into_iter().map(|p| greedy(p, 16)).collect();
    let single_exec = load(|o| o.n_parallel = 1);
    let single: Vec<Completion> = reqs
        .iter()
        .map(|r| single_exec.complete(r).expect("single"))
        .collect();
    drop(single_exec);
    let batch_exec = load(|o| {
        o.n_parallel = 8;
        o.prefix_reuse = false;
    });
    let batch = ok(batch_exec.complete_batch(&reqs));
    assert!(
        batch_exec.stats().max_concurrent >= 8,
        "sequences really ran together"
    );
    let same = single
        .iter()
        .zip(&batch)
        .filter(|(s, b)| s.text == b.text)
        .count();
    eprintln!("batch/single greedy agreement: {same}/{}", reqs.len());
    for (s, b) in single.iter().zip(&batch) {
        assert_eq!(s.usage.prompt_tokens, b.usage.prompt_tokens);
        assert_eq!(
            s.text, b.text,
            "batched greedy text differs from the single run"
        );
    }
}

/// The longest common prefix of two token lists, computed independently of the
/// executor's own matching.
fn lcp(a: &[i32], b: &[i32]) -> usize {
    let mut n = 0;
    while n < a.len() && n < b.len() && a[n] == b[n] {
        n += 1;
    }
    n
}

#[test]
fn prefix_reuse_gives_the_same_text_and_computes_the_prefix_once() {
    let harness = "You are a careful assistant. Think step by step about the question, \
        check your arithmetic twice, and give the final answer inside <answer></answer> \
        tags. Keep the explanation short. Never guess; if unsure, say so.";
    let questions = [
        "Compute 12 plus 30.",
        "Multiply 7 by 6.",
        "Subtract 58 from 100.",
        "Halve 84.",
        "Add 40 and 2.",
        "Is 41 prime?",
        "Square 9.",
        "Divide 144 by 12.",
        "Double 21.",
        "What is 3 cubed?",
    ];
    let reqs: Vec<Request> = questions
        .iter()
        .map(|q| {
            greedy(
                Prompt::Chat(vec![Message::system(harness), Message::user(*q)]),
                12,
            )
        })
        .collect();
    // Unaligned mode (prefill_block = 0): reuse at any length (the exact lcp below).
    let plain = load(|o| {
        o.n_parallel = 10;
        o.prefix_reuse = false;
        o.prefix_cache = false;
        o.prefill_block = 0;
    });
    let base = ok(plain.complete_batch(&reqs));
    let s0 = plain.stats();
    drop(plain);
    let reuse = load(|o| {
        o.n_parallel = 10;
        o.prefix_cache = false;
        o.prefill_block = 0;
    });
    let tokens: Vec<Vec<i32>> = reqs
        .iter()
        .map(|r| reuse.tokenize(&r.prompt).unwrap())
        .collect();
    let shared = ok(reuse.complete_batch(&reqs));
    let s1 = reuse.stats();
    let total_prompt: u64 = tokens.iter().map(|t| t.len() as u64).sum();
    assert_eq!(s0.prompt_tokens_computed, total_prompt);
    assert_eq!(s0.prompt_tokens_reused, 0);
    // All are admitted together: the first computes its prompt, the others wait
    // for it and copy exactly their common prefix with it.
    let expected: Vec<u32> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| if i == 0 { 0 } else { lcp(t, &tokens[0]) as u32 })
        .collect();
    let cached: Vec<u32> = shared
        .iter()
        .map(|c| c.usage.cached_prompt_tokens)
        .collect();
    assert_eq!(cached, expected);
    assert!(
        expected[1..].iter().all(|&c| c > 40),
        "the harness is shared: {expected:?}"
    );
    let reused: u64 = cached.iter().map(|&c| c as u64).sum();
    // Computed = the first prompt + the suffixes of the others, not N whole prompts.
    assert_eq!(s1.prompt_tokens_computed, total_prompt - reused);
    assert_eq!(s1.prompt_tokens_reused, reused);
    eprintln!(
        "prefix reuse: {} of {total_prompt} prompt tokens computed ({:.0}% saved)",
        total_prompt - reused,
        100.0 * reused as f64 / total_prompt as f64
    );
    // The suffixes are computed in a batch without their prefix rows, and llama.cpp's
    // CPU kernels sum in an order that depends on the batch's shape, so a near-tie can
    // flip a greedy token (measured: 20 of 24 identical with scripts/
    // bench_prefix_reuse.sh; see docs/PERFORMANCE.md). Broken KV would make nearly all
    // differ from the first token on.
    let same = base
        .iter()
        .zip(&shared)
        .filter(|(a, b)| a.text == b.text)
        .count();
    eprintln!(
        "prefix reuse / no reuse greedy agreement: {same}/{}",
        base.len()
    );
    let first_word = |t: &str| t.split_whitespace().next().unwrap_or("").to_string();
    for (a, b) in base.iter().zip(&shared) {
        assert_eq!(a.usage.prompt_tokens, b.usage.prompt_tokens);
        assert_eq!(first_word(&a.text), first_word(&b.text), "{a:?} vs {b:?}");
    }
    assert!(
        same as f64 >= PREFIX_AGREEMENT_FLOOR * base.len() as f64,
        "only {same}/{} identical",
        base.len()
    );
}

/// Floor for the share of identical greedy texts with and without prefix reuse
/// (unaligned mode).
const PREFIX_AGREEMENT_FLOOR: f64 = 0.6;

/// 24 chat prompts under one ~130-token harness system prompt (family questions).
fn harness_prompts() -> Vec<Request> {
    let sys = "You are an expert Python programmer. Solve each problem by writing a short, \
        correct Python program.\n\nInstructions:\n- Write a complete Python program that \
        computes the answer and prints only the answer.\n- Copy the numbers from the \
        question into the program; the program must not read input.\n- Use exact integer \
        arithmetic.\n\nNotes:\n- The program's standard output is taken as the answer.";
    let mut v = Vec::new();
    for fam in ["gcd", "count_primes", "maze"] {
        let f = harness_rl::families::get(fam).unwrap();
        for i in 0..8 {
            let inst = harness_rl::families::generate(
                f,
                harness_rl::families::Level::new(1).unwrap(),
                1,
                i,
            );
            let user = format!(
                "{}\n\nWrite a Python program that prints only the answer, {}.",
                inst.question_body(),
                inst.answer_format()
            );
            v.push(greedy(
                Prompt::Chat(vec![Message::system(sys), Message::user(user)]),
                24,
            ));
        }
    }
    v
}

/// Block mode (the default): prompts are computed in 64-position blocks and reused
/// in whole blocks, from live sequences and from the prefix cache of finished ones.
/// Greedy texts equal single runs without any reuse; a second round is served from
/// the cache and equal again. (Unaligned reuse of the same prompts gave 10/24.)
#[test]
fn prefix_cache_and_blocks_keep_greedy_outputs_equal_to_single_runs() {
    let reqs = harness_prompts();
    let single = load(|o| {
        o.n_parallel = 1;
        o.prefix_reuse = false;
        o.prefix_cache = false;
    });
    let alone: Vec<Completion> = reqs.iter().map(|r| single.complete(r).unwrap()).collect();
    let s0 = single.stats();
    assert_eq!(s0.prompt_tokens_reused, 0);
    let tokens: Vec<Vec<i32>> = reqs
        .iter()
        .map(|r| single.tokenize(&r.prompt).unwrap())
        .collect();
    drop(single);
    let total: u64 = tokens.iter().map(|t| t.len() as u64).sum();
    let exec = load(|o| o.n_parallel = 8);
    for round in 0..2 {
        let before = exec.stats();
        let got = ok(exec.complete_batch(&reqs));
        let after = exec.stats();
        for (i, (a, b)) in alone.iter().zip(&got).enumerate() {
            assert_eq!(a.text, b.text, "round {round}, prompt {i}");
            let c = b.usage.cached_prompt_tokens as usize;
            assert_eq!(c % 64, 0, "reuse is in whole blocks");
            // Never more than the prompt shares with some other prompt (or itself,
            // from the cache in round 1), and always one token left to compute.
            let best = (0..reqs.len())
                .filter(|&j| j != i || round == 1)
                .map(|j| lcp(&tokens[i], &tokens[j]))
                .max()
                .unwrap();
            assert!(
                c <= best.min(tokens[i].len() - 1),
                "prompt {i}: {c} > {best}"
            );
        }
        let reused = after.prompt_tokens_reused - before.prompt_tokens_reused;
        let computed = after.prompt_tokens_computed - before.prompt_tokens_computed;
        assert_eq!(computed + reused, total, "round {round}");
        let cached: u64 = got
            .iter()
            .map(|c| c.usage.cached_prompt_tokens as u64)
            .sum();
        assert_eq!(cached, reused);
        let from_cache = after.prompt_tokens_from_cache - before.prompt_tokens_from_cache;
        // The whole blocks of the prefix every prompt shares (system prompt, template).
        let shared = tokens.iter().map(|t| lcp(t, &tokens[0])).min().unwrap() / 64 * 64;
        assert!(shared >= 64, "the harness prompt spans a block");
        if round == 0 {
            // The first request computes the shared blocks; every other one reuses
            // them, from a live sequence or (24 requests, 8 slots) from the cache.
            assert!(reused >= 23 * shared as u64, "{after:?}");
            assert!(from_cache > 0, "{after:?}");
        } else {
            // Every request finds at least the shared blocks in the cache.
            assert!(reused >= 24 * shared as u64, "{after:?}");
            assert!(from_cache >= 16 * shared as u64, "{after:?}");
        }
    }
}

#[test]
fn continuous_batching_reuses_live_prefixes_and_matches_single_runs() {
    // More requests than slots: later ones are admitted as earlier ones finish, and
    // copy their prefix from a sequence that is still generating (or kept in the
    // prefix cache). The harness is short: blocks of 8 positions.
    let exec = load(|o| {
        o.n_parallel = 2;
        o.prefill_block = 8;
    });
    let harness = "Answer with a single word. Do not explain. Be brief and exact.";
    let reqs: Vec<Request> = [
        "Color of grass?",
        "Color of snow?",
        "Color of sky?",
        "Color of coal?",
        "Color of blood?",
    ]
    .iter()
    .enumerate()
    .map(|(i, q)| {
        greedy(
            Prompt::Chat(vec![Message::system(harness), Message::user(*q)]),
            4 + 3 * i as u32,
        )
    })
    .collect();
    let got = ok(exec.complete_batch(&reqs));
    let reused: u32 = got.iter().map(|c| c.usage.cached_prompt_tokens).sum();
    assert!(reused > 0, "a later request reused a live prefix");
    assert_eq!(exec.stats().requests, 5);
    assert!(exec.stats().max_concurrent <= 2);
    let alone = load(|o| {
        o.n_parallel = 1;
        o.prefix_reuse = false;
        o.prefix_cache = false;
        o.prefill_block = 8;
    });
    for (r, c) in reqs.iter().zip(&got) {
        let single = alone.complete(r).expect("single");
        assert_eq!(single.text, c.text);
        assert_eq!(single.usage.completion_tokens, c.usage.completion_tokens);
    }
}

#[test]
fn concurrent_callers_share_the_executor() {
    let exec = load(|o| o.n_parallel = 4);
    let reqs: Vec<Request> = [
        "Name a fruit.",
        "Name a tree.",
        "Name a river.",
        "Name a bird.",
    ]
    .iter()
    .map(|p| greedy(chat(p), 8))
    .collect();
    let together = ok(exec.complete_batch(&reqs));
    let from_threads: Vec<Completion> = std::thread::scope(|s| {
        let handles: Vec<_> = reqs
            .iter()
            .map(|r| s.spawn(|| exec.complete(r).expect("completion")))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (a, b) in together.iter().zip(&from_threads) {
        assert_eq!(a.text, b.text);
    }
}

/// `complete_batch_progress` reports each request once, with the result it returns,
/// as its sequence finishes: a 2-token request that shares the batch with a 24-token
/// one is reported first (the default, batch-at-the-end report would give 0 then 1).
#[test]
fn each_completion_is_reported_as_its_sequence_finishes() {
    let exec = load(|o| o.n_parallel = 2);
    let reqs = vec![
        greedy(chat("Count from 1 to 200, separated by commas."), 24),
        greedy(chat("Count from 1 to 200, separated by commas."), 2),
    ];
    let reported = std::sync::Mutex::new(Vec::new());
    let out = ok(exec.complete_batch_progress(&reqs, &|i, r| {
        reported
            .lock()
            .unwrap()
            .push((i, r.as_ref().expect("completion").text.clone()));
    }));
    // The premise: the first request really generates longer.
    assert_eq!(out[0].usage.completion_tokens, 24, "{:?}", out[0]);
    assert_eq!(out[1].usage.completion_tokens, 2);
    assert_eq!(
        *reported.lock().unwrap(),
        vec![(1, out[1].text.clone()), (0, out[0].text.clone())]
    );
}

#[test]
fn seeded_sampling_repeats_and_seeds_differ() {
    let exec = load(|o| o.n_parallel = 4);
    let sampled = |seed: u64| Request {
        prompt: chat("Tell me a short story about a fox."),
        sampling: Sampling {
            temperature: 1.0,
            top_p: 0.95,
            top_k: 50,
            min_p: 0.02,
            seed,
            max_tokens: 20,
            ..Sampling::default()
        },
    };
    let reqs: Vec<Request> = (0..4).map(sampled).collect();
    let a = ok(exec.complete_batch(&reqs));
    let b = ok(exec.complete_batch(&reqs));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.text, y.text, "same seed, same text");
    }
    let distinct: BTreeSet<&str> = a.iter().map(|c| c.text.as_str()).collect();
    assert!(
        distinct.len() >= 3,
        "different seeds give different samples: {distinct:?}"
    );
}

#[test]
fn max_tokens_and_stop_strings_are_honoured() {
    let exec = load(|o| o.n_parallel = 2);
    let prompt = Prompt::Raw("One, two, three, four, five, six, seven, eight,".into());
    let long = exec.complete(&greedy(prompt.clone(), 12)).unwrap();
    assert_eq!(long.finish_reason, FinishReason::Length);
    assert_eq!(long.usage.completion_tokens, 12);
    let short = exec.complete(&greedy(prompt.clone(), 3)).unwrap();
    assert_eq!(short.usage.completion_tokens, 3);
    assert!(long.text.starts_with(&short.text), "{long:?} vs {short:?}");
    // Stop at a string taken from the middle of the unconstrained output.
    let words: Vec<&str> = long
        .text
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .collect();
    assert!(words.len() >= 2, "{:?}", long.text);
    let stop = words[1].to_string();
    let cut = long.text.find(&stop).unwrap();
    let mut req = greedy(prompt, 12);
    req.sampling.stop = vec!["zzzz-never".into(), stop.clone()];
    let stopped = exec.complete(&req).unwrap();
    assert_eq!(stopped.finish_reason, FinishReason::Stop);
    assert_eq!(
        stopped.text,
        long.text[..cut],
        "text ends right before {stop:?}"
    );
    assert!(!stopped.text.contains(&stop));
    assert!(stopped.usage.completion_tokens < 12);
}

/// An independent check of the grammar's language (no regex engine: a hand-written
/// recogniser of `{"answer": N}` with 1-3 digits).
fn is_answer_object(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("{\"answer\": ") else {
        return false;
    };
    let Some(digits) = rest.strip_suffix('}') else {
        return false;
    };
    (1..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

#[test]
fn grammar_constrains_the_output() {
    let exec = load(|o| o.n_parallel = 3);
    let yes_no = "root ::= \"yes\" | \"no\"";
    let answer = "root ::= \"{\\\"answer\\\": \" [0-9] [0-9]? [0-9]? \"}\"";
    let mk = |p: &str, g: &str, t: f32| Request {
        prompt: chat(p),
        sampling: Sampling {
            temperature: t,
            seed: 3,
            max_tokens: 20,
            grammar: Some(g.to_string()),
            ..Sampling::default()
        },
    };
    let reqs = vec![
        mk("Is the sky blue? Answer yes or no.", yes_no, 0.0),
        mk("What is 6 times 7? Reply in JSON.", answer, 0.0),
        mk("Pick any number. Reply in JSON.", answer, 1.0),
    ];
    let got = ok(exec.complete_batch(&reqs));
    assert!(
        got[0].text == "yes" || got[0].text == "no",
        "{:?}",
        got[0].text
    );
    assert_eq!(got[0].finish_reason, FinishReason::Stop);
    for c in &got[1..] {
        assert!(is_answer_object(&c.text), "{:?}", c.text);
        let v: serde_json::Value = serde_json::from_str(&c.text).expect("valid JSON");
        assert!(v["answer"].is_u64());
    }
    // A malformed grammar fails that request only.
    let mut bad = reqs[0].clone();
    bad.sampling.grammar = Some("root ::= (".into());
    let mixed = exec.complete_batch(&[bad, reqs[0].clone()]);
    assert!(
        matches!(mixed[0], Err(ExecutorError::InvalidRequest(_))),
        "{:?}",
        mixed[0]
    );
    assert_eq!(mixed[1].as_ref().unwrap().text, got[0].text);
}

#[test]
fn token_accounting_and_bad_requests() {
    let exec = load(|o| o.n_ctx_per_seq = 64);
    let p = Prompt::Raw("The quick brown fox".into());
    let n = exec.tokenize(&p).unwrap().len() as u32;
    let c = exec.complete(&greedy(p, 5)).unwrap();
    assert_eq!(c.usage.prompt_tokens, n);
    assert_eq!(c.usage.cached_prompt_tokens, 0);
    assert!(c.timings.total_ms >= c.timings.prompt_ms + c.timings.generation_ms - 1.0);
    // A prompt longer than the per-sequence context is rejected, others still run.
    let long = Prompt::Raw("word ".repeat(200));
    let results = exec.complete_batch(&[greedy(long, 4), greedy(chat("Hi"), 4)]);
    assert!(
        matches!(
            results[0],
            Err(ExecutorError::PromptTooLong { n_ctx: 64, .. })
        ),
        "{:?}",
        results[0]
    );
    assert!(results[1].is_ok());
    // Generation stops at the context end with `length`.
    let near = Prompt::Raw("a b c d e f g h i j k l m n o p q r s t u v w x y z ".repeat(2));
    let plen = exec.tokenize(&near).unwrap().len() as u32;
    assert!(plen < 64);
    let c = exec.complete(&greedy(near, 500)).unwrap();
    assert_eq!(c.finish_reason, FinishReason::Length);
    assert!(plen + c.usage.completion_tokens <= 64);
    // max_tokens 0 is invalid.
    assert!(matches!(
        exec.complete(&greedy(chat("x"), 0)),
        Err(ExecutorError::InvalidRequest(_))
    ));
}

#[test]
fn chat_template_comes_from_the_gguf() {
    let exec = load(|_| {});
    assert_eq!(exec.info().chat_template, "gguf");
    let text = exec
        .render(&Prompt::Chat(vec![
            Message::system("S"),
            Message::user("U"),
        ]))
        .unwrap();
    // SmolLM2's template is ChatML-style with an open assistant turn.
    assert!(text.contains("<|im_start|>system\nS<|im_end|>"), "{text:?}");
    assert!(text.ends_with("<|im_start|>assistant\n"), "{text:?}");
    assert_eq!(
        exec.model_id(),
        models::known("smollm2-135m").unwrap().sha256
    );
}

#[test]
fn a_final_assistant_message_is_a_prefill_the_model_continues() {
    let exec = load(|_| {});
    let turns = vec![Message::system("S"), Message::user("Write a function.")];
    let prefill = "Below is the function:\n```python\n";
    let mut with = turns.clone();
    with.push(Message::new("assistant", prefill));
    let open = exec.render(&Prompt::Chat(turns.clone())).unwrap();
    let rendered = exec.render(&Prompt::Chat(with.clone())).unwrap();
    // The turns, the assistant's opening, then the prefill, left open (no end-of-turn).
    assert_eq!(rendered, format!("{open}{prefill}"));
    assert!(!rendered.ends_with("<|im_end|>\n"), "{rendered:?}");
    // Greedy: the same continuation as the raw text of that prompt.
    let out = ok(exec.complete_batch(&[
        greedy(Prompt::Chat(with), 12),
        greedy(Prompt::Raw(rendered.clone()), 12),
    ]));
    assert_eq!(out[0].text, out[1].text);
    assert!(!out[0].text.is_empty());
    // An assistant turn followed by a user turn is history, not a prefill.
    let history = vec![
        Message::user("a"),
        Message::new("assistant", "b"),
        Message::user("c"),
    ];
    let text = exec.render(&Prompt::Chat(history)).unwrap();
    assert!(
        text.contains("<|im_start|>assistant\nb<|im_end|>"),
        "{text:?}"
    );
    assert!(text.ends_with("<|im_start|>assistant\n"), "{text:?}");
}

#[test]
fn corrupt_or_foreign_model_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.gguf");
    std::fs::write(&garbage, b"this is not a model at all").unwrap();
    let err = LlamaOptions::for_model(garbage.to_str().unwrap()).unwrap_err();
    assert!(err.to_string().contains("not a GGUF file"), "{err}");
    // A truncated copy of the real model passes the magic check but not the extents.
    let real = models::known(models::DEFAULT_MODEL).unwrap().path();
    let bytes = std::fs::read(&real).unwrap();
    let cut = dir.path().join("truncated.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = LlamaOptions::for_model(cut.to_str().unwrap()).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    // Loading it directly (bypassing resolve) is an error too, never an abort.
    let e = LlamaExecutor::load(LlamaOptions {
        model: cut.clone(),
        ..options()
    });
    assert!(matches!(e, Err(ExecutorError::Model(_))));
    // A header cut inside the metadata.
    let head = dir.path().join("head.gguf");
    std::fs::write(&head, &bytes[..4096]).unwrap();
    let err = LlamaOptions::for_model(head.to_str().unwrap()).unwrap_err();
    assert!(err.to_string().contains("corrupt GGUF"), "{err}");
    // A LoRA path that is not GGUF fails the load with the path named.
    let e = LlamaExecutor::load(LlamaOptions {
        lora: Some(garbage.clone()),
        ..options()
    });
    match e {
        Err(ExecutorError::Model(m)) => assert!(m.contains("garbage.gguf"), "{m}"),
        other => panic!("expected a model error, got {:?}", other.map(|_| ())),
    }
}

/// Write a rank-1 LoRA adapter GGUF for a llama-architecture model: `lora_a` /
/// `lora_b` pairs (F32) for the attention query projection of each listed layer, with
/// every element of `lora_a` = `a` and of `lora_b` = `b`.
fn write_lora(path: &std::path::Path, n_embd: u64, layers: &[u32], a: f32, b: f32) {
    fn s(out: &mut Vec<u8>, v: &str) {
        out.extend_from_slice(&(v.len() as u64).to_le_bytes());
        out.extend_from_slice(v.as_bytes());
    }
    let mut h = b"GGUF".to_vec();
    h.extend_from_slice(&3u32.to_le_bytes());
    h.extend_from_slice(&(2 * layers.len() as u64).to_le_bytes());
    h.extend_from_slice(&4u64.to_le_bytes());
    for (k, v) in [
        ("general.architecture", "llama"),
        ("general.type", "adapter"),
        ("adapter.type", "lora"),
    ] {
        s(&mut h, k);
        h.extend_from_slice(&8u32.to_le_bytes());
        s(&mut h, v);
    }
    s(&mut h, "adapter.lora.alpha");
    h.extend_from_slice(&6u32.to_le_bytes());
    h.extend_from_slice(&1.0f32.to_le_bytes());
    let tensor_bytes = n_embd * 4;
    let padded = tensor_bytes.div_ceil(32) * 32;
    let mut offset = 0u64;
    for l in layers {
        for (suffix, dims) in [("lora_a", [n_embd, 1]), ("lora_b", [1, n_embd])] {
            s(&mut h, &format!("blk.{l}.attn_q.weight.{suffix}"));
            h.extend_from_slice(&2u32.to_le_bytes());
            for d in dims {
                h.extend_from_slice(&d.to_le_bytes());
            }
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&offset.to_le_bytes());
            offset += padded;
        }
    }
    while h.len() % 32 != 0 {
        h.push(0);
    }
    for _ in layers {
        for v in [a, b] {
            for _ in 0..n_embd {
                h.extend_from_slice(&v.to_le_bytes());
            }
            h.resize(h.len() + (padded - tensor_bytes) as usize, 0);
        }
    }
    std::fs::write(path, h).unwrap();
}

#[test]
fn lora_adapters_load_and_change_the_output_only_when_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let reqs: Vec<Request> = ["Name a fruit.", "What is 3 plus 4?"]
        .iter()
        .map(|p| greedy(chat(p), 10))
        .collect();
    let base = ok(load(|o| o.n_parallel = 2).complete_batch(&reqs));
    // SmolLM2-135M: n_embd 576, 30 layers.
    let zero = dir.path().join("zero.gguf");
    write_lora(&zero, 576, &(0..30).collect::<Vec<_>>(), 0.5, 0.0);
    let with_zero = ok(load(|o| {
        o.n_parallel = 2;
        o.lora = Some(zero.clone());
    })
    .complete_batch(&reqs));
    for (x, y) in base.iter().zip(&with_zero) {
        assert_eq!(
            x.text, y.text,
            "a zero LoRA update leaves the model unchanged"
        );
    }
    let strong = dir.path().join("strong.gguf");
    write_lora(&strong, 576, &(0..30).collect::<Vec<_>>(), 0.3, 0.3);
    let with_strong = ok(load(|o| {
        o.n_parallel = 2;
        o.lora = Some(strong.clone());
    })
    .complete_batch(&reqs));
    assert!(
        base.iter().zip(&with_strong).any(|(x, y)| x.text != y.text),
        "a large LoRA update changes the output"
    );
    // Scale 0 switches the same adapter off.
    let scaled_off = ok(load(|o| {
        o.n_parallel = 2;
        o.lora = Some(strong.clone());
        o.lora_scale = 0.0;
    })
    .complete_batch(&reqs));
    for (x, y) in base.iter().zip(&scaled_off) {
        assert_eq!(x.text, y.text);
    }
    // An adapter whose shapes do not fit the model is an error, not a crash.
    let wrong = dir.path().join("wrong.gguf");
    write_lora(&wrong, 100, &[0], 0.1, 0.1);
    let e = LlamaExecutor::load(LlamaOptions {
        lora: Some(wrong),
        ..options()
    });
    assert!(matches!(e, Err(ExecutorError::Model(_))));
}

/// Without a GPU, `gpu_layers > 0` is refused with the reason, so a CPU run is never
/// recorded as a GPU one; the layer counts the identity reports come from the model.
#[test]
fn gpu_layers_without_a_gpu_are_refused() {
    if !harness_rl::executor::llama::device::gpu_devices().is_empty() {
        // A GPU machine: scripts/bench_gpu.sh checks offloading there.
        return;
    }
    let mut o = options();
    o.gpu_layers = 4;
    match LlamaExecutor::load(o) {
        Err(ExecutorError::InvalidRequest(m)) => {
            assert!(m.contains("gpu_layers=4 asks for a GPU"), "{m}");
            let why = if cfg!(feature = "cuda") {
                "found no CUDA device"
            } else {
                "built without GPU support"
            };
            assert!(m.contains(why), "{m}");
            assert!(m.contains("gpu_layers=0 runs on the CPU"), "{m}");
        }
        Err(e) => panic!("expected an invalid request, got {e}"),
        Ok(_) => panic!("gpu_layers=4 was accepted without a GPU"),
    }
    let exec = load(|_| {});
    // SmolLM2-135M: 30 repeating layers and the output layer.
    assert_eq!(exec.info().layers_total, 31);
    assert_eq!(exec.info().layers_offloaded, 0);
}

/// `hrl doctor` reports the build and the devices, as text and as JSON, and
/// `--require-gpu` fails (exit 1) where there is no GPU; `hrl generate --gpu-layers`
/// without a GPU is a usage error (exit 2) naming the reason.
#[test]
fn doctor_reports_the_backend_and_generate_refuses_gpu_layers() {
    use assert_cmd::Command;
    let out = Command::cargo_bin("hrl")
        .unwrap()
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cuda_build"], cfg!(feature = "cuda"));
    assert_eq!(v["cuda"].is_null(), !cfg!(feature = "cuda"));
    assert!(v["host"]["cores"].as_u64().unwrap() >= 1);
    assert!(
        v["cpu_kernels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "AVX2" || f == "NEON"),
        "{v}"
    );
    if !v["gpus"].as_array().unwrap().is_empty() {
        return;
    }
    let text = Command::cargo_bin("hrl")
        .unwrap()
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("llama.cpp CPU kernels:"), "{text}");
    assert!(
        text.contains(if cfg!(feature = "cuda") {
            "CUDA build: yes"
        } else {
            "CUDA build: no"
        }),
        "{text}"
    );
    assert!(text.contains("GPUs: none"), "{text}");
    let req = Command::cargo_bin("hrl")
        .unwrap()
        .args(["doctor", "--require-gpu"])
        .output()
        .unwrap();
    assert_eq!(req.status.code(), Some(1));
    let generated = Command::cargo_bin("hrl")
        .unwrap()
        .args([
            "generate",
            "--model",
            models::DEFAULT_MODEL,
            "--gpu-layers",
            "99",
            "--no-cache",
            "--prompt",
            "Hi",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&generated.stderr);
    assert_eq!(generated.status.code(), Some(2), "{err}");
    assert!(err.contains("gpu_layers=99 asks for a GPU"), "{err}");
}
