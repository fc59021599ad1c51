//! `calendar_arithmetic`: weekdays and dates in the proleptic Gregorian calendar.
//!
//! Five task kinds, each with its own answer format stated in the question:
//! - `weekday_offset`: "Today is Tuesday. What day of the week will it be in N days /
//!   was it N days ago?" — a weekday name;
//! - `add_days`: the date N days after (or before) a date — `YYYY-MM-DD`;
//! - `days_between`: how many days from one date to a later one (the next day is 1) —
//!   an integer;
//! - `weekday_of_date`: the weekday of a date, given the weekday of a reference date —
//!   a weekday name;
//! - `business_days`: how many of the days from A to B (both included) are Monday to
//!   Friday, given A's weekday — an integer.
//!
//! Levels (kinds drawn uniformly; N = offset in days, span = days between the dates):
//! 1: `weekday_offset` (N 1..=30, forward), `add_days` (N 1..=10, forward) ·
//! 2: `weekday_offset` (N 1..=100, either way), `add_days` (N 1..=60, forward),
//! `days_between` (span 1..=90) · 3: `add_days` (N 1..=400, either way),
//! `days_between` (span 1..=800), `weekday_of_date` (reference in the same year) ·
//! 4: `add_days` (N 1..=2000), `days_between` (span 1..=3700), `weekday_of_date`
//! (reference up to 10 years away) · 5: `days_between` (span 1..=20000),
//! `weekday_of_date` (reference up to 100 years away), `business_days` (span 0..=120).
//! Base dates lie in 1950..=2050.
//!
//! Verifier (unique answers, compared as values): weekday names in English, full or
//! three-letter (`Tue`), ASCII case ignored; dates as `YYYY-MM-DD` with a four-digit
//! year (one-digit month and day accepted: `2024-3-5`), and they must exist; integers
//! by the shared `parse::int` rules. Weekday questions list the seven names instead of
//! showing a tagged example; the date example (`1066-10-14`) and the integer example
//! (the level's largest possible count plus one) are never the gold.
//! Metadata: `task` and the task's inputs as strings and integers (`date`, `days`,
//! `direction`, `start`, `end`, `weekday`, `reference_date`, `reference_weekday`).

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Value, json};

use crate::families::kit::meta::{Meta, fields};
use crate::families::kit::question::{AnswerFormat, Body};
use crate::families::{Category, Family, Generated, Instance, Level, parse};

pub struct CalendarArithmetic;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Task {
    WeekdayOffset,
    AddDays,
    DaysBetween,
    WeekdayOfDate,
    BusinessDays,
}

impl Task {
    fn name(self) -> &'static str {
        match self {
            Task::WeekdayOffset => "weekday_offset",
            Task::AddDays => "add_days",
            Task::DaysBetween => "days_between",
            Task::WeekdayOfDate => "weekday_of_date",
            Task::BusinessDays => "business_days",
        }
    }
}

struct Params {
    tasks: &'static [Task],
    /// Largest offset N for `weekday_offset` and `add_days`.
    offset_max: i64,
    /// Offsets may go backwards.
    backwards: bool,
    /// Largest span for `days_between`.
    span_max: i64,
    /// Largest span for `business_days`.
    business_span_max: i64,
    /// Largest distance in years of the reference date for `weekday_of_date`
    /// (0: the same year).
    reference_years: i64,
}

const PARAMS: [Params; 5] = [
    Params {
        tasks: &[Task::WeekdayOffset, Task::AddDays],
        offset_max: 30,
        backwards: false,
        span_max: 0,
        business_span_max: 0,
        reference_years: 0,
    },
    Params {
        tasks: &[Task::WeekdayOffset, Task::AddDays, Task::DaysBetween],
        offset_max: 100,
        backwards: true,
        span_max: 90,
        business_span_max: 0,
        reference_years: 0,
    },
    Params {
        tasks: &[Task::AddDays, Task::DaysBetween, Task::WeekdayOfDate],
        offset_max: 400,
        backwards: true,
        span_max: 800,
        business_span_max: 0,
        reference_years: 0,
    },
    Params {
        tasks: &[Task::AddDays, Task::DaysBetween, Task::WeekdayOfDate],
        offset_max: 2000,
        backwards: true,
        span_max: 3700,
        business_span_max: 0,
        reference_years: 10,
    },
    Params {
        tasks: &[Task::DaysBetween, Task::WeekdayOfDate, Task::BusinessDays],
        offset_max: 0,
        backwards: true,
        span_max: 20000,
        business_span_max: 120,
        reference_years: 100,
    },
];

/// Level 1 offsets for `add_days` are smaller than those for `weekday_offset`.
const L1_ADD_MAX: i64 = 10;
/// Level 2 `add_days` goes forward only, up to this many days.
const L2_ADD_MAX: i64 = 60;

pub(crate) const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Weekday index (0 = Monday) of a day number; 1970-01-01 was a Thursday.
fn weekday(days: i64) -> usize {
    (days + 3).rem_euclid(7) as usize
}

fn date_text(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD` (month and day may have one digit) of an existing date.
fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.trim().split('-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some()
        || y.len() != 4
        || !(1..=2).contains(&m.len())
        || !(1..=2).contains(&d.len())
        || ![y, m, d]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || d < 1 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    (civil_from_days(days) == (y, m, d)).then_some(days)
}

/// A weekday name, full or three letters, ASCII case ignored.
fn parse_weekday(s: &str) -> Option<usize> {
    let t = s.trim();
    WEEKDAYS
        .iter()
        .position(|w| w.eq_ignore_ascii_case(t) || w[..3].eq_ignore_ascii_case(t))
}

/// A random base date in 1950..=2050.
fn base_date(rng: &mut ChaCha20Rng) -> i64 {
    rng.random_range(days_from_civil(1950, 1, 1)..=days_from_civil(2050, 12, 31))
}

fn weekday_instruction() -> AnswerFormat {
    AnswerFormat::new(
        "as the English name of the day of the week (one of Monday, Tuesday, Wednesday, \
         Thursday, Friday, Saturday, Sunday)",
    )
}

fn date_instruction() -> AnswerFormat {
    AnswerFormat::with_example("as a date written YYYY-MM-DD", "1066-10-14")
}

fn count_instruction(max_possible: i64) -> AnswerFormat {
    AnswerFormat::with_example("as a single integer", (max_possible + 1).to_string())
}

impl Family for CalendarArithmetic {
    fn name(&self) -> &'static str {
        "calendar_arithmetic"
    }
    fn category(&self) -> Category {
        Category::Arithmetic
    }
    fn description(&self) -> &'static str {
        "Weekday and date arithmetic in the Gregorian calendar"
    }
    fn version(&self) -> u32 {
        1
    }
    fn level_params(&self, level: Level) -> Value {
        let p = &PARAMS[level.idx()];
        let tasks: Vec<&str> = p.tasks.iter().map(|t| t.name()).collect();
        let add_max = match level.get() {
            1 => L1_ADD_MAX,
            2 => L2_ADD_MAX,
            _ => p.offset_max,
        };
        json!({
            "tasks": tasks, "offset_max": p.offset_max, "add_days_max": add_max,
            "backwards": p.backwards, "span_max": p.span_max,
            "business_span_max": p.business_span_max,
            "reference_years_max": p.reference_years, "base_year_min": 1950, "base_year_max": 2050,
        })
    }
    fn generate(&self, rng: &mut ChaCha20Rng, level: Level) -> Generated {
        let p = &PARAMS[level.idx()];
        let task = p.tasks[rng.random_range(0..p.tasks.len())];
        let (body, instruction, answer, meta) = match task {
            Task::WeekdayOffset => {
                let today = rng.random_range(0..7usize);
                let n = rng.random_range(1..=p.offset_max);
                let back = p.backwards && rng.random_bool(0.5);
                let delta = if back { -n } else { n };
                let ans = WEEKDAYS[(today as i64 + delta).rem_euclid(7) as usize];
                let body = if back {
                    format!(
                        "Today is {}. What day of the week was it {n} days ago?",
                        WEEKDAYS[today]
                    )
                } else {
                    format!(
                        "Today is {}. What day of the week will it be {n} days from today?",
                        WEEKDAYS[today]
                    )
                };
                let meta = fields([
                    ("task", Value::from(task.name())),
                    ("weekday", Value::from(WEEKDAYS[today])),
                    ("days", Value::from(delta)),
                ]);
                (body, weekday_instruction(), ans.to_string(), meta)
            }
            Task::AddDays => {
                let max = match level.get() {
                    1 => L1_ADD_MAX,
                    2 => L2_ADD_MAX,
                    _ => p.offset_max,
                };
                let start = base_date(rng);
                let n = rng.random_range(1..=max);
                let back = p.backwards && level.get() > 2 && rng.random_bool(0.5);
                let delta = if back { -n } else { n };
                let body = format!(
                    "Dates are written YYYY-MM-DD in the Gregorian calendar. What is the date {n} \
                     days {} {}?",
                    if back { "before" } else { "after" },
                    date_text(start)
                );
                let meta = fields([
                    ("task", Value::from(task.name())),
                    ("date", Value::from(date_text(start))),
                    ("days", Value::from(delta)),
                ]);
                (body, date_instruction(), date_text(start + delta), meta)
            }
            Task::DaysBetween => {
                let start = base_date(rng);
                let span = rng.random_range(1..=p.span_max);
                let body = format!(
                    "Dates are written YYYY-MM-DD in the Gregorian calendar. How many days are \
                     there from {} to {}? Count the days you have to add to the first date to \
                     reach the second (from a date to the next day is 1 day).",
                    date_text(start),
                    date_text(start + span)
                );
                let meta = fields([
                    ("task", Value::from(task.name())),
                    ("start", Value::from(date_text(start))),
                    ("end", Value::from(date_text(start + span))),
                ]);
                (body, count_instruction(p.span_max), span.to_string(), meta)
            }
            Task::WeekdayOfDate => {
                let target = base_date(rng);
                let reference = if p.reference_years == 0 {
                    let (y, _, _) = civil_from_days(target);
                    rng.random_range(days_from_civil(y, 1, 1)..=days_from_civil(y, 12, 31))
                } else {
                    let r = p.reference_years * 365;
                    target + rng.random_range(-r..=r)
                };
                let tense = if target < reference { "was" } else { "is" };
                let body = format!(
                    "Dates are written YYYY-MM-DD in the Gregorian calendar. {} was a {}. What \
                     day of the week {tense} {}?",
                    date_text(reference),
                    WEEKDAYS[weekday(reference)],
                    date_text(target)
                );
                let meta = fields([
                    ("task", Value::from(task.name())),
                    ("reference_date", Value::from(date_text(reference))),
                    (
                        "reference_weekday",
                        Value::from(WEEKDAYS[weekday(reference)]),
                    ),
                    ("date", Value::from(date_text(target))),
                ]);
                (
                    body,
                    weekday_instruction(),
                    WEEKDAYS[weekday(target)].to_string(),
                    meta,
                )
            }
            Task::BusinessDays => {
                let start = base_date(rng);
                let span = rng.random_range(0..=p.business_span_max);
                let end = start + span;
                let count = (start..=end).filter(|&d| weekday(d) < 5).count();
                let body = format!(
                    "Dates are written YYYY-MM-DD in the Gregorian calendar. {} is a {}. How \
                     many of the days from {} to {}, both included, are weekdays (Monday to \
                     Friday)?",
                    date_text(start),
                    WEEKDAYS[weekday(start)],
                    date_text(start),
                    date_text(end)
                );
                let meta = fields([
                    ("task", Value::from(task.name())),
                    ("start", Value::from(date_text(start))),
                    ("weekday", Value::from(WEEKDAYS[weekday(start)])),
                    ("end", Value::from(date_text(end))),
                ]);
                (
                    body,
                    count_instruction(p.business_span_max + 1),
                    count.to_string(),
                    meta,
                )
            }
        };
        Generated {
            body: Body::of(body),
            format: instruction,
            answer,
            metadata: meta,
        }
    }
    fn verify(&self, instance: &Instance, answer: &str) -> f64 {
        let ok = match Meta::of(instance).str("task") {
            Some("weekday_offset" | "weekday_of_date") => {
                matches!((parse_weekday(answer), parse_weekday(&instance.answer)), (Some(a), Some(g)) if a == g)
            }
            Some("add_days") => {
                matches!((parse_date(answer), parse_date(&instance.answer)), (Some(a), Some(g)) if a == g)
            }
            Some("days_between" | "business_days") => {
                matches!((parse::int(answer), parse::int(&instance.answer)), (Some(a), Some(g)) if a == g)
            }
            _ => false,
        };
        if ok { 1.0 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip_and_known_weekdays() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        for z in -100_000..100_000 {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        // 2000-01-01 was a Saturday, 2024-02-29 a Thursday.
        assert_eq!(weekday(days_from_civil(2000, 1, 1)), 5);
        assert_eq!(weekday(days_from_civil(2024, 2, 29)), 3);
    }

    #[test]
    fn dates_and_weekdays_parse_strictly() {
        assert_eq!(parse_date("2024-3-5"), Some(days_from_civil(2024, 3, 5)));
        assert_eq!(
            parse_date(" 2024-03-05 "),
            Some(days_from_civil(2024, 3, 5))
        );
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "24-03-05",
            "2024/03/05",
            "2024-03-05-1",
            "2024-003-05",
            "2024-03-00",
            "March 5, 2024",
        ] {
            assert_eq!(parse_date(bad), None, "{bad:?}");
        }
        assert_eq!(parse_weekday("tue"), Some(1));
        assert_eq!(parse_weekday("SUNDAY"), Some(6));
        assert_eq!(parse_weekday("Tues"), None);
        assert_eq!(parse_weekday("Monday."), None);
        assert_eq!(parse_weekday("\u{212a}"), None);
    }
}
