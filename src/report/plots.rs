//! The report's SVG plots, drawn with plotters' SVG backend (text is written as SVG
//! `<text>` with naive metrics: no font files, no system dependency). Every plot is a
//! deterministic function of the report model, so the same run directory gives
//! byte-identical SVG.
//!
//! - `horizon`: the test score after each round (the horizon curve): overall with its
//!   crossed-design interval as a band, and each task's mean curve;
//! - `families`: seed vs final test score per family, bars with interval whiskers;
//! - `pareto`: each harness tested on a task: test score against executor tokens per
//!   test instance (seed harnesses as triangles), the task's Pareto front as a line;
//! - `training`: a trainer's `train.jsonl`: reward mean with a ±1 standard deviation
//!   band and the held-out score; invalid/valid rates and memo/cache hit rates;
//!   policy entropy.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Serialize;

use super::ReportError;
use super::model::{EvalReport, Report, TrainReport};
use crate::stats::HierEstimate;

/// One rendered plot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plot {
    /// A file-name stem: `horizon`, `families`, `pareto`, `training`.
    pub name: String,
    pub title: String,
    pub svg: String,
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

const FONT: &str = "sans-serif";

/// A fixed palette (colour-blind friendly, Okabe–Ito order).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const SEED_COLOUR: RGBColor = RGBColor(153, 153, 153);
const FINAL_COLOUR: RGBColor = RGBColor(0, 114, 178);

/// Draw the legend of `chart`'s labelled series at `position` (one style for every plot).
fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}

/// The minor grid lines: faint, so they guide the eye without competing with the data.
fn minor_grid() -> ShapeStyle {
    BLACK.mix(0.05).stroke_width(1)
}

/// Width of the horizon plot's legend column, right of the chart (off the data).
const SIDE_LEGEND_WIDTH: u32 = 190;

/// A legend drawn in its own area (`area`, beside a chart): one line sample and label
/// per entry `(label, colour, stroke width)`, top down.
fn side_legend(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    entries: &[(String, RGBColor, u32)],
) -> DrawResult {
    let style = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, c, width)) in entries.iter().enumerate() {
        let y = 60 + 20 * i as i32;
        area.draw(&PathElement::new(
            vec![(8, y), (30, y)],
            c.stroke_width(*width),
        ))?;
        area.draw(&Text::new(label.clone(), (38, y), style.clone()))?;
    }
    Ok(())
}

/// Series with more members than this get no per-member legend entry.
const MAX_LEGEND: usize = 10;

fn render(
    name: &str,
    title: &str,
    draw: impl FnOnce(&mut String) -> DrawResult,
) -> Result<Plot, ReportError> {
    let mut svg = String::new();
    draw(&mut svg).map_err(|e| ReportError::Plot {
        name: name.to_string(),
        message: e.to_string(),
    })?;
    Ok(Plot {
        name: name.to_string(),
        title: title.to_string(),
        svg,
    })
}

/// `x` on an axis of integers: the label, or nothing between integers.
fn integer_label(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        String::new()
    }
}

/// The y range covering `0..1` and every value given, with a little headroom.
fn score_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for v in values {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let pad = (hi - lo) * 0.05;
    (lo - if lo < 0.0 { pad } else { 0.0 }, hi + pad)
}

fn bounds(e: &HierEstimate) -> (f64, f64) {
    e.ci.map_or((e.mean, e.mean), |c| (c.lo, c.hi))
}

fn horizon(e: &EvalReport) -> Result<Plot, ReportError> {
    let k = e.meta.rounds as f64;
    let overall = &e.summary.overall.curve;
    let tasks = &e.summary.tasks;
    let ys = overall
        .iter()
        .flat_map(|x| {
            let (lo, hi) = bounds(x);
            [lo, hi]
        })
        .chain(
            tasks
                .iter()
                .flat_map(|t| t.metrics.curve.iter().map(|x| x.mean)),
        );
    let (y0, y1) = score_range(ys);
    render("horizon", "Test score after each round", |buf| {
        let full = SVGBackend::with_string(buf, (720 + SIDE_LEGEND_WIDTH, 440)).into_drawing_area();
        full.fill(&WHITE)?;
        let (root, side) = full.split_horizontally(720);
        let mut entries: Vec<(String, RGBColor, u32)> = Vec::new();
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Test score after each round ({} % interval)", 95),
                (FONT, 18),
            )
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(52)
            .build_cartesian_2d(-0.25..k + 0.25, y0..y1)?;
        chart
            .configure_mesh()
            .x_labels(e.meta.rounds as usize + 2)
            .x_label_formatter(&integer_label)
            .x_desc("round (0 = seed harness)")
            .y_desc("test score")
            .light_line_style(minor_grid())
            .draw()?;
        let pts: Vec<(f64, f64, f64, f64)> = overall
            .iter()
            .enumerate()
            .filter(|(_, x)| x.n > 0)
            .map(|(r, x)| {
                let (lo, hi) = bounds(x);
                (r as f64, x.mean, lo, hi)
            })
            .collect();
        if !pts.is_empty() {
            let mut band: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.3)).collect();
            band.extend(pts.iter().rev().map(|p| (p.0, p.2)));
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                FINAL_COLOUR.mix(0.18).filled(),
            )))?;
        }
        let show_tasks = tasks.len() > 1;
        if show_tasks {
            for (i, t) in tasks.iter().enumerate() {
                let c = colour(i + 1);
                let line: Vec<(f64, f64)> = t
                    .metrics
                    .curve
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| x.n > 0)
                    .map(|(r, x)| (r as f64, x.mean))
                    .collect();
                chart.draw_series(LineSeries::new(line, c.stroke_width(1)))?;
                if tasks.len() <= MAX_LEGEND {
                    entries.push((t.task.clone(), c, 1));
                }
            }
        }
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        chart.draw_series(LineSeries::new(line.clone(), FINAL_COLOUR.stroke_width(3)))?;
        let label = if show_tasks { "overall" } else { "test score" };
        entries.insert(0, (format!("{label} (band: interval)"), FINAL_COLOUR, 3));
        chart.draw_series(
            line.iter()
                .map(|&p| Circle::new(p, 4, FINAL_COLOUR.filled())),
        )?;
        side_legend(&side, &entries)?;
        full.present()?;
        Ok(())
    })
}

fn families(e: &EvalReport) -> Result<Plot, ReportError> {
    let rows: Vec<(String, &HierEstimate, &HierEstimate)> = e
        .families
        .iter()
        .map(|f| (f.name.clone(), &f.metrics.seed_test, &f.metrics.final_test))
        .collect();
    let n = rows.len().max(1);
    let width = (160 + 90 * n as u32).max(560);
    let ys = rows.iter().flat_map(|(_, a, b)| {
        let (l1, h1) = bounds(a);
        let (l2, h2) = bounds(b);
        [l1, h1, l2, h2]
    });
    let (y0, y1) = score_range(ys);
    // Room above the bars for the legend.
    let y1 = y1 + 0.2 * (y1 - y0);
    render("families", "Seed vs final test score per family", |buf| {
        let root = SVGBackend::with_string(buf, (width, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Seed vs final test score per family", (FONT, 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(52)
            .build_cartesian_2d(0.0..n as f64, y0..y1)?;
        chart
            .configure_mesh()
            .light_line_style(minor_grid())
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_desc("test score")
            .draw()?;
        for (i, (_, seed, fin)) in rows.iter().enumerate() {
            let x = i as f64;
            for (est, x0, x1, c) in [
                (seed, x + 0.12, x + 0.48, SEED_COLOUR),
                (fin, x + 0.52, x + 0.88, FINAL_COLOUR),
            ] {
                if est.n == 0 {
                    continue;
                }
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0f64.max(y0)), (x1, est.mean)],
                    c.mix(0.85).filled(),
                )))?;
                if let Some(ci) = est.ci {
                    // Whiskers: the interval, with caps.
                    let xc = (x0 + x1) / 2.0;
                    let w = 0.06;
                    chart.draw_series(
                        [
                            vec![(xc, ci.lo), (xc, ci.hi)],
                            vec![(xc - w, ci.lo), (xc + w, ci.lo)],
                            vec![(xc - w, ci.hi), (xc + w, ci.hi)],
                        ]
                        .into_iter()
                        .map(|p| PathElement::new(p, BLACK.stroke_width(1))),
                    )?;
                }
            }
        }
        // Category labels under each pair of bars.
        let style = (FONT, 12)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, (name, _, _)) in rows.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y0));
            let label: String = if name.chars().count() > 16 {
                name.chars().take(15).chain(std::iter::once('…')).collect()
            } else {
                name.clone()
            };
            root.draw(&Text::new(label, (px, py + 8), style.clone()))?;
        }
        // Legend entries through empty series.
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
            .label("seed harness")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], SEED_COLOUR.filled()));
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
            .label("final (after K rounds)")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], FINAL_COLOUR.filled()));
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present()?;
        Ok(())
    })
}

fn pareto(e: &EvalReport) -> Result<Plot, ReportError> {
    let tasks: Vec<&str> = e.summary.tasks.iter().map(|t| t.task.as_str()).collect();
    let xmax = e
        .harnesses
        .iter()
        .map(|p| p.tokens_per_instance)
        .fold(0.0f64, f64::max);
    let xmax = if xmax > 0.0 { xmax * 1.08 } else { 1.0 };
    let (y0, y1) = score_range(e.harnesses.iter().map(|p| p.test));
    render(
        "pareto",
        "Test score vs executor tokens per harness",
        |buf| {
            let root = SVGBackend::with_string(buf, (720, 460)).into_drawing_area();
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .caption("Test score vs executor tokens per harness", (FONT, 18))
                .margin(14)
                .x_label_area_size(40)
                .y_label_area_size(52)
                .build_cartesian_2d(0.0..xmax, y0..y1)?;
            chart
                .configure_mesh()
                .light_line_style(minor_grid())
                .x_desc("executor tokens per test instance")
                .y_desc("test score")
                .draw()?;
            for (i, task) in tasks.iter().enumerate() {
                let c = colour(i);
                let mut front: Vec<(f64, f64)> = e
                    .harnesses
                    .iter()
                    .filter(|p| p.task == *task && p.pareto)
                    .map(|p| (p.tokens_per_instance, p.test))
                    .collect();
                front.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                front.dedup();
                let s = chart.draw_series(LineSeries::new(front, c.stroke_width(1)))?;
                if tasks.len() <= MAX_LEGEND {
                    s.label(task.to_string())
                        .legend(move |(x, y)| Circle::new((x + 8, y), 4, c.filled()));
                }
                for p in e.harnesses.iter().filter(|p| p.task == *task) {
                    let at = (p.tokens_per_instance, p.test);
                    if p.seed {
                        chart.draw_series(std::iter::once(TriangleMarker::new(
                            at,
                            7,
                            c.filled(),
                        )))?;
                    } else {
                        chart.draw_series(std::iter::once(Circle::new(at, 4, c.filled())))?;
                    }
                }
            }
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label("▲ seed harness, ● revision; line: Pareto front")
                .legend(|(x, y)| TriangleMarker::new((x + 8, y), 6, BLACK.filled()));
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
            root.present()?;
            Ok(())
        },
    )
}

fn rate(hits: u64, misses: u64) -> Option<f64> {
    let n = hits + misses;
    (n > 0).then(|| hits as f64 / n as f64)
}

fn training(t: &TrainReport) -> Result<Plot, ReportError> {
    let steps = &t.steps;
    let (mut s0, mut s1) = steps.iter().fold((f64::MAX, f64::MIN), |(a, b), s| {
        (a.min(s.step as f64), b.max(s.step as f64))
    });
    if s1 <= s0 {
        s0 -= 1.0;
        s1 += 1.0;
    }
    let (r0, r1) = score_range(steps.iter().flat_map(|s| {
        [s.reward_mean - s.reward_std, s.reward_mean + s.reward_std]
            .into_iter()
            .chain(s.heldout_score)
    }));
    let emax = steps.iter().map(|s| s.entropy).fold(0.0f64, f64::max);
    let emax = if emax > 0.0 { emax * 1.08 } else { 1.0 };
    render("training", "Training curve", |buf| {
        let root = SVGBackend::with_string(buf, (720, 760)).into_drawing_area();
        root.fill(&WHITE)?;
        let panels = root.split_evenly((3, 1));
        // Reward with a ±1 sd band, and the held-out score.
        let mut top = ChartBuilder::on(&panels[0])
            .caption("Reward (band: ±1 sd) and held-out score", (FONT, 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(52)
            .build_cartesian_2d(s0..s1, r0..r1)?;
        top.configure_mesh()
            .light_line_style(minor_grid())
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_desc("score")
            .draw()?;
        let mut band: Vec<(f64, f64)> = steps
            .iter()
            .map(|s| (s.step as f64, s.reward_mean + s.reward_std))
            .collect();
        band.extend(
            steps
                .iter()
                .rev()
                .map(|s| (s.step as f64, s.reward_mean - s.reward_std)),
        );
        top.draw_series(std::iter::once(Polygon::new(
            band,
            colour(0).mix(0.18).filled(),
        )))?;
        top.draw_series(LineSeries::new(
            steps.iter().map(|s| (s.step as f64, s.reward_mean)),
            colour(0).stroke_width(2),
        ))?
        .label("reward mean")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour(0).stroke_width(2)));
        let held: Vec<(f64, f64)> = steps
            .iter()
            .filter_map(|s| s.heldout_score.map(|h| (s.step as f64, h)))
            .collect();
        top.draw_series(LineSeries::new(held.clone(), colour(1).stroke_width(2)))?
            .label("held-out score")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour(1).stroke_width(2))
            });
        top.draw_series(held.iter().map(|&p| Circle::new(p, 3, colour(1).filled())))?;
        legend(&mut top, SeriesLabelPosition::LowerRight)?;
        // Rates.
        let mut mid = ChartBuilder::on(&panels[1])
            .caption("Proposal validity and reuse", (FONT, 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(52)
            .build_cartesian_2d(s0..s1, 0.0..1.05)?;
        mid.configure_mesh()
            .light_line_style(minor_grid())
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_desc("rate")
            .draw()?;
        type Getter = fn(&crate::records::train::TrainStep) -> Option<f64>;
        let series: [(&str, Getter); 4] = [
            ("invalid rate", |s| Some(s.invalid_rate)),
            ("valid rate", |s| Some(s.valid_rate)),
            ("memo hit rate", |s| rate(s.memo_hits, s.memo_misses)),
            ("cache hit rate", |s| rate(s.cache_hits, s.cache_misses)),
        ];
        for (i, (label, get)) in series.iter().enumerate() {
            let c = colour(i + 2);
            mid.draw_series(LineSeries::new(
                steps
                    .iter()
                    .filter_map(|s| get(s).map(|v| (s.step as f64, v))),
                c.stroke_width(2),
            ))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        }
        legend(&mut mid, SeriesLabelPosition::UpperRight)?;
        // Entropy.
        let mut bottom = ChartBuilder::on(&panels[2])
            .caption("Policy entropy", (FONT, 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(s0..s1, 0.0..emax)?;
        bottom
            .configure_mesh()
            .light_line_style(minor_grid())
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc("step")
            .y_desc("entropy")
            .draw()?;
        bottom.draw_series(LineSeries::new(
            steps.iter().map(|s| (s.step as f64, s.entropy)),
            colour(5).stroke_width(2),
        ))?;
        root.present()?;
        Ok(())
    })
}

/// Every plot the report has data for, in display order.
pub fn all(report: &Report) -> Result<Vec<Plot>, ReportError> {
    let mut out = Vec::new();
    if let Some(e) = &report.eval {
        out.push(horizon(e)?);
        if !e.families.is_empty() {
            out.push(families(e)?);
        }
        if !e.harnesses.is_empty() {
            out.push(pareto(e)?);
        }
    }
    if let Some(t) = &report.train
        && !t.steps.is_empty()
    {
        out.push(training(t)?);
    }
    Ok(out)
}
