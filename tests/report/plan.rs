//! `hrl plan`: the minimum detectable difference of a design and the sizes needed for
//! a target, from the shipped run, a synthetic pilot pair, or stated components;
//! doubling the instances shrinks the MDD by about √2 when instance variance
//! dominates; bad requests are refused (exit 2) naming the flag.

use std::path::Path;

use super::util::*;

fn plan(home: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    hrl(home).arg("plan").args(args).assert()
}

fn plan_json(home: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    let out = plan(home, &a).success();
    json_of(&out.get_output().stdout)
}

#[test]
fn the_shipped_run_plans_with_the_plus_four_variance() {
    let home = tempfile::tempdir().unwrap();
    let run = fixture();
    let p = plan_json(home.path(), &[run.to_str().unwrap(), "--detect", "0.3"]);
    // The recorded run: 3 tasks x 4 test instances x 2 samples, every table constant
    // (0 of 4 or 4 of 4): each task planned with p = (0 + 2)/(4 + 4) or (4 + 2)/8,
    // both p(1 - p) = 3/16, doubled for two arms.
    assert_eq!(p["design"]["tasks"], 3);
    assert_eq!(p["design"]["instances"], 4);
    assert_eq!(p["design"]["samples"], 2);
    let c = &p["components"];
    assert!(
        (c["instance"].as_f64().unwrap() - 2.0 * 3.0 / 16.0).abs() < 1e-12,
        "{p}"
    );
    assert_eq!(c["harness"], 0.0);
    assert_eq!(c["residual"], 0.0);
    // Instance variance only: the MDD is near (t + z_0.8) sqrt(0.375 / (4 T)), with
    // t the 95 % quantile of the instance term's 3 x 3 = 9 degrees of freedom.
    let mdd = p["mdd"].as_f64().unwrap();
    let se = (0.375f64 / 4.0 / 3.0).sqrt();
    let want = (2.262_157 + 0.883_0) * se;
    assert!((mdd / want - 1.0).abs() < 0.08, "{mdd} vs {want}");
    // To detect 0.3, more instances (at 2 samples) do it; samples alone do not
    // shrink the instance term.
    let n = p["target"]["instances"].as_u64().unwrap();
    assert!(n > 4 && n < 40, "{p}");
    assert!(p["target"]["samples"].is_null(), "{p}");
    // The text names the source and the numbers.
    let out = plan(home.path(), &[run.to_str().unwrap()]).success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("Minimum detectable difference: "), "{text}");
    assert!(
        text.contains("3 tasks x 4 instances x 2 harness samples"),
        "{text}"
    );
}

#[test]
fn doubling_the_instances_shrinks_the_mdd_by_about_root_two() {
    let home = tempfile::tempdir().unwrap();
    let at = |n: &str| {
        plan_json(
            home.path(),
            &[
                "--components",
                "0.0005,0.2,0.01",
                "--tasks",
                "3",
                "--samples",
                "5",
                "--instances",
                n,
            ],
        )["mdd"]
            .as_f64()
            .unwrap()
    };
    let (a, b) = (at("50"), at("100"));
    assert!((a / b - std::f64::consts::SQRT_2).abs() < 0.06, "{a} {b}");
    // Harness variance dominating: twice the instances barely help.
    let h = |n: &str| {
        plan_json(
            home.path(),
            &[
                "--components",
                "0.05,0.001,0.01",
                "--tasks",
                "3",
                "--samples",
                "5",
                "--instances",
                n,
            ],
        )["mdd"]
            .as_f64()
            .unwrap()
    };
    assert!(h("50") / h("100") < 1.05);
}

#[test]
fn a_pilot_pair_plans_from_its_differences() {
    let home = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shape = Shape::default();
    let scores = random_scores(&shape, 31, 0.35, 0.3);
    let other = random_scores(&shape, 32, 0.35, 0.3);
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    synth_run(&a, &shape, &scores);
    synth_run(&b, &shape, &other);
    let p = plan_json(home.path(), &[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(p["design"]["tasks"], 3);
    assert_eq!(p["design"]["samples"], 4);
    assert_eq!(p["design"]["instances"], 24);
    // The components are the mean of the per-task components `hrl compare` reports
    // for the same pair.
    let out = hrl(home.path())
        .args([
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--json",
        ])
        .assert()
        .success();
    let c = json_of(&out.get_output().stdout);
    for k in ["harness", "instance", "residual"] {
        let tasks = c["tasks"].as_array().unwrap();
        let mean = tasks
            .iter()
            .map(|t| t["components"][k].as_f64().unwrap())
            .sum::<f64>()
            / tasks.len() as f64;
        let got = p["components"][k].as_f64().unwrap();
        assert!((got - mean).abs() < 1e-12, "{k}: {got} vs {mean}");
    }
    // The pair's own MDD is what `hrl compare` prints for it (same rule, the pair's
    // per-task components rather than their mean: close, not equal).
    let mdd = p["mdd"].as_f64().unwrap();
    let cm = c["power"]["mdd"].as_f64().unwrap();
    assert!((mdd / cm - 1.0).abs() < 0.25, "{mdd} vs {cm}");
}

#[test]
fn bad_requests_are_refused_naming_the_flag() {
    let home = tempfile::tempdir().unwrap();
    let err = |args: &[&str]| {
        let out = plan(home.path(), args).code(2);
        String::from_utf8_lossy(&out.get_output().stderr).to_string()
    };
    assert!(err(&[]).contains("--components"));
    assert!(err(&["--components", "0.1,0.1,0.1"]).contains("--tasks"));
    assert!(err(&["--components", "0.1,0.1"]).contains("HARNESS,INSTANCE,RESIDUAL"));
    assert!(
        err(&[
            "--components",
            "0.1,-1,0.1",
            "--tasks",
            "1",
            "--samples",
            "1",
            "--instances",
            "1"
        ])
        .contains(">= 0")
    );
    let run = fixture();
    let r = run.to_str().unwrap();
    assert!(err(&[r, "--power", "1.2"]).contains("--power"));
    assert!(err(&[r, "--detect", "0"]).contains("--detect"));
    assert!(err(&[r, "--components", "0.1,0.1,0.1"]).contains("not both"));
    plan(home.path(), &[r, r, r]).code(2);
    assert!(err(&["/nonexistent/run"]).contains("not a directory"));
}
