//! `hrl report`: renders from the run directory alone (no model installed), agrees
//! with the records, is deterministic, and names bad input.

use std::path::Path;

use super::util::*;

fn render(home: &Path, dir: &Path, format: &str, out: &Path) {
    hrl(home)
        .args(["report", dir.to_str().unwrap(), "--format", format, "--out"])
        .arg(out)
        .assert()
        .success();
}

#[test]
fn a_real_run_renders_with_no_model_installed() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = fixture();
    // Markdown with the plots beside it.
    let md = out.path().join("r.md");
    render(home.path(), &run, "md", &md);
    let text = std::fs::read_to_string(&md).unwrap();
    for plot in ["horizon", "families", "pareto"] {
        let svg = std::fs::read_to_string(out.path().join(format!("r-{plot}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{plot}"
        );
        assert!(text.contains(&format!("](r-{plot}.svg)")), "{text}");
    }
    // The horizon plot's legend sits in its own column right of the 720-pixel chart,
    // off the data.
    let svg = std::fs::read_to_string(out.path().join("r-horizon.svg")).unwrap();
    let label = svg.find("(band: interval)").expect("the legend entry");
    let open = svg[..label].rfind("<text").unwrap();
    let x: f64 = svg[open..label]
        .split("x=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{}", &svg[open..label]));
    assert!(x > 720.0, "the legend is on the chart (x = {x})");
    // The accepted oracle revision of spell_backward and its diff.
    assert!(text.contains("## Accepted revisions"), "{text}");
    assert!(
        text.contains("spell_backward/L1 sample 0 round 1"),
        "{text}"
    );
    // The summary the report computes equals the one `hrl eval` wrote.
    let json_path = out.path().join("r.json");
    render(home.path(), &run, "json", &json_path);
    let r = json_of(&std::fs::read(&json_path).unwrap());
    let written = json_of(&std::fs::read(run.join("summary.json")).unwrap());
    assert_eq!(r["eval"]["summary"]["overall"], written["overall"]);
    assert_eq!(r["eval"]["summary"]["tasks"], written["tasks"]);
    // Nothing was installed or cached in the private home.
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);
}

#[test]
fn the_html_page_is_self_contained_and_browsable() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    synth_run(d.path(), &shape, &random_scores(&shape, 1, 0.3, 0.2));
    let out = d.path().join("page.html");
    render(home.path(), d.path(), "html", &out);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 3, "three inline plots");
    // No external asset: no script, stylesheet link, image source or URL other than
    // the SVG namespace.
    for bad in ["<script", "<link", "src=", "<img", "@import"] {
        assert!(!html.contains(bad), "{bad}");
    }
    let urls = html.matches("http").count();
    let namespaces = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(urls, namespaces, "only SVG namespaces");
    // Every trajectory, its candidates (raw output escaped) and the harness files.
    assert_eq!(
        html.matches("<details><summary>gcd/L1 · sample").count(),
        shape.samples as usize
    );
    assert!(html.contains("&lt;garbage &amp; more&gt;"));
    assert!(!html.contains("<garbage"));
    assert!(html.contains("<span class=\"add\">+# revision"));
    assert!(html.contains("id=\"h-"));
    // Tasks of one family get a family row.
    assert!(html.contains("<h2>Per family</h2>"));
}

#[test]
fn tables_agree_with_an_independent_computation() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 7, 0.3, 0.25);
    synth_run(d.path(), &shape, &scores);
    let out = d.path().join("r.json");
    render(home.path(), d.path(), "json", &out);
    let r = json_of(&std::fs::read(&out).unwrap());
    let e = &r["eval"];
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12;
    let k = shape.rounds as usize;
    assert!(close(
        &e["summary"]["overall"]["seed_test"]["mean"],
        overall_mean(&scores, 0)
    ));
    assert!(close(
        &e["summary"]["overall"]["final_test"]["mean"],
        overall_mean(&scores, k)
    ));
    for round in 0..=k {
        assert!(close(
            &e["summary"]["overall"]["curve"][round]["mean"],
            overall_mean(&scores, round)
        ));
    }
    // The gcd family row: the mean of its two tasks.
    let gcd = e["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "gcd")
        .unwrap();
    let two: Vec<Vec<Vec<Vec<f64>>>> = scores[..2].to_vec();
    assert!(close(
        &gcd["metrics"]["final_test"]["mean"],
        overall_mean(&two, k)
    ));
    assert_eq!(gcd["tasks"].as_array().unwrap().len(), 2);
    // Intervals bracket the estimates.
    let ft = &e["summary"]["overall"]["final_test"];
    let (lo, hi, m) = (
        ft["ci"]["lo"].as_f64().unwrap(),
        ft["ci"]["hi"].as_f64().unwrap(),
        ft["mean"].as_f64().unwrap(),
    );
    assert!(lo < m && m < hi, "{ft}");
    // Pareto view: one point per (task, harness) tested.
    let points = e["harnesses"].as_array().unwrap();
    assert!(
        points
            .iter()
            .any(|p| p["seed"] == true && p["task"] == "gcd/L1")
    );
    assert!(points.iter().any(|p| p["pareto"] == true));
}

#[test]
fn split_roles_group_tasks() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    synth_run(d.path(), &shape, &random_scores(&shape, 3, 0.3, 0.2));
    let out = hrl(home.path())
        .args([
            "report",
            d.path().to_str().unwrap(),
            "--split",
            "paper-like",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // gcd is held out, spell_backward a warm-start family in the paper-like split.
    assert!(
        text.contains("## Per split role (split paper-like)"),
        "{text}"
    );
    assert!(
        text.contains("| held_out |") && text.contains("| warm_start |"),
        "{text}"
    );
    // An unknown split is a usage error.
    hrl(home.path())
        .args([
            "report",
            d.path().to_str().unwrap(),
            "--split",
            "no-such-split",
        ])
        .assert()
        .code(2);
}

#[test]
fn output_is_deterministic() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let run = d.path().join("run");
    synth_run(&run, &shape, &random_scores(&shape, 5, 0.4, 0.2));
    std::fs::write(run.join("train.jsonl"), train_log(30)).unwrap();
    // The same directory copied elsewhere (same name) renders the same bytes.
    let other = d.path().join("elsewhere/run");
    copy_dir(&run, &other);
    for format in ["md", "html", "json"] {
        let a = d.path().join(format!("a.{format}"));
        let b = d.path().join(format!("b/a.{format}"));
        std::fs::create_dir_all(b.parent().unwrap()).unwrap();
        render(home.path(), &run, format, &a);
        render(home.path(), &other, format, &b);
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{format}"
        );
    }
    for plot in ["horizon", "families", "pareto", "training"] {
        let a = std::fs::read(d.path().join(format!("a-{plot}.svg"))).unwrap();
        let b = std::fs::read(d.path().join(format!("b/a-{plot}.svg"))).unwrap();
        assert_eq!(a, b, "{plot}");
    }
}

/// A trainer's log of `n` steps (held-out score every fifth step).
fn train_log(n: u64) -> String {
    (0..n)
        .map(|s| {
            let held = if s % 5 == 0 {
                format!("{:.3}", 0.2 + 0.01 * s as f64)
            } else {
                "null".into()
            };
            format!(
                "{{\"step\":{s},\"reward_mean\":{:.3},\"reward_std\":0.1,\"heldout_score\":{held},\"entropy\":{:.3},\"invalid_rate\":{:.3},\"valid_rate\":{:.3},\"memo_hits\":{s},\"memo_misses\":3,\"cache_hits\":{},\"cache_misses\":5,\"wall_s\":2.0}}\n",
                0.1 + 0.02 * s as f64,
                2.0 - 0.03 * s as f64,
                0.5 - 0.01 * s as f64,
                0.5 + 0.01 * s as f64,
                2 * s
            )
        })
        .collect()
}

#[test]
fn a_training_log_is_plotted_and_a_training_only_directory_renders() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("train.jsonl"), train_log(60)).unwrap();
    let out = d.path().join("t.html");
    render(home.path(), d.path(), "html", &out);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("id=\"plot-training\""));
    assert!(
        html.contains("60 steps (last step 59)"),
        "best held-out at step 55"
    );
    assert!(html.contains("0.750 at step 55"));
    // 40 of 60 steps in the table.
    assert!(html.contains("40 evenly spaced steps of 60"));
    let json = d.path().join("t.json");
    render(home.path(), d.path(), "json", &json);
    let r = json_of(&std::fs::read(&json).unwrap());
    assert_eq!(r["train"]["steps"].as_array().unwrap().len(), 60);
    assert!(r["eval"].is_null());
}

#[test]
fn bad_input_is_named() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    // Not a run directory.
    hrl(home.path())
        .args(["report", d.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a run directory"));
    // A damaged record line (not the last) names the file and line.
    let shape = Shape::default();
    synth_run(d.path(), &shape, &random_scores(&shape, 2, 0.3, 0.2));
    let p = d.path().join("rounds.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{\"schema\":1,\"task\":";
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    hrl(home.path())
        .args(["report", d.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("rounds.jsonl:3"));
    // A bad training log line.
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("train.jsonl"),
        "{\"step\":1}\n".to_string() + &train_log(2),
    )
    .unwrap();
    hrl(home.path())
        .args(["report", t.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("train.jsonl:1"));
}

#[test]
fn the_library_writer_gives_what_the_command_prints() {
    // `hrl transfer` renders each run directory with `report::write`; it must give the
    // page `hrl report --format html` prints.
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("sub/report.html");
    let written = harness_rl::report::write(
        &fixture(),
        &harness_rl::report::ReportOptions::default(),
        harness_rl::report::export::Format::Html,
        &page,
    )
    .unwrap();
    assert_eq!(written.last().unwrap(), &page);
    let printed = hrl(home.path())
        .args(["report", fixture().to_str().unwrap(), "--format", "html"])
        .output()
        .unwrap();
    assert!(printed.status.success());
    assert_eq!(std::fs::read(&page).unwrap(), printed.stdout);
}

#[test]
fn rerender_rewrites_a_runs_tables_with_the_current_intervals() {
    // A copy of the recorded run whose summary.json carries stale intervals (the old
    // estimator's zero-width overall interval) and a stale report.md.
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run");
    copy_dir(&fixture(), &run);
    let path = run.join("summary.json");
    let mut stale = json_of(&std::fs::read(&path).unwrap());
    stale["overall"]["final_test"]["ci"] =
        serde_json::json!({"lo": 0.333, "hi": 0.333, "level": 0.95});
    stale["run_stats"]["wall_s"] = serde_json::json!(123.5);
    std::fs::write(&path, serde_json::to_string_pretty(&stale).unwrap()).unwrap();
    std::fs::write(run.join("report.md"), "stale").unwrap();
    hrl(home.path())
        .args(["report", run.to_str().unwrap(), "--rerender"])
        .assert()
        .success()
        .stderr(predicates::str::contains("rewrote the tables of"));
    let fresh = json_of(&std::fs::read(&path).unwrap());
    let shipped = json_of(&std::fs::read(fixture().join("summary.json")).unwrap());
    // The intervals are recomputed (equal to the shipped, re-rendered fixture); the
    // run statistics are kept.
    assert_eq!(fresh["overall"], shipped["overall"]);
    assert_eq!(fresh["tasks"], shipped["tasks"]);
    assert_eq!(fresh["run_stats"]["wall_s"], 123.5);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("interval for the crossed design"), "{md}");
    assert!(md.contains("0.333 [0.114, 0.661]"), "{md}");
    // Not a run directory: refused, naming what is missing.
    hrl(home.path())
        .args(["report", d.path().to_str().unwrap(), "--rerender"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "neither an evaluation run directory",
        ));
}

#[test]
fn an_unchanged_round_keeps_its_interval() {
    // The horizon curve: round 2 repeats round 1's test scores in every trajectory
    // (no revision was kept), so its intervals must be the same, per task and
    // overall (the intervals have no per-round random stream).
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let mut scores = random_scores(&shape, 41, 0.3, 0.3);
    for task in &mut scores {
        for traj in task.iter_mut() {
            traj[2] = traj[1].clone();
        }
    }
    synth_run(d.path(), &shape, &scores);
    let out = hrl(home.path())
        .args(["report", d.path().to_str().unwrap(), "--format", "json"])
        .assert()
        .success();
    let r = json_of(&out.get_output().stdout);
    let s = &r["eval"]["summary"];
    let curves = std::iter::once(&s["overall"]["curve"]).chain(
        s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["metrics"]["curve"]),
    );
    for curve in curves {
        assert_eq!(curve[1], curve[2], "{curve}");
        assert_ne!(curve[1]["ci"], serde_json::Value::Null);
        // Round 0 differs (the seed harness), so the test can fail.
        assert_ne!(curve[0], curve[1], "{curve}");
    }
}
